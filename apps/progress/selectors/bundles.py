"""Where one API body needs several objects: a small frozen bundle of them, which the output
serializers (apps.progress.serializers) read directly."""

from __future__ import annotations

from dataclasses import dataclass

from apps.accounts.models import User
from apps.progress.models import Cohort, CohortWorkbook
from apps.progress.selectors.cohorts import LearnerRow, assignments, cohort_list, cohort_progress
from apps.progress.selectors.due import Due, due_by_assignment
from apps.progress.selectors.mastery import Mastery, mastery
from apps.progress.selectors.streaks import Streak, streak_get


@dataclass(frozen=True)
class Overview:
    """The caller's streak and mastery of every workbook."""

    streak: Streak
    workbooks: list[Mastery]


def overview(*, user: User) -> Overview:
    return Overview(streak_get(user=user), mastery(user=user))


@dataclass(frozen=True)
class Assignment:
    """A cohort's workbook with the caller's due date on it (none for its instructor)."""

    assignment: CohortWorkbook
    due: Due | None


@dataclass(frozen=True)
class CohortView:
    """A cohort as the caller sees it: their role in it and their due dates."""

    cohort: Cohort
    user: User
    due: dict[tuple[int, int], Due]

    @property
    def teaches(self) -> bool:
        return self.cohort.instructor_id == self.user.pk or self.user.is_superuser

    @property
    def role(self) -> str:
        return "instructor" if self.teaches else "member"

    @property
    def members(self) -> int:
        annotated = getattr(self.cohort, "member_count", None)  # cohort_list() annotates it: one query fewer
        return int(annotated) if annotated is not None else self.cohort.memberships.count()

    @property
    def assignments(self) -> list[Assignment]:
        c = self.cohort
        return [Assignment(a, self.due.get((c.pk, a.workbook_id))) for a in assignments(cohort=c)]


def cohort_views(*, user: User) -> list[CohortView]:
    cohorts = list(cohort_list(user=user))
    due = due_by_assignment(user=user, cohort_ids=[c.pk for c in cohorts])
    return [CohortView(c, user, due) for c in cohorts]


def cohort_view(*, user: User, cohort: Cohort, with_due: bool = True) -> CohortView:
    """``with_due=False`` for a cohort just created: nobody has a due date in it yet."""
    due = due_by_assignment(user=user, cohort_ids=[cohort.pk]) if with_due else {}
    return CohortView(cohort, user, due)


@dataclass(frozen=True)
class CohortProgress:
    cohort: Cohort
    learners: list[LearnerRow]


def cohort_progress_view(*, cohort: Cohort) -> CohortProgress:
    _, rows = cohort_progress(cohort=cohort)
    return CohortProgress(cohort, rows)
