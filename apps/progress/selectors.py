"""Reads on progress, streaks, leaderboards and cohorts.

Each takes the acting user and is scoped by it: another learner's data or another instructor's
cohort is a 404. None aggregates raw attempts on a learner's request; leaderboards read the
aggregate rows that grading keeps current (services.py).
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from django.conf import settings
from django.db import connection
from django.db.models import (
    Case,
    Count,
    Exists,
    IntegerField,
    Max,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    Subquery,
    Value,
    When,
    prefetch_related_objects,
)
from django.db.models.functions import Coalesce
from django.http import Http404
from django.utils import timezone

from apps.accounts.models import User
from apps.exercises import formats
from apps.exercises.choices import AttemptPart, AttemptStatus, Verdict
from apps.exercises.content import cache
from apps.exercises.formats import AnswerShown as AnswerShown  # re-exported: exports, apis
from apps.exercises.models import Attempt, Chapter, Exercise, Skill, Workbook
from apps.exercises.selectors import Counts
from apps.progress.models import (
    Cohort,
    CohortWorkbook,
    DailyActivity,
    ExerciseProgress,
    LearnerStats,
    Membership,
    Score,
    ScoreBucket,
    SkillCheck,
)
from apps.progress.services import GLOBAL_ALL, cohort_week_board, effective_time_zone, global_week_board, week_start

# ---------------------------------------------------------------------------------------------
# Mastery
# ---------------------------------------------------------------------------------------------


@dataclass
class Mastery:
    """Solved out of total for a workbook or chapter, with the split by kind."""

    key: str
    title: str
    chapters: list[Mastery] = field(default_factory=list)
    kinds: dict[str, list[int]] = field(default_factory=dict, repr=False)  # kind: [solved, total]
    # Solved only through an answer accepted with a unit note (counted in the solved figures too).
    with_note: int = 0

    def add(self, kind: str, solved: bool, *, noted: bool = False) -> None:
        pair = self.kinds.setdefault(kind, [0, 0])
        pair[0] += solved
        pair[1] += 1
        self.with_note += solved and noted

    @property
    def by_kind(self) -> dict[str, Counts]:
        return {kind: Counts(total, solved) for kind, (solved, total) in self.kinds.items()}

    @property
    def tally(self) -> Counts:
        return Counts(sum(t for _, t in self.kinds.values()), sum(s for s, _ in self.kinds.values()))


def mastery(*, user: User, workbook: Workbook | None = None) -> list[Mastery]:
    """The learner's mastery per published workbook (or one), each with its chapters. Two queries."""
    exercises = Exercise.objects.filter(is_active=True, workbook__is_published=True)
    if workbook is not None:
        exercises = exercises.filter(workbook=workbook)
    rows = exercises.order_by("workbook__position", "workbook__slug", "chapter__number", "position").values_list(
        "pk", "kind", "workbook__slug", "workbook__title", "chapter__number", "chapter__title"
    )
    solved = dict(
        ExerciseProgress.objects.filter(user=user, solved_at__isnull=False).values_list(
            "exercise_id", "solved_with_note"
        )
    )
    books: dict[str, Mastery] = {}
    chapters: dict[tuple[str, int], Mastery] = {}
    for pk, kind, slug, title, ch_number, ch_title in rows:
        book = books.get(slug)
        if book is None:
            book = books[slug] = Mastery(key=slug, title=title)
        chapter = chapters.get((slug, ch_number))
        if chapter is None:
            chapter = chapters[(slug, ch_number)] = Mastery(key=str(ch_number), title=ch_title)
            book.chapters.append(chapter)
        book.add(kind, pk in solved, noted=solved.get(pk, False))
        chapter.add(kind, pk in solved, noted=solved.get(pk, False))
    return list(books.values())


# ---------------------------------------------------------------------------------------------
# Streak
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Streak:
    current: int
    best: int
    solved_today: bool
    last_day: date | None
    time_zone: str
    solves: int
    points: int


def streak_get(*, user: User, at: datetime | None = None) -> Streak:
    """The learner's day streak: one primary-key lookup. A streak whose last day is before
    yesterday (in the learner's time zone) is broken and reads as 0."""
    row = LearnerStats.objects.filter(pk=user.pk).values_list(
        "current_streak", "best_streak", "last_day", "time_zone", "solves", "points"
    )
    found = row.first()
    if found is None:
        return Streak(0, 0, False, None, user.time_zone or settings.TIME_ZONE, 0, 0)
    current, best, last_day, tz_name, solves, points = found
    today = (at or timezone.now()).astimezone(ZoneInfo(tz_name)).date()
    return Streak(_alive(current, last_day, today), best, last_day == today, last_day, tz_name, solves, points)


