"""The instructor's per-exercise figures, defined once: the overview's stuck points, the exercise
statistics page, their CSV files and the API all read ``exercise_figures``.

Over a set of learners (a cohort's) and one exercise, each learner who *engaged* with it (made a
graded attempt, solved or revealed it) is in exactly one of three groups, from their progress row
(``ExerciseProgress``, whose first-solve history a workbook reset keeps):

- **revealed**: revealed the answer before their first solve (``forfeited``), whether or not they
  solved it afterwards: revealing first means the answer was shown, not found;
- **solved**: solved it without revealing first (a reveal after the solve changes nothing);
- **stuck**: neither.

And over the *solved* learners only (a revealed learner's later solve is not theirs to count):

- **attempts to solve**: counted attempts up to and including the first solve
  (``attempts_to_solve``; a multi-part check that leaves parts for later is not counted); attempts
  made after the solve are not in it;
- **time to solve**: from the learner's first counted attempt to their first solve, in minutes (0
  when the first counted attempt solved it).

Both are reported as the **median** over the solved learners, everywhere ("median attempts to
solve", "median time to solve"); ``attempts`` is every counted attempt by every engaged learner
(the cohort's effort, after solves too). Shares are of the engaged learners, so solved, revealed
and stuck add up to 100%.

Two queries whatever the number of learners: the groups with a histogram of attempts to solve,
summed by the database, then the times to solve that are not zero.
"""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass, field
from datetime import timedelta

from django.db.models import (
    Case,
    CharField,
    Count,
    DurationField,
    ExpressionWrapper,
    F,
    IntegerField,
    OuterRef,
    Q,
    Subquery,
    Sum,
    Value,
    When,
)

from apps.exercises.choices import AttemptStatus
from apps.exercises.models import Attempt
from apps.progress.models import ExerciseProgress

SOLVED, REVEALED, STUCK = "solved", "revealed", "stuck"

# Engaged: a graded attempt, a solve or a reveal.
ENGAGED = Q(attempts__gt=0) | Q(first_solved_at__isnull=False) | Q(revealed_at__isnull=False) | Q(forfeited=True)
# The three groups; they never overlap.
IS_REVEALED = Q(forfeited=True)
IS_SOLVED = Q(forfeited=False, first_solved_at__isnull=False)


@dataclass
class ExerciseFigures:
    """One exercise's figures over a set of learners (see the module's docstring)."""

    learners: int = 0  # engaged: solved + revealed + stuck
    solved: int = 0
    revealed: int = 0
    stuck: int = 0
    attempts: int = 0  # counted attempts, every engaged learner, after a solve too
    # Solved learners by their counted attempts up to and including the first solve.
    attempts_to_solve: Counter[int] = field(default_factory=Counter, repr=False)
    minutes_to_solve: list[float] = field(default_factory=list, repr=False)

    @property
    def solve_rate(self) -> float | None:
        return self.solved / self.learners if self.learners else None

    @property
    def reveal_share(self) -> float | None:
        return self.revealed / self.learners if self.learners else None

    @property
    def median_attempts_to_solve(self) -> float | None:
        if not self.attempts_to_solve:
            return None
        return float(statistics.median(sorted(self.attempts_to_solve.elements())))

    @property
    def median_minutes_to_solve(self) -> float | None:
        return round(statistics.median(self.minutes_to_solve), 1) if self.minutes_to_solve else None

    @property
    def time_to_solve(self) -> str:
        """The median time to solve in words: "12 min", "3.5 h", "2.1 days" ("" when nobody solved it)."""
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


def exercise_figures(*, user_ids: list[int], exercise_ids: list[int]) -> dict[int, ExerciseFigures]:
    """The figures of each exercise (by id) that at least one of ``user_ids`` engaged with."""
    if not user_ids or not exercise_ids:
        return {}
    engaged = ExerciseProgress.objects.filter(ENGAGED, user_id__in=user_ids, exercise_id__in=exercise_ids)
    group = Case(
        When(IS_REVEALED, then=Value(REVEALED)),
        When(IS_SOLVED, then=Value(SOLVED)),
        default=Value(STUCK),
        output_field=CharField(),
    )
    to_solve = Case(When(IS_SOLVED, then=F("attempts_to_solve")), default=None, output_field=IntegerField())
    rows = (
        engaged.annotate(group=group, to_solve=to_solve)
        .values("exercise_id", "group", "to_solve")
        .annotate(n=Count("id"), n_attempts=Sum("attempts"))
        .order_by()
    )
    figures: dict[int, ExerciseFigures] = {}
    for row in rows:
        f = figures.setdefault(row["exercise_id"], ExerciseFigures())
        n = row["n"]
        f.learners += n
        f.attempts += row["n_attempts"] or 0
        if row["group"] == SOLVED:
            f.solved += n
            if row["to_solve"] is not None:
                f.attempts_to_solve[row["to_solve"]] += n
            if row["to_solve"] == 1:  # the first counted attempt solved it
                f.minutes_to_solve.extend([0.0] * n)
        elif row["group"] == REVEALED:
            f.revealed += n
        else:
            f.stuck += n
    first_counted = (
        Attempt.objects.filter(
            user_id=OuterRef("user_id"),
            exercise_id=OuterRef("exercise_id"),
            status=AttemptStatus.GRADED,
            counted=True,
        )
        .order_by("created_at")
        .values("created_at")[:1]
    )
    took = (
        engaged.filter(IS_SOLVED)
        .exclude(attempts_to_solve=1)
        .annotate(took=ExpressionWrapper(F("first_solved_at") - Subquery(first_counted), DurationField()))
        .values_list("exercise_id", "took")
    )
    for exercise_id, spent in took:
        if spent is not None:
            figures[exercise_id].minutes_to_solve.append(max(spent, timedelta(0)) / timedelta(minutes=1))
    return figures


class WithFigures:
    """A row that carries an exercise's ``figures`` (a stuck point, a statistics row) reads them
    through these, so each figure has one name and one definition wherever it is shown."""

    figures: ExerciseFigures

    @property
    def learners(self) -> int:
        return self.figures.learners

    @property
    def solved(self) -> int:
        return self.figures.solved

    @property
    def revealed(self) -> int:
        return self.figures.revealed

    @property
    def stuck(self) -> int:
        return self.figures.stuck

    @property
    def attempts(self) -> int:
        return self.figures.attempts

    @property
    def solve_rate(self) -> float | None:
        return self.figures.solve_rate

    @property
    def reveal_share(self) -> float | None:
        return self.figures.reveal_share

    @property
    def median_attempts_to_solve(self) -> float | None:
        return self.figures.median_attempts_to_solve

    @property
    def median_minutes_to_solve(self) -> float | None:
        return self.figures.median_minutes_to_solve

    @property
    def time_to_solve(self) -> str:
        return self.figures.time_to_solve
