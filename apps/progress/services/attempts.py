"""Counting graded attempts in a learner's progress: one SQL statement per attempt on the hot path.

Everything a graded attempt changes is written in the attempt's transaction: the progress row,
and on a solve (apps.progress.services.solves) the streak, the day's activity and the leaderboard rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.db import connection, transaction

from apps.accounts.models import User
from apps.exercises.choices import Verdict
from apps.exercises.models import Attempt, Exercise
from apps.progress.models import ExerciseProgress
from apps.progress.services.reviews import review_wrong
from apps.progress.services.solves import solve_record

_PROGRESS = ExerciseProgress._meta.db_table
_COLUMNS = (
    "id", "attempts", "hints_used", "solved_at", "revealed_at", "first_solve_attempt_id", "last_attempt_at",
    "last_attempt_id", "parts_solved", "first_solved_at", "attempts_to_solve", "forfeited", "points",
    "solved_with_note", "round", "reviewing",
)  # fmt: skip

# Count the attempt (excluded.attempts: 1, or 0 for one that does not count) and add the part it
# solved (a bit; 0 when wrong) to parts_solved. The attempt that completes every part (%(all)s)
# sets solved_at and first_solve_attempt; later ones keep them. solved_with_note follows the
# completing attempt (accepted only with a unit note), and a later clean solve clears it. The
# row lock ON CONFLICT takes serializes concurrent attempts by the same learner, so two parts
# solved at once still complete the exercise exactly once.
_SOLVES = f"({_PROGRESS}.solved_at IS NULL AND excluded.parts_solved <> 0 AND ({_PROGRESS}.parts_solved | excluded.parts_solved) = %s)"
_UPSERT_TAIL = f"""
ON CONFLICT (user_id, exercise_id) DO UPDATE SET
    attempts = {_PROGRESS}.attempts + excluded.attempts,
    last_attempt_at = excluded.last_attempt_at,
    last_attempt_id = excluded.last_attempt_id,
    parts_solved = {_PROGRESS}.parts_solved | excluded.parts_solved,
    first_solve_attempt_id = CASE WHEN {_SOLVES} THEN excluded.last_attempt_id
                                  ELSE {_PROGRESS}.first_solve_attempt_id END,
    solved_at = CASE WHEN {_SOLVES} THEN excluded.last_attempt_at ELSE {_PROGRESS}.solved_at END,
    first_solved_at = COALESCE({_PROGRESS}.first_solved_at, CASE WHEN {_SOLVES} THEN excluded.last_attempt_at END),
    attempts_to_solve = COALESCE({_PROGRESS}.attempts_to_solve,
                                 CASE WHEN {_SOLVES} THEN {_PROGRESS}.attempts + excluded.attempts END),
    solved_with_note = CASE WHEN {_SOLVES} THEN excluded.solved_with_note
                            WHEN excluded.parts_solved <> 0 AND {_PROGRESS}.solved_at IS NOT NULL
                                THEN {_PROGRESS}.solved_with_note AND excluded.solved_with_note
                            ELSE {_PROGRESS}.solved_with_note END