def _alive(current: int, last_day: date | None, today: date) -> int:
    """A streak whose last day is before yesterday is broken: it reads as 0."""
    return current if last_day is not None and last_day >= today - timedelta(days=1) else 0


# ---------------------------------------------------------------------------------------------
# Daily activity (the calendar heatmap and the weekly chart) and where to continue
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Day:
    solves: int
    points: int


@dataclass(frozen=True)
class Activity:
    """The learner's solves per local day from ``start`` (a Monday) to ``today`` inclusive."""

    time_zone: str
    today: date
    start: date
    days: dict[date, Day]


def activity_get(*, user: User, weeks: int = 53, at: datetime | None = None) -> Activity:
    """The learner's daily activity over the last ``weeks`` weeks (Monday-started, the last one
    holding today), days in the learner's time zone: one query (two for a learner without a time
    zone of their own: then their first cohort's counts)."""
    time_zone = effective_time_zone(user)
    today = (at or timezone.now()).astimezone(ZoneInfo(time_zone)).date()
    start = today - timedelta(days=today.weekday(), weeks=weeks - 1)
    rows = DailyActivity.objects.filter(user=user, day__gte=start, day__lte=today).values_list(
        "day", "solves", "points"
    )
    return Activity(time_zone, today, start, {day: Day(solves, points) for day, solves, points in rows if solves})


def continue_point(*, user: User) -> Exercise | None:
    """Where the learner should go next: two queries, whatever the content's size.

    From the exercise of the learner's latest graded attempt: that exercise if it is unsolved,
    else the next unsolved one after it in its workbook (chapter number, then position: the
    order of ``exercise_list``), else the first unsolved exercise of any workbook (in workbook
    order); None once everything is solved. A learner without attempts starts at the first
    exercise of the first workbook. The exercise comes with its workbook and chapter, annotated
    ``resumed``: whether the learner has a graded attempt at all ("Continue" or "Start here").
    """
    latest = (
        Attempt.objects.filter(user=user, status=AttemptStatus.GRADED)
        .order_by("-created_at", "-id")
        .values_list("exercise_id", "exercise__workbook_id", "exercise__chapter__number", "exercise__position")
        .first()
    )
    solved = ExerciseProgress.objects.filter(user=user, exercise=OuterRef("pk"), solved_at__isnull=False)
    unsolved = (
        Exercise.objects.filter(~Exists(solved), is_active=True, workbook__is_published=True)
        .select_related("workbook", "chapter")
        .defer("workbook__summary", "workbook__prerequisites", "chapter__intro", "chapter__givens", "chapter__derived")
    )
    order = ["workbook__position", "workbook__slug", "chapter__number", "position", "pk"]
    if latest is None:
        return unsolved.annotate(resumed=Value(False)).order_by(*order).first()
    pk, workbook_id, chapter, position = latest
    # The latest exercise itself or any after it in its workbook come first; a retired exercise
    # still marks the place.
    here_or_after = Q(workbook_id=workbook_id) & (
        Q(chapter__number__gt=chapter)
        | Q(chapter__number=chapter, position__gt=position)
        | Q(chapter__number=chapter, position=position, pk__gte=pk)
    )
    ranked = unsolved.annotate(
        resumed=Value(True),
        after=Case(When(here_or_after, then=Value(0)), default=Value(1), output_field=IntegerField()),
    )
    return ranked.order_by("after", *order).first()


# ---------------------------------------------------------------------------------------------
# Leaderboards
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Entry:
    rank: int
    user_id: int
    username: str
    points: int
    me: bool


@dataclass(frozen=True)
class Board:
    scope: str
    period: str
    cohort_id: int | None
    starts: date | None
    time_zone: str
    entries: list[Entry]
    me: Entry | None
    me_hidden: bool
    ranked: int


def _week_label(board: str) -> date:
    return date.fromisoformat(board.rsplit(":", 1)[1])


