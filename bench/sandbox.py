"""Sandbox latency and throughput, against baselines measured in the same run, interleaved:

(a) enqueue → verdict of a trivial passing Build submission (0.5), vs a bare
    ``docker run --rm --network none <image> python -c pass``;
(b) the same for a submission that imports JAX, vs ``docker run ... python -c "import jax"``;
(c) throughput of --batch submissions (default 200) from --learners learners (default 50) queued at
    once: submissions/s, per core, p50/p95 enqueue → verdict; every attempt final, none lost.

Each runtime named by --runtimes (default "runc,runsc"; runsc when scripts/gvisor.sh registered
it) is measured in turn: its worker runs containers under it, and its baselines are
``docker run --runtime <it>``. --pool-size 0 measures the cold path (one container per run,
started on demand); the default is the settings' pool.

    make bench        # or: DATABASE_URL=... REDIS_URL=... SANDBOX_IMAGE=... .venv/bin/python bench/sandbox.py

"Enqueue" is the service call the API makes (validate, insert the queued attempt, commit,
publish to Redis); "verdict" is the moment the attempt row is final, seen by polling every 2 ms.
The worker is a real `celery worker -Q sandbox` (prefork, one process per core) on a scratch
database ``<name>_bench_sandbox``. Writes bench/results/sandbox.json.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.grading_api import scratch_database  # noqa: E402 - after the path is set

TRIVIAL = (ROOT / "fixtures/workbooks/transformer-math/code/0.5-param-count/solution.py").read_text()
WITH_JAX = "import jax\nimport jax.numpy as jnp\n\n" + TRIVIAL


def docker_run(image: str, code: str, runtime: str) -> float:
    start = time.perf_counter()
    subprocess.run(
        ["docker", "run", "--rm", "--runtime", runtime, "--network", "none", image, "/opt/venv/bin/python", "-c", code],
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - start


def summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, math.ceil(0.95 * len(ordered)) - 1)]
    return {
        "p50": statistics.median(values), "p95": p95, "mean": statistics.fmean(values), "min": min(values),
        "n": len(values),
    }  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--batch", type=int, default=200)
    parser.add_argument("--learners", type=int, default=50)
    parser.add_argument("--runtimes", default="runc,runsc")
    parser.add_argument("--pool-size", type=int, default=None, help="SANDBOX_POOL_SIZE for the worker")
    args = parser.parse_args()

    env = dict(os.environ)
    env["DATABASE_URL"] = scratch_database(os.environ["DATABASE_URL"], "_bench_sandbox")
    env["DJANGO_SETTINGS_MODULE"] = "config.settings.base"
    env.setdefault("SANDBOX_IMAGE", "mlsys-sandbox:latest")
    if args.pool_size is not None:
        env["SANDBOX_POOL_SIZE"] = str(args.pool_size)
    os.environ.update(env)
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    subprocess.run([sys.executable, "manage.py", "sync_content", "-v0"], cwd=ROOT, env=env, check=True)

    import django

    django.setup()
    from django.conf import settings

    runtimes = [r for r in args.runtimes.split(",") if r]
    if "runsc" in runtimes:
        registered = subprocess.run(["bash", str(ROOT / "scripts/gvisor.sh"), "--check"], check=False).returncode == 0
        if not registered:
            print("runsc is not registered with Docker (scripts/gvisor.sh): measuring runc only")
            runtimes.remove("runsc")
    report: dict[str, object] = {
        "image": str(settings.SANDBOX_IMAGE),
        "cores": os.cpu_count() or 1,
        "pool_size": settings.SANDBOX_POOL_SIZE,
        "runtimes": {},
    }
    for runtime in runtimes:
        figures = measure(env | {"SANDBOX_RUNTIME": "" if runtime == "runc" else runtime}, runtime, args)
        report["runtimes"][runtime] = figures  # type: ignore[index]
        show(runtime, figures)
    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    (out / "sandbox.json").write_text(json.dumps(report, indent=2))
    return 0


def measure(env: dict[str, str], runtime: str, args: argparse.Namespace) -> dict[str, object]:
    from django.conf import settings
    from django.core.cache import cache

    from apps.accounts import services as account_services
    from apps.accounts.models import User
    from apps.exercises.models import Attempt, Exercise
    from apps.learning import services as learning_services
    from apps.sandbox import selectors

    cores = os.cpu_count() or 1
    name = f"bench-{runtime}@{socket.gethostname()}"
    cache.delete(selectors.ready_key(name))
    log = open(ROOT / "var" / f"bench-sandbox-worker-{runtime}.log", "wb")  # noqa: SIM115 - lives as long as the worker
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", "sandbox", "-c", str(cores),
         "-n", name, "--without-gossip", "--without-mingle", "--loglevel", "WARNING"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    image = str(settings.SANDBOX_IMAGE)
    try:
        deadline = time.monotonic() + 180
        while name not in selectors.ready_workers():
            assert worker.poll() is None and time.monotonic() < deadline, "the worker did not become ready"
            time.sleep(0.1)
        exercise = Exercise.objects.get(workbook__slug="transformer-math", number="0.5")
        stamp = time.monotonic_ns()
        learners = [
            account_services.user_create(username=f"bench-{runtime}-{stamp}-{i}", password="bench-pass-12345")  # noqa: S106
            for i in range(max(1, args.learners))
        ]

        def submit(source: str, user: User | None = None) -> int:
            outcome = learning_services.attempt_create(
                user=user or learners[0], exercise=exercise, payload={"code": source}
            )
            return outcome.attempt.pk

        def wait(ids: list[int], started: float) -> list[float]:
            """Until every attempt is final; each one's enqueue → verdict, seen by this poll."""
            pending, took = set(ids), []
            while pending:
                done = set(
                    Attempt.objects.filter(pk__in=pending, status__in=["graded", "not_graded"]).values_list(
                        "pk", flat=True
                    )
                )
                took += [time.perf_counter() - started] * len(done)
                pending -= done
                if pending:
                    time.sleep(0.002)
            bad = Attempt.objects.filter(pk__in=ids).exclude(outcome="passed").count()
            assert bad == 0, f"{bad} submissions did not pass"
            return took

        def ours(source: str) -> float:
            start = time.perf_counter()
            wait([submit(source)], start)
            return time.perf_counter() - start

        # Warm both paths once (image pages in the page cache, JAX's .pyc files, the pool's profiles).
        ours(TRIVIAL), ours(WITH_JAX), docker_run(image, "pass", runtime), docker_run(image, "import jax", runtime)
        time.sleep(3)  # the pool refills after the warm-up runs
        results: dict[str, list[float]] = {"trivial": [], "docker_pass": [], "jax": [], "docker_import_jax": []}
        for _ in range(args.rounds):
            results["trivial"].append(ours(TRIVIAL))
            results["docker_pass"].append(docker_run(image, "pass", runtime))
            results["jax"].append(ours(WITH_JAX))
            results["docker_import_jax"].append(docker_run(image, "import jax", runtime))

        time.sleep(3)
        start = time.perf_counter()
        ids, enqueued = [], []
        for i in range(args.batch):
            ids.append(submit(TRIVIAL, learners[i % len(learners)]))
            enqueued.append(time.perf_counter())
        # Each attempt's own enqueue → verdict: its finish time (seen by polling) less its enqueue.
        finished: dict[int, float] = {}
        pending = set(ids)
        while pending:
            done = set(
                Attempt.objects.filter(pk__in=pending, status__in=["graded", "not_graded"]).values_list("pk", flat=True)
            )
            now = time.perf_counter()
            finished.update(dict.fromkeys(done, now))
            pending -= done
            if pending:
                time.sleep(0.005)
        batch_s = time.perf_counter() - start
        final = Attempt.objects.filter(pk__in=ids, status="graded", outcome="passed").count()
        latencies = [finished[pk] - enqueued[i] for i, pk in enumerate(ids)]
    finally:
        worker.terminate()
        worker.wait(timeout=60)

    stats = {k: summary(v) for k, v in results.items()}
    return {
        "latency_s": stats,
        "ratio_a_trivial_vs_docker_run_pass": stats["trivial"]["p50"] / stats["docker_pass"]["p50"],
        "ratio_b_jax_vs_docker_run_import_jax": stats["jax"]["p50"] / stats["docker_import_jax"]["p50"],
        "throughput": {
            "submissions": args.batch,
            "learners": len(learners),
            "seconds": batch_s,
            "per_second": args.batch / batch_s,
            "per_second_per_core": args.batch / batch_s / cores,
            "passed_and_final": final,
            "lost": args.batch - len(finished),
            "enqueue_to_verdict_s": summary(latencies),
        },
    }


