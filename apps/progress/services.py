"""Writes on a learner's per-exercise progress, in the same transaction as the graded attempt."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from django.db import connection, transaction

from apps.accounts.models import User
from apps.exercises.choices import Verdict
from apps.exercises.models import Attempt, Exercise
from apps.progress.models import ExerciseProgress

_PROGRESS = ExerciseProgress._meta.db_table
_ATTEMPT = Attempt._meta.db_table
_COLUMNS = ("id", "attempts", "hints_used", "solved_at", "revealed_at", "first_solve_attempt_id", "last_attempt_at")

# Count the attempt; the first correct one sets solved_at and first_solve_attempt, later ones keep
# them. The row lock ON CONFLICT takes serializes concurrent attempts by the same learner.
_UPSERT_TAIL = f"""
ON CONFLICT (user_id, exercise_id) DO UPDATE SET
    attempts = {_PROGRESS}.attempts + 1,
    last_attempt_at = excluded.last_attempt_at,
    first_solve_attempt_id = CASE WHEN {_PROGRESS}.solved_at IS NULL
                                  THEN excluded.first_solve_attempt_id
                                  ELSE {_PROGRESS}.first_solve_attempt_id END,
    solved_at = COALESCE({_PROGRESS}.solved_at, excluded.solved_at)
RETURNING {", ".join(_COLUMNS)}
"""
_INSERT_COLUMNS = "user_id, exercise_id, workbook_id, attempts, hints_used, solved_at, revealed_at, first_solve_attempt_id, last_attempt_at"

# Portable (PostgreSQL and SQLite >= 3.35): the attempt is already inserted.
_RECORD_ATTEMPT = (
    f"INSERT INTO {_PROGRESS} ({_INSERT_COLUMNS}) VALUES (%s, %s, %s, 1, 0, %s, NULL, %s, %s)"  # noqa: S608 - names are ours
    + _UPSERT_TAIL
)

# PostgreSQL: the attempt insert and the progress upsert as one statement — one round trip, atomic
# on its own, no BEGIN/COMMIT. This is the grading hot path (bench/grading_api.py).
_INSERT_ATTEMPT_AND_RECORD = f"""
WITH new_attempt AS (
    INSERT INTO {_ATTEMPT} (user_id, exercise_id, version_id, raw, parsed, verdict, score, feedback, details, created_at)
    VALUES (%s, %s, %s, %s::jsonb, %s::jsonb, %s, %s, %s, %s::jsonb, %s)
    RETURNING id, created_at
), progress AS (
    INSERT INTO {_PROGRESS} ({_INSERT_COLUMNS})
    SELECT %s, %s, %s, 1, 0, CASE WHEN %s THEN a.created_at END, NULL, CASE WHEN %s THEN a.id END, a.created_at
    FROM new_attempt AS a
    {_UPSERT_TAIL}
)
SELECT new_attempt.id, progress.* FROM new_attempt, progress
"""  # noqa: S608 - table and column names are ours, values are parameters


def progress_lock(*, user: User, exercise: Exercise) -> ExerciseProgress:
    """The learner's row for this exercise, created if needed and locked for the transaction."""
    progress, _ = ExerciseProgress.objects.select_for_update().get_or_create(
        user=user, exercise=exercise, defaults={"workbook_id": exercise.workbook_id}
    )
    return progress


def attempt_record(*, attempt: Attempt) -> tuple[ExerciseProgress, bool]:
    """Insert an unsaved attempt and count it in the learner's progress, atomically.

    Returns the updated progress row and whether this attempt is the one that first solved
    the exercise. ``attempt`` comes back saved (its pk set).
    """
    correct = attempt.verdict == Verdict.CORRECT
    workbook_id = attempt.exercise.workbook_id
    if connection.vendor == "postgresql":
        params: list[Any] = [
            attempt.user_id, attempt.exercise_id, attempt.version_id, json.dumps(attempt.raw),
            json.dumps(attempt.parsed), attempt.verdict, attempt.score, attempt.feedback,
            json.dumps(attempt.details), attempt.created_at,
            attempt.user_id, attempt.exercise_id, workbook_id, correct, correct,
        ]  # fmt: skip
        with connection.cursor() as cursor:
            cursor.execute(_INSERT_ATTEMPT_AND_RECORD, params)
            row = cursor.fetchone()
        attempt.pk = row[0]
        attempt._state.adding = False
        values = dict(zip(_COLUMNS, row[1:], strict=True))
    else:
        with transaction.atomic():
            attempt.save()
            at = attempt.created_at
            params = [attempt.user_id, attempt.exercise_id, workbook_id, at if correct else None,
                      attempt.pk if correct else None, at]  # fmt: skip
            with connection.cursor() as cursor:
                cursor.execute(_RECORD_ATTEMPT, params)
                values = dict(zip(_COLUMNS, cursor.fetchone(), strict=True))
    for key in ("solved_at", "revealed_at", "last_attempt_at"):
        values[key] = _aware(values[key])
    progress = ExerciseProgress(
        user_id=attempt.user_id, exercise_id=attempt.exercise_id, workbook_id=workbook_id, **values
    )
    progress._state.adding = False
    return progress, correct and values["first_solve_attempt_id"] == attempt.pk


def _aware(value: object) -> datetime | None:
    """SQLite hands timestamps back as naive UTC text through a raw cursor; PostgreSQL as aware datetimes."""
    if value is None:
        return None
    parsed = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)