def leaderboard(
    *,
    user: User,
    scope: str = "global",
    period: str = "all",
    cohort_id: int | None = None,
    limit: int = 50,
    at: datetime | None = None,
) -> Board:
    """Top ``limit`` and the caller's own rank (even outside the top), ties broken by who reached
    the score first, then by account age. Global: reads the top of an index and a bucket sum."""
    at = at or timezone.now()
    if scope == "cohort":
        if cohort_id is None:
            raise Http404("No such cohort.")
        cohort = cohort_get(user=user, cohort_id=cohort_id)
        return _cohort_board(cohort, user, period, limit, at)
    board = GLOBAL_ALL if period == "all" else global_week_board(at)
    entries = board_top(board=board, user_id=user.pk, limit=limit)
    own = board_rank(board=board, user=user)
    mine = next((e for e in entries if e.me), None) or own.entry
    starts = None if period == "all" else _week_label(board)
    return Board("global", period, None, starts, settings.TIME_ZONE, entries, mine, own.hidden, own.ranked)


_S, _B, _U = Score._meta.db_table, ScoreBucket._meta.db_table, User._meta.db_table
# Raw SQL: PostgreSQL runs this in ~0.2 ms off the ``score_board_rank`` index; building the
# same query through the ORM cost more than running it (bench/leaderboard.py).
_TOP = f"""
SELECT s.user_id, u.username, s.points FROM {_S} s JOIN {_U} u ON u.id = s.user_id
WHERE s.board = %s AND NOT s.hidden ORDER BY s.points DESC, s.reached_at, s.user_id LIMIT %s
"""  # noqa: S608 - names are ours, values are parameters


def board_top(*, board: str, user_id: int, limit: int = 50) -> list[Entry]:
    """The top of a global board: one range scan of the ``score_board_rank`` index."""
    with connection.cursor() as cursor:
        cursor.execute(_TOP, [board, limit])
        rows = cursor.fetchall()
    return [Entry(i + 1, uid, name, pts, uid == user_id) for i, (uid, name, pts) in enumerate(rows)]


@dataclass(frozen=True)
class OwnRank:
    entry: Entry | None
    hidden: bool
    ranked: int


# One statement: the learners on scores above mine (a sum over the board's buckets, ~100 rows
# whatever the learner count) plus those tied with me who got there first: the row comparison
# bounds the range scan of ``score_board_rank`` instead of filtering the whole tie.
_OWN_RANK = f"""
SELECT me.points, me.hidden,
    (SELECT COALESCE(SUM(b.learners), 0) FROM {_B} b WHERE b.board = %(board)s AND b.points > me.points)
    + (SELECT COUNT(*) FROM {_S} s
       WHERE s.board = %(board)s AND s.points = me.points AND NOT s.hidden
         AND (s.reached_at, s.user_id) < (me.reached_at, me.user_id)) + 1,
    (SELECT COALESCE(SUM(b.learners), 0) FROM {_B} b WHERE b.board = %(board)s)
FROM (SELECT 1 AS one) AS one LEFT JOIN {_S} me ON me.board = %(board)s AND me.user_id = %(user)s
"""  # noqa: S608 - names are ours, values are parameters


def board_rank(*, board: str, user: User) -> OwnRank:
    """The caller's rank on a global board, even far outside the top: one statement."""
    with connection.cursor() as cursor:
        cursor.execute(_OWN_RANK, {"board": board, "user": user.pk})
        points, hidden, rank, ranked = cursor.fetchone()
    if points is None or hidden:
        return OwnRank(None, bool(hidden), int(ranked))
    return OwnRank(Entry(int(rank), user.pk, user.username, int(points), True), False, int(ranked))


def _cohort_board(cohort: Cohort, user: User, period: str, limit: int, at: datetime) -> Board:
    """A cohort's board: its members' rows (a class, not 100k learners), hidden or not."""
    board = GLOBAL_ALL if period == "all" else cohort_week_board(cohort.pk, at, cohort.time_zone)
    rows = (
        Score.objects.filter(board=board, user__memberships__cohort=cohort)
        .order_by("-points", "reached_at", "user_id")
        .values_list("user_id", "user__username", "points")
    )
    ranked = [Entry(i + 1, uid, name, pts, uid == user.pk) for i, (uid, name, pts) in enumerate(rows)]
    starts = None if period == "all" else week_start(at, ZoneInfo(cohort.time_zone))
    mine = next((e for e in ranked if e.me), None)
    return Board("cohort", period, cohort.pk, starts, cohort.time_zone, ranked[:limit], mine, False, len(ranked))


# ---------------------------------------------------------------------------------------------
# Cohorts
# ---------------------------------------------------------------------------------------------


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


def members(*, cohort: Cohort) -> list[User]:
    return list(User.objects.filter(memberships__cohort=cohort).order_by("username"))