def show(runtime: str, r: dict[str, Any]) -> None:
    stats, t = r["latency_s"], r["throughput"]
    print(
        f"[{runtime}] (a) trivial Build, enqueue→verdict p50 {stats['trivial']['p50'] * 1000:.0f} ms vs docker run "
        f"python -c pass {stats['docker_pass']['p50'] * 1000:.0f} ms: ratio {r['ratio_a_trivial_vs_docker_run_pass']:.3f}"
    )
    print(
        f"[{runtime}] (b) JAX submission p50 {stats['jax']['p50'] * 1000:.0f} ms vs docker run import jax "
        f"{stats['docker_import_jax']['p50'] * 1000:.0f} ms: ratio {r['ratio_b_jax_vs_docker_run_import_jax']:.3f}"
    )
    lat = t["enqueue_to_verdict_s"]
    print(
        f"[{runtime}] (c) {t['submissions']} submissions from {t['learners']} learners in {t['seconds']:.1f} s: "
        f"{t['per_second']:.2f}/s, {t['per_second_per_core']:.2f}/s per core; {t['passed_and_final']} passed and "
        f"final, {t['lost']} lost; enqueue→verdict p50 {lat['p50']:.2f} s, p95 {lat['p95']:.2f} s"
    )


def settings_image() -> str:
    from django.conf import settings

    return str(settings.SANDBOX_IMAGE)


if __name__ == "__main__":
    sys.exit(main())
