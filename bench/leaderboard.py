"""Leaderboard, streak, review, overview and gradebook reads at scale, alone and under a deadline
burst of solves: p50/p95 of each, against a primary-key lookup measured in the same phase, interleaved.

    make bench            # or: DATABASE_URL=... REDIS_URL=... .venv/bin/python bench/leaderboard.py [--keep]
    .venv/bin/python bench/leaderboard.py --learners 999999 --attempts 50000000 --keep   # the 1M size

Builds a scratch database ``<name>_lbbench_<learners>`` (one per size, so ``--keep`` keeps each)
on the PostgreSQL in DATABASE_URL (migrated, the workbooks synced), then generates ``--learners``
learners (100k; at most 999,999) and ``--attempts`` graded attempts (5M) with set-based SQL
(``INSERT ... SELECT FROM generate_series``), the progress rows, daily activity, streaks and review
cards derived from them (``--cards``: at least 12 per learner), 200 cohorts of 50, the measured
cohort (``--big-cohort``: 500 learners drawn at random, every workbook due in two weeks), the
leaderboard rows, buckets and slots with ``services.scores_rebuild()``, and the measured cohort's
``--assessments`` (20) with bench/assessments.py's generator (instances, answers, overrides). The
schema stays exactly the migrated one. 999,999 learners and 50M attempts: ~20 minutes.

Every read goes through the selectors on one real connection (``bench.settings``), in a random
order each round:

- ``pk_lookup``: ``User.objects.filter(pk=...).values_list(...).first()``, the baseline;
- ``top50``: ``selectors.board_top(...)``, the top 50 of the all-time global board;
- ``my_rank`` and ``my_rank_week``: ``selectors.board_rank(...)`` for a ranked learner outside the top
  50, on the all-time and this week's global boards;
- ``my_rank_tied`` and ``my_rank_week_tied``: the same for the learner at the end of the board's
  largest tie (the most tied learners ahead of them: the worst case);
- ``streak``: ``selectors.streak_get(...)`` for a learner with a streak row;
- ``due_reviews``: ``selectors.due_cards(...)``, the review queue's read (a learner's cards due
  before the end of their day);
- ``overview``: ``selectors.cohort_overview(...)`` of the 500-learner cohort, what its overview
  page and ``GET /api/v1/cohorts/<id>/overview/`` read (bench/overview.py times those pages);
- ``gradebook``: ``assessments.selectors.gradebook(...)`` of that cohort (20 assessments);
  these two, ~100x the others, once every ``--heavy-every`` (5) rounds;
- informational: ``top50_week``; ``board_call``, ``selectors.leaderboard(...)`` (what
  ``GET /api/v1/leaderboard/`` runs); ``review_queue``, ``selectors.reviews_due(...)`` (what
  ``GET /api/v1/reviews/`` reads).

Two phases of ``--rounds`` rounds: the reads alone, then the same reads while ``--writers`` (8)
separate processes, each with its own Django and connection, apply a deadline burst of
``--burst-rate`` (200) solves per second to the same boards and the same cohort, through what the
grading POST calls for a correct answer (``progress.services.attempt_record`` with learning's
attempt insert: the attempt, the progress row, and in one transaction the streak, the day, the
points, every board's rows, buckets and slots, the review card). A fifth of the solves are
learners' first points this week (a new row and a bucket move on this week's board), a fifth by
the measured cohort's members, the rest by anyone; a learner's solves stay on one writer. The
writers run with ``lock_timeout = 100ms`` (a timeout is a lock wait over 100 ms: counted); a
sampler reads the lock waits in progress (``pg_locks.waitstart``) every 100 ms; deadlocks are
``pg_stat_database.deadlocks``' delta. The burst's rate is what the writers achieved inside the
reads' window. ``--no-burst``: the reads alone only; ``--burst-only``: under the burst only.

Targets (issue 34; p95 over the baseline's p95 in the same phase): top-50, my rank (all four),
streak and due reviews <= 2x; overview and gradebook <= 300 ms p95; >= 200 solves/s, no lock
wait over 100 ms, no deadlock. Writes bench/results/leaderboard.json and
bench/results/leaderboard-<learners>.json (bench/growth.py charts those). ``--keep`` reuses a
database a previous run generated with the same sizes (its "now" is the time it was generated:
this week's board thins out; each burst's solves stay in it).
"""

from __future__ import annotations

