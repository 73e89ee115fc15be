"""The instructor's cohort overview: every learner on every assigned workbook with who is at risk,
and the exercises the cohort is stuck on.

At risk, each with its reason (``Risk``):

- ``idle``: no solve for ``idle_days`` days (or none since joining that long ago);
- ``behind``: on a workbook with a due date, less than half as far through as the time gone by
  (from joining to the due day) says they should be, once a quarter of that time has gone;
- ``overdue``: past a due day with the workbook incomplete.

Stuck points, per exercise of the assigned workbooks, over the cohort's learners: reveals (the
answer shown before a solve), learners stuck (tried, neither solved nor revealed), graded attempts
per solve and the median time from a learner's first attempt to their first solve.

A fixed number of queries whatever the cohort's size (``bench/overview.py`` measures 500 learners).
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any, Literal
from zoneinfo import ZoneInfo

from django.db.models import Count, DurationField, ExpressionWrapper, F, OuterRef, Q, Subquery, Sum
from django.utils import timezone

from apps.exercises.models import Attempt, Exercise
from apps.exercises.selectors import Counts
from apps.progress.models import Cohort, CohortWorkbook, ExerciseProgress
from apps.progress.selectors.cohorts import LearnerRow, cohort_progress

IDLE_DAYS = 7
# Behind pace: done < elapsed × PACE_SHARE, once elapsed >= PACE_FROM (fractions of the window).
PACE_SHARE = 0.5
PACE_FROM = 0.25

RiskCode = Literal["idle", "behind", "overdue"]


@dataclass(frozen=True)
class Risk:
    code: RiskCode
    workbook: str | None  # the workbook's slug (behind, overdue), None for idle
    detail: str


@dataclass(frozen=True)
class OverviewRow:
    learner: LearnerRow
    solved: int  # over every assigned workbook
    total: int
    days_since_solve: int | None  # None: never solved
    risks: list[Risk]

    @property
    def mastery(self) -> float:
        return self.solved / self.total if self.total else 0.0

    @property
    def percent(self) -> int:
        return Counts(self.total, self.solved).percent

    @property
    def at_risk(self) -> bool:
        return bool(self.risks)

    # The admin's template reads these through the row.
    @property
    def user_id(self) -> int:
        return self.learner.user_id

    @property
    def username(self) -> str:
        return self.learner.username


@dataclass
class StuckPoint:
    exercise_id: int
    workbook: str
    number: str
    title: str
    kind: str
    learners: int = 0  # tried or revealed
    solved: int = 0
    reveals: int = 0  # revealed before ever solving
    stuck: int = 0  # tried, neither solved nor revealed
    attempts: int = 0  # graded attempts, all learners
    minutes: list[float] = field(default_factory=list, repr=False)

    @property
    def attempts_per_solve(self) -> float | None:
        return round(self.attempts / self.solved, 2) if self.solved else None

    @property
    def median_minutes_to_solve(self) -> float | None:
        return round(statistics.median(self.minutes), 1) if self.minutes else None

    @property
    def time_to_solve(self) -> str:
        """The median, in words: "12 min", "3.5 h", "2.1 days" ("" when nobody solved it)."""
        minutes = self.median_minutes_to_solve
        if minutes is None:
            return ""
        if minutes < 1:
            return "< 1 min"
        if minutes < 60:
            return f"{minutes:.0f} min"
        if minutes < 48 * 60:
            return f"{minutes / 60:.1f} h"
        return f"{minutes / 1440:.1f} days"

    @property
    def score(self) -> float:
        """How stuck the cohort is here: learners who gave up or are stuck, then attempts per solve."""
        return self.reveals + self.stuck + (self.attempts_per_solve or self.attempts) / 100


@dataclass(frozen=True)
class CohortOverview:
    cohort: Cohort
    assigned: list[CohortWorkbook]
    rows: list[OverviewRow]
    stuck_points: list[StuckPoint]
    idle_days: int
    at: datetime

    @property
    def at_risk(self) -> int:
        return sum(1 for r in self.rows if r.at_risk)


LEARNER_SORTS = ("risk", "learner", "mastery", "last_active", "last_solve", "streak", "overdue")
STUCK_SORTS = ("stuck", "reveals", "attempts_per_solve", "time_to_solve", "solve_rate")


def cohort_overview(
    *,
    cohort: Cohort,
    idle_days: int = IDLE_DAYS,
    sort: str = "risk",
    descending: bool = False,
    stuck_sort: str = "stuck",
    stuck_limit: int | None = 10,
    at: datetime | None = None,
) -> CohortOverview:
    """Learners × assigned workbooks with risks, sorted by ``sort`` (``LEARNER_SORTS`` or
    ``workbook:<slug>``), and the ``stuck_limit`` stuckest exercises by ``stuck_sort``."""
    at = at or timezone.now()
    today = at.astimezone(ZoneInfo(cohort.time_zone)).date()
    assigned, learners = cohort_progress(cohort=cohort, at=at)
    rows = [_row(learner, assigned, today, at, idle_days) for learner in learners]
    rows.sort(key=_learner_key(sort), reverse=descending)
    stuck = stuck_points(assigned=assigned, user_ids=[r.user_id for r in rows])
    stuck.sort(key=_stuck_key(stuck_sort))
    return CohortOverview(cohort, assigned, rows, stuck[:stuck_limit], idle_days, at)


def _row(learner: LearnerRow, assigned: list[CohortWorkbook], today: date, at: datetime, idle_days: int) -> OverviewRow:
    risks: list[Risk] = []
    learner_today = at.astimezone(ZoneInfo(learner.time_zone)).date()
    since = (learner_today - learner.last_solve_day).days if learner.last_solve_day else None
    joined = learner.joined_at.astimezone(ZoneInfo(learner.time_zone)).date()
    if since is not None and since >= idle_days:
        risks.append(Risk("idle", None, f"no solve for {since} days"))
    elif since is None and (learner_today - joined).days >= idle_days:
        risks.append(Risk("idle", None, f"no solve since joining {(learner_today - joined).days} days ago"))
    for a, cell in zip(assigned, learner.cells, strict=True):
        if cell.overdue:
            risks.append(Risk("overdue", cell.slug, f"{cell.slug}: overdue, {cell.percent}% done"))
            continue
        if a.due_on is None or not cell.total or cell.solved >= cell.total:
            continue
        start = min(joined, a.due_on)
        window = (a.due_on - start).days + 1  # through the end of the due day
        elapsed = min(1.0, (today - start).days / window)
        done = cell.solved / cell.total
        if elapsed >= PACE_FROM and done < elapsed * PACE_SHARE:
            risks.append(
                Risk(
                    "behind",
                    cell.slug,
                    f"{cell.slug}: {cell.percent}% done with {round(elapsed * 100)}% of the time gone",
                )
            )
    solved = sum(c.solved for c in learner.cells)
    total = sum(c.total for c in learner.cells)
    return OverviewRow(learner, solved, total, since, risks)


_NEVER = datetime.min.replace(tzinfo=ZoneInfo("UTC"))


def _learner_key(sort: str) -> Any:
    if sort.startswith("workbook:"):
        slug = sort.partition(":")[2]
        return lambda r: (
            next((c.solved / c.total for c in r.learner.cells if c.slug == slug and c.total), 0.0),
            r.username,
        )
    keys: dict[str, Any] = {
        # At risk first (most reasons first), then the least mastery.
        "risk": lambda r: (-len(r.risks), r.mastery, r.username),
        "learner": lambda r: r.username,
        "mastery": lambda r: (r.mastery, r.username),
        "last_active": lambda r: (r.learner.last_active or _NEVER, r.username),
        # Longest without a solve first; never solved before all.
        "last_solve": lambda r: (-(r.days_since_solve if r.days_since_solve is not None else 10**6), r.username),
        "streak": lambda r: (r.learner.current_streak, r.username),
        "overdue": lambda r: (-len(r.learner.overdue), r.username),
    }
    return keys.get(sort, keys["risk"])


def _stuck_key(sort: str) -> Any:
    keys: dict[str, Any] = {
        "stuck": lambda s: (-s.score, s.workbook, s.number),
        "reveals": lambda s: (-s.reveals, -s.score, s.number),
        "attempts_per_solve": lambda s: (-(s.attempts_per_solve or 0.0), -s.score, s.number),
        "time_to_solve": lambda s: (-(s.median_minutes_to_solve or 0.0), -s.score, s.number),
        "solve_rate": lambda s: (s.solved / s.learners if s.learners else 1.0, -s.score, s.number),
    }
    return keys.get(sort, keys["stuck"])


def stuck_points(*, assigned: list[CohortWorkbook], user_ids: list[int]) -> list[StuckPoint]:
    """Per exercise the cohort's learners engaged with, in the assigned workbooks: three queries,
    the counts summed by the database, only the times to solve that are not zero fetched."""
    workbook_ids = [a.workbook_id for a in assigned]
    exercises = {
        pk: StuckPoint(pk, slug, number, title, kind)
        for pk, slug, number, title, kind in Exercise.objects.filter(
            workbook_id__in=workbook_ids, is_active=True
        ).values_list("pk", "workbook__slug", "number", "title", "kind")
    }
    if not user_ids or not exercises:
        return []
    engaged = ExerciseProgress.objects.filter(
        Q(attempts__gt=0) | Q(revealed_at__isnull=False) | Q(forfeited=True),
        user_id__in=user_ids,
        workbook_id__in=workbook_ids,
        exercise_id__in=list(exercises),
    )
    solved = Q(first_solved_at__isnull=False)
    first_try = solved & Q(attempts_to_solve=1)  # solved by the first attempt: no time to solve
    counts = engaged.values("exercise_id").annotate(
        n=Count("id"),
        n_solved=Count("id", filter=solved),
        n_reveals=Count("id", filter=Q(forfeited=True)),
        n_stuck=Count("id", filter=Q(first_solved_at__isnull=True, revealed_at__isnull=True, forfeited=False)),
        n_attempts=Sum("attempts"),
        n_first_try=Count("id", filter=first_try),
    )
    seen: dict[int, StuckPoint] = {}
    for row in counts:
        point = seen[row["exercise_id"]] = exercises[row["exercise_id"]]
        point.learners, point.solved, point.reveals = row["n"], row["n_solved"], row["n_reveals"]
        point.stuck, point.attempts = row["n_stuck"], row["n_attempts"] or 0
        point.minutes.extend([0.0] * row["n_first_try"])
    first_attempt = (
        Attempt.objects.filter(user_id=OuterRef("user_id"), exercise_id=OuterRef("exercise_id"))
        .order_by("created_at")
        .values("created_at")[:1]
    )
    took = (
        engaged.filter(solved)
        .exclude(first_try)
        .annotate(took=ExpressionWrapper(F("first_solved_at") - Subquery(first_attempt), DurationField()))
        .values_list("exercise_id", "took")
    )
    for exercise_id, spent in took:
        if spent is not None and spent >= timedelta(0):
            exercises[exercise_id].minutes.append(spent / timedelta(minutes=1))
    return list(seen.values())


def risk_counts(overview: CohortOverview) -> dict[str, Any]:
    """Counts for a headline: learners, at risk, by reason."""
    by_code: dict[str, int] = defaultdict(int)
    for row in overview.rows:
        for code in {r.code for r in row.risks}:
            by_code[code] += 1
    return {
        "learners": len(overview.rows),
        "at_risk": overview.at_risk,
        **{k: by_code.get(k, 0) for k in ("idle", "behind", "overdue")},
    }
