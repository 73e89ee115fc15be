"""Running trusted content code in a subprocess: reference solutions and starter code.

``check_content`` and ``sync_content`` use this to prove that every reference solution passes its
tests and every starter fails them, and to compute expected values the tests leave out. It is NOT
a sandbox: it only ever runs code from ``fixtures/`` (authors' code, reviewed in git). Learners'
code goes to the hardened container runner of the sandbox issue.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HARNESS = Path(__file__).with_name("harness.py")


class RunError(RuntimeError):
    pass


def run(source: str, entry: str, cases: list[dict[str, Any]], *, timeout: float = 30.0) -> dict[str, Any]:
    """Run ``entry`` from ``source`` on each case's inputs; return the harness report."""
    request = json.dumps({"entry": entry, "cases": [{k: c[k] for k in ("id", "args", "kwargs")} for c in cases]})
    with tempfile.TemporaryDirectory(prefix="content-run-") as tmp:
        path = Path(tmp) / "submission.py"
        path.write_text(source)
        try:
            proc = subprocess.run(  # noqa: S603 - fixed argv, trusted content only
                [sys.executable, "-I", str(HARNESS), str(path)],
                input=request,
                capture_output=True,
                text=True,
                timeout=timeout,
                cwd=tmp,
                env={"PATH": "/usr/bin:/bin", "PYTHONHASHSEED": "0", "OMP_NUM_THREADS": "1"},
            )
        except subprocess.TimeoutExpired:
            raise RunError(f"{entry}: timed out after {timeout:.0f}s") from None
    try:
        report: dict[str, Any] = json.loads(proc.stdout)
    except json.JSONDecodeError:
        raise RunError(
            f"{entry}: the harness reported nothing (exit {proc.returncode}): {proc.stderr[-2000:]}"
        ) from None
    return report
