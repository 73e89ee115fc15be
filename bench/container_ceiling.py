"""What one single-use sandbox container costs the machine, and so the most submissions per
second any design that starts one per submission can grade here.

Runs --runs cold sandbox runs of a trivial job (``DockerRunner.run``: the very confinement and
driver the worker uses) on --threads threads, and reads from /proc the CPU time the whole machine
and the Docker Engine's processes (dockerd, containerd, its shims, runc/runsc) spent meanwhile.

    .venv/bin/python bench/container_ceiling.py [--runtime runsc] [--runs 60] [--threads 4]

Prints runs/s, CPU-seconds per run (the engine, the user-space storage driver, and the rest: the
container's own processes, the kernel, this process), and the ceiling cores ÷ CPU-seconds per run. Writes bench/results/container_ceiling.json.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ENGINE = ("dockerd", "containerd", "runc", "runsc", "exe")  # prefixes; runsc's sandbox shows as "exe"
STORAGE = ("fuse-overlayfs",)  # the storage driver here runs in user space: each rootfs is a FUSE mount
TICK = os.sysconf("SC_CLK_TCK")


def machine_cpu_s() -> float:
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + fields[4]
    return (sum(fields[:8]) - idle) / TICK


def processes_cpu_s(prefixes: tuple[str, ...]) -> float:
    """CPU time of the processes alive now whose name starts so (their children included, once reaped)."""
    total = 0.0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        if name.startswith(prefixes):
            parts = stat[stat.rindex(")") + 2 :].split()
            total += sum(int(x) for x in parts[11:15]) / TICK  # utime stime cutime cstime
    return total


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--runtime", default="")
    args = parser.parse_args()

    from apps.sandbox.runner import DockerRunner, Job, Limits

    image = os.environ.get("SANDBOX_IMAGE") or (ROOT / "var" / "sandbox-image").read_text().strip()
    runner = DockerRunner(image, owner=f"ceiling-{os.getpid()}", runtime=args.runtime)
    job = Job("f", [{"id": "a", "args": [1], "kwargs": {}}], {"submission.py": "def f(x):\n    return x\n"})
    cores = os.cpu_count() or 1

    def one(i: int) -> str:
        return runner.run(job, Limits(time_s=10.0, cpuset=str(i % cores))).status

    one(0)  # warm the page cache
    machine0, engine0, storage0 = machine_cpu_s(), processes_cpu_s(ENGINE), processes_cpu_s(STORAGE)
    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=args.threads) as threads:
        statuses = list(threads.map(one, range(args.runs)))
    wall = time.perf_counter() - start
    time.sleep(2)  # the removals, which are off the critical path, finish
    machine, engine = machine_cpu_s() - machine0, processes_cpu_s(ENGINE) - engine0
    storage = processes_cpu_s(STORAGE) - storage0
    per_run = machine / args.runs
    report = {
        "runtime": args.runtime or "runc",
        "runs": args.runs,
        "threads": args.threads,
        "completed": statuses.count("completed"),
        "runs_per_s": args.runs / wall,
        "cpu_s_per_run": per_run,
        "engine_cpu_s_per_run": engine / args.runs,
        "storage_cpu_s_per_run": storage / args.runs,
        "other_cpu_s_per_run": (machine - engine - storage) / args.runs,
        "ceiling_runs_per_s": cores / per_run,
        "ceiling_runs_per_s_per_core": 1 / per_run,
    }
    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    (out / f"container_ceiling-{report['runtime']}.json").write_text(json.dumps(report, indent=2))
    print(
        f"[{report['runtime']}] {args.runs} cold runs on {args.threads} threads: {report['runs_per_s']:.2f}/s; "
        f"CPU per run {per_run * 1000:.0f} ms (engine {report['engine_cpu_s_per_run'] * 1000:.0f} ms, "
        f"fuse-overlayfs {report['storage_cpu_s_per_run'] * 1000:.0f} ms, "
        f"the rest {report['other_cpu_s_per_run'] * 1000:.0f} ms: the container's own processes, the kernel); ceiling {report['ceiling_runs_per_s']:.2f}/s, "
        f"{report['ceiling_runs_per_s_per_core']:.2f}/s per core"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
