"""Leaderboards: the global boards (raw SQL off the ``score_board_rank`` index and the score
buckets) and a cohort's board (its members' rows), with the caller's own rank."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from zoneinfo import ZoneInfo

from django.conf import settings
from django.db import connection
from django.http import Http404
from django.utils import timezone

from apps.accounts.models import User
from apps.progress.models import Cohort, Score, ScoreBucket, ScoreSlot
from apps.progress.selectors.cohorts import cohort_get
from apps.progress.services import GLOBAL_ALL, cohort_week_board, global_week_board, week_start


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


_S, _B, _T, _U = (m._meta.db_table for m in (Score, ScoreBucket, ScoreSlot, User))
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
# whatever the learner count) plus those tied with me who got there first. A tie can hold tens of
# thousands of learners, so on PostgreSQL those are the tie's day slots before my day, its hour
# slots before my hour that day, its minute slots before my minute that hour (at most
# days + 24 + 60 rows of ``ScoreSlot``), and a count of the rows within my minute: the row
# comparison bounds that range scan of ``score_board_rank``.
_ME = f"""SELECT points, hidden, reached_at, user_id,
        date_trunc('day', reached_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS d,
        date_trunc('hour', reached_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS h,
        date_trunc('minute', reached_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS m
    FROM {_S} WHERE board = %(board)s AND user_id = %(user)s"""  # noqa: S608
_SLOT_SUM = "(SELECT COALESCE(SUM(t.learners), 0) FROM {table} t WHERE t.board = %(board)s AND t.points = me.points AND t.span = {span} AND {bounds})"
_OWN_RANK_SLOTS = f"""
WITH me AS ({_ME})
SELECT me.points, me.hidden,
    (SELECT COALESCE(SUM(b.learners), 0) FROM {_B} b WHERE b.board = %(board)s AND b.points > me.points)
    + {_SLOT_SUM.format(table=_T, span=ScoreSlot.DAY, bounds="t.start < me.d")}
    + {_SLOT_SUM.format(table=_T, span=ScoreSlot.HOUR, bounds="t.start >= me.d AND t.start < me.h")}
    + {_SLOT_SUM.format(table=_T, span=ScoreSlot.MINUTE, bounds="t.start >= me.h AND t.start < me.m")}
    + (SELECT COUNT(*) FROM {_S} s
       WHERE s.board = %(board)s AND s.points = me.points AND NOT s.hidden AND s.reached_at >= me.m
         AND (s.reached_at, s.user_id) < (me.reached_at, me.user_id)) + 1,
    (SELECT COALESCE(SUM(b.learners), 0) FROM {_B} b WHERE b.board = %(board)s)
FROM (SELECT 1 AS one) AS one LEFT JOIN me ON TRUE
"""  # noqa: S608 - names are ours, values are parameters
# Elsewhere (SQLite, the embedded single-machine default): the tie is counted row by row.
_OWN_RANK_ROWS = f"""
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
        sql = _OWN_RANK_SLOTS if connection.vendor == "postgresql" else _OWN_RANK_ROWS
        cursor.execute(sql, {"board": board, "user": user.pk})
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
