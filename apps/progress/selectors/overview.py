"""The instructor's cohort overview: every learner on every assigned workbook with who is at risk,
and the exercises the cohort is stuck on.

At risk, each with its reason (``Risk``):

- ``idle``: no solve for ``idle_days`` days (or none since joining that long ago);
- ``behind``: on a workbook with a due date, less than half as far through as the time gone by
  (from joining to the due day) says they should be, once a quarter of that time has gone;
- ``overdue``: past a due day with the workbook incomplete.

Stuck points, per exercise of the assigned workbooks, over the cohort's learners: the figures of
``selectors.figures`` (learners who solved, revealed before solving, or are stuck; the median
attempts and time to solve), which the exercise statistics read too.

A fixed number of queries whatever the cohort's size (``bench/overview.py`` measures 500 learners).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Literal
from zoneinfo import ZoneInfo

from django.utils import timezone

from apps.exercises.models import Exercise
from apps.exercises.selectors import Counts
from apps.progress.models import Cohort, CohortWorkbook
from apps.progress.selectors.cohorts import LearnerRow, cohort_progress
from apps.progress.selectors.figures import ExerciseFigures, WithFigures, exercise_figures

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


@dataclass(frozen=True)
class StuckPoint(WithFigures):
    """An exercise of the assigned workbooks with its figures (``selectors.figures``)."""

    exercise_id: int
    workbook: str
    number: str
    title: str
    kind: str
    figures: ExerciseFigures

    @property
    def score(self) -> float:
        """How stuck the cohort is here: learners who revealed or are stuck, then the median
        attempts to solve (all attempts when nobody solved it)."""
        f = self.figures
        return f.revealed + f.stuck + (f.median_attempts_to_solve or f.attempts) / 100


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
STUCK_SORTS = ("stuck", "revealed", "attempts_to_solve", "time_to_solve", "solve_rate")


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
        "revealed": lambda s: (-s.revealed, -s.score, s.number),
        "attempts_to_solve": lambda s: (-(s.median_attempts_to_solve or 0.0), -s.score, s.number),
        "time_to_solve": lambda s: (-(s.median_minutes_to_solve or 0.0), -s.score, s.number),
        "solve_rate": lambda s: (s.solve_rate if s.solve_rate is not None else 1.0, -s.score, s.number),
    }
    return keys.get(sort, keys["stuck"])


def stuck_points(*, assigned: list[CohortWorkbook], user_ids: list[int]) -> list[StuckPoint]:
    """Per exercise the cohort's learners engaged with, in the assigned workbooks, with its figures
    (``figures.exercise_figures``, the one definition): three queries."""
    exercises = list(
        Exercise.objects.filter(workbook_id__in=[a.workbook_id for a in assigned], is_active=True).values_list(
            "pk", "workbook__slug", "number", "title", "kind"
        )
    )
    figures = exercise_figures(user_ids=user_ids, exercise_ids=[pk for pk, *_ in exercises])
    return [
        StuckPoint(pk, slug, number, title, kind, figures[pk])
        for pk, slug, number, title, kind in exercises
        if pk in figures
    ]


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
