"""Sandbox latency and throughput, against baselines measured in the same run, interleaved:

(a) enqueue → verdict of a trivial passing Build submission (0.5), vs a bare
    ``docker run --rm --network none <image> python -c pass``;
(b) the same for a submission that imports JAX, vs ``docker run ... python -c "import jax"``;
(c) throughput of 50 submissions queued at once: submissions/s, and per core.

    make bench        # or: DATABASE_URL=... REDIS_URL=... SANDBOX_IMAGE=... .venv/bin/python bench/sandbox.py

"Enqueue" is the service call the API makes (validate, insert the queued attempt, commit,
publish to Redis); "verdict" is the moment the attempt row is final, seen by polling every 2 ms.
The worker is a real `celery worker -Q sandbox` (prefork, one process per core) on a scratch
database ``<name>_bench_sandbox``. Writes bench/results/sandbox.json.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.grading_api import scratch_database  # noqa: E402 - after the path is set

TRIVIAL = (ROOT / "fixtures/workbooks/transformer-math/code/0.5-param-count/solution.py").read_text()
WITH_JAX = "import jax\nimport jax.numpy as jnp\n\n" + TRIVIAL


def docker_run(image: str, code: str) -> float:
    start = time.perf_counter()
    subprocess.run(
        ["docker", "run", "--rm", "--network", "none", image, "/opt/venv/bin/python", "-c", code],
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - start


def summary(values: list[float]) -> dict[str, float]:
    return {"p50": statistics.median(values), "mean": statistics.fmean(values), "min": min(values), "n": len(values)}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--batch", type=int, default=50)
    args = parser.parse_args()

    env = dict(os.environ)
    env["DATABASE_URL"] = scratch_database(os.environ["DATABASE_URL"], "_bench_sandbox")
    env["DJANGO_SETTINGS_MODULE"] = "config.settings.base"
    env.setdefault("SANDBOX_IMAGE", "mlsys-sandbox:latest")
    os.environ.update(env)
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    subprocess.run([sys.executable, "manage.py", "sync_content", "-v0"], cwd=ROOT, env=env, check=True)

    import django

    django.setup()
    from django.core.cache import cache

    from apps.accounts import services as account_services
    from apps.exercises.models import Attempt, Exercise
    from apps.learning import services as learning_services
    from apps.sandbox import selectors

    cores = os.cpu_count() or 1
    name = f"bench@{socket.gethostname()}"
    cache.delete(selectors.ready_key(name))
    log = open(ROOT / "var" / "bench-sandbox-worker.log", "wb")  # noqa: SIM115 - lives as long as the worker
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", "sandbox", "-c", str(cores),
         "-n", "bench@%h", "--without-gossip", "--without-mingle", "--loglevel", "WARNING"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while name not in selectors.ready_workers():
            assert worker.poll() is None and time.monotonic() < deadline, "the worker did not become ready"
            time.sleep(0.1)
        user = account_services.user_create(username="bench", password="bench-pass-12345")  # noqa: S106
        exercise = Exercise.objects.get(workbook__slug="transformer-math", number="0.5")
        image = settings_image()

        def submit(source: str) -> int:
            return learning_services.attempt_create(user=user, exercise=exercise, payload={"code": source}).attempt.pk

        def wait(ids: list[int]) -> None:
            pending = set(ids)
            while pending:
                done = set(
                    Attempt.objects.filter(pk__in=pending, status__in=["graded", "not_graded"]).values_list(
                        "pk", flat=True
                    )
                )
                pending -= done
                if pending:
                    time.sleep(0.002)
            bad = Attempt.objects.filter(pk__in=ids).exclude(outcome="passed").count()
            assert bad == 0, f"{bad} submissions did not pass"

        def ours(source: str) -> float:
            start = time.perf_counter()
            wait([submit(source)])
            return time.perf_counter() - start

        # Warm both paths once (image pages in the page cache, JAX's .pyc files).
        ours(TRIVIAL), ours(WITH_JAX), docker_run(image, "pass"), docker_run(image, "import jax")
        results: dict[str, list[float]] = {"trivial": [], "docker_pass": [], "jax": [], "docker_import_jax": []}
        for _ in range(args.rounds):
            results["trivial"].append(ours(TRIVIAL))
            results["docker_pass"].append(docker_run(image, "pass"))
            results["jax"].append(ours(WITH_JAX))
            results["docker_import_jax"].append(docker_run(image, "import jax"))

        start = time.perf_counter()
        ids = [submit(TRIVIAL) for _ in range(args.batch)]
        wait(ids)
        batch_s = time.perf_counter() - start
    finally:
        worker.terminate()
        worker.wait(timeout=30)

    stats = {k: summary(v) for k, v in results.items()}
    report = {
        "image": image,
        "cores": cores,
        "rounds": args.rounds,
        "latency_s": stats,
        "ratio_a_trivial_vs_docker_run_pass": stats["trivial"]["p50"] / stats["docker_pass"]["p50"],
        "ratio_b_jax_vs_docker_run_import_jax": stats["jax"]["p50"] / stats["docker_import_jax"]["p50"],
        "throughput": {
            "submissions": args.batch,
            "seconds": batch_s,
            "per_second": args.batch / batch_s,
            "per_second_per_core": args.batch / batch_s / cores,
        },
    }
    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    (out / "sandbox.json").write_text(json.dumps(report, indent=2))
    print(
        f"(a) trivial Build, enqueue→verdict p50 {stats['trivial']['p50'] * 1000:.0f} ms vs docker run python -c pass "
        f"{stats['docker_pass']['p50'] * 1000:.0f} ms: ratio {report['ratio_a_trivial_vs_docker_run_pass']:.2f}"
    )
    print(
        f"(b) JAX submission p50 {stats['jax']['p50'] * 1000:.0f} ms vs docker run import jax "
        f"{stats['docker_import_jax']['p50'] * 1000:.0f} ms: ratio {report['ratio_b_jax_vs_docker_run_import_jax']:.2f}"
    )
    t = report["throughput"]
    print(
        f"(c) {t['submissions']} queued submissions in {t['seconds']:.1f} s: {t['per_second']:.2f}/s, "
        f"{t['per_second_per_core']:.2f}/s per core ({cores} cores)"
    )
    return 0


def settings_image() -> str:
    from django.conf import settings

    return str(settings.SANDBOX_IMAGE)


if __name__ == "__main__":
    sys.exit(main())
