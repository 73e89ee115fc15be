"""Leaderboard and streak reads at scale: p50/p95 of the top-50 board, "my rank" and the streak
read, against a primary-key lookup measured in the same process, interleaved.

    make bench            # or: DATABASE_URL=... REDIS_URL=... .venv/bin/python bench/leaderboard.py [--keep]

Builds a scratch database ``<name>_lbbench`` on the PostgreSQL in DATABASE_URL (migrated, the
workbooks synced), then generates 100k learners and 5M graded attempts with set-based SQL
(``INSERT ... SELECT FROM generate_series``), the progress rows, daily activity and streaks
derived from those attempts, 200 cohorts of 50, and the leaderboard rows and rank buckets with
``services.scores_rebuild()``. The schema stays exactly the migrated one.

Every call goes through the ORM on one real connection (``bench.settings``), in a random order
each round:

- ``pk_lookup``: ``User.objects.filter(pk=...).values_list(...).first()``, the baseline;
- ``top50``: ``selectors.board_top(...)``, the top 50 of the all-time global board;
- ``my_rank``: ``selectors.board_rank(...)`` for a ranked learner outside the top 50;
- ``streak``: ``selectors.streak_get(...)`` for a learner with a streak row;
- ``top50_week`` and ``my_rank_week``: the same two on this week's global board (informational);
- ``board_call``: ``selectors.leaderboard(...)``, what ``GET /api/v1/leaderboard/`` runs (the top
  and the caller's rank) for a ranked learner outside the top (informational);
- ``due_reviews``: ``selectors.due_cards(...)``, the review queue's read (a learner's cards due
  before the end of their day) over >= 1.2M review cards;
- ``review_queue``: ``selectors.reviews_due(...)``, what ``GET /api/v1/reviews/`` reads (the cards,
  their exercises by primary key, the skills due; informational).

Targets (p95 over the baseline's p95): top-50 <= 2x, my rank <= 5x, streak <= 3x, due reviews <= 2x.
Writes bench/results/leaderboard.json. ``--keep`` reuses a database a previous run generated
with the same sizes (its "now" is the time it was generated: this week's board thins out).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse, urlunparse

import psycopg
from psycopg import sql

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.grading_api import manage, ratios_to, scratch_database, summarize  # noqa: E402 - after the path is set

if TYPE_CHECKING:  # imported at run time only after django.setup()
    from apps.accounts.models import User

SUFFIX = "_lbbench"
SETTINGS = "bench.settings"
ZONES = ["UTC", "Europe/Paris", "America/New_York", "Asia/Tokyo", "America/Los_Angeles", "Asia/Kolkata"]
TARGETS = {"top50": 2.0, "my_rank": 5.0, "streak": 3.0, "due_reviews": 2.0}
INFORMATIONAL = {"top50_week": 2.0, "my_rank_week": 5.0, "review_queue": 5.0}
POOL = 2000  # learners drawn per measure (the baseline draws from every account)

# Session settings for the bulk load only (the measured server settings are untouched).
_SESSION = ["SET work_mem = '1GB'", "SET maintenance_work_mem = '1GB'", "SELECT setseed(0.42)"]

_USERS = [
    """INSERT INTO accounts_user (password, last_login, is_superuser, username, first_name, last_name, email,
                                  is_staff, is_active, date_joined, role, on_global_board, time_zone)
       SELECT '!', NULL, FALSE, 'learner' || lpad(i::text, 6, '0'), '', '', '', FALSE, TRUE,
              now() - interval '90 days', 'student', random() >= 0.03, ''
       FROM generate_series(1, %(learners)s) AS i""",
    """INSERT INTO accounts_user (password, last_login, is_superuser, username, first_name, last_name, email,
                                  is_staff, is_active, date_joined, role, on_global_board, time_zone)
       SELECT '!', NULL, FALSE, 'instructor' || lpad(i::text, 4, '0'), '', '', '', FALSE, TRUE,
              now() - interval '90 days', 'instructor', TRUE, ''
       FROM generate_series(1, %(cohorts)s) AS i""",
]

_COHORTS = [
    """INSERT INTO progress_cohort (name, instructor_id, time_zone, join_code, created_at)
       SELECT 'Cohort ' || i, u.id, (%(zones)s::text[])[1 + mod(i, cardinality(%(zones)s::text[]))],
              'LB' || lpad(i::text, 6, '0'), now() - interval '80 days'
       FROM generate_series(1, %(cohorts)s) AS i
       JOIN accounts_user u ON u.username = 'instructor' || lpad(i::text, 4, '0')""",
    """INSERT INTO progress_cohortworkbook (cohort_id, workbook_id, due_on)
       SELECT c.id, w.id, CASE WHEN mod(c.id, 2) = 0 THEN (now() + interval '14 days')::date END
       FROM progress_cohort c CROSS JOIN exercises_workbook w""",
    # Members: a random sample of learners, one cohort each, joined before any attempt.
    """INSERT INTO progress_membership (cohort_id, user_id, joined_at)
       SELECT c.id, l.id, now() - interval '75 days' + l.rn * interval '1 second'
       FROM (SELECT id, row_number() OVER (ORDER BY md5('m' || id)) - 1 AS rn
             FROM accounts_user WHERE role = 'student') l
       JOIN (SELECT id, row_number() OVER (ORDER BY id) - 1 AS cn FROM progress_cohort) c
         ON c.cn = mod(l.rn, %(cohorts)s)
       WHERE l.rn < %(cohorts)s * %(members)s
       ORDER BY 3""",
]

# Learners in a shuffled order (idx 0 is the most active) and exercises in workbook order
# (earlier ones are attempted more): session-local lookup tables, not part of the schema.
_LOOKUPS = [
    """CREATE TEMP TABLE lb_learner AS
       SELECT (row_number() OVER (ORDER BY md5(id::text)) - 1)::int AS idx, id
       FROM accounts_user WHERE role = 'student'""",
    "CREATE UNIQUE INDEX ON lb_learner (idx)",
    """CREATE TEMP TABLE lb_exercise AS
       SELECT (row_number() OVER (ORDER BY w.position, w.slug, ch.number, e.position, e.id) - 1)::int AS idx,
              e.id, e.current_version_id AS version_id, e.workbook_id, e.difficulty
       FROM exercises_exercise e
       JOIN exercises_chapter ch ON ch.id = e.chapter_id
       JOIN exercises_workbook w ON w.id = e.workbook_id
       WHERE e.is_active AND e.current_version_id IS NOT NULL""",
    "ANALYZE lb_learner",
    "ANALYZE lb_exercise",
]

# Attempts per learner: an exponential over the shuffled learners plus 3% of all attempts on the
# 200 most active (at 100k/5M: median 20, p90 ~150, p99 ~240, the 200 most active ~1000, 1.6%
# none). Inserted in time order, so ids grow with created_at as they do in production.
_ATTEMPTS = [
    """INSERT INTO exercises_attempt (user_id, exercise_id, version_id, part, status, raw, parsed, verdict, outcome,
                                      score, feedback, details, created_at)
       SELECT l.id, e.id, e.version_id, '', 'graded', '{}', '{}',
              CASE WHEN g.ok THEN 'correct' ELSE 'incorrect' END, '', CASE WHEN g.ok THEN 1 ELSE 0 END, '', '{}', g.at
       FROM (SELECT CASE WHEN random() < 0.03 THEN floor(random() * least(200, %(learners)s))::int
                         ELSE mod(floor(-ln(1 - random()) * %(learners)s / 5)::bigint, %(learners)s)::int
                    END AS uidx,
                    floor((SELECT count(*) FROM lb_exercise) * power(random(), 1.5))::int AS eidx,
                    random() < 0.35 AS ok,
                    now() - random() * interval '60 days' AS at
             FROM generate_series(1, %(attempts)s)) g
       JOIN lb_learner l ON l.idx = g.uidx
       JOIN lb_exercise e ON e.idx = g.eidx
       ORDER BY g.at""",
    "ANALYZE exercises_attempt",
]

# One progress row per (learner, exercise) with attempts, from its attempts: the first correct
# attempt solves it; 1 pair in 40 whose first attempt was wrong revealed the answer before
# solving (forfeited: no points).
_PROGRESS = [
    """INSERT INTO progress_exerciseprogress (user_id, exercise_id, workbook_id, attempts, hints_used, solved_at,
                                              revealed_at, first_solve_attempt_id, last_attempt_at, last_attempt_id,
                                              parts_solved, first_solved_at, attempts_to_solve, forfeited, points)
       SELECT g.user_id, g.exercise_id, e.workbook_id, g.n, 0, g.ok_at,
              CASE WHEN f.forfeited THEN g.first_at + (coalesce(g.ok_at, g.last_at + interval '1 hour') - g.first_at) / 2
              END,
              g.ok_id, g.last_at, g.last_id, CASE WHEN g.ok_id IS NULL THEN 0 ELSE 1 END, g.ok_at, g.to_solve,
              f.forfeited, CASE WHEN g.ok_id IS NOT NULL AND NOT f.forfeited THEN 10 * e.difficulty ELSE 0 END
       FROM (SELECT user_id, exercise_id, count(*) AS n, min(id) AS first_id, min(created_at) AS first_at,
                    max(id) AS last_id, max(created_at) AS last_at,
                    min(id) FILTER (WHERE ok) AS ok_id, min(created_at) FILTER (WHERE ok) AS ok_at,
                    nullif(count(*) FILTER (WHERE id <= first_ok), 0) AS to_solve
             FROM (SELECT user_id, exercise_id, id, created_at, verdict = 'correct' AS ok,
                          min(id) FILTER (WHERE verdict = 'correct') OVER (PARTITION BY user_id, exercise_id) AS first_ok
                   FROM exercises_attempt) a
             GROUP BY user_id, exercise_id) g
       JOIN lb_exercise e ON e.id = g.exercise_id
       CROSS JOIN LATERAL (
           SELECT mod(g.user_id * 31 + g.exercise_id, 40) = 0 AND (g.ok_id IS NULL OR g.ok_id > g.first_id) AS forfeited
       ) f
       ORDER BY g.user_id, g.exercise_id""",
    "ANALYZE progress_exerciseprogress",
]

# Review cards: one per solved (learner, exercise) of a format with reviews (not code), its FSRS
# stability 1-60 days from the solve; then, to reach --cards, cards on random pairs a learner
# reviewed before (as if solved in an earlier term), due from ten days ago to a month ahead.
_CARDS = [
    """INSERT INTO progress_reviewcard (user_id, exercise_id, state, stability, difficulty, due_at, last_review_at,
                                       reviews, lapses, reviewing_since, created_at)
       SELECT p.user_id, p.exercise_id, 2, s.stab, 5.0, p.first_solved_at + s.stab * interval '1 day',
              p.first_solved_at, 0, 0, NULL, p.first_solved_at
       FROM progress_exerciseprogress p
       JOIN exercises_exercise e ON e.id = p.exercise_id
       -- "0 * p.user_id" ties the lateral to the row, so random() is drawn per card, not once
       CROSS JOIN LATERAL (SELECT 1 + 59 * random() + 0 * p.user_id AS stab) s
       WHERE p.first_solved_at IS NOT NULL AND e.format NOT IN ('code', 'lines')
       ORDER BY p.user_id, p.exercise_id""",
    """INSERT INTO progress_reviewcard (user_id, exercise_id, state, stability, difficulty, due_at, last_review_at,
                                       reviews, lapses, reviewing_since, created_at)
       SELECT l.id, e.id, 2, g.stab, 5.0, now() + (40 * random() - 10) * interval '1 day',
              now() - interval '20 days', 1, 0, NULL, now() - interval '80 days'
       FROM (SELECT floor(random() * %(learners)s)::int AS uidx,
                    floor(random() * (SELECT count(*) FROM lb_exercise))::int AS eidx,
                    1 + 59 * random() AS stab
             FROM generate_series(1, greatest(0, (1.5 * (%(cards)s - (SELECT count(*) FROM progress_reviewcard)))::int))
            ) g
       JOIN lb_learner l ON l.idx = g.uidx
       JOIN lb_exercise e ON e.idx = g.eidx
       JOIN exercises_exercise x ON x.id = e.id AND x.format NOT IN ('code', 'lines')
       ON CONFLICT (user_id, exercise_id) DO NOTHING""",
    "ANALYZE progress_reviewcard",
]

# Solve days in each learner's effective time zone (own, else first cohort's, else the site's),
# then the streak row: the last run of consecutive days and the longest one.
_STREAKS = [
    """CREATE TEMP TABLE lb_zone AS
       SELECT u.id AS user_id,
              coalesce(nullif(u.time_zone, ''),
                       (SELECT c.time_zone FROM progress_membership m JOIN progress_cohort c ON c.id = m.cohort_id
                        WHERE m.user_id = u.id ORDER BY m.joined_at, m.id LIMIT 1),
                       %(site_tz)s) AS tz
       FROM accounts_user u""",
    "ANALYZE lb_zone",
    """INSERT INTO progress_dailyactivity (user_id, day, solves, points)
       SELECT p.user_id, (p.first_solved_at AT TIME ZONE z.tz)::date, count(*), sum(p.points)
       FROM progress_exerciseprogress p JOIN lb_zone z ON z.user_id = p.user_id
       WHERE p.first_solved_at IS NOT NULL
       GROUP BY 1, 2 ORDER BY 1, 2""",
    """INSERT INTO progress_learnerstats (user_id, time_zone, current_streak, best_streak, last_day, solves, points)
       SELECT r.user_id, z.tz, (array_agg(r.len ORDER BY r.last DESC))[1], max(r.len), max(r.last),
              sum(r.solves), sum(r.points)
       FROM (SELECT user_id, count(*) AS len, max(day) AS last, sum(solves) AS solves, sum(points) AS points
             FROM (SELECT user_id, day, solves, points,
                          day - (row_number() OVER (PARTITION BY user_id ORDER BY day))::int AS run
                   FROM progress_dailyactivity) d
             GROUP BY user_id, run) r
       JOIN lb_zone z ON z.user_id = r.user_id
       GROUP BY r.user_id, z.tz
       ORDER BY r.user_id""",
]

# Plain secondary indexes of a table (not those behind its primary key or unique constraints, not
# partial or expression ones, whose definition text does not survive a round trip): dropped before
# a bulk load and recreated from these very definitions after it, which is faster than maintaining
# them row by row, and leaves the schema as migrated (checked: the definitions read back equal).
_INDEXES = """
SELECT ic.relname, pg_get_indexdef(i.indexrelid) FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
WHERE i.indrelid = %s::regclass AND i.indpred IS NULL AND i.indexprs IS NULL AND NOT EXISTS (
    SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid AND c.conrelid = i.indrelid AND c.contype IN ('p', 'u', 'x'))
