"""Writes on a learner's progress, streak and scores, and on cohorts.

Everything a graded attempt changes is written in the attempt's transaction: the progress row,
and on a solve the streak, the day's activity and the leaderboard rows. Reads (selectors.py)
are then lookups, never aggregations over raw attempts.
"""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo, available_timezones

from django.conf import settings
from django.db import IntegrityError, connection, transaction

from apps.accounts.models import Role, User
from apps.core.exceptions import ApplicationError
from apps.exercises.choices import Verdict
from apps.exercises.models import Attempt, Exercise, Skill, Workbook
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

logger = logging.getLogger(__name__)

_PROGRESS = ExerciseProgress._meta.db_table
_ATTEMPT = Attempt._meta.db_table
_COLUMNS = (
    "id", "attempts", "hints_used", "solved_at", "revealed_at", "first_solve_attempt_id", "last_attempt_at",
    "last_attempt_id", "parts_solved", "first_solved_at", "attempts_to_solve", "forfeited", "points",
    "solved_with_note",
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

# PostgreSQL: the attempt insert and the progress upsert as one statement — one round trip, atomic
# on its own, no BEGIN/COMMIT. This is the grading hot path (bench/grading_api.py).
_INSERT_ATTEMPT_AND_RECORD = f"""
WITH new_attempt AS (
    INSERT INTO {_ATTEMPT} (user_id, exercise_id, version_id, part, status, raw, parsed, verdict, outcome, score,
                            feedback, details, created_at, accepted_with_note, counted)
    VALUES (%s, %s, %s, %s, 'graded', %s::jsonb, %s::jsonb, %s, '', %s, %s, %s::jsonb, %s, %s, %s)
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
), new_attempt AS (
    INSERT INTO {_ATTEMPT} (user_id, exercise_id, version_id, part, status, raw, parsed, verdict, outcome, score,
                            feedback, details, created_at, accepted_with_note, counted)
    SELECT %s, %s, %s, %s, 'graded', %s::jsonb, %s::jsonb, %s, '', %s, %s, %s::jsonb, %s, %s, %s FROM go
    RETURNING id, created_at
)"""  # noqa: S608
_INSERT_ATTEMPT_IF_NOT_COMPLETING = (
    _IF_NOT_COMPLETING + _INSERT_ATTEMPT_AND_RECORD.split("RETURNING id, created_at\n)", 1)[1]
)


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
    is the one that solved the exercise (then the streak and scores moved with it, in the same
    transaction). ``attempt`` comes back saved (its pk set).
    """
    if connection.vendor != "postgresql":
        with transaction.atomic():
            attempt.save()
            return attempt_count(attempt=attempt, part_bit=part_bit, all_parts=all_parts)
    bit = part_bit if attempt.verdict == Verdict.CORRECT else 0
    completes = bit != 0 and bit == all_parts
    workbook_id = attempt.exercise.workbook_id
    params: list[Any] = [
        attempt.user_id, attempt.exercise_id, attempt.version_id, attempt.part, json.dumps(attempt.raw),
        json.dumps(attempt.parsed), attempt.verdict, attempt.score, attempt.feedback,
        json.dumps(attempt.details), attempt.created_at, attempt.accepted_with_note, attempt.counted,
        attempt.user_id, attempt.exercise_id, workbook_id, int(attempt.counted), completes, completes, bit,
        completes, completes, completes and attempt.accepted_with_note,
        *[all_parts] * _TAIL_PARAMS,
    ]  # fmt: skip
    if bit == 0:
        # A wrong answer changes no streak or score: one statement, atomic on its own.
        return _run_record(attempt, workbook_id, _INSERT_ATTEMPT_AND_RECORD, params, saved=False)
    guard = [attempt.user_id, attempt.exercise_id, bit, all_parts, bit, all_parts]
    never = [*params[:-_TAIL_PARAMS], *[-1] * _TAIL_PARAMS]  # the upsert's "all parts": it cannot complete
    recorded = _try_record(attempt, workbook_id, _INSERT_ATTEMPT_IF_NOT_COMPLETING, guard + never, saved=False)
    if recorded is not None:
        return recorded
    with transaction.atomic():
        return _run_record(attempt, workbook_id, _INSERT_ATTEMPT_AND_RECORD, params, saved=False)


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
    progress = ExerciseProgress(
        user_id=attempt.user_id, exercise_id=attempt.exercise_id, workbook_id=workbook_id, **values
    )
    progress._state.adding = False
    solved_now = values["first_solve_attempt_id"] == attempt.pk and attempt.verdict == Verdict.CORRECT
    if solved_now:
        solve_record(user=attempt.user, exercise=attempt.exercise, progress=progress)
    return progress, solved_now


def _aware(value: object) -> datetime | None:
    """SQLite hands timestamps back as naive UTC text through a raw cursor; PostgreSQL as aware datetimes."""
    if value is None:
        return None
    parsed = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


# ---------------------------------------------------------------------------------------------
# Solves: streak, daily activity, points and leaderboard rows
# ---------------------------------------------------------------------------------------------

GLOBAL_ALL = "all"


def points_for(exercise: Exercise) -> int:
    """Points for a first solve: 10 per difficulty level (1-3). Authors rate difficulty per
    exercise; kind says nothing about effort (a Derive can be harder than a Build)."""
    return 10 * exercise.difficulty


def week_start(at: datetime, tz: ZoneInfo) -> date:
    """The Monday of ``at``'s week in ``tz``."""
    local = at.astimezone(tz).date()
    return local - timedelta(days=local.weekday())


def global_week_board(at: datetime) -> str:
    return f"week:{week_start(at, ZoneInfo(settings.TIME_ZONE)).isoformat()}"


def cohort_week_board(cohort_id: int, at: datetime, tz_name: str) -> str:
    return f"cohort:{cohort_id}:week:{week_start(at, ZoneInfo(tz_name)).isoformat()}"


def is_global(board: str) -> bool:
    return not board.startswith("cohort:")


def effective_time_zone(user: User, cohort_zones: list[str] | None = None) -> str:
    """The learner's own setting, else their first cohort's, else the site's."""
    if user.time_zone:
        return user.time_zone
    if cohort_zones is None:
        cohort_zones = _cohort_zones(user.pk)
    return cohort_zones[0] if cohort_zones else settings.TIME_ZONE


def _memberships(user_id: int) -> list[tuple[int, str]]:
    return list(
        Membership.objects.filter(user_id=user_id)
        .order_by("joined_at", "id")
        .values_list("cohort_id", "cohort__time_zone")
    )


def _cohort_zones(user_id: int) -> list[str]:
    return [tz for _, tz in _memberships(user_id)]


@dataclass(frozen=True)
class SolveResult:
    points: int
    day: date
    current_streak: int


def solve_record(*, user: User, exercise: Exercise, progress: ExerciseProgress) -> SolveResult:
    """An exercise just became solved: count the day, extend the streak, award points once.

    Runs inside the solving attempt's transaction. Points go to learners who solved without
    revealing first, and only the first time (a workbook reset does not pay twice).
    """
    assert progress.solved_at is not None
    at = progress.solved_at
    memberships = _memberships(user.pk)
    tz_name = effective_time_zone(user, [tz for _, tz in memberships])
    day = at.astimezone(ZoneInfo(tz_name)).date()
    points = 0 if progress.forfeited or progress.points else points_for(exercise)
    if points:
        ExerciseProgress.objects.filter(pk=progress.pk).update(points=points)
        progress.points = points
    stats = _stats_lock(user.pk, tz_name)
    if stats.last_day is None or day > stats.last_day + timedelta(days=1):
        stats.current_streak = 1
    elif day == stats.last_day + timedelta(days=1):
        stats.current_streak += 1
    # else: the same day, or an earlier date after moving west; the streak stands.
    stats.last_day = max(stats.last_day or day, day)
    stats.best_streak = max(stats.best_streak, stats.current_streak)
    stats.solves += 1
    stats.points += points
    stats.time_zone = tz_name
    stats.save(update_fields=["current_streak", "best_streak", "last_day", "solves", "points", "time_zone"])
    _activity_add(user.pk, day, points)
    if points:
        boards = [GLOBAL_ALL, global_week_board(at)] + [cohort_week_board(cid, at, ctz) for cid, ctz in memberships]
        for board in sorted(boards):  # a fixed order: bucket rows are locked in it, so no deadlocks
            score_add(board=board, user=user, points=points, at=at)
    logger.info(
        "exercise solved",
        extra={"user_id": user.pk, "exercise_id": exercise.pk, "points": points, "streak": stats.current_streak},
    )
    return SolveResult(points=points, day=day, current_streak=stats.current_streak)


def _stats_lock(user_id: int, tz_name: str) -> LearnerStats:
    LearnerStats.objects.bulk_create([LearnerStats(user_id=user_id, time_zone=tz_name)], ignore_conflicts=True)
    return LearnerStats.objects.select_for_update().get(pk=user_id)


_ACTIVITY = DailyActivity._meta.db_table
_ACTIVITY_ADD = f"""
INSERT INTO {_ACTIVITY} (user_id, day, solves, points) VALUES (%s, %s, 1, %s)
ON CONFLICT (user_id, day) DO UPDATE SET solves = {_ACTIVITY}.solves + 1, points = {_ACTIVITY}.points + excluded.points
"""  # noqa: S608 - names are ours


def _activity_add(user_id: int, day: date, points: int) -> None:
    with connection.cursor() as cursor:
        cursor.execute(_ACTIVITY_ADD, [user_id, day, points])


_SCORE = Score._meta.db_table
_BUCKET = ScoreBucket._meta.db_table
_SCORE_ADD = f"""
INSERT INTO {_SCORE} (board, user_id, points, reached_at, hidden) VALUES (%s, %s, %s, %s, %s)
ON CONFLICT (board, user_id) DO UPDATE SET points = {_SCORE}.points + excluded.points, reached_at = excluded.reached_at
RETURNING points, hidden
"""  # noqa: S608
_BUCKET_ADD = f"""
INSERT INTO {_BUCKET} (board, points, learners) VALUES (%s, %s, %s)
ON CONFLICT (board, points) DO UPDATE SET learners = {_BUCKET}.learners + excluded.learners
"""  # noqa: S608
_BUCKET_SUB = f"UPDATE {_BUCKET} SET learners = learners - 1 WHERE board = %s AND points = %s"  # noqa: S608


def score_add(*, board: str, user: User, points: int, at: datetime) -> int:
    """Add points to a learner's row on a board; keep a global board's buckets in step."""
    hidden = is_global(board) and not user.on_global_board
    with connection.cursor() as cursor:
        cursor.execute(_SCORE_ADD, [board, user.pk, points, at, hidden])
        total, row_hidden = cursor.fetchone()
        if is_global(board) and not row_hidden:
            # Points only grow, so the old bucket is below the new: locks are taken in ascending order.
            if total - points > 0:
                cursor.execute(_BUCKET_SUB, [board, total - points])
            cursor.execute(_BUCKET_ADD, [board, total, 1])
    return int(total)


# ---------------------------------------------------------------------------------------------
# Learner actions: reset a workbook, profile (time zone, global board)
# ---------------------------------------------------------------------------------------------


@transaction.atomic
def workbook_reset(*, user: User, workbook: Workbook) -> int:
    """Start a workbook over: mastery restarts, answers are hidden again; attempts, points and
    the statistics of the first try are kept. Returns how many exercises were cleared."""
    cleared = ExerciseProgress.objects.filter(user=user, workbook=workbook).update(
        solved_at=None, revealed_at=None, parts_solved=0, hints_used=0, first_solve_attempt=None, solved_with_note=False
    )
    logger.info("workbook reset", extra={"user_id": user.pk, "workbook": workbook.slug, "cleared": cleared})
    return cleared


_ZONES: frozenset[str] = frozenset()


def time_zone_validate(name: str) -> str:
    global _ZONES
    if not _ZONES:
        _ZONES = frozenset(available_timezones())
    if name not in _ZONES:
        raise ApplicationError(
            f"{name!r} is not a time zone name. Use an IANA name such as Europe/Paris or Asia/Tokyo.",
            code="bad_time_zone",
        )
    return name


@transaction.atomic
def profile_update(*, user: User, time_zone: str | None = None, on_global_board: bool | None = None) -> User:
    """Change the learner's time zone (future days count in it) or global board visibility."""
    fields: list[str] = []
    if time_zone is not None:
        user.time_zone = time_zone_validate(time_zone) if time_zone else ""
        fields.append("time_zone")
    if on_global_board is not None and on_global_board != user.on_global_board:
        user.on_global_board = on_global_board
        fields.append("on_global_board")
        _global_rows_hide(user, hidden=not on_global_board)
    if fields:
        user.save(update_fields=fields)
        stats_time_zone_refresh(user=user)
    return user


def _global_rows_hide(user: User, *, hidden: bool) -> None:
    LearnerStats.objects.select_for_update().filter(pk=user.pk).first()  # serialize with the learner's solves
    rows = list(
        Score.objects.select_for_update()
        .filter(user=user, hidden=not hidden)
        .exclude(board__startswith="cohort:")
        .order_by("board")
        .values_list("board", "points")
    )
    Score.objects.filter(user=user, board__in=[b for b, _ in rows]).update(hidden=hidden)
    with connection.cursor() as cursor:
        for board, points in rows:
            if hidden:
                cursor.execute(_BUCKET_SUB, [board, points])
            else:
                cursor.execute(_BUCKET_ADD, [board, points, 1])


def stats_time_zone_refresh(*, user: User) -> None:
    """Keep the zone a streak is read in equal to the learner's effective time zone."""
    LearnerStats.objects.filter(pk=user.pk).update(time_zone=effective_time_zone(user))


# ---------------------------------------------------------------------------------------------
# Cohorts
# ---------------------------------------------------------------------------------------------

# No 0/O or 1/I/L: codes are read aloud and copied from slides.
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 8


def join_code_new() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def join_code_normalize(text: str) -> str:
    return "".join(ch for ch in text.upper() if ch.isalnum())


def can_teach(user: User) -> bool:
    return user.is_active and (user.role == Role.INSTRUCTOR or user.is_superuser)


@transaction.atomic
def cohort_create(
    *,
    instructor: User,
    name: str,
    time_zone: str = "UTC",
    workbooks: Sequence[tuple[Workbook, date | None]] = (),
) -> Cohort:
    if not can_teach(instructor):
        raise ApplicationError("Only instructors create cohorts.", code="permission_denied", status_code=403)
    if not name.strip():
        raise ApplicationError("A cohort needs a name.", code="bad_payload")
    time_zone_validate(time_zone)
    for _ in range(5):
        try:
            with transaction.atomic():
                cohort = Cohort.objects.create(
                    name=name.strip(), instructor=instructor, time_zone=time_zone, join_code=join_code_new()
                )
            break
        except IntegrityError:  # a code collision (31^8 codes): draw again
            continue
    else:  # pragma: no cover - five collisions in a row
        raise ApplicationError("Could not allocate a join code; try again.", code="try_again", status_code=503)
    for workbook, due_on in workbooks:
        cohort_assign(cohort=cohort, workbook=workbook, due_on=due_on)
    logger.info("cohort created", extra={"user_id": instructor.pk, "cohort_id": cohort.pk})
    return cohort


def cohort_assign(*, cohort: Cohort, workbook: Workbook, due_on: date | None = None) -> CohortWorkbook:
    assignment, _ = CohortWorkbook.objects.update_or_create(
        cohort=cohort, workbook=workbook, defaults={"due_on": due_on}
    )
    return assignment


@transaction.atomic
def cohort_code_rotate(*, cohort: Cohort) -> Cohort:
    """A new join code (the old one leaked); members stay."""
    cohort.join_code = join_code_new()
    cohort.save(update_fields=["join_code"])
    return cohort


@transaction.atomic
def cohort_join(*, user: User, code: str) -> tuple[Cohort, bool]:
    """Join by code. Returns the cohort and whether the learner is new to it (joining twice is fine)."""
    normalized = join_code_normalize(code)
    cohort = Cohort.objects.filter(join_code=normalized).first() if normalized else None
    if cohort is None:
        raise ApplicationError("No cohort has that join code. Check it with your instructor.", code="bad_join_code")
    if cohort.instructor_id == user.pk:
        raise ApplicationError("You teach this cohort; instructors do not join their own.", code="own_cohort")
    _, created = Membership.objects.get_or_create(cohort=cohort, user=user)
    if created:
        _cohort_scores_backfill(cohort, user)
        stats_time_zone_refresh(user=user)
        logger.info("cohort joined", extra={"user_id": user.pk, "cohort_id": cohort.pk})
    return cohort, created


def _cohort_scores_backfill(cohort: Cohort, user: User) -> None:
    """A new member's points so far, on the cohort's weekly boards (as if they had been a member)."""
    tz = cohort.time_zone
    earned = ExerciseProgress.objects.filter(user=user, points__gt=0, first_solved_at__isnull=False).values_list(
        "first_solved_at", "points"
    )
    weeks: dict[str, tuple[int, datetime]] = {}
    for at, points in earned:
        if at is None:  # excluded by the filter; for the type checker
            continue
        board = cohort_week_board(cohort.pk, at, tz)
        total, latest = weeks.get(board, (0, at))
        weeks[board] = (total + points, max(latest, at))
    Score.objects.bulk_create(
        [Score(board=b, user=user, points=p, reached_at=at) for b, (p, at) in weeks.items()],
        update_conflicts=True,
        unique_fields=["board", "user"],
        update_fields=["points", "reached_at"],
    )


@transaction.atomic
def cohort_delete(*, cohort: Cohort) -> None:
    """Delete a cohort, its memberships and its weekly boards (learners' progress stays)."""
    members = list(User.objects.filter(memberships__cohort=cohort))
    Score.objects.filter(board__startswith=f"cohort:{cohort.pk}:").delete()
    cohort.delete()
    for user in members:
        stats_time_zone_refresh(user=user)
    logger.info("cohort deleted", extra={"cohort_id": cohort.pk})


@transaction.atomic
def cohort_leave(*, user: User, cohort: Cohort) -> None:
    Membership.objects.filter(cohort=cohort, user=user).delete()
    Score.objects.filter(user=user, board__startswith=f"cohort:{cohort.pk}:").delete()
    stats_time_zone_refresh(user=user)
    logger.info("cohort left", extra={"user_id": user.pk, "cohort_id": cohort.pk})


# ---------------------------------------------------------------------------------------------
# Rebuild (PostgreSQL): every board from the progress rows, set-based
# ---------------------------------------------------------------------------------------------

_REBUILD = [  # table and column names are ours; values are parameters
    f"DELETE FROM {_BUCKET}",  # noqa: S608
    f"DELETE FROM {_SCORE}",  # noqa: S608
    # Points are earned at the first solve, so first_solved_at dates them.
    f"""INSERT INTO {_SCORE} (board, user_id, points, reached_at, hidden)
        SELECT 'all', p.user_id, sum(p.points), max(p.first_solved_at), NOT u.on_global_board
        FROM {ExerciseProgress._meta.db_table} p JOIN {User._meta.db_table} u ON u.id = p.user_id
        WHERE p.points > 0 GROUP BY p.user_id, u.on_global_board""",  # noqa: S608
    f"""INSERT INTO {_SCORE} (board, user_id, points, reached_at, hidden)
        SELECT 'week:' || to_char(date_trunc('week', p.first_solved_at AT TIME ZONE %(site_tz)s), 'YYYY-MM-DD'),
               p.user_id, sum(p.points), max(p.first_solved_at), NOT u.on_global_board
        FROM {ExerciseProgress._meta.db_table} p JOIN {User._meta.db_table} u ON u.id = p.user_id
        WHERE p.points > 0 GROUP BY 1, p.user_id, u.on_global_board""",  # noqa: S608
    f"""INSERT INTO {_SCORE} (board, user_id, points, reached_at, hidden)
        SELECT 'cohort:' || m.cohort_id || ':week:'
                   || to_char(date_trunc('week', p.first_solved_at AT TIME ZONE c.time_zone), 'YYYY-MM-DD'),
               p.user_id, sum(p.points), max(p.first_solved_at), FALSE
        FROM {ExerciseProgress._meta.db_table} p
        JOIN {Membership._meta.db_table} m ON m.user_id = p.user_id
        JOIN {Cohort._meta.db_table} c ON c.id = m.cohort_id
        WHERE p.points > 0 GROUP BY 1, p.user_id""",  # noqa: S608
    f"""INSERT INTO {_BUCKET} (board, points, learners)
        SELECT board, points, count(*) FROM {_SCORE}
        WHERE NOT hidden AND board NOT LIKE 'cohort:%' GROUP BY board, points""",  # noqa: S608
    f"""UPDATE {LearnerStats._meta.db_table} s SET points = t.points
        FROM (SELECT user_id, points FROM {_SCORE} WHERE board = 'all') t WHERE t.user_id = s.user_id""",  # noqa: S608
]


@transaction.atomic
def scores_rebuild() -> int:
    """Recompute every leaderboard row and bucket from the progress rows (a set-based bulk path:
    after a bulk import, or to prove the incremental writes right). Returns the score rows written."""
    if connection.vendor != "postgresql":
        raise ApplicationError("Rebuilding scores needs PostgreSQL.", code="unsupported")
    with connection.cursor() as cursor:
        cursor.execute(f"LOCK TABLE {_SCORE}, {_BUCKET} IN EXCLUSIVE MODE")
        for sql in _REBUILD:
            cursor.execute(sql, {"site_tz": settings.TIME_ZONE} if "%(" in sql else None)
    return Score.objects.count()


# ---- skills checklist and spaced retrieval ------------------------------------------------------

SKILL_ACTIONS = ("tick", "remembered", "forgot", "untick")


@transaction.atomic
def skill_mark(*, user: User, skill: Skill, action: str, at: datetime | None = None) -> SkillCheck | None:
    """Tick a skill, review it (remembered / forgot), or untick it. Returns the check (None once unticked).

    Ticking schedules the first review a day later; each "remembered" moves to the next, wider gap
    in ``SkillCheck.REVIEW_DAYS``; "forgot" starts over at a day. Ticking twice changes nothing.
    """
    if action not in SKILL_ACTIONS:
        raise ApplicationError(f"Unknown action {action!r}: use one of {', '.join(SKILL_ACTIONS)}.", code="bad_payload")
    now = at or datetime.now(UTC)
    check = SkillCheck.objects.select_for_update().filter(user=user, skill=skill).first()
    if action == "untick":
        if check is not None:
            check.delete()
        return None
    if action == "tick":
        if check is None:
            check = SkillCheck.objects.create(
                user=user, skill=skill, stage=0, checked_at=now, due_at=now + timedelta(days=SkillCheck.REVIEW_DAYS[0])
            )
        return check
    if check is None:
        raise ApplicationError("Tick the skill before reviewing it.", code="not_ticked")
    if action == "remembered":
        check.stage = min(check.stage + 1, len(SkillCheck.REVIEW_DAYS) - 1)
    else:
        check.stage = 0
        check.lapses += 1
    check.reviews += 1
    check.reviewed_at = now
    check.due_at = now + timedelta(days=SkillCheck.REVIEW_DAYS[check.stage])
    check.save()
    return check
