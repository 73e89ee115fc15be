"""Due dates: the workbooks a learner's cohorts assigned with a date, and where the learner
stands on each (decided by ``workbook_cell``, as the instructor's table decides it)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from zoneinfo import ZoneInfo

from django.db.models import Count, IntegerField, OuterRef, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from apps.accounts.models import User
from apps.exercises.models import Exercise, Workbook
from apps.progress.models import CohortWorkbook, ExerciseProgress
from apps.progress.selectors.cohorts import WorkbookCell, workbook_cell


@dataclass(frozen=True)
class Due:
    """A workbook one of the learner's cohorts assigned with a due date, and where they stand."""

    cohort_id: int
    cohort_name: str
    time_zone: str
    workbook_id: int
    title: str
    cell: WorkbookCell
    today: date  # in the cohort's time zone

    @property
    def slug(self) -> str:
        return self.cell.slug

    @property
    def due_on(self) -> date:
        assert self.cell.due_on is not None
        return self.cell.due_on

    @property
    def overdue(self) -> bool:
        return self.cell.overdue

    @property
    def complete(self) -> bool:
        return self.cell.solved >= self.cell.total

    @property
    def days_left(self) -> int:
        """Whole days until the due day (0 on the day itself, negative once past)."""
        return (self.due_on - self.today).days


def learner_due(
    *, user: User, workbook: Workbook | None = None, cohort_ids: list[int] | None = None, at: datetime | None = None
) -> list[Due]:
    """The learner's due dates: workbooks their cohorts assigned with a date, the soonest first,
    each with the learner's solved/total and whether it is overdue (``workbook_cell``, as the
    instructor sees it). Only cohorts the learner is a member of. One query, whatever the number
    of cohorts, workbooks and solves: the counts are subqueries counted as cohort_progress counts.
    """
    at = at or timezone.now()
    solved = (
        ExerciseProgress.objects.filter(
            user=user, workbook_id=OuterRef("workbook_id"), solved_at__isnull=False, exercise__is_active=True
        )
        .order_by()
        .values("workbook_id")
        .annotate(n=Count("id"))
        .values("n")
    )
    total = (
        Exercise.objects.filter(workbook_id=OuterRef("workbook_id"), is_active=True)
        .order_by()
        .values("workbook_id")
        .annotate(n=Count("id"))
        .values("n")
    )
    rows = (
        CohortWorkbook.objects.filter(cohort__memberships__user=user, due_on__isnull=False)
        .select_related("cohort", "workbook")
        .only("due_on", "cohort__name", "cohort__time_zone", "workbook__slug", "workbook__title")
        .annotate(
            n_solved=Coalesce(Subquery(solved, output_field=IntegerField()), 0),
            n_total=Coalesce(Subquery(total, output_field=IntegerField()), 0),
        )
        .order_by("due_on", "workbook__position", "workbook__slug", "cohort__name", "cohort_id")
    )
    if workbook is not None:
        rows = rows.filter(workbook=workbook)
    if cohort_ids is not None:
        rows = rows.filter(cohort_id__in=cohort_ids)
    found = []
    for a in rows:
        today = at.astimezone(ZoneInfo(a.cohort.time_zone)).date()
        cell = workbook_cell(a, solved=a.n_solved, total=a.n_total, today=today)
        found.append(Due(a.cohort_id, a.cohort.name, a.cohort.time_zone, a.workbook_id, a.workbook.title, cell, today))
    return found


def due_by_assignment(*, user: User, cohort_ids: list[int] | None = None) -> dict[tuple[int, int], Due]:
    """``learner_due`` keyed by (cohort, workbook), for pages and bodies that list assignments.
    No query for an empty list of cohorts."""
    if cohort_ids is not None and not cohort_ids:
        return {}
    return {(d.cohort_id, d.workbook_id): d for d in learner_due(user=user, cohort_ids=cohort_ids)}