ORDER BY 1
"""
# Single-column foreign keys of the loaded tables, to check in one anti-join each when the load
# ran with session_replication_role = replica (which skips the per-row foreign key triggers).
_FOREIGN_KEYS = """
SELECT c.conrelid::regclass::text, a.attname, c.confrelid::regclass::text, af.attname
FROM pg_constraint c
JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
JOIN pg_attribute af ON af.attrelid = c.confrelid AND af.attnum = c.confkey[1]
WHERE c.contype = 'f' AND cardinality(c.conkey) = 1 AND c.conrelid = ANY(%s::regclass[])
ORDER BY 1, 2
"""
_DANGLING = "SELECT count(*) FROM {table} t WHERE t.{col} IS NOT NULL AND NOT EXISTS (SELECT 1 FROM {ref} r WHERE r.{ref_col} = t.{col})"


_WORST_TIE = """
SELECT user_id FROM progress_score
WHERE board = %(board)s AND NOT hidden AND points = (
    SELECT points FROM progress_scorebucket WHERE board = %(board)s ORDER BY learners DESC, points LIMIT 1)
ORDER BY reached_at DESC, user_id DESC LIMIT %(limit)s
"""


def code_version() -> str:
    """The commit measured (app code changes under this benchmark), ``+dirty`` if apps/ has edits."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        )
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "apps"], cwd=ROOT, capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def scratch_url(url: str, suffix: str) -> tuple[str, str, str]:
    """(scratch database URL, its name, the maintenance database URL) beside ``url``."""
    parsed = urlparse(url)
    name = parsed.path.lstrip("/") + suffix
    return urlunparse(parsed._replace(path=f"/{name}")), name, urlunparse(parsed._replace(path="/postgres"))


