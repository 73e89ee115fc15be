"""Cohorts and instructor monitoring: the cohorts a caller may see or teach (another's is a 404),
their members and assigned workbooks, the learner × workbook progress table, per-exercise
statistics and a member's attempt history with the answers as they were shown.

Least privilege: an instructor reads a member's work only in the workbooks the cohort was
assigned (``workbooks_readable``, the one place that decides it); superusers read everything.
The progress table and the overview cover the assigned workbooks alone, for everyone."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo

from django.db.models import Count, Exists, Max, OuterRef, Prefetch, Q, QuerySet, prefetch_related_objects
from django.http import Http404
from django.utils import timezone

from apps.accounts.models import User
from apps.exercises import formats
from apps.exercises.choices import AttemptPart, Verdict
from apps.exercises.content import cache, variants
from apps.exercises.content.resolve import ContentError, ResolvedExercise
from apps.exercises.formats import AnswerShown
from apps.exercises.models import Attempt, Exercise, ExerciseVersion, Workbook
from apps.exercises.selectors import Counts
from apps.progress.models import Cohort, CohortWorkbook, ExerciseProgress, LearnerStats, Membership, SkillCheck
from apps.progress.selectors.figures import ExerciseFigures, WithFigures, exercise_figures
from apps.progress.selectors.streaks import streak_alive


def cohort_list(*, user: User) -> QuerySet[Cohort]:
    """Cohorts the caller teaches or belongs to."""
    return (
        Cohort.objects.filter(Q(instructor=user) | Q(memberships__user=user))
        .distinct()
        .select_related("instructor")
        .annotate(member_count=Count("memberships", distinct=True))
        .prefetch_related(ASSIGNED)
        .order_by("name", "id")
    )


def cohort_get(*, user: User, cohort_id: int) -> Cohort:
    """A cohort the caller teaches or belongs to (superusers: any); anyone else gets a 404."""
    qs = Cohort.objects.select_related("instructor")
    if not user.is_superuser:
        qs = qs.filter(Q(instructor=user) | Q(memberships__user=user)).distinct()
    found = qs.filter(pk=cohort_id).first()
    if found is None:
        raise Http404("No such cohort.")
    return found


def cohort_taught(*, user: User, cohort_id: int) -> Cohort:
    """A cohort whose learners' data the caller may see: its instructor's, or a superuser's."""
    qs = Cohort.objects.select_related("instructor")
    if not user.is_superuser:
        qs = qs.filter(instructor=user)
    found = qs.filter(pk=cohort_id).first()
    if found is None:
        raise Http404("No such cohort.")
    return found


def cohorts_taught(*, user: User) -> QuerySet[Cohort]:
    qs = Cohort.objects.all() if user.is_superuser else Cohort.objects.filter(instructor=user)
    return qs.select_related("instructor").annotate(member_count=Count("memberships", distinct=True))


ASSIGNED = Prefetch("assignments", queryset=CohortWorkbook.objects.select_related("workbook"))


def assignments(*, cohort: Cohort) -> list[CohortWorkbook]:
    """The cohort's workbooks in workbook order; fetched once per cohort (cohort_list fetches
    them for every cohort it lists in one query)."""
    prefetch_related_objects([cohort], ASSIGNED)  # no query when they are already fetched
    return list(cohort.assignments.all())


def workbooks_readable(*, viewer: User, cohort: Cohort) -> set[int] | None:
    """The workbooks (ids) in which ``viewer`` may read the cohort's members' attempts, statistics
    and history: the cohort's assigned workbooks for its instructor, every one (None) for a
    superuser. A learner's work elsewhere (another course, their own study) is not the cohort's."""
    if viewer.is_superuser:
        return None
    return {a.workbook_id for a in assignments(cohort=cohort)}