def member_get(*, cohort: Cohort, user_id: int) -> User:
    found = User.objects.filter(pk=user_id, memberships__cohort=cohort).first()
    if found is None:
        raise Http404("No such learner in this cohort.")
    return found


# ---------------------------------------------------------------------------------------------
# Instructor monitoring: the cohort's progress table and per-exercise statistics
# ---------------------------------------------------------------------------------------------


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
        ExerciseProgress.objects.filter(user_id__in=user_ids)
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
        current = _alive(s.current_streak, s.last_day, at.astimezone(ZoneInfo(s.time_zone)).date()) if s else 0
        result.append(
            LearnerRow(uid, username, cells, current, s.best_streak if s else 0, last_active.get(uid), joined_at)
        )
    return assigned, result


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


@dataclass(frozen=True)
class ExerciseStats:
    exercise_id: int
    number: str
    title: str
    kind: str
    attempts: int
    learners: int
    solved: int
    median_attempts: float | None
    revealed: int
    wrong_answers: list[tuple[str, int]]
    # Learners whose solve came only through an answer accepted with a unit note (GiB labelled GB).
    solved_with_note: int = 0

    @property
    def solve_rate(self) -> float | None:
        return self.solved / self.learners if self.learners else None

    @property
    def reveal_share(self) -> float | None:
        return self.revealed / self.learners if self.learners else None


def exercise_stats(*, cohort: Cohort, workbook: Workbook, top_wrong: int = 3) -> list[ExerciseStats]:
    """Per exercise of a workbook, over the cohort's learners: graded attempts, learners who
    tried, solve rate, median attempts to the first solve, the share who revealed instead of
    solving, and the most common wrong answers (read as the grader read them) with counts."""
    user_ids = list(Membership.objects.filter(cohort=cohort).values_list("user_id", flat=True))
    exercises = list(
        Exercise.objects.filter(workbook=workbook, is_active=True)
        .select_related("current_version")
        .order_by("chapter__number", "position")
    )
    progress: dict[int, list[ExerciseProgress]] = defaultdict(list)
    for p in ExerciseProgress.objects.filter(user_id__in=user_ids, workbook=workbook):
        progress[p.exercise_id].append(p)
    attempts = dict(
        Attempt.objects.filter(
            user_id__in=user_ids, exercise__workbook=workbook, status=AttemptStatus.GRADED, counted=True
        )
        .values("exercise_id")
        .annotate(n=Count("id"))
        .values_list("exercise_id", "n")
    )
    wrong: dict[int, Counter[str]] = defaultdict(Counter)
    labels = {e.pk: e for e in exercises}
    wrong_rows = Attempt.objects.filter(
        user_id__in=user_ids, exercise__workbook=workbook, verdict=Verdict.INCORRECT
    ).values_list("exercise_id", "part", "parsed", "outcome")
    for exercise_id, part, parsed, outcome in wrong_rows:
        if exercise_id in labels:
            wrong[exercise_id][answer_label(labels[exercise_id], part, parsed, outcome)] += 1
    result = []
    for e in exercises:
        rows = progress.get(e.pk, [])
        engaged = [p for p in rows if p.attempts or p.revealed_at or p.forfeited]
        to_solve = [p.attempts_to_solve for p in rows if p.attempts_to_solve is not None]
        result.append(
            ExerciseStats(
                exercise_id=e.pk,
                number=e.number,
                title=e.title,
                kind=e.kind,
                attempts=attempts.get(e.pk, 0),
                learners=len(engaged),
                solved=sum(1 for p in rows if p.first_solved_at is not None),
                median_attempts=statistics.median(to_solve) if to_solve else None,
                revealed=sum(1 for p in engaged if p.forfeited),
                wrong_answers=wrong[e.pk].most_common(top_wrong),
                solved_with_note=sum(1 for p in rows if p.solved and p.solved_with_note),
            )
        )
    return result


def answer_label(exercise: Exercise, part: str, parsed: dict[str, Any], outcome: str) -> str:
    """A wrong answer as the grader read it, so "0.5 GiB" and "512 MiB" count as one."""
    if part == AttemptPart.CODE:
        return f"code: {outcome or 'failed'}"
    return formats.get(exercise.format).answer_label(exercise, parsed)


