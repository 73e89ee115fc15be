"""Solves: the streak, the day's activity, points and leaderboard rows, and their set-based rebuild."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

from django.conf import settings
from django.db import connection, transaction
from django.db.backends.utils import CursorWrapper

from apps.accounts.models import User
from apps.core.exceptions import ApplicationError
from apps.exercises.models import Exercise
from apps.progress.models import (
    Cohort,
    DailyActivity,
    ExerciseProgress,
    LearnerStats,
    Membership,
    Score,
    ScoreBucket,
    ScoreSlot,
)
from apps.progress.services.reviews import review_solved
from apps.progress.signals import exercise_solved

logger = logging.getLogger(__name__)


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
    moves: list[ScoreMove] = []
    if points:
        boards = [GLOBAL_ALL, global_week_board(at)] + [cohort_week_board(cid, at, ctz) for cid, ctz in memberships]
        moves = [score_upsert(board=board, user=user, points=points, at=at) for board in boards]
    review_solved(exercise=exercise, progress=progress, at=at)
    # Last, just before the commit: the bucket and slot rows every learner on the board shares,
    # so their locks are held for as short a time as possible in a deadline burst.
    levels_move(moves)
    transaction.on_commit(
        lambda: exercise_solved.send(
            solve_record, user_id=user.pk, exercise_id=exercise.pk, workbook_id=exercise.workbook_id
        )
    )
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
_SLOT = ScoreSlot._meta.db_table
_SCORE_OLD = f"SELECT reached_at FROM {_SCORE} WHERE board = %s AND user_id = %s"  # noqa: S608
_SCORE_ADD = f"""
INSERT INTO {_SCORE} (board, user_id, points, reached_at, hidden) VALUES (%s, %s, %s, %s, %s)
ON CONFLICT (board, user_id) DO UPDATE SET points = {_SCORE}.points + excluded.points, reached_at = excluded.reached_at
RETURNING points, hidden
"""  # noqa: S608
_BUCKET_ADD = f"""
INSERT INTO {_BUCKET} (board, points, learners) VALUES (%s, %s, 1)
ON CONFLICT (board, points) DO UPDATE SET learners = {_BUCKET}.learners + 1
"""  # noqa: S608
_BUCKET_SUB = f"UPDATE {_BUCKET} SET learners = learners - 1 WHERE board = %s AND points = %s"  # noqa: S608
_SLOT_KEYS = " OR ".join(f"(span = {span} AND start = %s)" for span in ScoreSlot.SPANS)
_SLOT_ADD = f"""
INSERT INTO {_SLOT} (board, points, span, start, learners) VALUES {", ".join(f"(%s, %s, {span}, %s, 1)" for span in ScoreSlot.SPANS)}
ON CONFLICT (board, points, span, start) DO UPDATE SET learners = {_SLOT}.learners + 1
"""  # noqa: S608
_SLOT_SUB = f"UPDATE {_SLOT} SET learners = learners - 1 WHERE board = %s AND points = %s AND ({_SLOT_KEYS})"  # noqa: S608
_SLOT_CLEAR = f"DELETE FROM {_SLOT} WHERE board = %s AND points = %s AND learners = 0 AND ({_SLOT_KEYS})"  # noqa: S608


def slot_starts(at: datetime) -> list[datetime]:
    """The UTC day, hour and minute that ``at`` falls in: the ``ScoreSlot`` rows it counts in."""
    utc = (at if at.tzinfo else at.replace(tzinfo=UTC)).astimezone(UTC).replace(second=0, microsecond=0)
    return [utc.replace(hour=0, minute=0), utc.replace(minute=0), utc]


def level_join(cursor: CursorWrapper, *, board: str, points: int, reached_at: datetime) -> None:
    """A visible learner now holds ``points`` on a global board, reached at ``reached_at``: count
    them in its bucket, then in its slots (the bucket row's lock serializes its slots' writers)."""
    cursor.execute(_BUCKET_ADD, [board, points])
    cursor.execute(_SLOT_ADD, [v for start in slot_starts(reached_at) for v in (board, points, start)])


def level_leave(cursor: CursorWrapper, *, board: str, points: int, reached_at: datetime) -> None:
    """The reverse of ``level_join``: the learner moved on, or left the global boards."""
    starts = slot_starts(reached_at)
    cursor.execute(_BUCKET_SUB, [board, points])
    cursor.execute(_SLOT_SUB, [board, points, *starts])
    cursor.execute(_SLOT_CLEAR, [board, points, *starts])


@dataclass(frozen=True)
class ScoreMove:
    """A learner's row on a board went from ``total - points`` to ``total`` points."""

    board: str
    total: int
    points: int
    at: datetime
    old_reached: datetime | None
    visible: bool


