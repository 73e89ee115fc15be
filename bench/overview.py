"""The instructor's cohort overview at 500 learners: server time and SQL queries of the admin page
and of its API resource, against a baseline page measured in the same run, interleaved.

    make bench            # or: DATABASE_URL=... REDIS_URL=... .venv/bin/python bench/overview.py [--keep]

Builds a scratch database ``<name>_ovbench`` with ``bench/leaderboard.py``'s set-based generator
(same schema, same distributions): ``--learners`` learners (5000), ``--cohorts`` cohorts of
``--members`` (10 × 500), ``--attempts`` graded attempts (1M) on the transformer-math workbook
and the progress rows, streaks and review cards derived from them. Even-numbered cohorts have a
due date two weeks ahead; the measured cohort is one of them, so every risk is computed.

In process, through Django's test Client (every middleware, the session, the admin's permission
checks, the view, the template), the cohort's instructor logged in:

- ``baseline``: ``GET /bench/pages/empty/`` (bench/pages.py): a login-required page rendering
  the site layout, nothing else;
- ``admin_overview``: ``GET /admin/progress/cohort/<id>/progress/``, the overview page;
- ``api_overview``: ``GET /api/v1/cohorts/<id>/overview/``, the same numbers as JSON.

Targets (the issue's): each overview <= 20 SQL queries and <= 300 ms p95 on this machine.
Writes bench/results/overview.json and prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.grading_api import manage, ratios_to, summarize  # noqa: E402 - after the path is set
from bench.leaderboard import code_version, generate, scratch_or_kept  # noqa: E402
from bench.pages import BASELINE, drop_database  # noqa: E402

SUFFIX = "_ovbench"
SETTINGS = "bench.settings"
TARGET_MS = 300.0
TARGET_QUERIES = 20


def measure(
    cohort_id: int, rounds: int, warmup: int, rng: random.Random
) -> tuple[dict[str, list[float]], dict[str, Any]]:
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from apps.progress.models import Cohort

    cohort = Cohort.objects.select_related("instructor").get(pk=cohort_id)
    client = Client(HTTP_HOST="127.0.0.1", raise_request_exception=True)
    client.force_login(cohort.instructor)
    targets = {
        "baseline": BASELINE,
        "admin_overview": f"/admin/progress/cohort/{cohort_id}/progress/",
        "api_overview": f"/api/v1/cohorts/{cohort_id}/overview/",
    }

    def get(url: str) -> bytes:
        response = client.get(url)
        if response.status_code != 200:
            raise RuntimeError(f"{url}: {response.status_code} {response.content[:300]!r}")
        return bytes(response.content)

    timings: dict[str, list[float]] = {name: [] for name in targets}
    perf = time.perf_counter_ns
    for i in range(warmup + rounds):
        order = list(targets)
        rng.shuffle(order)
        for name in order:
            start = perf()
            get(targets[name])
            if i >= warmup:
                timings[name].append((perf() - start) / 1e6)
    queries: dict[str, int] = {}
    sizes: dict[str, int] = {}
    for name, url in targets.items():
        with CaptureQueriesContext(connection) as captured:
            sizes[name] = len(get(url))
        queries[name] = len(captured)
    body = json.loads(get(targets["api_overview"]))
    shape = {
        "learners": len(body["learners"]),
        "summary": body["summary"],
        "stuck_points": len(body["stuck_points"]),
        "progress_rows_of_the_cohort": _progress_rows(cohort),
    }
    return timings, {"queries": queries, "bytes": sizes, "overview": shape}


def _progress_rows(cohort: Any) -> int:
    from apps.progress.models import ExerciseProgress

    return ExerciseProgress.objects.filter(user__memberships__cohort=cohort).count()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=200, help="requests per page")
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--learners", type=int, default=5000)
    parser.add_argument("--attempts", type=int, default=1_000_000)
    parser.add_argument("--cohorts", type=int, default=10)
    parser.add_argument("--members", type=int, default=500, help="learners per cohort (the measured size)")
    parser.add_argument("--keep", action="store_true", help="reuse a database generated with the same sizes")
    args = parser.parse_args()
    if args.cohorts < 2 or args.cohorts * args.members > args.learners:
        parser.error("at least 2 cohorts, and no more members than learners")
    database_url = os.environ.get("DATABASE_URL")
    if not database_url or not os.environ.get("REDIS_URL"):
        print("DATABASE_URL and REDIS_URL must point at PostgreSQL and Redis (make bench starts them)", file=sys.stderr)
        return 2
    warnings.filterwarnings("ignore", message="No directory at", category=UserWarning)
    sizes = {
        "learners": args.learners,
        "attempts": args.attempts,
        "cohorts": args.cohorts,
        "members": args.members,
        "cards": 0,  # only the cards of solved exercises (the overview does not read them)
    }
    url, name, previous = scratch_or_kept(database_url, SUFFIX, sizes, keep=args.keep)
    reused = previous is not None
    env = {**os.environ, "DATABASE_URL": url, "DJANGO_SETTINGS_MODULE": SETTINGS}
    os.environ.update(env)
    start = time.perf_counter()
    manage(env, "migrate", "--noinput")
    if not reused:
        manage(env, "sync_content", "--workbook", "transformer-math")

    import django

    django.setup()
    from django.conf import settings
    from django.test.utils import override_settings

    from apps.accounts.models import Role, User
    from apps.progress.models import Cohort

    if not reused:
        print(f"generating {name}: {args.learners:,} learners, {args.attempts:,} attempts", flush=True)
        generate(url, name, sizes, settings.TIME_ZONE)
    setup_s = time.perf_counter() - start
    # The instructors are admin users (accounts.services sets is_staff for the role).
    User.objects.filter(role=Role.INSTRUCTOR).update(is_staff=True)
    cohort = Cohort.objects.filter(assignments__due_on__isnull=False).order_by("pk").first()
    assert cohort is not None, "no cohort with a due date"
    rng = random.Random(11)
    try:
        with override_settings(ROOT_URLCONF="bench.pages"):
            start = time.perf_counter()
            timings, counted = measure(cohort.pk, args.rounds, args.warmup, rng)
            measured_s = time.perf_counter() - start
    finally:
        if not args.keep:
            drop_database(url)

    stats = summarize(timings)
    ratios = ratios_to(stats, "baseline")
    passed = {
        page: stats[page]["p95_ms"] <= TARGET_MS and counted["queries"][page] <= TARGET_QUERIES
        for page in ("admin_overview", "api_overview")
    }
    report = {
        "code": code_version(),
        "rounds": args.rounds,
        "warmup": args.warmup,
        "sizes": sizes,
        "cohort": cohort.pk,
        "setup_s": round(setup_s, 1),
        "measured_s": round(measured_s, 1),
        "stats": stats,
        "ratios_to_baseline": ratios,
        "targets": {"p95_ms": TARGET_MS, "queries": TARGET_QUERIES},
        "passed": passed,
        **counted,
    }
    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    (out / "overview.json").write_text(json.dumps(report, indent=2))
    print(f"\ncohort {cohort.pk}: {json.dumps(counted['overview'])}")
    print(f"{args.rounds} rounds after {args.warmup} warm-up, interleaved, {measured_s:.0f} s\n")
    print("| page | p50 ms | p95 ms | p95 ÷ baseline | SQL queries | KB | target (≤300 ms p95, ≤20 queries) |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for page, s in stats.items():
        ratio = "1.00" if page == "baseline" else f"{ratios[page]['p95']:.2f}"
        verdict = "" if page == "baseline" else ("met" if passed[page] else "MISSED")
        kb = counted["bytes"][page] / 1024
        print(
            f"| {page} | {s['p50_ms']:.1f} | {s['p95_ms']:.1f} | {ratio} | {counted['queries'][page]} | {kb:.0f} | {verdict} |"
        )
    return 0 if all(passed.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
