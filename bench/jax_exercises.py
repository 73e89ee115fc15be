"""Grading time of every JAX code exercise, against a plain-Python Build graded the same way.

    make bench        # or: SANDBOX_IMAGE=... .venv/bin/python bench/jax_exercises.py [--rounds 3]

Each exercise's reference solution is run as the worker runs it — one cold, locked-down
container from the sandbox image with the exercise's own limits (one CPU), then judged against
its hidden tests — and timed from the call to the verdict. Rounds are interleaved with the
baseline, transformer-math 0.5 (a parameter count in plain Python), so a noisy machine moves both.
No database is needed: the specs are read from the content files. Writes bench/results/jax_exercises.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")

import django  # noqa: E402 - after the path is set

django.setup()

from apps.exercises.content.loader import load_workbook  # noqa: E402
from apps.exercises.content.schema import CodeSpec  # noqa: E402
from apps.exercises.jobs import code_cases, code_job, limits_for  # noqa: E402
from apps.sandbox.runner import DockerRunner  # noqa: E402
from apps.sandbox.verdict import judge  # noqa: E402

WORKBOOKS = ROOT / "fixtures" / "workbooks"


def code_exercises(slug: str) -> dict[str, CodeSpec]:
    spec = load_workbook(WORKBOOKS / slug)
    return {f"{slug} {e.number}": e.code for c in spec.chapters for e in c.exercises if e.code is not None}


def grade_once(runner: DockerRunner, code: CodeSpec) -> float:
    start = time.perf_counter()
    verdict = judge(runner.run(code_job(code, code.solution), limits_for(code)), code_cases(code), code.entry)
    elapsed = time.perf_counter() - start
    if not verdict.passed:
        raise SystemExit(f"reference failed ({verdict.outcome}): {verdict.message}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    runner = DockerRunner(os.environ.get("SANDBOX_IMAGE", "mlsys-sandbox:latest"))
    baseline_name = "transformer-math 0.5"
    exercises = {baseline_name: code_exercises("transformer-math")[baseline_name]}
    exercises |= {k: v for k, v in code_exercises("scaling-book").items() if "jax" in v.solution}
    timings: dict[str, list[float]] = {name: [] for name in exercises}
    for code in exercises.values():  # warm the image's page cache once
        grade_once(runner, code)
    for _ in range(args.rounds):
        for name, code in exercises.items():
            timings[name].append(grade_once(runner, code))
    base = statistics.median(timings[baseline_name])
    rows = {
        name: {
            "p50_s": round(statistics.median(values), 2),
            "max_s": round(max(values), 2),
            "p50_vs_baseline": round(statistics.median(values) / base, 2),
            "limit_s": limits_for(exercises[name]).time_s,
        }
        for name, values in timings.items()
    }
    slowest = max((n for n in rows if n != baseline_name), key=lambda n: rows[n]["max_s"])
    out = {"rounds": args.rounds, "baseline": baseline_name, "exercises": rows, "slowest": slowest}
    results = ROOT / "bench" / "results"
    results.mkdir(exist_ok=True)
    (results / "jax_exercises.json").write_text(json.dumps(out, indent=2) + "\n")
    width = max(map(len, rows))
    print(f"{'exercise':<{width}}  p50 s   max s   ×baseline  limit s")
    for name, r in rows.items():
        print(
            f"{name:<{width}}  {r['p50_s']:5.2f}  {r['max_s']:6.2f}  {r['p50_vs_baseline']:9.2f}  {r['limit_s']:7.0f}"
        )
    print(f"slowest: {slowest} ({rows[slowest]['max_s']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