def scratch_or_kept(
    database_url: str, suffix: str, sizes: dict[str, int], *, keep: bool
) -> tuple[str, str, dict[str, Any] | None]:
    """The scratch database's URL and name, and, with ``keep``, the marker of a database a previous
    run generated with the same sizes (reused as it is); otherwise None and a new empty database."""
    url, name, admin_url = scratch_url(database_url, suffix)
    previous = marker_read(admin_url, name) if keep else None
    if previous is not None and all(previous.get(k) == v for k, v in sizes.items()):
        return url, name, previous
    scratch_database(database_url, suffix)
    return url, name, None


def marker_read(admin_url: str, name: str) -> dict[str, Any] | None:
    """What a finished generation left in the database's comment (None: absent or unfinished)."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = %s", [name]
        ).fetchone()
    if row is None or not row[0]:
        return None
    try:
        found = json.loads(row[0])
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


@contextmanager
def indexes_deferred(conn: psycopg.Connection[Any], table: str) -> Iterator[list[float]]:
    """Drop ``table``'s secondary indexes for a bulk load, then recreate them exactly as they were."""
    saved = conn.execute(_INDEXES, [table]).fetchall()
    for name, _ in saved:
        conn.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(name)))
    rebuild: list[float] = []
    try:
        yield rebuild
    finally:
        start = time.perf_counter()
        for _, definition in saved:
            conn.execute(definition)
        rebuild.append(time.perf_counter() - start)
        restored = conn.execute(_INDEXES, [table]).fetchall()
        assert restored == saved, f"{table}: indexes {restored} after the load, {saved} before"