def workbook_readable(*, viewer: User, cohort: Cohort, workbook: Workbook) -> Workbook:
    """``workbook`` if the viewer may read the cohort's statistics on it; else a 404, as for a
    cohort they do not teach."""
    scope = workbooks_readable(viewer=viewer, cohort=cohort)
    if scope is not None and workbook.pk not in scope:
        raise Http404("No such workbook in this cohort.")
    return workbook


def skill_checks_taught(*, user: User, queryset: QuerySet[SkillCheck] | None = None) -> QuerySet[SkillCheck]:
    """Skill ticks the user may read: a superuser's, every one; an instructor's, their cohorts'
    members' ticks on skills of workbooks that cohort was assigned; anyone else's, none."""
    qs = SkillCheck.objects.all() if queryset is None else queryset
    if user.is_superuser:
        return qs
    taught = Membership.objects.filter(
        user_id=OuterRef("user_id"),
        cohort__instructor=user,
        cohort__assignments__workbook_id=OuterRef("skill__workbook_id"),
    )
    return qs.filter(Exists(taught))


def members(*, cohort: Cohort) -> list[User]:
    return list(User.objects.filter(memberships__cohort=cohort).order_by("username"))


def member_get(*, cohort: Cohort, user_id: int) -> User:
    found = User.objects.filter(pk=user_id, memberships__cohort=cohort).first()
    if found is None:
        raise Http404("No such learner in this cohort.")
    return found


@dataclass(frozen=True)
class WorkbookCell:
    slug: str
    solved: int
    total: int
    due_on: date | None
    overdue: bool

    @property
    def percent(self) -> int:
        return Counts(self.total, self.solved).percent


def workbook_cell(assignment: CohortWorkbook, *, solved: int, total: int, today: date) -> WorkbookCell:
    """One learner on one assigned workbook. Overdue: the due day has ended in the cohort's time
    zone (``today`` is the cohort's) and the workbook is not complete. The instructor's table and
    the learner's own pages both decide it here."""
    overdue = assignment.due_on is not None and today > assignment.due_on and solved < total
    return WorkbookCell(assignment.workbook.slug, solved, total, assignment.due_on, overdue)


@dataclass(frozen=True)
class LearnerRow:
    user_id: int
    username: str
    cells: list[WorkbookCell]
    current_streak: int
    best_streak: int
    last_active: datetime | None
    joined_at: datetime
    # The learner's latest local day with a solve (anywhere), in their own time zone.
    last_solve_day: date | None = None
    time_zone: str = "UTC"

    @property
    def overdue(self) -> list[str]:
        return [c.slug for c in self.cells if c.overdue]


def cohort_progress(*, cohort: Cohort, at: datetime | None = None) -> tuple[list[CohortWorkbook], list[LearnerRow]]:
    """Learner × assigned workbook mastery, streak, last activity and overdue workbooks.

    A fixed number of queries whatever the cohort's size (the admin page and the CSV use it).
    """
    at = at or timezone.now()
    today = at.astimezone(ZoneInfo(cohort.time_zone)).date()
    assigned = assignments(cohort=cohort)
    workbook_ids = [a.workbook_id for a in assigned]
    totals = dict(
        Exercise.objects.filter(workbook_id__in=workbook_ids, is_active=True)
        .values("workbook_id")
        .annotate(n=Count("id"))
        .values_list("workbook_id", "n")
    )
    joined = list(
        Membership.objects.filter(cohort=cohort)
        .select_related("user")
        .order_by("user__username")
        .values_list("user_id", "user__username", "joined_at")
    )
    user_ids = [uid for uid, _, _ in joined]
    solved: dict[tuple[int, int], int] = {}
    last_active: dict[int, datetime] = {}
    rows = (
        # The assigned workbooks only: activity elsewhere is not the cohort's (nor its last active).
        ExerciseProgress.objects.filter(user_id__in=user_ids, workbook_id__in=workbook_ids)
        .values("user_id", "workbook_id")
        .annotate(
            n_solved=Count("id", filter=Q(solved_at__isnull=False, exercise__is_active=True)),
            last=Max("last_attempt_at"),
        )
    )
    for row in rows:
        solved[(row["user_id"], row["workbook_id"])] = row["n_solved"]
        if row["last"] and (row["user_id"] not in last_active or row["last"] > last_active[row["user_id"]]):
            last_active[row["user_id"]] = row["last"]
    stats = {s.pk: s for s in LearnerStats.objects.filter(pk__in=user_ids)}
    result = []
    for uid, username, joined_at in joined:
        cells = []
        for a in assigned:
            done, total = solved.get((uid, a.workbook_id), 0), totals.get(a.workbook_id, 0)
            cells.append(workbook_cell(a, solved=done, total=total, today=today))
        s = stats.get(uid)
        current = streak_alive(s.current_streak, s.last_day, at.astimezone(ZoneInfo(s.time_zone)).date()) if s else 0
        result.append(
            LearnerRow(
                uid,
                username,
                cells,
                current,
                s.best_streak if s else 0,
                last_active.get(uid),
                joined_at,
                s.last_day if s else None,
                s.time_zone if s else cohort.time_zone,
            )
        )
    return assigned, result


