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
_COLUMNS = (
    "id", "attempts", "hints_used", "solved_at", "revealed_at", "first_solve_attempt_id", "last_attempt_at",
    "last_attempt_id", "parts_solved",
)  # fmt: skip

# Count the attempt and add the part it solved (a bit; 0 when wrong) to parts_solved. The attempt
# that completes every part (%(all)s) sets solved_at and first_solve_attempt; later ones keep
# them. The row lock ON CONFLICT takes serializes concurrent attempts by the same learner, so
# two parts solved at once still complete the exercise exactly once.
_SOLVES = f"({_PROGRESS}.solved_at IS NULL AND excluded.parts_solved <> 0 AND ({_PROGRESS}.parts_solved | excluded.parts_solved) = %s)"
_UPSERT_TAIL = f"""
ON CONFLICT (user_id, exercise_id) DO UPDATE SET
    attempts = {_PROGRESS}.attempts + 1,
    last_attempt_at = excluded.last_attempt_at,
    last_attempt_id = excluded.last_attempt_id,
    parts_solved = {_PROGRESS}.parts_solved | excluded.parts_solved,
    first_solve_attempt_id = CASE WHEN {_SOLVES} THEN excluded.last_attempt_id
                                  ELSE {_PROGRESS}.first_solve_attempt_id END,
    solved_at = CASE WHEN {_SOLVES} THEN excluded.last_attempt_at ELSE {_PROGRESS}.solved_at END
RETURNING {", ".join(_COLUMNS)}
"""
_INSERT_COLUMNS = (
    "user_id, exercise_id, workbook_id, attempts, hints_used, solved_at, revealed_at, first_solve_attempt_id, "
    "last_attempt_at, last_attempt_id, parts_solved"
)

# Portable (PostgreSQL and SQLite >= 3.35), for an attempt already inserted.
_RECORD_ATTEMPT = (
    f"INSERT INTO {_PROGRESS} ({_INSERT_COLUMNS}) VALUES (%s, %s, %s, 1, 0, %s, NULL, %s, %s, %s, %s)"  # noqa: S608 - names are ours
    + _UPSERT_TAIL
)

# PostgreSQL: the attempt insert and the progress upsert as one statement — one round trip, atomic
# on its own, no BEGIN/COMMIT. This is the grading hot path (bench/grading_api.py).
_INSERT_ATTEMPT_AND_RECORD = f"""
WITH new_attempt AS (
    INSERT INTO {_ATTEMPT} (user_id, exercise_id, version_id, part, status, raw, parsed, verdict, outcome, score,
                            feedback, details, created_at)
    VALUES (%s, %s, %s, %s, 'graded', %s::jsonb, %s::jsonb, %s, '', %s, %s, %s::jsonb, %s)
    RETURNING id, created_at
), progress AS (
    INSERT INTO {_PROGRESS} ({_INSERT_COLUMNS})
    SELECT %s, %s, %s, 1, 0, CASE WHEN %s THEN a.created_at END, NULL, CASE WHEN %s THEN a.id END, a.created_at,
           a.id, %s
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


def attempt_record(*, attempt: Attempt, part_bit: int = 1, all_parts: int = 1) -> tuple[ExerciseProgress, bool]:
    """Insert an unsaved, graded attempt and count it in the learner's progress, atomically.

    ``part_bit`` is the part this attempt answers (1 for a one-part exercise); ``all_parts`` the
    bits that make the exercise solved. Returns the updated progress row and whether this attempt
    is the one that first solved the exercise. ``attempt`` comes back saved (its pk set).
    """
    bit = part_bit if attempt.verdict == Verdict.CORRECT else 0
    completes = bit != 0 and bit == all_parts
    workbook_id = attempt.exercise.workbook_id
    if connection.vendor != "postgresql":
        with transaction.atomic():
            attempt.save()
            return attempt_count(attempt=attempt, part_bit=part_bit, all_parts=all_parts)
    params: list[Any] = [
        attempt.user_id, attempt.exercise_id, attempt.version_id, attempt.part, json.dumps(attempt.raw),
        json.dumps(attempt.parsed), attempt.verdict, attempt.score, attempt.feedback,
        json.dumps(attempt.details), attempt.created_at,
        attempt.user_id, attempt.exercise_id, workbook_id, completes, completes, bit,
        all_parts, all_parts,
    ]  # fmt: skip
    with connection.cursor() as cursor:
        cursor.execute(_INSERT_ATTEMPT_AND_RECORD, params)
        row = cursor.fetchone()
    attempt.pk = row[0]
    attempt._state.adding = False
    return _progress(attempt, workbook_id, row[1:])


def attempt_count(*, attempt: Attempt, part_bit: int = 1, all_parts: int = 1) -> tuple[ExerciseProgress, bool]:
    """Count an attempt that is already saved and graded (a sandbox run that just finished)."""
    bit = part_bit if attempt.verdict == Verdict.CORRECT else 0
    completes = bit != 0 and bit == all_parts
    at = attempt.finished_at or attempt.created_at
    workbook_id = attempt.exercise.workbook_id
    params = [attempt.user_id, attempt.exercise_id, workbook_id, at if completes else None,
              attempt.pk if completes else None, at, attempt.pk, bit, all_parts, all_parts]  # fmt: skip
    with connection.cursor() as cursor:
        cursor.execute(_RECORD_ATTEMPT, params)
        row = cursor.fetchone()
    return _progress(attempt, workbook_id, row)


def _progress(attempt: Attempt, workbook_id: int, row: Any) -> tuple[ExerciseProgress, bool]:
    values = dict(zip(_COLUMNS, row, strict=True))
    for key in ("solved_at", "revealed_at", "last_attempt_at"):
        values[key] = _aware(values[key])
    progress = ExerciseProgress(
        user_id=attempt.user_id, exercise_id=attempt.exercise_id, workbook_id=workbook_id, **values
    )
    progress._state.adding = False
    return progress, values["first_solve_attempt_id"] == attempt.pk and attempt.verdict == Verdict.CORRECT


def _aware(value: object) -> datetime | None:
    """SQLite hands timestamps back as naive UTC text through a raw cursor; PostgreSQL as aware datetimes."""
    if value is None:
        return None
    parsed = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)
