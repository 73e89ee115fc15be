"""Writes on a learner's per-exercise progress. Called inside the grading transaction."""

from __future__ import annotations

from datetime import UTC, datetime

from django.db import connection

from apps.accounts.models import User
from apps.exercises.choices import Verdict
from apps.exercises.models import Attempt, Exercise
from apps.progress.models import ExerciseProgress

_TABLE = ExerciseProgress._meta.db_table
_COLUMNS = ("id", "attempts", "hints_used", "solved_at", "revealed_at", "first_solve_attempt_id", "last_attempt_at")

# One statement instead of SELECT ... FOR UPDATE + UPDATE: the row lock ON CONFLICT takes
# serializes concurrent attempts, the first correct one sets solved_at and first_solve_attempt,
# later ones keep them. Valid on PostgreSQL and on SQLite >= 3.35 (the embedded default).
_RECORD_ATTEMPT = f"""
INSERT INTO {_TABLE} (user_id, exercise_id, workbook_id, attempts, hints_used,
                      solved_at, revealed_at, first_solve_attempt_id, last_attempt_at)
VALUES (%s, %s, %s, 1, 0, %s, NULL, %s, %s)
ON CONFLICT (user_id, exercise_id) DO UPDATE SET
    attempts = {_TABLE}.attempts + 1,
    last_attempt_at = excluded.last_attempt_at,
    first_solve_attempt_id = CASE WHEN {_TABLE}.solved_at IS NULL
                                  THEN excluded.first_solve_attempt_id
                                  ELSE {_TABLE}.first_solve_attempt_id END,
    solved_at = COALESCE({_TABLE}.solved_at, excluded.solved_at)
RETURNING {", ".join(_COLUMNS)}
"""  # noqa: S608 - table and column names are ours, values are parameters


def progress_lock(*, user: User, exercise: Exercise) -> ExerciseProgress:
    """The learner's row for this exercise, created if needed and locked for the transaction."""
    progress, _ = ExerciseProgress.objects.select_for_update().get_or_create(
        user=user, exercise=exercise, defaults={"workbook_id": exercise.workbook_id}
    )
    return progress


def progress_record_attempt(*, attempt: Attempt) -> tuple[ExerciseProgress, bool]:
    """Count a graded attempt and mark the first solve, atomically, in one round trip.

    Returns the updated row and whether this attempt is the one that first solved the exercise.
    """
    correct = attempt.verdict == Verdict.CORRECT
    at: datetime = attempt.created_at
    params = [
        attempt.user_id,
        attempt.exercise_id,
        attempt.exercise.workbook_id,
        at if correct else None,
        attempt.pk if correct else None,
        at,
    ]
    with connection.cursor() as cursor:
        cursor.execute(_RECORD_ATTEMPT, params)
        row = cursor.fetchone()
    values = dict(zip(_COLUMNS, row, strict=True))
    for key in ("solved_at", "revealed_at", "last_attempt_at"):
        values[key] = _aware(values[key])
    progress = ExerciseProgress(
        user_id=attempt.user_id, exercise_id=attempt.exercise_id, workbook_id=attempt.exercise.workbook_id, **values
    )
    progress._state.adding = False
    return progress, correct and values["first_solve_attempt_id"] == attempt.pk


def _aware(value: object) -> datetime | None:
    """SQLite hands timestamps back as naive UTC text through a raw cursor; PostgreSQL as aware datetimes."""
    if value is None:
        return None
    parsed = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)