@dataclass(frozen=True)
class ExerciseStats(WithFigures):
    """One exercise's statistics: its figures (``selectors.figures``, as the overview's stuck
    points), the most common wrong answers and the solves only through a unit note."""

    exercise_id: int
    number: str
    title: str
    kind: str
    figures: ExerciseFigures
    wrong_answers: list[tuple[str, int]]
    # Learners whose solve came only through an answer accepted with a unit note (GiB labelled GB).
    solved_with_note: int = 0


def exercise_stats(*, viewer: User, cohort: Cohort, workbook: Workbook, top_wrong: int = 3) -> list[ExerciseStats]:
    """Per exercise of a workbook, over the cohort's learners: the figures every instructor page
    shares (``figures.exercise_figures``: solved, revealed before solving, stuck, the median
    attempts and time to solve), the most common wrong answers (read as the grader read them)
    with counts, and the solves only through a unit note. A workbook the viewer may not read in
    this cohort (``workbooks_readable``) is a 404."""
    workbook_readable(viewer=viewer, cohort=cohort, workbook=workbook)
    user_ids = list(Membership.objects.filter(cohort=cohort).values_list("user_id", flat=True))
    exercises = list(
        Exercise.objects.filter(workbook=workbook, is_active=True)
        .select_related("current_version")
        .order_by("chapter__number", "position")
    )
    figures = exercise_figures(user_ids=user_ids, exercise_ids=[e.pk for e in exercises])
    with_note = dict(
        ExerciseProgress.objects.filter(
            user_id__in=user_ids, workbook=workbook, solved_at__isnull=False, solved_with_note=True
        )
        .values("exercise_id")
        .annotate(n=Count("id"))
        .values_list("exercise_id", "n")
    )
    wrong: dict[int, Counter[str]] = defaultdict(Counter)
    labels = {e.pk: e for e in exercises}
    wrong_rows = Attempt.objects.filter(
        user_id__in=user_ids, exercise__workbook=workbook, verdict=Verdict.INCORRECT
    ).only("exercise_id", "version_id", "part", "parsed", "outcome", "details")
    versions: dict[int, ExerciseVersion] = {}
    for attempt in wrong_rows:
        if attempt.exercise_id in labels:
            label = answer_label(
                labels[attempt.exercise_id], attempt.part, attempt.parsed, attempt.outcome, attempt.details
            )
            if (attempt.details or {}).get("variant"):  # numbers of its own: label by relation to them
                label = _relation(attempt, labels[attempt.exercise_id], versions) or label
            wrong[attempt.exercise_id][label] += 1
    return [
        ExerciseStats(
            exercise_id=e.pk,
            number=e.number,
            title=e.title,
            kind=e.kind,
            figures=figures.get(e.pk) or ExerciseFigures(),
            wrong_answers=wrong[e.pk].most_common(top_wrong),
            solved_with_note=with_note.get(e.pk, 0),
        )
        for e in exercises
    ]