def foreign_keys_check(conn: psycopg.Connection[Any], tables: list[str]) -> int:
    """Rows of ``tables`` whose foreign key points nowhere (0, or the generator is wrong)."""
    dangling = 0
    for table, col, ref, ref_col in conn.execute(_FOREIGN_KEYS, [tables]).fetchall():
        query = sql.SQL(_DANGLING).format(
            table=sql.Identifier(table),
            col=sql.Identifier(col),
            ref=sql.Identifier(ref),
            ref_col=sql.Identifier(ref_col),
        )
        row = conn.execute(query).fetchone()
        if row and row[0]:
            print(f"  {row[0]} rows of {table}.{col} point nowhere in {ref}", file=sys.stderr)
            dangling += row[0]
    return int(dangling)


def generate(url: str, name: str, sizes: dict[str, int], site_tz: str) -> dict[str, float]:
    """Bulk-load the scratch database; returns seconds per step."""
    params: dict[str, Any] = {**sizes, "zones": ZONES, "site_tz": site_tz}
    steps = [  # (label, statements, the table counted, whether to drop its secondary indexes meanwhile)
        ("users", _USERS, "accounts_user", False),
        ("cohorts", _COHORTS, "progress_membership", False),
        ("lookups", _LOOKUPS, None, False),
        ("attempts", _ATTEMPTS, "exercises_attempt", True),
        ("progress", _PROGRESS, "progress_exerciseprogress", True),
        ("streaks", _STREAKS, "progress_learnerstats", False),
        ("cards", _CARDS, "progress_reviewcard", True),
    ]
    loaded = [
        "accounts_user", "progress_cohort", "progress_cohortworkbook", "progress_membership", "exercises_attempt",
        "progress_exerciseprogress", "progress_dailyactivity", "progress_learnerstats", "progress_reviewcard",
    ]  # fmt: skip
    seconds: dict[str, float] = {}
    with psycopg.connect(url, autocommit=True) as conn:
        for statement in _SESSION:
            conn.execute(statement)
        superuser = conn.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone()
        replica = bool(superuser and superuser[0])
        if replica:  # the foreign keys are checked below, once per key instead of once per row
            conn.execute("SET session_replication_role = replica")
        for label, statements, table, defer in steps:
            start = time.perf_counter()
            rebuild: list[float] = []
            with indexes_deferred(conn, table) if defer and table else nullcontext(rebuild) as rebuild:
                for statement in statements:
                    conn.execute(statement, params if "%(" in statement else None)
            seconds[label] = time.perf_counter() - start
            note = f", of which {rebuild[0]:.1f} s rebuilding its indexes" if rebuild else ""
            if table:
                row = conn.execute(sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(table))).fetchone()
                note = f" ({row[0] if row else 0:,} rows in {table}{note})"
            print(f"  {label:<10} {seconds[label]:7.1f} s{note}", flush=True)
        if replica:
            conn.execute("SET session_replication_role = DEFAULT")
            start = time.perf_counter()
            dangling = foreign_keys_check(conn, loaded)
            seconds["fk_check"] = time.perf_counter() - start
            print(f"  {'fk check':<10} {seconds['fk_check']:7.1f} s ({dangling} dangling)", flush=True)
            assert dangling == 0, "the generator wrote rows whose foreign keys point nowhere"

    from apps.progress import services

    start = time.perf_counter()
    rebuilt = services.scores_rebuild()
    seconds["scores_rebuild"] = time.perf_counter() - start
    print(f"  {'scores':<10} {seconds['scores_rebuild']:7.1f} s ({rebuilt:,} rows in progress_score)", flush=True)

    with psycopg.connect(url, autocommit=True) as conn:
        start = time.perf_counter()
        conn.execute("VACUUM (ANALYZE)")
        seconds["vacuum_analyze"] = time.perf_counter() - start
        print(f"  {'vacuum':<10} {seconds['vacuum_analyze']:7.1f} s", flush=True)
        marker = json.dumps({**sizes, "generated_at": time.time(), "generation_s": seconds})
        conn.execute(sql.SQL("COMMENT ON DATABASE {} IS {}").format(sql.Identifier(name), sql.Literal(marker)))
    return seconds