def score_upsert(*, board: str, user: User, points: int, at: datetime) -> ScoreMove:
    """Add points to a learner's own row on a board (a row nobody else writes). Runs under the
    learner's stats lock, so the row read first is the one the upsert replaces."""
    hidden = is_global(board) and not user.on_global_board
    with connection.cursor() as cursor:
        old_reached = None
        if is_global(board):
            cursor.execute(_SCORE_OLD, [board, user.pk])
            row = cursor.fetchone()
            old_reached = row[0] if row else None
        cursor.execute(_SCORE_ADD, [board, user.pk, points, at, hidden])
        total, row_hidden = cursor.fetchone()
    return ScoreMove(board, int(total), points, at, old_reached, is_global(board) and not row_hidden)


def levels_move(moves: list[ScoreMove]) -> None:
    """Keep the global boards' buckets and slots in step with the moves: the rows all learners
    share. A fixed order (board, then points: they only grow, so the old bucket is below the new),
    so two solves never wait for each other's rows in a cycle."""
    with connection.cursor() as cursor:
        for move in sorted((m for m in moves if m.visible), key=lambda m: m.board):
            if move.total - move.points > 0 and move.old_reached is not None:
                level_leave(cursor, board=move.board, points=move.total - move.points, reached_at=move.old_reached)
            level_join(cursor, board=move.board, points=move.total, reached_at=move.at)


def score_add(*, board: str, user: User, points: int, at: datetime) -> int:
    """Add points to a learner's row on a board; keep a global board's buckets and slots in step."""
    move = score_upsert(board=board, user=user, points=points, at=at)
    levels_move([move])
    return move.total


# ---------------------------------------------------------------------------------------------
# Rebuild (PostgreSQL): every board from the progress rows, set-based
# ---------------------------------------------------------------------------------------------

_REBUILD = [  # table and column names are ours; values are parameters
    f"DELETE FROM {_SLOT}",  # noqa: S608
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
    *(
        f"""INSERT INTO {_SLOT} (board, points, span, start, learners)
        SELECT board, points, {span}, date_trunc('{unit}', reached_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', count(*)
        FROM {_SCORE} WHERE NOT hidden AND board NOT LIKE 'cohort:%' GROUP BY 1, 2, 4"""  # noqa: S608
        for span, unit in ((ScoreSlot.DAY, "day"), (ScoreSlot.HOUR, "hour"), (ScoreSlot.MINUTE, "minute"))
    ),
    f"""UPDATE {LearnerStats._meta.db_table} s SET points = t.points
        FROM (SELECT user_id, points FROM {_SCORE} WHERE board = 'all') t WHERE t.user_id = s.user_id""",  # noqa: S608
]


_SLOTS_FILL = [sql for sql in _REBUILD if sql.lstrip().startswith(f"INSERT INTO {_SLOT}")]


@transaction.atomic
def slots_rebuild() -> int:
    """Recount the rank slots from the score rows, online: readers go on; a solve that moves a
    global score waits at its bucket write until this commits. Returns the slot rows written."""
    if connection.vendor != "postgresql":
        raise ApplicationError("Rebuilding rank slots needs PostgreSQL.", code="unsupported")
    with connection.cursor() as cursor:
        cursor.execute(f"LOCK TABLE {_BUCKET} IN EXCLUSIVE MODE")
        cursor.execute(f"DELETE FROM {_SLOT}")  # noqa: S608
        for sql in _SLOTS_FILL:
            cursor.execute(sql)
    return ScoreSlot.objects.count()


@transaction.atomic
def scores_rebuild() -> int:
    """Recompute every leaderboard row and bucket from the progress rows (a set-based bulk path:
    after a bulk import, or to prove the incremental writes right). Returns the score rows written."""
    if connection.vendor != "postgresql":
        raise ApplicationError("Rebuilding scores needs PostgreSQL.", code="unsupported")
    with connection.cursor() as cursor:
        cursor.execute(f"LOCK TABLE {_SCORE}, {_BUCKET}, {_SLOT} IN EXCLUSIVE MODE")
        for sql in _REBUILD:
            cursor.execute(sql, {"site_tz": settings.TIME_ZONE} if "%(" in sql else None)
    return Score.objects.count()