def _relation(attempt: Attempt, exercise: Exercise, versions: dict[int, ExerciseVersion]) -> str | None:
    """A wrong answer on a learner's own numbers, by its relation to their answer (``×2``, a known
    mistake): raw values differ per learner and would not pool."""
    version = versions.get(attempt.version_id)
    if version is None:
        version = versions[attempt.version_id] = ExerciseVersion.objects.get(pk=attempt.version_id)
    try:
        mine, seed = cache.resolved(version, variants.recorded(attempt.details)), cache.resolved(version)
    except ContentError:
        return None
    return formats.get(exercise.format).relation_label(mine, seed, attempt)


def answer_label(
    exercise: Exercise, part: str, parsed: dict[str, Any], outcome: str, details: dict[str, Any] | None = None
) -> str:
    """A wrong answer as the grader read it, so "0.5 GiB" and "512 MiB" count as one. Code: how
    the run ended and the first test it failed ("code: failed, test shapes")."""
    if part == AttemptPart.CODE:
        tests = (details or {}).get("tests")
        failing = [str(t.get("id")) for t in tests if isinstance(t, dict) and not t.get("passed")] if tests else []
        return f"code: {outcome or 'failed'}" + (f", test {failing[0]}" if failing else "")
    return formats.get(exercise.format).answer_label(exercise, parsed)


def learner_attempts(
    *, viewer: User, cohort: Cohort, user_id: int, limit: int | None = 500
) -> tuple[User, QuerySet[Attempt]]:
    """A member's attempt history in the workbooks the viewer may read (``workbooks_readable``),
    newest first (404 for anyone not in the cohort). ``limit=None``: all of it, for a paginator
    or a CSV file."""
    learner = member_get(cohort=cohort, user_id=user_id)
    scope = workbooks_readable(viewer=viewer, cohort=cohort)
    qs = (
        Attempt.objects.filter(user=learner)
        .filter(Q() if scope is None else Q(exercise__workbook_id__in=scope))
        .select_related("exercise__workbook", "version")
        .order_by("-created_at", "-id")
    )
    return learner, qs if limit is None else qs[:limit]


def resolved_for(attempt: Attempt) -> ResolvedExercise:
    """The version an attempt was graded on, with the numbers it answered (a varying exercise's
    round): its option and step texts are the ones this learner read."""
    try:
        return cache.resolved(attempt.version, variants.recorded(attempt.details))
    except ContentError:  # numbers the current code no longer resolves: the seed's texts
        return cache.resolved(attempt.version)


def answer_shown(attempt: Attempt) -> AnswerShown:
    """The attempt's answer against the version it was graded on: a number as typed, the chosen
    options' texts (in the order this learner was shown them), the steps' texts in the order
    given, the selected lines with their code, table cells and parts by their labels, the code."""
    raw = attempt.raw if isinstance(attempt.raw, dict) else {}
    parsed = attempt.parsed if isinstance(attempt.parsed, dict) else {}
    if attempt.part == AttemptPart.CODE or ("code" in raw and not parsed):
        code = str(raw.get("code", ""))
        n = len(code.splitlines())
        return AnswerShown(f"{n} line{'' if n == 1 else 's'} of code", [], code)
    spec = resolved_for(attempt).spec
    shown = formats.get(spec.format).answer_shown(attempt, spec, parsed)
    if shown is not None:
        return shown
    answer = raw.get("answer")
    if isinstance(answer, str):  # a number (with its unit) or an expression, as typed
        return AnswerShown(answer, [])
    return AnswerShown(answer_label(attempt.exercise, attempt.part, parsed, attempt.outcome, attempt.details), [])