import argparse
import gc
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
# Issue 34: each read's p95 <= 2x the primary-key lookup's in the same run (under the same burst),
# the overview and the gradebook of a 500-learner cohort <= 300 ms p95.
TARGETS = {
    "top50": 2.0, "my_rank": 2.0, "my_rank_week": 2.0, "my_rank_tied": 2.0, "my_rank_week_tied": 2.0,
    "streak": 2.0, "due_reviews": 2.0,
}  # fmt: skip
TARGETS_MS = {"overview": 300.0, "gradebook": 300.0}
HEAVY = set(TARGETS_MS)  # measured once every --heavy-every rounds
INFORMATIONAL = ["top50_week", "board_call", "review_queue"]
POOL = 2000  # learners drawn per measure (the baseline draws from every account)
BIG_CODE = "LBBIG001"  # the join code of the measured cohort

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

# The measured cohort: --big-cohort learners drawn at random (they also stay in their first
# cohort), every workbook assigned and due in two weeks (so every risk of the overview is computed).
_BIG_COHORT = [
    """INSERT INTO accounts_user (password, last_login, is_superuser, username, first_name, last_name, email,
                                  is_staff, is_active, date_joined, role, on_global_board, time_zone)
       VALUES ('!', NULL, FALSE, 'instructor-big', '', '', '', TRUE, TRUE, now() - interval '90 days', 'instructor',
               TRUE, '')""",
    """INSERT INTO progress_cohort (name, instructor_id, time_zone, join_code, created_at)
       SELECT 'Cohort big', id, 'Europe/Paris', %(big_code)s, now() - interval '80 days'
       FROM accounts_user WHERE username = 'instructor-big'""",
    """INSERT INTO progress_cohortworkbook (cohort_id, workbook_id, due_on)
       SELECT c.id, w.id, (now() + interval '14 days')::date
       FROM progress_cohort c CROSS JOIN exercises_workbook w WHERE c.join_code = %(big_code)s""",
    """INSERT INTO progress_membership (cohort_id, user_id, joined_at)
       SELECT c.id, l.id, now() - interval '70 days'
       FROM (SELECT id FROM accounts_user WHERE role = 'student' ORDER BY md5('big' || id) LIMIT %(big_cohort)s) l
       CROSS JOIN progress_cohort c WHERE c.join_code = %(big_code)s
       ORDER BY l.id""",
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


def generate(url: str, name: str, sizes: dict[str, int], site_tz: str, *, mark: bool = True) -> dict[str, float]:
    """Bulk-load the scratch database; returns seconds per step. With ``mark``, leaves the marker
    that ``--keep`` reads (without, the caller writes it once it has added what it needs)."""
    params: dict[str, Any] = {**sizes, "zones": ZONES, "site_tz": site_tz, "big_code": BIG_CODE}
    cohorts = _COHORTS + (_BIG_COHORT if sizes.get("big_cohort") else [])
    steps = [  # (label, statements, the table counted, whether to drop its secondary indexes meanwhile)
        ("users", _USERS, "accounts_user", False),
        ("cohorts", cohorts, "progress_membership", False),
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
    if mark:
        marker_write(url, name, {**sizes, "generated_at": time.time(), "generation_s": seconds})
    return seconds


def marker_write(url: str, name: str, marker: dict[str, Any]) -> None:
    """Mark the database as generated with these sizes (what ``--keep`` compares), once complete."""
    with psycopg.connect(url, autocommit=True) as conn:
        text = json.dumps(marker)
        conn.execute(sql.SQL("COMMENT ON DATABASE {} IS {}").format(sql.Identifier(name), sql.Literal(text)))


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


# ---- the burst: writer processes on the real write path -------------------------------------------

# A job: (learner, exercise, the exercise's one part, kind). Kinds: "first" (the learner's first
# points on this week's board), "cohort" (a member of the measured cohort), "any" (anyone else).
Job = tuple[int, int, str, str]

# The learners and the exercises they have not solved, drawn set-based. Exercises: active, one part
# answered here (not code), passed in; the learners outside ``exclude`` (the tied learners measured).
_JOBS_FIRST = """
SELECT u.id, x.exercise_id FROM (
    SELECT id FROM accounts_user u
    WHERE role = 'student' AND on_global_board AND id <> ALL(%(exclude)s)
      AND NOT EXISTS (SELECT 1 FROM progress_score s WHERE s.board = %(week)s AND s.user_id = u.id)
    ORDER BY md5('first' || id || %(seed)s) LIMIT %(learners)s) u
CROSS JOIN LATERAL (
    SELECT e AS exercise_id FROM unnest(%(exercises)s::int[]) e
    WHERE NOT EXISTS (SELECT 1 FROM progress_exerciseprogress p
                      WHERE p.user_id = u.id AND p.exercise_id = e AND p.solved_at IS NOT NULL)
    ORDER BY md5(u.id || ':' || e || %(seed)s) LIMIT 1) x
"""
_JOBS_MORE = """
SELECT u.id, x.exercise_id FROM (
    SELECT id FROM accounts_user u
    WHERE role = 'student' AND id <> ALL(%(exclude)s) AND (
        CASE WHEN %(cohort)s::int IS NULL
             THEN NOT EXISTS (SELECT 1 FROM progress_membership m WHERE m.user_id = u.id AND m.cohort_id = %(big)s)
             ELSE EXISTS (SELECT 1 FROM progress_membership m WHERE m.user_id = u.id AND m.cohort_id = %(cohort)s) END)
    ORDER BY md5('more' || id || %(seed)s) LIMIT %(learners)s) u
CROSS JOIN LATERAL (
    SELECT e AS exercise_id FROM unnest(%(exercises)s::int[]) e
    WHERE NOT EXISTS (SELECT 1 FROM progress_exerciseprogress p
                      WHERE p.user_id = u.id AND p.exercise_id = e AND p.solved_at IS NOT NULL)
    ORDER BY md5(u.id || ':' || e || %(seed)s) LIMIT %(per_learner)s) x
"""


def burst_exercises() -> dict[int, str]:
    """Exercise id -> its one part, for the active exercises graded here in one part (not code)."""
    from apps.exercises import parts
    from apps.exercises.choices import AttemptPart
    from apps.exercises.content import cache
    from apps.exercises.models import Exercise

    found: dict[int, str] = {}
    for exercise in Exercise.objects.filter(is_active=True, current_version__isnull=False).select_related(
        "current_version"
    ):
        assert exercise.current_version is not None
        spec = cache.resolved(exercise.current_version).spec
        owned = parts.parts(spec)
        if len(owned) == 1 and owned[0] != AttemptPart.CODE:
            found[exercise.pk] = str(owned[0].value)
    return found


def burst_jobs(
    url: str, *, total: int, week: str, big_cohort: int | None, exclude: list[int], writers: int, seed: str
) -> tuple[list[list[Job]], dict[str, int]]:
    """About ``total`` solves to make, a fifth first points this week, a fifth by the measured
    cohort's members, the rest by anyone; split by learner over ``writers`` (a learner answers
    on one writer, so never twice at once), each writer's list shuffled."""
    exercises = burst_exercises()
    params: dict[str, Any] = {"week": week, "exclude": exclude, "exercises": list(exercises), "seed": seed}
    rows: list[Job] = []
    with psycopg.connect(url) as conn:
        first = conn.execute(_JOBS_FIRST, {**params, "learners": total // 5}).fetchall()
        rows += [(int(u), int(e), exercises[e], "first") for u, e in first]
        taken = [*exclude, *(u for u, _ in first)]
        if big_cohort is not None:
            more = conn.execute(
                _JOBS_MORE,
                {
                    **params,
                    "exclude": taken,
                    "cohort": big_cohort,
                    "big": big_cohort,
                    "learners": 10_000,
                    "per_learner": 1000,
                },
            ).fetchall()
            rows += [(int(u), int(e), exercises[e], "cohort") for u, e in more[: total // 5]]
        per = 12
        more = conn.execute(
            _JOBS_MORE,
            {
                **params,
                "exclude": taken,
                "cohort": None,
                "big": big_cohort or 0,
                "learners": total // per + 1,
                "per_learner": per,
            },
        ).fetchall()
        rows += [(int(u), int(e), exercises[e], "any") for u, e in more[: max(0, total - len(rows))]]
    split: list[list[Job]] = [[] for _ in range(writers)]
    for job in rows:
        split[job[0] % writers].append(job)
    rng = random.Random(seed)
    for jobs in split:
        rng.shuffle(jobs)
    kinds = {kind: sum(1 for j in rows if j[3] == kind) for kind in ("first", "cohort", "any")}
    return split, {**kinds, "total": len(rows), "exercises": len(exercises)}


def writer_main(index: int, jobs: list[Job], rate: float, go: Any, stop: Any, out: Any) -> None:
    """One writer process: its own Django and connection (``lock_timeout`` 100 ms); once ``go`` is
    set, solves ``jobs`` at ``rate`` per second through what the grading POST calls for a correct
    answer (``progress.services.attempt_record`` with learning's attempt insert: the attempt and
    its progress, then in one transaction the streak, the day, the points and every board), until
    ``stop`` is set or the jobs run out. Reports each solve's time and completion instant."""
    import django

    django.setup()
    from django.db import DatabaseError, connection
    from django.utils import timezone

    from apps.accounts.models import User
    from apps.exercises.choices import Verdict
    from apps.exercises.models import Attempt, Exercise
    from apps.learning.services import _attempt_insert  # the attempt's row exactly as the grading POST writes it
    from apps.progress.services import attempt_record

    with connection.cursor() as cursor:
        cursor.execute("SET lock_timeout = '100ms'")
    users = User.objects.in_bulk({j[0] for j in jobs})
    exercises = Exercise.objects.select_related("workbook", "current_version").in_bulk({j[1] for j in jobs})
    out.put(("ready", index, None))
    go.wait()
    interval = 1.0 / rate
    clock = time.monotonic
    due = clock()
    done: list[float] = []  # completion instants (monotonic, comparable across processes)
    took: list[float] = []  # ms per solve
    counts = {"first": 0, "cohort": 0, "any": 0, "not_a_solve": 0, "lock_timeout": 0, "deadlock": 0, "error": 0}
    errors: list[str] = []
    for user_id, exercise_id, part, kind in jobs:
        if stop.is_set():
            break
        now = clock()
        if due > now:
            time.sleep(due - now)
        elif now - due > 1.0:  # more than a second behind: do not try to make it all up at once
            due = now
        due += interval
        exercise = exercises[exercise_id]
        attempt = Attempt(
            user=users[user_id],
            exercise=exercise,
            version=exercise.current_version,
            part=part,
            raw={"answer": "bench"},
            parsed={},
            verdict=Verdict.CORRECT,
            score=1.0,
            counted=True,
            feedback="",
            details={},
            created_at=timezone.now(),
        )
        start = clock()
        try:
            recorded = attempt_record(attempt=attempt, insert=_attempt_insert(attempt), part_bit=1, all_parts=1)
        except DatabaseError as exc:  # a lock timeout, a deadlock, anything else: counted, and on to the next
            state = getattr(exc.__cause__, "sqlstate", None)
            key = {"55P03": "lock_timeout", "40P01": "deadlock"}.get(str(state), "error")
            counts[key] += 1
            if key == "error" and len(errors) < 5:
                errors.append(str(exc)[:200])
            continue
        end = clock()
        took.append((end - start) * 1000)
        done.append(end)
        counts[kind if recorded is not None and recorded[1] else "not_a_solve"] += 1
    out.put(("done", index, {"counts": counts, "took_ms": took, "done_at": done, "errors": errors}))


def lock_sampler(url: str, every: float, stop: Any, out: Any) -> None:
    """Every ``every`` seconds, the lock waits in progress in the database: how many, the longest."""
    query = """SELECT count(*), coalesce(max(extract(epoch FROM clock_timestamp() - l.waitstart)), 0)
               FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
               WHERE NOT l.granted AND a.datname = current_database()"""
    samples = with_waits = most = 0
    longest = 0.0
    with psycopg.connect(url, autocommit=True) as conn:
        while not stop.is_set():
            row = conn.execute(query).fetchone()
            samples += 1
            if row and row[0]:
                with_waits += 1
                most = max(most, int(row[0]))
                longest = max(longest, float(row[1]))
            time.sleep(every)
    out.put(("locks", -1, {"samples": samples, "samples_with_waits": with_waits, "most_waiting": most,
                           "longest_wait_ms": round(longest * 1000, 1)}))  # fmt: skip


class Burst:
    """Writer processes (and a lock sampler) around a measurement window."""

    def __init__(self, url: str, split: list[list[Job]], rate: float) -> None:
        import multiprocessing

        self.url = url
        context = multiprocessing.get_context("spawn")  # each with its own Django and connection
        self.go, self.stop, self.out = context.Event(), context.Event(), context.Queue()
        per = rate / len(split)
        self.writers = [
            context.Process(target=writer_main, args=(i, jobs, per, self.go, self.stop, self.out), daemon=True)
            for i, jobs in enumerate(split)
        ]
        self.sampler = context.Process(target=lock_sampler, args=(url, 0.1, self.stop, self.out), daemon=True)

    def deadlocks(self) -> int:
        with psycopg.connect(self.url) as conn:
            row = conn.execute("SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()").fetchone()
        return int(row[0]) if row else 0

    def __enter__(self) -> Burst:
        for process in self.writers:
            process.start()
        for _ in self.writers:
            kind, index, _ = self.out.get(timeout=600)
            assert kind == "ready", (kind, index)
        self.deadlocks_before = self.deadlocks()
        self.sampler.start()
        self.go.set()
        time.sleep(2.0)  # the writers reach their pace before the window opens
        self.window = [time.monotonic(), 0.0]
        return self

    def __exit__(self, *exc: object) -> None:
        self.window[1] = time.monotonic()
        self.stop.set()
        self.results = [self.out.get(timeout=600) for _ in range(len(self.writers) + 1)]
        for process in [*self.writers, self.sampler]:
            process.join(timeout=60)
        time.sleep(1.0)  # the backends' statistics reach pg_stat_database
        self.deadlocks_after = self.deadlocks()

    def report(self) -> dict[str, Any]:
        from bench.grading_api import percentile

        start, end = self.window
        counts: dict[str, int] = {}
        took: list[float] = []
        in_window = 0
        errors: list[str] = []
        locks: dict[str, Any] = {}
        for kind, _, result in self.results:
            if kind == "locks":
                locks = result
                continue
            for key, value in result["counts"].items():
                counts[key] = counts.get(key, 0) + value
            took += result["took_ms"]
            in_window += sum(1 for t in result["done_at"] if start <= t <= end)
            errors += result["errors"]
        seconds = end - start
        solves = counts["first"] + counts["cohort"] + counts["any"]
        return {
            "writers": len(self.writers),
            "window_s": round(seconds, 1),
            "solves_in_window": in_window,
            "solves_per_s": round(in_window / seconds, 1) if seconds else 0.0,
            "solves": solves,
            "counts": counts,
            "solve_ms": {
                "p50": round(percentile(took, 0.5), 2) if took else None,
                "p95": round(percentile(took, 0.95), 2) if took else None,
                "max": round(max(took), 2) if took else None,
            },
            "errors": errors,
            "lock_waits": locks,
            "deadlocks": self.deadlocks_after - self.deadlocks_before,
        }


# ---- the reads ------------------------------------------------------------------------------------


def reads_build(
    week: str, big_cohort: int | None
) -> tuple[dict[str, Callable[[], Callable[[], object]]], dict[str, Any], list[int]]:
    """The measured reads (each a picker returning the call to time), the pools' notes, and the
    learners whose rank must not move during the burst (the tied ones)."""
    from datetime import timedelta

    from django.db import connection
    from django.utils import timezone

    from apps.accounts.models import User
    from apps.assessments import selectors as assessment_selectors
    from apps.progress import selectors
    from apps.progress.models import Cohort
    from apps.progress.services import GLOBAL_ALL

    def ids(query: str, board: str | None = None, limit: int = POOL) -> list[int]:
        with connection.cursor() as cursor:
            cursor.execute(query, {"board": board, "limit": limit})
            return [int(r[0]) for r in cursor.fetchall()]

    ranked_q = """SELECT user_id FROM (SELECT user_id, row_number() OVER (ORDER BY points DESC, reached_at, user_id) AS rn
                  FROM progress_score WHERE board = %(board)s AND NOT hidden) s WHERE rn > 50
                  ORDER BY random() LIMIT %(limit)s"""
    all_ids = list(User.objects.values_list("id", flat=True))
    pools: dict[str, list[User]] = {}
    for key, query, board_name, limit in [
        ("my_rank", ranked_q, GLOBAL_ALL, POOL),
        ("my_rank_week", ranked_q, week, POOL),
        ("my_rank_tied", _WORST_TIE, GLOBAL_ALL, 1),  # the last of the largest tie: the most ties ahead
        ("my_rank_week_tied", _WORST_TIE, week, 1),
        ("streak", "SELECT user_id FROM progress_learnerstats ORDER BY random() LIMIT %(limit)s", None, POOL),
        ("due_reviews", "SELECT DISTINCT user_id FROM progress_reviewcard ORDER BY 1 LIMIT 50000", None, POOL),
    ]:
        pools[key] = list(User.objects.in_bulk(ids(query, board_name, limit)).values())
    notes: dict[str, Any] = {key: len(users) for key, users in pools.items()}
    with connection.cursor() as cursor:
        for key, board_name in [("my_rank_tied", GLOBAL_ALL), ("my_rank_week_tied", week)]:
            cursor.execute(
                "SELECT points, learners FROM progress_scorebucket WHERE board = %s ORDER BY learners DESC, points LIMIT 1",
                [board_name],
            )
            row = cursor.fetchone()
            notes[f"{key}_tie"] = {"points": row[0], "learners": row[1]} if row else None

    # "My rank" checked against a window function over the same rows, for a sample (and the tied).
    checked = mismatched = 0
    with connection.cursor() as cursor:
        for board_name, period, worst in [(GLOBAL_ALL, "all", "my_rank_tied"), (week, "week", "my_rank_week_tied")]:
            cursor.execute(
                """SELECT user_id, rn FROM (SELECT user_id, row_number() OVER (ORDER BY points DESC, reached_at, user_id)
                   AS rn FROM progress_score WHERE board = %s AND NOT hidden) s
                   WHERE user_id = ANY(%s) OR random() < 25.0 / greatest(1, (SELECT count(*) FROM progress_score
                                                                           WHERE board = %s AND NOT hidden))""",
                [board_name, [u.pk for u in pools[worst]], board_name],
            )
            for user_id, rank in cursor.fetchall():
                me = selectors.leaderboard(user=User.objects.get(pk=user_id), period=period).me
                checked += 1
                mismatched += me is None or me.rank != rank
    notes["rank_checked"], notes["rank_mismatched"] = checked, mismatched

    rng = random.Random(7)
    boards = {"all": GLOBAL_ALL, "week": week}

    def pk_lookup() -> Callable[[], object]:
        pk = rng.choice(all_ids)
        return lambda: User.objects.filter(pk=pk).values_list("id", "username").first()

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
    for key, period in [
        ("my_rank", "all"),
        ("my_rank_week", "week"),
        ("my_rank_tied", "all"),
        ("my_rank_week_tied", "week"),
    ]:
        if pools[key]:
            cases[key] = rank_case(key, period)
    if pools["my_rank"]:
        cases["board_call"] = board_call
    if pools["due_reviews"]:
        cases["due_reviews"], cases["review_queue"] = due_reviews, review_queue
    if big_cohort is not None:
        cohort = Cohort.objects.get(pk=big_cohort)
        # What GET /api/v1/cohorts/<id>/overview/ and the gradebook's page read (bench/overview.py and
        # bench/assessments.py time those pages around the same selectors).
        cases["overview"] = lambda: lambda: selectors.cohort_overview(cohort=cohort)
        cases["gradebook"] = lambda: lambda: assessment_selectors.gradebook(cohort=cohort)
        book = assessment_selectors.gradebook(cohort=cohort)
        notes["cohort"] = {
            "id": cohort.pk,
            "learners": len(book.learners),
            "assessments": len(book.assessments),
            "gradebook_cells": len(book.cells),
            "overview_rows": len(selectors.cohort_overview(cohort=cohort).rows),
        }
    tied = [u.pk for key in ("my_rank_tied", "my_rank_week_tied") for u in pools[key]]
    return cases, notes, tied


def rounds_run(
    cases: dict[str, Callable[[], Callable[[], object]]], rounds: int, warmup: int, rng: random.Random, heavy_every: int
) -> dict[str, list[float]]:
    """Each read once per round (the cohort's overview and gradebook, ~100x the others, once every
    ``heavy_every`` rounds), in a new order each round; milliseconds after the warm-up."""
    timings: dict[str, list[float]] = {k: [] for k in cases}
    perf = time.perf_counter_ns
    for i in range(warmup + rounds):
        order = [name for name in cases if name not in HEAVY or i % heavy_every == 0]
        rng.shuffle(order)
        for name in order:
            call = cases[name]()
            start = perf()
            call()
            elapsed = perf() - start
            if i >= warmup:
                timings[name].append(elapsed / 1e6)
    return timings


def phase_report(timings: dict[str, list[float]], seconds: float) -> dict[str, Any]:
    stats = summarize(timings, 4)
    ratios = ratios_to(stats, "pk_lookup")
    passed = {name: ratios[name]["p95"] <= limit for name, limit in TARGETS.items() if name in ratios}
    passed.update({name: stats[name]["p95_ms"] <= limit for name, limit in TARGETS_MS.items() if name in stats})
    return {
        "seconds": round(seconds, 1),
        "stats": stats,
        "ratios_to_pk_lookup": ratios,
        "pass": passed,
        "all_targets_met": all(passed.values()),
    }


def cohort_assessments(sizes: dict[str, int]) -> int | None:
    """The measured cohort (``big_cohort`` learners) and, once, its ``assessments`` assessments with
    bench/assessments.py's generator (instances for 90% of the members, overrides for 5%)."""
    from apps.assessments.models import Assessment
    from apps.progress.models import Cohort

    if not sizes.get("big_cohort"):
        return None
    cohort = Cohort.objects.select_related("instructor").get(join_code=BIG_CODE)
    if sizes.get("assessments") and not Assessment.objects.filter(cohort=cohort).exists():
        from apps.accounts.models import User
        from bench.assessments import assessments_generate, numeric_exercises  # imports this module: here

        start = time.perf_counter()
        members = list(User.objects.filter(memberships__cohort=cohort).order_by("pk"))
        assessments_generate(
            cohort=cohort,
            users=members,
            sizes={"assessments": sizes["assessments"], "questions": 5, "taken_pct": 90, "overrides_pct": 5},
            instructor=cohort.instructor,
            exercises=numeric_exercises(),
            rng=random.Random(5),
        )
        from django.db import connection

        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
        print(f"  {'gradebook':<10} {time.perf_counter() - start:7.1f} s ({sizes['assessments']} assessments)")
    return int(cohort.pk)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=1000, help="calls of each read per phase")
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument("--heavy-every", type=int, default=5, help="rounds per call of the overview and gradebook")
    parser.add_argument("--learners", type=int, default=100_000)
    parser.add_argument("--attempts", type=int, default=5_000_000)
    parser.add_argument("--cohorts", type=int, default=200)
    parser.add_argument("--members", type=int, default=50, help="learners per cohort")
    parser.add_argument("--cards", type=int, help="review cards, at least (default: 12 per learner)")
    parser.add_argument("--big-cohort", type=int, default=500, help="learners of the measured cohort (0: none)")
    parser.add_argument("--assessments", type=int, default=20, help="of the measured cohort (its gradebook)")
    parser.add_argument("--burst-rate", type=float, default=200.0, help="solves per second during the burst")
    parser.add_argument("--writers", type=int, default=8, help="writer processes of the burst")
    parser.add_argument("--no-burst", action="store_true", help="measure the reads alone only")
    parser.add_argument("--burst-only", action="store_true", help="measure the reads under the burst only")
    parser.add_argument("--keep", action="store_true", help="reuse a database generated with the same sizes")
    args = parser.parse_args()
    if not 0 < args.learners <= 999_999 or not 0 < args.cohorts <= 9999 or args.cohorts * args.members > args.learners:
        parser.error("1-999999 learners, 1-9999 cohorts, and no more members than learners")
    if args.big_cohort > args.learners or (args.no_burst and args.burst_only) or args.writers < 1:
        parser.error("no more learners in the measured cohort than learners; --no-burst or --burst-only; 1+ writers")

    database_url = os.environ.get("DATABASE_URL")
    if not database_url or not os.environ.get("REDIS_URL"):
        print("DATABASE_URL and REDIS_URL must point at PostgreSQL and Redis (make bench starts them)", file=sys.stderr)
        return 2
    sizes = {
        "learners": args.learners,
        "attempts": args.attempts,
        "cohorts": args.cohorts,
        "members": args.members,
        "cards": args.cards if args.cards is not None else 12 * args.learners,
        "big_cohort": args.big_cohort,
        "assessments": args.assessments if args.big_cohort else 0,
    }
    # One scratch database per size (<name>_lbbench_<learners>), so that --keep keeps each size's.
    url, name, previous = scratch_or_kept(database_url, f"{SUFFIX}_{args.learners}", sizes, keep=args.keep)
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
        big_cohort = cohort_assessments(sizes)
    else:
        print(f"generating {name}: {args.learners:,} learners, {args.attempts:,} attempts", flush=True)
        start = time.perf_counter()
        generation.update(generate(url, name, sizes, settings.TIME_ZONE, mark=False))
        step = time.perf_counter()
        big_cohort = cohort_assessments(sizes)
        generation["gradebook"] = time.perf_counter() - step
        generation["total"] = time.perf_counter() - start + generation["migrate_and_sync_content"]
        marker_write(url, name, {**sizes, "generated_at": time.time(), "generation_s": generation})
        print(f"  {'total':<10} {generation['total']:7.1f} s (migrate and sync_content included)")

    week = global_week_board(timezone.now())
    data = data_summary(url, week)
    cases, notes, tied = reads_build(week, big_cohort)
    gc.collect()
    gc.freeze()  # as the web process does once started (config/wsgi.py)
    rng = random.Random(17)
    phases: dict[str, Any] = {}
    burst: dict[str, Any] | None = None
    quiet_s = 0.0
    if not args.burst_only:
        print(f"\nreads alone: {args.rounds} rounds of {len(cases)} reads", flush=True)
        start = time.perf_counter()
        timings = rounds_run(cases, args.rounds, args.warmup, rng, args.heavy_every)
        quiet_s = time.perf_counter() - start
        phases["alone"] = phase_report(timings, quiet_s)
    if not args.no_burst:
        # Enough solves for the window at the rate: twice the time the reads took alone (or 15 min).
        window = 2 * quiet_s + 60 if quiet_s else 900
        split, planned = burst_jobs(
            url,
            total=int(args.burst_rate * window),
            week=week,
            big_cohort=big_cohort,
            exclude=tied,
            writers=args.writers,
            seed=str(time.time()),
        )
        ranked_week = data["ranked_week"]
        print(
            f"\nreads under a burst of {args.burst_rate:.0f} solves/s ({args.writers} writers; planned {planned})",
            flush=True,
        )
        with Burst(url, split, args.burst_rate) as running:
            start = time.perf_counter()
            timings = rounds_run(cases, args.rounds, args.warmup, rng, args.heavy_every)
            burst_s = time.perf_counter() - start
        phases["burst"] = phase_report(timings, burst_s)
        burst = {"planned": planned, **running.report()}
        after = data_summary(url, week)
        burst["ranked_week_before"], burst["ranked_week_after"] = ranked_week, after["ranked_week"]
        burst["targets"] = {"solves_per_s": args.burst_rate, "longest_lock_wait_ms": 100, "deadlocks": 0}
        burst["pass"] = {
            "solves_per_s": burst["solves_per_s"] >= args.burst_rate,
            "lock_waits": burst["counts"]["lock_timeout"] == 0 and burst["lock_waits"].get("longest_wait_ms", 0) <= 100,
            "deadlocks": burst["deadlocks"] == 0 and burst["counts"]["deadlock"] == 0,
        }

    # The plans for the worst "my rank": the last learner of the board's largest tie.
    from apps.accounts.models import User
    from apps.progress.services import GLOBAL_ALL

    plans: list[dict[str, Any]] = []
    for board_name, period in [(GLOBAL_ALL, "all"), (week, "week")]:
        from django.db import connection

        with connection.cursor() as cursor:
            cursor.execute(_WORST_TIE, {"board": board_name, "limit": 1})
            worst = cursor.fetchone()
        if worst:
            user = User.objects.get(pk=worst[0])
            plans += [{"board": period, "user_id": user.pk, **plan} for plan in explain_leaderboard(user, period)]

    report = {
        "code": code_version(),
        "rounds": args.rounds,
        "sizes": sizes,
        "reused_database": reused,
        "week_board": week,
        "generation_s": {k: round(v, 2) for k, v in generation.items()},
        "data": data,
        "pools": notes,
        "targets_p95_ratio": TARGETS,
        "targets_p95_ms": TARGETS_MS,
        "informational": INFORMATIONAL,
        "phases": phases,
        "burst": burst,
        "explain": plans,
    }
    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    text = json.dumps(report, indent=2)
    (out / "leaderboard.json").write_text(text)
    (out / f"leaderboard-{args.learners}.json").write_text(text)  # bench/growth.py reads one per size

    for plan in plans:
        print(f"\n-- {plan['query']} ({plan['board']} board, user {plan['user_id']}: the last of the largest tie)")
        print(f"{plan['sql'].strip()}\n{plan['plan']}")
    print(f"\ndata: {json.dumps(data)}")
    print(f"pools: {json.dumps(notes)}")
    for phase, result in phases.items():
        print(f"\n{phase} ({result['seconds']:.0f} s)")
        print(f"{'read':<18} {'p50 ms':>8} {'p95 ms':>8} {'p95/base':>9} {'target':>8}  result")
        for read, s in result["stats"].items():
            ratio = "" if read == "pk_lookup" else f"{result['ratios_to_pk_lookup'][read]['p95']:.2f}x"
            if read in TARGETS:
                shown, verdict = f"{TARGETS[read]:.0f}x", "pass" if result["pass"][read] else "FAIL"
            elif read in TARGETS_MS:
                shown, verdict = f"{TARGETS_MS[read]:.0f}ms", "pass" if result["pass"][read] else "FAIL"
            else:
                shown, verdict = "", "(informational)" if read in INFORMATIONAL else ""
            print(f"{read:<18} {s['p50_ms']:>8.3f} {s['p95_ms']:>8.3f} {ratio:>9} {shown:>8}  {verdict}")
    if burst is not None:
        print(f"\nburst: {json.dumps({k: v for k, v in burst.items() if k != 'planned'})}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
