"""p50/p95 of a numeric-answer POST (parse, grade, store) against two baselines on the same
server in the same run, interleaved: (a) a trivial JSON view, (b) a view inserting one row; and
of the poll a page makes while code runs (``GET /api/v1/attempts/<id>/`` of a running attempt
with six live test results in Redis) against (a).

    make bench            # or: DATABASE_URL=... REDIS_URL=... .venv/bin/python bench/grading_api.py

Runs gunicorn (one sync worker, the web process as deployed) against a scratch database
``<name>_bench`` on the PostgreSQL in DATABASE_URL, and a keep-alive HTTP client on loopback.
Writes bench/results/grading_api.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlparse, urlunparse

import httpx
import psycopg

ROOT = Path(__file__).resolve().parent.parent
LIVE_TESTS = [
    {"label": f"Hidden test {i + 1} of 6", "passed": i % 3 != 2, "message": "" if i % 3 != 2 else "expected 12, got 13"}
    for i in range(6)
]
# A Build attempt of the bench user, claimed by a worker and three tests in: what a page polls.
RUNNING_ATTEMPT = f"""
from django.utils import timezone
from apps.accounts.models import User
from apps.exercises.models import Attempt, Exercise
from apps.learning import live
from django.core.cache import cache
exercise = Exercise.objects.select_related("current_version").get(workbook__slug="transformer-math", number="0.5")
a = Attempt.objects.create(
    user=User.objects.get(username="bench"), exercise=exercise, version=exercise.current_version, part="code",
    status="running", raw={{"code": "def f(): pass"}}, parsed={{}}, verdict="", started_at=timezone.now(),
    details={{"limits": {{"time_s": 10.0, "memory_mb": 512}}, "tests_total": 6}},
)
cache.set(live._key(a.pk), {LIVE_TESTS!r}, timeout=3600)
print(a.pk)
"""
ANSWERS = ["124.3M", "123.5M", "124,320,000", "0.1243 B params", "124.32", "162.9M", "1.2432e8", "84.93M"]


def scratch_database(url: str, suffix: str = "_bench") -> str:
    """A fresh, empty database beside the one in ``url`` (dropped first if left over)."""
    parsed = urlparse(url)
    name = parsed.path.lstrip("/") + suffix
    admin = urlunparse(parsed._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    return urlunparse(parsed._replace(path=f"/{name}"))


def manage(env: dict[str, str], *args: str) -> str:
    result = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    return result.stdout


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    k = (len(ordered) - 1) * p
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def summarize(timings: dict[str, list[float]], digits: int = 3) -> dict[str, dict[str, float]]:
    """p50, p95 and mean (ms) and the count of each series."""
    return {
        name: {"p50_ms": round(percentile(v, 0.5), digits), "p95_ms": round(percentile(v, 0.95), digits),
               "mean_ms": round(statistics.fmean(v), digits), "n": len(v)}
        for name, v in timings.items()
    }  # fmt: skip


def ratios_to(stats: dict[str, dict[str, float]], baseline: str) -> dict[str, dict[str, float]]:
    """Each series' p50 and p95 over the baseline's."""
    base = stats[baseline]
    return {
        name: {"p50": round(s["p50_ms"] / base["p50_ms"], 2), "p95": round(s["p95_ms"] / base["p95_ms"], 2)}
        for name, s in stats.items()
        if name != baseline
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=1500, help="requests per endpoint")
    parser.add_argument("--warmup", type=int, default=150)
    args = parser.parse_args()

    database_url = os.environ.get("DATABASE_URL")
    if not database_url:
        print("DATABASE_URL must point at PostgreSQL (make bench starts one)", file=sys.stderr)
        return 2
    env = {**os.environ, "DATABASE_URL": scratch_database(database_url), "DJANGO_SETTINGS_MODULE": "bench.settings"}
    manage(env, "migrate", "--noinput")
    manage(env, "sync_content", "--workbook", "transformer-math")
    token = manage(
        env,
        "shell",
        "-c",
        "from apps.accounts.services import auth_token_issue, user_create; "
        "from django.db import connection; "
        "connection.cursor().execute('CREATE TABLE bench_row (id bigserial PRIMARY KEY, user_id bigint, "
        "payload jsonb, created_at timestamptz)'); "
        "u = user_create(username='bench', password='bench-pass-123'); print(auth_token_issue(user=u).key)",
    ).split()[-1]  # the shell may print a banner first
    running = manage(env, "shell", "-c", RUNNING_ATTEMPT).split()[-1]

    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "config.wsgi:application", "--bind", f"127.0.0.1:{port}",
         "--workers", "1", "--access-logfile", "-", "--log-level", "warning"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    grade_url = f"{base}/api/v1/workbooks/transformer-math/exercises/0.1/attempts/"
    targets = {
        "trivial": f"{base}/bench/trivial/",
        "insert": f"{base}/bench/insert/",
        "grade": grade_url,
        "poll": f"{base}/api/v1/attempts/{running}/",
    }
    timings: dict[str, list[float]] = {k: [] for k in targets}
    try:
        with httpx.Client(headers={"Authorization": f"Token {token}"}, timeout=10) as client:
            for _ in range(200):
                try:
                    client.post(targets["trivial"], json={})
                    break
                except httpx.TransportError:
                    time.sleep(0.05)
            rng = random.Random(7)
            for i in range(args.warmup + args.rounds):
                order = list(targets)
                rng.shuffle(order)  # interleaved, in a different order each round
                for name in order:
                    body = {"answer": ANSWERS[i % len(ANSWERS)]}
                    start = time.perf_counter()
                    get = name == "poll"
                    response = client.get(targets[name]) if get else client.post(targets[name], json=body)
                    elapsed = time.perf_counter() - start
                    if response.status_code not in (200, 201):
                        raise RuntimeError(f"{name}: {response.status_code} {response.text[:300]}")
                    if get and len(response.json()["run"]["tests"]) != len(LIVE_TESTS):
                        raise RuntimeError(f"poll: not the running attempt's live results: {response.text[:300]}")
                    if i >= args.warmup:
                        timings[name].append(elapsed * 1000)
    finally:
        server.terminate()
        server.wait(timeout=10)

    stats = summarize(timings)
    ratios = {
        "grade_vs_trivial_p50": round(stats["grade"]["p50_ms"] / stats["trivial"]["p50_ms"], 2),
        "grade_vs_trivial_p95": round(stats["grade"]["p95_ms"] / stats["trivial"]["p95_ms"], 2),
        "grade_vs_insert_p50": round(stats["grade"]["p50_ms"] / stats["insert"]["p50_ms"], 2),
        "grade_vs_insert_p95": round(stats["grade"]["p95_ms"] / stats["insert"]["p95_ms"], 2),
        "poll_vs_trivial_p50": round(stats["poll"]["p50_ms"] / stats["trivial"]["p50_ms"], 2),
        "poll_vs_trivial_p95": round(stats["poll"]["p95_ms"] / stats["trivial"]["p95_ms"], 2),
    }
    report = {"rounds": args.rounds, "stats": stats, "ratios": ratios}
    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    (out / "grading_api.json").write_text(json.dumps(report, indent=2))
    print(f"{'endpoint':<10} {'p50 ms':>8} {'p95 ms':>8}")
    for name, s in stats.items():
        print(f"{name:<10} {s['p50_ms']:>8.3f} {s['p95_ms']:>8.3f}")
    print(json.dumps(ratios))
    return 0


if __name__ == "__main__":
    sys.exit(main())