RETURNING {", ".join(_COLUMNS)}
"""
_INSERT_COLUMNS = (
    "user_id, exercise_id, workbook_id, attempts, hints_used, solved_at, revealed_at, first_solve_attempt_id, "
    "last_attempt_at, last_attempt_id, parts_solved, first_solved_at, attempts_to_solve, forfeited, points, "
    "solved_with_note"
)
# Parameters of the upsert tail: each is the "all parts" bit set.
_TAIL_PARAMS = _UPSERT_TAIL.count("%s")

# Portable (PostgreSQL and SQLite >= 3.35), for an attempt already inserted.
_RECORD_ATTEMPT = (
    f"INSERT INTO {_PROGRESS} ({_INSERT_COLUMNS}) VALUES (%s, %s, %s, %s, 0, %s, NULL, %s, %s, %s, %s, %s, %s, FALSE, 0, %s)"  # noqa: S608 - names are ours
    + _UPSERT_TAIL
)

# PostgreSQL: the attempt's insert and the progress upsert as one statement — one round trip,
# atomic on its own, no BEGIN/COMMIT. This is the grading hot path (bench/grading_api.py). The
# attempt's insert is not written here: apps.learning owns attempts and hands it over
# (``AttemptInsert``); this module only adds the progress it implies.
_RECORD_AFTER = f"""
    RETURNING id, created_at
), progress AS (
    INSERT INTO {_PROGRESS} ({_INSERT_COLUMNS})
    SELECT %s, %s, %s, %s, 0, CASE WHEN %s THEN a.created_at END, NULL, CASE WHEN %s THEN a.id END, a.created_at,
           a.id, %s, CASE WHEN %s THEN a.created_at END, CASE WHEN %s THEN 1 END, FALSE, 0, %s
    FROM new_attempt AS a
    {_UPSERT_TAIL}
)
SELECT new_attempt.id, progress.* FROM new_attempt, progress
"""  # noqa: S608 - table and column names are ours, values are parameters

# The same, for a correct answer, guarded: it writes only if the attempt does not complete the
# exercise (already solved, or one part of several) and returns no row otherwise; the caller then
# records the completing attempt in a transaction with the streak and scores. Re-answering a
# solved exercise thus stays one round trip. The guard reads without a lock, so its upsert is
# given an impossible "all parts" (-1) and can never complete an exercise itself: if a reset
# slips in between, the attempt is counted and the next correct answer completes it.
_IF_NOT_COMPLETING = f"""
WITH cur AS (
    SELECT solved_at, parts_solved FROM {_PROGRESS} WHERE user_id = %s AND exercise_id = %s
), go AS (
    SELECT 1 WHERE NOT COALESCE((SELECT solved_at IS NULL AND (parts_solved | %s) = %s FROM cur), %s = %s)
), new_attempt AS ("""  # noqa: S608


@dataclass(frozen=True)
class AttemptInsert:
    """An attempt's insert as ``INSERT INTO … (…) SELECT <values>`` (no FROM, no RETURNING) with
    its parameters, from the attempts' owner (apps.learning), to run in one statement with the
    progress it implies."""

    sql: str
    params: list[Any]


@dataclass(frozen=True)
class AttemptGuard:
    """A condition the attempt is written under, checked in its own statement (an SQL boolean
    expression and its parameters): when it does not hold, nothing is written."""

    sql: str
    params: list[Any]


def _record_sql(insert: AttemptInsert, *, guarded: bool, only_if: AttemptGuard | None = None) -> str:
    where = f" WHERE {only_if.sql}" if only_if is not None else ""
    if guarded:
        return f"{_IF_NOT_COMPLETING}\n    {insert.sql} FROM go{where}{_RECORD_AFTER}"
    return f"WITH new_attempt AS (\n    {insert.sql}{where}{_RECORD_AFTER}"


def progress_lock(*, user: User, exercise: Exercise) -> ExerciseProgress:
    """The learner's row for this exercise, created if needed and locked for the transaction."""
    progress, _ = ExerciseProgress.objects.select_for_update().get_or_create(
        user=user, exercise=exercise, defaults={"workbook_id": exercise.workbook_id}
    )
    return progress


def attempt_record(
    *, attempt: Attempt, insert: AttemptInsert, part_bit: int = 1, all_parts: int = 1, guard: AttemptGuard | None = None
) -> tuple[ExerciseProgress, bool] | None:
    """Run an unsaved, graded attempt's ``insert`` and count it in the learner's progress, atomically
    (PostgreSQL; elsewhere the owner saves the attempt and calls ``attempt_count``).

    ``part_bit`` is the part this attempt answers (1 for a one-part exercise); ``all_parts`` the
    bits that make the exercise solved. Returns the updated progress row and whether this attempt
    is the one that solved the exercise (then the streak and scores moved with it, in the same
    transaction). ``attempt`` comes back with its pk set. With ``guard``, the attempt is written
    only if the guard holds, checked in the same statement; None when it did not (nothing written).
    """
    bit = part_bit if attempt.verdict == Verdict.CORRECT else 0
    completes = bit != 0 and bit == all_parts
    workbook_id = attempt.exercise.workbook_id
    extra = guard.params if guard is not None else []
    params: list[Any] = [
        *insert.params, *extra,
        attempt.user_id, attempt.exercise_id, workbook_id, int(attempt.counted), completes, completes, bit,
        completes, completes, completes and attempt.accepted_with_note,
        *[all_parts] * _TAIL_PARAMS,
    ]  # fmt: skip
    if bit == 0:
        # A wrong answer changes no streak or score: one statement, atomic on its own.
        return _try_record(attempt, workbook_id, _record_sql(insert, guarded=False, only_if=guard), params, saved=False)
    checks = [attempt.user_id, attempt.exercise_id, bit, all_parts, bit, all_parts]
    never = [*params[:-_TAIL_PARAMS], *[-1] * _TAIL_PARAMS]  # the upsert's "all parts": it cannot complete
    sql = _record_sql(insert, guarded=True, only_if=guard)
    recorded = _try_record(attempt, workbook_id, sql, checks + never, saved=False)
    if recorded is not None:
        return recorded
    with transaction.atomic():
        # Completing (or the guard failed: then this writes nothing either).
        return _try_record(attempt, workbook_id, _record_sql(insert, guarded=False, only_if=guard), params, saved=False)


def attempt_count(*, attempt: Attempt, part_bit: int = 1, all_parts: int = 1) -> tuple[ExerciseProgress, bool]:
    """Count an attempt that is already saved and graded (a sandbox run that just finished)."""
    bit = part_bit if attempt.verdict == Verdict.CORRECT else 0
    completes = bit != 0 and bit == all_parts
    at = attempt.finished_at or attempt.created_at
    params = [attempt.user_id, attempt.exercise_id, attempt.exercise.workbook_id, int(attempt.counted),
              at if completes else None, attempt.pk if completes else None, at, attempt.pk, bit,
              at if completes else None, 1 if completes else None, completes and attempt.accepted_with_note,
              *[all_parts] * _TAIL_PARAMS]  # fmt: skip
    with transaction.atomic():
        return _run_record(attempt, attempt.exercise.workbook_id, _RECORD_ATTEMPT, params, saved=True)


def _run_record(
    attempt: Attempt, workbook_id: int, sql: str, params: list[Any], *, saved: bool
) -> tuple[ExerciseProgress, bool]:
    recorded = _try_record(attempt, workbook_id, sql, params, saved=saved)
    assert recorded is not None
    return recorded


def _try_record(
    attempt: Attempt, workbook_id: int, sql: str, params: list[Any], *, saved: bool
) -> tuple[ExerciseProgress, bool] | None:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    if row is None:
        return None
    if not saved:
        attempt.pk, row = row[0], row[1:]
        attempt._state.adding = False
    values = dict(zip(_COLUMNS, row, strict=True))
    for key in ("solved_at", "revealed_at", "last_attempt_at", "first_solved_at"):
        values[key] = _aware(values[key])
    values["forfeited"] = bool(values["forfeited"])
    values["solved_with_note"] = bool(values["solved_with_note"])
    values["reviewing"] = bool(values["reviewing"])
    progress = ExerciseProgress(
        user_id=attempt.user_id, exercise_id=attempt.exercise_id, workbook_id=workbook_id, **values
    )
    progress._state.adding = False
    solved_now = values["first_solve_attempt_id"] == attempt.pk and attempt.verdict == Verdict.CORRECT
    if solved_now:
        solve_record(user=attempt.user, exercise=attempt.exercise, progress=progress)
    elif progress.reviewing and attempt.counted and attempt.verdict == Verdict.INCORRECT:
        with transaction.atomic():
            review_wrong(progress=progress, at=attempt.finished_at or attempt.created_at)
    return progress, solved_now


def _aware(value: object) -> datetime | None:
    """SQLite hands timestamps back as naive UTC text through a raw cursor; PostgreSQL as aware datetimes."""
    if value is None:
        return None
    parsed = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)