def data_summary(url: str, week: str) -> dict[str, int]:
    queries = {
        "users": "SELECT count(*) FROM accounts_user",
        "attempts": "SELECT count(*) FROM exercises_attempt",
        "progress_rows": "SELECT count(*) FROM progress_exerciseprogress",
        "solved_rows": "SELECT count(*) FROM progress_exerciseprogress WHERE solved_at IS NOT NULL",
        "learner_stats": "SELECT count(*) FROM progress_learnerstats",
        "review_cards": "SELECT count(*) FROM progress_reviewcard",
        "cards_due_now": "SELECT count(*) FROM progress_reviewcard WHERE due_at < now()",
        "memberships": "SELECT count(*) FROM progress_membership",
        "score_rows": "SELECT count(*) FROM progress_score",
        "ranked_all": "SELECT count(*) FROM progress_score WHERE board = 'all' AND NOT hidden",
        "hidden_all": "SELECT count(*) FROM progress_score WHERE board = 'all' AND hidden",
        "ranked_week": "SELECT count(*) FROM progress_score WHERE board = %(week)s AND NOT hidden",
        "buckets_all": "SELECT count(*) FROM progress_scorebucket WHERE board = 'all'",
        "largest_tie_all": "SELECT coalesce(max(learners), 0) FROM progress_scorebucket WHERE board = 'all'",
        "max_points_all": "SELECT coalesce(max(points), 0) FROM progress_scorebucket WHERE board = 'all'",
    }
    out: dict[str, int] = {}
    with psycopg.connect(url) as conn:
        for key, query in queries.items():
            row = conn.execute(query, {"week": week} if "%(" in query else None).fetchone()
            out[key] = int(row[0]) if row else 0
    return out