def learner_attempts(*, cohort: Cohort, user_id: int, limit: int | None = 500) -> tuple[User, QuerySet[Attempt]]:
    """A member's attempt history, newest first (404 for anyone not in the cohort). ``limit=None``:
    all of it, for a paginator or a CSV file."""
    learner = member_get(cohort=cohort, user_id=user_id)
    qs = (
        Attempt.objects.filter(user=learner)
        .select_related("exercise__workbook", "version")
        .order_by("-created_at", "-id")
    )
    return learner, qs if limit is None else qs[:limit]


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
    spec = cache.resolved(attempt.version).spec
    shown = formats.get(spec.format).answer_shown(attempt, spec, parsed)
    if shown is not None:
        return shown
    answer = raw.get("answer")
    if isinstance(answer, str):  # a number (with its unit) or an expression, as typed
        return AnswerShown(answer, [])
    return AnswerShown(answer_label(attempt.exercise, attempt.part, parsed, attempt.outcome), [])


# ---- skills checklist ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SkillRow:
    skill: Skill
    check: SkillCheck | None
    due: bool  # ticked and its review is due now

    @property
    def state(self) -> str:
        if self.check is None:
            return "open"
        return "due" if self.due else "mastered"


@dataclass(frozen=True)
class SkillBoard:
    workbook: Workbook
    rows: list[SkillRow]

    @property
    def total(self) -> int:
        return len(self.rows)

    @property
    def mastered(self) -> int:
        return sum(1 for r in self.rows if r.check is not None)

    @property
    def due(self) -> int:
        return sum(1 for r in self.rows if r.due)


def skill_board(*, user: User, workbook: Workbook, at: datetime | None = None) -> SkillBoard:
    """The checklist with this learner's ticks and reviews due. Two queries."""
    now = at or timezone.now()
    skills = list(Skill.objects.filter(workbook=workbook, is_active=True).select_related("chapter"))
    checks = {c.skill_id: c for c in SkillCheck.objects.filter(user=user, skill__in=[s.pk for s in skills])}
    return SkillBoard(workbook, [skill_row(skill, checks.get(skill.pk), now) for skill in skills])


def skill_row(skill: Skill, check: SkillCheck | None, now: datetime | None = None) -> SkillRow:
    return SkillRow(skill, check, check is not None and check.due_at <= (now or timezone.now()))


def skill_get(*, workbook: Workbook, key: str) -> Skill:
    skill = Skill.objects.filter(workbook=workbook, key=key, is_active=True).first()
    if skill is None:
        raise Http404("No such skill.")
    return skill


# ---------------------------------------------------------------------------------------------
# The learner's rows and counts beside the content (workbook, chapter and exercise pages)
# ---------------------------------------------------------------------------------------------


def workbook_list(*, user: User | None) -> list[tuple[Workbook, Counts]]:
    """Published workbooks with the caller's solved/total counts (two queries)."""
    workbooks = list(
        Workbook.objects.filter(is_published=True)
        .annotate(total=Count("exercises", filter=Q(exercises__is_active=True)))
        .order_by("position", "slug")  # Meta.ordering does not apply to an aggregating query
    )
    solved = _solved_by(user, "workbook_id")
    return [(w, Counts(w.total, solved.get(w.pk, 0))) for w in workbooks]


def _solved_by(user: User | None, key: str, **filters: object) -> dict[int, int]:
    if user is None or not user.is_authenticated:
        return {}
    field = {"workbook_id": "workbook_id", "chapter_id": "exercise__chapter_id"}[key]
    rows = (
        ExerciseProgress.objects.filter(user=user, solved_at__isnull=False, exercise__is_active=True, **filters)
        .values(field)
        .annotate(n=Count("id"))
    )
    return {row[field]: row["n"] for row in rows}


def chapter_list(*, workbook: Workbook, user: User | None) -> list[tuple[Chapter, Counts]]:
    chapters = list(
        workbook.chapters.annotate(total=Count("exercises", filter=Q(exercises__is_active=True))).order_by("number")
    )
    solved = _solved_by(user, "chapter_id", workbook_id=workbook.pk)
    return [(c, Counts(c.total, solved.get(c.pk, 0))) for c in chapters]


def progress_map(*, user: User | None, exercises: list[Exercise]) -> dict[int, ExerciseProgress]:
    """The caller's progress rows for these exercises, in one query."""
    if user is None or not user.is_authenticated or not exercises:
        return {}
    rows = ExerciseProgress.objects.filter(user=user, exercise_id__in=[e.pk for e in exercises])
    return {p.exercise_id: p for p in rows}


def progress_get(*, user: User | None, exercise: Exercise) -> ExerciseProgress | None:
    return progress_map(user=user, exercises=[exercise]).get(exercise.pk)
