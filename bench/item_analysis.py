"""Item analysis of one exercise with 100,000 attempts over 64 variants (issue 33, part 5).

    DATABASE_URL=... REDIS_URL=... .venv/bin/python bench/item_analysis.py [--keep] [--rounds N]

Builds a scratch database ``<name>_itembench`` on the PostgreSQL in DATABASE_URL (migrated), syncs a
workbook of its own: the item, a numeric exercise whose ``a`` and ``b`` each take 8 values (64
variants) with two known mistakes, and ``--others`` (19) more exercises. Then, set-based SQL
(``INSERT … SELECT generate_series``): ``--learners`` (8,000) learners in one cohort, ``--attempts``
(100,000) graded attempts on the item spread over them (each learner's first rounds on one of the
64 variants, later rounds on others; the share right falls with the variant's ``a`` and rises with
the learner's ability; half the wrong answers match a known mistake), the item's progress rows
derived from those attempts (first solve, attempts to solve, one learner in ten revealing first),
and the learners' progress on the other exercises (solved with their ability, so the item
discriminates).

Timed, interleaved, after warm-up, in process (bench.settings: DEBUG off, real PostgreSQL and Redis):

- ``pk_lookup``: ``Exercise.objects.get(pk=…)``, the baseline of the selector series;
- ``selector_cohort``: ``itemstats.selectors.item_analysis`` over the cohort, as its instructor;
- ``selector_everyone``: the same over every learner, as an author;
- ``http_me``: ``GET /api/v1/me/`` (token authentication, one user row by primary key), the
  baseline of the HTTP series;
- ``http_cohort``: ``GET /api/v1/workbooks/<slug>/exercises/<n>/analysis/?cohort=<id>`` as the
  instructor (Django's test Client: every middleware, token authentication, the view, JSON);
- ``http_everyone``: the same without ``cohort``, as the author.

Target: ≤ 300 ms p95 for each analysis series. The SQL queries of one analysis are counted too.
``--keep`` keeps the scratch database, and reuses one generated with the same sizes.
Writes bench/results/item_analysis.json and prints Markdown tables.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.assessments import interleaved, marker_write  # noqa: E402 - after the path is set
from bench.grading_api import manage, ratios_to, summarize  # noqa: E402
from bench.leaderboard import code_version, scratch_or_kept  # noqa: E402
from bench.pages import drop_database  # noqa: E402

SUFFIX = "_itembench"
SETTINGS = "bench.settings"
SLUG = "itembench"
TARGET_MS = 300.0
INSTRUCTOR, AUTHOR = "bench-prof", "bench-author"
A_VALUES = [1, 2, 3, 4, 5, 6, 7, 8]
B_VALUES = [16, 24, 32, 48, 64, 96, 128, 256]


# ---- data ----------------------------------------------------------------------------------------


def workbook_spec(others: int) -> Any:
    from apps.exercises.content.schema import ExerciseSpec
    from apps.exercises.tests import synthetic

    item = ExerciseSpec.model_validate(
        {
            "id": "item",
            "number": "1.1",
            "title": "Parameters of a layer",
            "kind": "derive",
            "format": "numeric",
            "prompt": "A layer has {{a}} rows of {{b}} weights. How many parameters does it hold?",
            "explanation": "Rows times weights per row: {{a}} × {{b}} = {{answer}}.",
            "givens": {"a": 2, "b": 16},
            "derived": {"answer": "a * b"},
            "hints": ["Multiply."],
            "answer": {
                "value": "answer",
                "unit": "params",
                "mistakes": [
                    {"value": "a + b", "feedback": "Added instead of multiplied."},
                    {"value": "2 * a * b", "feedback": "Counted every weight twice."},
                ],
            },
            "vary": {"givens": {"a": {"values": A_VALUES}, "b": {"values": B_VALUES}}},
        }
    )
    rest = [synthetic.numeric(f"other-{i}", f"1.{i + 2}", a=i + 3) for i in range(others)]
    return synthetic.workbook([synthetic.chapter(1, [item, *rest])], slug=SLUG)


def generate(sizes: dict[str, Any]) -> dict[str, Any]:
    from django.db import connection

    from apps.accounts.models import Role, User
    from apps.accounts.services import user_create
    from apps.exercises import services as exercise_services
    from apps.exercises.models import Attempt, Exercise, Workbook
    from apps.progress.models import ExerciseProgress, Membership
    from apps.progress.services import cohorts as cohort_services

    exercise_services.workbook_sync(spec=workbook_spec(sizes["others"]))
    workbook = Workbook.objects.get(slug=SLUG)
    item = Exercise.objects.get(workbook=workbook, key="item")
    instructor = user_create(username=INSTRUCTOR, password="bench-pass-123", role=Role.INSTRUCTOR)  # noqa: S106
    user_create(username=AUTHOR, password="bench-pass-123", role=Role.AUTHOR)  # noqa: S106 - a scratch database
    cohort = cohort_services.cohort_create(instructor=instructor, name="Item bench")
    cohort_services.cohort_assign(cohort=cohort, workbook=workbook)
    user_table, attempt, progress = User._meta.db_table, Attempt._meta.db_table, ExerciseProgress._meta.db_table
    n, total = sizes["learners"], sizes["attempts"]
    with connection.cursor() as c:
        c.execute("SELECT setseed(0.33)")
        c.execute(
            f"""INSERT INTO {user_table} (password, is_superuser, username, first_name, last_name, email, is_staff,
                    is_active, date_joined, role, time_zone, on_global_board)
                SELECT '!', FALSE, 'learner-' || g, '', '', '', FALSE, TRUE, now(), 'student', '', TRUE
                FROM generate_series(1, %s) g""",  # noqa: S608 - our table names
            [n],
        )
        c.execute(f"SELECT min(id), max(id) FROM {user_table} WHERE username LIKE 'learner-%%'")  # noqa: S608
        first, last = c.fetchone()
        c.execute(
            f"""INSERT INTO {Membership._meta.db_table} (cohort_id, user_id, joined_at)
                SELECT %s, id, now() FROM {user_table} WHERE id BETWEEN %s AND %s""",  # noqa: S608
            [cohort.pk, first, last],
        )
        # Attempt g goes to learner g mod n, as its (g div n)-th attempt; rounds of 5 attempts (a
        # learner's first round is their first variant); ability 0..9 from the learner's id.
        c.execute(
            f"""INSERT INTO {attempt} (user_id, exercise_id, version_id, part, status, raw, parsed, verdict,
                    outcome, score, feedback, details, created_at, accepted_with_note, counted, round, claims)
                SELECT d.user_id, %(item)s, %(version)s, 'whole', 'graded', '{{"answer": "1"}}', '{{}}',
                       CASE WHEN d.right THEN 'correct' ELSE 'incorrect' END, '', CASE WHEN d.right THEN 1 ELSE 0 END,
                       '', jsonb_build_object('variant', jsonb_build_object('round', d.round,
                           'givens', jsonb_build_object('a', (%(a)s::int[])[d.v %% 8 + 1], 'b', (%(b)s::int[])[d.v / 8 + 1]),
                           'labels', '{{}}'::jsonb))
                         || CASE WHEN NOT d.right AND random() < 0.5
                                 THEN jsonb_build_object('mistake', true, 'mistake_index', d.g %% 2) ELSE '{{}}' END,
                       now() - interval '30 days' + d.g * interval '10 seconds', FALSE, TRUE, d.round, 0
                FROM (
                    SELECT g, %(first)s + g %% %(n)s AS user_id, 1 + (g / %(n)s) / 5 AS round,
                           ((g %% %(n)s) * 7 + (1 + (g / %(n)s) / 5) * 13) %% 64 AS v,
                           random() < 0.15 + 0.05 * ((g %% %(n)s) %% 10) + 0.3 * (1 - (((g %% %(n)s) * 7
                               + (1 + (g / %(n)s) / 5) * 13) %% 8) / 8.0) AS right
                    FROM generate_series(0, %(total)s - 1) g
                ) d""",  # noqa: S608
            {"item": item.pk, "version": item.current_version_id, "a": A_VALUES, "b": B_VALUES, "first": first,
             "n": n, "total": total},
        )  # fmt: skip
        # The item's progress, as the grading path leaves it: attempts, first solve, attempts to
        # solve; one learner in ten revealed before any attempt of theirs was right (forfeited).
        c.execute(
            f"""INSERT INTO {progress} (user_id, exercise_id, workbook_id, attempts, hints_used, solved_at,
                    revealed_at, first_solve_attempt_id, last_attempt_at, last_attempt_id, parts_solved,
                    first_solved_at, attempts_to_solve, forfeited, points, solved_with_note, round, reviewing)
                SELECT s.user_id, %(item)s, %(workbook)s, s.attempts, 0, s.solved_at,
                       CASE WHEN s.user_id %% 10 = 3 THEN s.first_at END, s.solve_id, s.last_at, s.last_id,
                       CASE WHEN s.solved_at IS NULL THEN 0 ELSE 1 END, s.solved_at,
                       s.to_solve, s.user_id %% 10 = 3, 0, FALSE, s.rounds, FALSE
                FROM (
                    SELECT a.user_id, count(*) AS attempts, min(a.created_at) AS first_at,
                           max(a.created_at) AS last_at, max(a.id) AS last_id, max(a.round) AS rounds,
                           r.solved_at, r.solve_id, count(*) FILTER (WHERE a.id <= r.solve_id) AS to_solve
                    FROM {attempt} a
                    LEFT JOIN (
                        SELECT user_id, min(created_at) AS solved_at, min(id) AS solve_id FROM {attempt}
                        WHERE exercise_id = %(item)s AND verdict = 'correct' GROUP BY user_id
                    ) r ON r.user_id = a.user_id
                    WHERE a.exercise_id = %(item)s
                    GROUP BY a.user_id, r.solved_at, r.solve_id
                ) s""",  # noqa: S608
            {"item": item.pk, "workbook": workbook.pk},
        )
        c.execute(
            f"UPDATE {progress} SET attempts_to_solve = NULL WHERE exercise_id = %s AND attempts_to_solve = 0",  # noqa: S608
            [item.pk],
        )
        # The other exercises: solved with the learner's ability (so the item discriminates).
        c.execute(
            f"""INSERT INTO {progress} (user_id, exercise_id, workbook_id, attempts, hints_used, solved_at,
                    revealed_at, last_attempt_at, parts_solved, first_solved_at, attempts_to_solve, forfeited,
                    points, solved_with_note, round, reviewing)
                SELECT u.id, e.id, e.workbook_id, 1, 0, now(), NULL, now(), 1, now(), 1, FALSE, 0, FALSE, 1, FALSE
                FROM {user_table} u CROSS JOIN {Exercise._meta.db_table} e
                WHERE u.id BETWEEN %(first)s AND %(last)s AND e.workbook_id = %(workbook)s AND e.id <> %(item)s
                  AND random() < 0.1 + 0.08 * (u.id %% 10)""",  # noqa: S608
            {"first": first, "last": last, "workbook": workbook.pk, "item": item.pk},
        )
        c.execute(f"ANALYZE {attempt}")
        c.execute(f"ANALYZE {progress}")
    return {"item": item.pk, "cohort": cohort.pk}


# ---- measuring -----------------------------------------------------------------------------------


def measure(ids: dict[str, Any], rounds: int, warmup: int, rng: random.Random) -> dict[str, Any]:
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from apps.accounts.models import User
    from apps.accounts.services import auth_token_issue
    from apps.exercises.models import Attempt, Exercise
    from apps.itemstats import selectors

    instructor, author = User.objects.get(username=INSTRUCTOR), User.objects.get(username=AUTHOR)
    item = Exercise.objects.select_related("workbook", "current_version").get(pk=ids["item"])
    cohort = ids["cohort"]
    url = f"/api/v1/workbooks/{item.workbook.slug}/exercises/{item.number}/analysis/"

    def client_for(user: Any) -> Client:
        token = auth_token_issue(user=user).key
        return Client(HTTP_HOST="127.0.0.1", HTTP_AUTHORIZATION=f"Token {token}", raise_request_exception=True)

    prof, writer = client_for(instructor), client_for(author)

    def get(client: Client, path: str) -> bytes:
        response = client.get(path)
        if response.status_code != 200:
            raise RuntimeError(f"{path}: {response.status_code} {response.content[:300]!r}")
        return bytes(response.content)

    targets: dict[str, Callable[[int], Any]] = {
        "pk_lookup": lambda i: Exercise.objects.get(pk=item.pk),
        "selector_cohort": lambda i: selectors.item_analysis(viewer=instructor, exercise=item, cohort_id=cohort),
        "selector_everyone": lambda i: selectors.item_analysis(viewer=author, exercise=item),
        "http_me": lambda i: get(prof, "/api/v1/me/"),
        "http_cohort": lambda i: get(prof, f"{url}?cohort={cohort}"),
        "http_everyone": lambda i: get(writer, url),
    }
    timings = interleaved(targets, rounds, warmup, rng)
    stats = summarize(timings)
    selector_stats = {k: v for k, v in stats.items() if k.startswith(("pk_", "selector_"))}
    http_stats = {k: v for k, v in stats.items() if k.startswith("http_")}
    with CaptureQueriesContext(connection) as captured:
        analysis = selectors.item_analysis(viewer=instructor, exercise=item, cohort_id=cohort)
    queries = len(captured)  # now: the next request resets the connection's query log
    body = json.loads(get(prof, f"{url}?cohort={cohort}"))
    hardest, easiest = analysis.variants[0], analysis.variants[-1]
    return {
        "stats": stats,
        "ratios": {"selector": ratios_to(selector_stats, "pk_lookup"), "http": ratios_to(http_stats, "http_me")},
        "queries": queries,
        "shape": {
            "attempts": Attempt.objects.filter(exercise=item).count(),
            "learners": analysis.figures.learners,
            "variants": len(analysis.variants),
            "first_try_rate": analysis.figures.first_try_rate,
            "discrimination": analysis.figures.discrimination,
            "hardest": [hardest.label, hardest.figures.first_try_rate],
            "easiest": [easiest.label, easiest.figures.first_try_rate],
            "mistakes": [(m.index, m.count) for m in analysis.mistakes],
            "response_bytes": len(json.dumps(body)),
        },
    }


# ---- main ----------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=100, help="calls per series")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--learners", type=int, default=8000)
    parser.add_argument("--attempts", type=int, default=100_000)
    parser.add_argument("--others", type=int, default=19, help="other exercises in the workbook")
    parser.add_argument("--keep", action="store_true", help="keep the database; reuse one with the same sizes")
    args = parser.parse_args()
    database_url = os.environ.get("DATABASE_URL")
    if not database_url or not os.environ.get("REDIS_URL"):
        print("DATABASE_URL and REDIS_URL must point at PostgreSQL and Redis (make bench starts them)", file=sys.stderr)
        return 2
    warnings.filterwarnings("ignore", message="No directory at", category=UserWarning)
    sizes: dict[str, Any] = {
        "bench": "item_analysis",
        "learners": args.learners,
        "attempts": args.attempts,
        "others": args.others,
    }
    url, name, previous = scratch_or_kept(database_url, SUFFIX, sizes, keep=args.keep)
    reused = previous is not None
    env = {**os.environ, "DATABASE_URL": url, "DJANGO_SETTINGS_MODULE": SETTINGS}
    os.environ.update(env)
    start = time.perf_counter()
    manage(env, "migrate", "--noinput")

    import django

    django.setup()
    if reused:
        assert previous is not None
        ids = previous["ids"]
    else:
        print(f"generating {name}: {args.attempts} attempts by {args.learners} learners over 64 variants", flush=True)
        ids = generate(sizes)
        marker_write(name, {**sizes, "ids": ids})
    setup_s = time.perf_counter() - start
    gc.collect()
    gc.freeze()  # as the web process does once started (config/wsgi.py)
    rng = random.Random(17)
    try:
        start = time.perf_counter()
        measured = measure(ids, args.rounds, args.warmup, rng)
        measured_s = time.perf_counter() - start
    finally:
        if not args.keep:
            drop_database(url)

    analysis_series = [k for k in measured["stats"] if k.startswith(("selector_", "http_")) and k != "http_me"]
    passed = {"p95_within_target": all(measured["stats"][k]["p95_ms"] <= TARGET_MS for k in analysis_series)}
    report = {
        "code": code_version(),
        "rounds": args.rounds,
        "sizes": sizes,
        "setup_s": round(setup_s, 1),
        "measured_s": round(measured_s, 1),
        **measured,
        "target_p95_ms": TARGET_MS,
        "passed": passed,
    }
    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    (out / "item_analysis.json").write_text(json.dumps(report, indent=2))

    print(f"\nitem analysis: {json.dumps(measured['shape'])}")
    print(f"{args.rounds} rounds after {args.warmup} warm-up, interleaved; {measured['queries']} SQL queries\n")
    print("| series | p50 ms | p95 ms | × baseline p50 | × baseline p95 |\n|---|---:|---:|---:|---:|")
    ratios = {**measured["ratios"]["selector"], **measured["ratios"]["http"]}
    for series, s in measured["stats"].items():
        r = ratios.get(series)
        shown = f"{r['p50']:.1f} | {r['p95']:.1f}" if r else "baseline | baseline"
        print(f"| {series} | {s['p50_ms']:.2f} | {s['p95_ms']:.2f} | {shown} |")
    print(f"\ntarget: ≤ {TARGET_MS:.0f} ms p95 per analysis series; passed: {json.dumps(passed)}")
    return 0 if all(passed.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
