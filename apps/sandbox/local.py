"""Running TRUSTED content code in a subprocess, with the same driver the containers run.

``sync_content`` uses this to compute the expected values that a ``tests.py`` leaves out, from
the reference solution, without needing Docker (``make run`` on a laptop). It is NOT a sandbox:
it only ever runs code from ``fixtures/`` (authors' code, reviewed in git). Learners' code goes
to ``runner.DockerRunner``; ``check_content`` runs solutions and starters there too.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from apps.sandbox.runner import Job, Limits, Progress, RunResult, parse_report

DRIVER = Path(__file__).with_name("container") / "driver.py"


class LocalRunner:
    def run(self, job: Job, limits: Limits, progress: Progress | None = None) -> RunResult:
        started = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="content-run-") as tmp:
            try:
                proc = subprocess.run(  # noqa: S603 - fixed argv, trusted content only
                    [sys.executable, "-I", "-S", str(DRIVER), str(Path(tmp) / "job")],
                    input=job.request(limits),
                    capture_output=True,
                    timeout=limits.time_s + 5,
                    cwd=tmp,
                    env={"PATH": "/usr/bin:/bin", "PYTHONHASHSEED": "0", "OMP_NUM_THREADS": "1"},
                )
            except subprocess.TimeoutExpired:
                return RunResult("timeout", None, None, False, time.monotonic() - started)
        return RunResult(
            "completed",
            parse_report(proc.stdout),
            proc.returncode,
            False,
            time.monotonic() - started,
            stderr=proc.stderr.decode("utf-8", "replace")[-4000:],
        )