def explain_leaderboard(user: User, period: str) -> list[dict[str, str]]:
    """EXPLAIN (ANALYZE, BUFFERS) of each query one leaderboard call runs, as it ran them."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from apps.progress import selectors

    with CaptureQueriesContext(connection) as captured:
        selectors.leaderboard(user=user, scope="global", period=period, limit=50)
    plans = []
    for query in captured.captured_queries:
        text = query["sql"]
        upper = text.upper()
        if "LIMIT 50" in upper:
            label = "top-50"
        elif "SUM(" in upper and "COUNT(*)" in upper:
            label = "own rank (bucket sum + ties ahead)"
        elif "SUM(" in upper:
            label = "bucket sums"
        elif "COUNT(*)" in upper:
            label = "ties ahead"
        else:
            label = "own score row"
        with connection.cursor() as cursor:
            cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + text)
            plan = "\n".join(row[0] for row in cursor.fetchall())
        plans.append({"query": label, "sql": text, "plan": plan})
    return plans


def measure(rounds: int, warmup: int, week: str) -> tuple[dict[str, list[float]], list[dict[str, Any]], dict[str, Any]]:
    from datetime import timedelta

    from django.db import connection
    from django.utils import timezone

    from apps.accounts.models import User
    from apps.progress import selectors
    from apps.progress.services import GLOBAL_ALL

    def ids(query: str, board: str | None = None) -> list[int]:
        with connection.cursor() as cursor:
            cursor.execute(query, {"board": board, "limit": POOL})
            return [int(r[0]) for r in cursor.fetchall()]

    ranked_q = """SELECT user_id FROM (SELECT user_id, row_number() OVER (ORDER BY points DESC, reached_at, user_id) AS rn
                  FROM progress_score WHERE board = %(board)s AND NOT hidden) s WHERE rn > 50
                  ORDER BY random() LIMIT %(limit)s"""
    all_ids = list(User.objects.values_list("id", flat=True))
    pools: dict[str, list[User]] = {}
    for key, query, board_name in [
        ("my_rank", ranked_q, GLOBAL_ALL),
        ("my_rank_week", ranked_q, week),
        ("streak", "SELECT user_id FROM progress_learnerstats ORDER BY random() LIMIT %(limit)s", None),
        ("due_reviews", "SELECT DISTINCT user_id FROM progress_reviewcard ORDER BY 1 LIMIT 50000", None),
    ]:
        pools[key] = list(User.objects.in_bulk(ids(query, board_name)).values())
    notes = {key: len(users) for key, users in pools.items()}

    # "My rank" checked against a window function over the same rows, for a sample.
    checked = mismatched = 0
    with connection.cursor() as cursor:
        for board_name, period in [(GLOBAL_ALL, "all"), (week, "week")]:
            cursor.execute(
                """SELECT user_id, rn FROM (SELECT user_id, row_number() OVER (ORDER BY points DESC, reached_at, user_id)
                   AS rn FROM progress_score WHERE board = %s AND NOT hidden) s ORDER BY random() LIMIT 25""",
                [board_name],
            )
            for user_id, rank in cursor.fetchall():
                me = selectors.leaderboard(user=User.objects.get(pk=user_id), period=period).me
                checked += 1
                mismatched += me is None or me.rank != rank
    notes["rank_checked"], notes["rank_mismatched"] = checked, mismatched

    rng = random.Random(7)

    def pk_lookup() -> Callable[[], object]:
        pk = rng.choice(all_ids)
        return lambda: User.objects.filter(pk=pk).values_list("id", "username").first()

    boards = {"all": GLOBAL_ALL, "week": week}

    def top_case(period: str) -> Callable[[], Callable[[], object]]:
        def pick() -> Callable[[], object]:
            user_id = rng.choice(all_ids)
            return lambda: selectors.board_top(board=boards[period], user_id=user_id, limit=50)

        return pick

    def rank_case(key: str, period: str) -> Callable[[], Callable[[], object]]:
        def pick() -> Callable[[], object]:
            user = rng.choice(pools[key])
            return lambda: selectors.board_rank(board=boards[period], user=user)

        return pick

    def board_call() -> Callable[[], object]:
        user = rng.choice(pools["my_rank"])
        return lambda: selectors.leaderboard(user=user, scope="global", period="all", limit=50)

    def streak() -> Callable[[], object]:
        user = rng.choice(pools["streak"])
        return lambda: selectors.streak_get(user=user)

    # Due before the end of the learner's day: at most a day ahead of now.
    until = timezone.now() + timedelta(days=1)

    def due_reviews() -> Callable[[], object]:
        user = rng.choice(pools["due_reviews"])
        return lambda: selectors.due_cards(user_id=user.pk, until=until)

    def review_queue() -> Callable[[], object]:
        user = rng.choice(pools["due_reviews"])
        return lambda: selectors.reviews_due(user=user, until=until)

    cases: dict[str, Callable[[], Callable[[], object]]] = {
        "pk_lookup": pk_lookup,
        "streak": streak,
        "top50": top_case("all"),
        "top50_week": top_case("week"),
    }
    for key, period in [("my_rank", "all"), ("my_rank_week", "week")]:
        if pools[key]:
            cases[key] = rank_case(key, period)
    if pools["my_rank"]:
        cases["board_call"] = board_call
    if pools["due_reviews"]:
        cases["due_reviews"], cases["review_queue"] = due_reviews, review_queue
    timings: dict[str, list[float]] = {k: [] for k in cases}
    perf = time.perf_counter_ns
    for i in range(warmup + rounds):
        order = list(cases)
        rng.shuffle(order)  # interleaved, in a different order each round
        for name in order:
            call = cases[name]()
            start = perf()
            call()
            elapsed = perf() - start
            if i >= warmup:
                timings[name].append(elapsed / 1e6)

    # The plans for the worst "my rank": the last learner of the board's largest tie.
    plans: list[dict[str, Any]] = []
    for board_name, period in [(GLOBAL_ALL, "all"), (week, "week")]:
        worst = ids(_WORST_TIE, board_name)
        if worst:
            user = User.objects.get(pk=worst[0])
            plans += [{"board": period, "user_id": user.pk, **plan} for plan in explain_leaderboard(user, period)]
    return timings, plans, notes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=2000, help="calls per measure")
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--learners", type=int, default=100_000)
    parser.add_argument("--attempts", type=int, default=5_000_000)
    parser.add_argument("--cohorts", type=int, default=200)
    parser.add_argument("--members", type=int, default=50, help="learners per cohort")
    parser.add_argument("--cards", type=int, default=1_200_000, help="review cards, at least")
    parser.add_argument("--keep", action="store_true", help="reuse a database generated with the same sizes")
    args = parser.parse_args()
    if not 0 < args.learners <= 999_999 or not 0 < args.cohorts <= 9999 or args.cohorts * args.members > args.learners:
        parser.error("1-999999 learners, 1-9999 cohorts, and no more members than learners")

    database_url = os.environ.get("DATABASE_URL")
    if not database_url:
        print("DATABASE_URL must point at PostgreSQL (make bench starts one)", file=sys.stderr)
        return 2
    sizes = {
        "learners": args.learners,
        "attempts": args.attempts,
        "cohorts": args.cohorts,
        "members": args.members,
        "cards": args.cards,
    }
    url, name, previous = scratch_or_kept(database_url, SUFFIX, sizes, keep=args.keep)
    reused = previous is not None
    env = {**os.environ, "DATABASE_URL": url, "DJANGO_SETTINGS_MODULE": SETTINGS}
    os.environ.update(env)

    generation: dict[str, float] = {}
    start = time.perf_counter()
    manage(env, "migrate", "--noinput")  # a no-op on a kept database whose schema is current
    if not reused:
        manage(env, "sync_content", "--workbook", "transformer-math")
        generation["migrate_and_sync_content"] = time.perf_counter() - start

    import django

    django.setup()
    from django.conf import settings
    from django.utils import timezone

    from apps.progress.services import global_week_board

    if reused:
        assert previous is not None
        generation = previous.get("generation_s", {})
        print(f"reusing {name} (generated {time.ctime(previous.get('generated_at', 0))}; --keep)")
    else:
        print(f"generating {name}: {args.learners:,} learners, {args.attempts:,} attempts", flush=True)
        start = time.perf_counter()
        generation.update(generate(url, name, sizes, settings.TIME_ZONE))
        generation["total"] = time.perf_counter() - start + generation["migrate_and_sync_content"]
        print(f"  {'total':<10} {generation['total']:7.1f} s (migrate and sync_content included)")

    week = global_week_board(timezone.now())
    data = data_summary(url, week)
    timings, plans, notes = measure(args.rounds, args.warmup, week)

    stats = summarize(timings, 4)
    ratios = ratios_to(stats, "pk_lookup")
    targets = {**TARGETS, **INFORMATIONAL}
    passed = {name: ratios[name]["p95"] <= limit for name, limit in targets.items() if name in ratios}
    report = {
        "code": code_version(),
        "rounds": args.rounds,
        "sizes": sizes,
        "reused_database": reused,
        "week_board": week,
        "generation_s": {k: round(v, 2) for k, v in generation.items()},
        "data": data,
        "pools": notes,
        "stats": stats,
        "ratios_to_pk_lookup": ratios,
        "targets_p95_ratio": targets,
        "pass": passed,
        "all_targets_met": all(passed[k] for k in TARGETS if k in passed),
        "explain": plans,
    }
    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    (out / "leaderboard.json").write_text(json.dumps(report, indent=2))

    for plan in plans:
        print(f"\n-- {plan['query']} ({plan['board']} board, user {plan['user_id']}: the last of the largest tie)")
        print(f"{plan['sql'].strip()}\n{plan['plan']}")
    print(f"\ndata: {json.dumps(data)}")
    print(f"pools: {json.dumps(notes)}")
    print(f"\n{'measure':<14} {'p50 ms':>8} {'p95 ms':>8} {'p95/base':>9} {'target':>7}  result")
    for name, s in stats.items():
        limit = targets.get(name)
        verdict = "" if limit is None else ("pass" if passed[name] else "FAIL")
        if name in INFORMATIONAL:
            verdict += " (informational)"
        ratio = "" if name == "pk_lookup" else f"{ratios[name]['p95']:.2f}x"
        shown = f"{limit:.0f}x" if limit else ""
        print(f"{name:<14} {s['p50_ms']:>8.3f} {s['p95_ms']:>8.3f} {ratio:>9} {shown:>7}  {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
