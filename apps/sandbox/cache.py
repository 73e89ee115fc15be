"""A cache of finished runs, for checks that run the same code again and again (``check_content``).

A run's result depends only on the image it ran in, the job (files, entry, each test's inputs,
environment) and the limits. ``CachedRunner`` keys a result by the image's content id and those,
and keeps it in a directory as one JSON file per key, so a second check of unchanged content on
the same machine reads its results instead of starting containers. Only settled runs are kept
(every test reported, no limit met, no signal): a timeout, an output flood or an out-of-memory
kill can depend on how busy the machine was, and a sandbox fault raises before anything is stored.

Never used for grading learners: the grader always runs the code.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from apps.sandbox.pool import PooledRunner
from apps.sandbox.runner import DockerRunner, Job, Limits, Progress, RunResult

# Bumped when what a result means changes (the driver's report, RunResult's fields).
CACHE_VERSION = 1


def default_directory() -> Path:
    """``$MLSYS_CACHE_DIR/check-content``, else under ``$XDG_CACHE_HOME`` (``~/.cache``): outside the
    checkout, so that a fresh clone on the same machine finds the results of the last one."""
    root = (
        os.environ.get("MLSYS_CACHE_DIR") or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mlsys"
    )
    return Path(root) / "check-content"


def _settled(result: RunResult) -> bool:
    """A run whose every test reported a result, with no limit met on the way (the container's or
    the driver's own: ``report["limit"]``) and no signal: what the same code would do again."""
    report = result.report
    return (
        result.status == "completed"
        and not result.oom_killed
        and isinstance(report, dict)
        and not report.get("limit")
        and not report.get("signal")
        and isinstance(report.get("results"), list)
    )


class CachedRunner:
    """A runner's ``run`` with a read-through cache of complete results."""

    def __init__(self, runner: DockerRunner | PooledRunner, directory: Path) -> None:
        self.runner = runner
        self.cold = runner.cold if isinstance(runner, PooledRunner) else runner
        self.directory = directory
        self._image_id: str | None = None
        self.hits = 0
        self.misses = 0

    def image_id(self) -> str:
        if self._image_id is None:
            self._image_id = str(self.cold.api.inspect_image(self.cold.image)["Id"])  # type: ignore[no-untyped-call]
        return self._image_id

    def key(self, job: Job, limits: Limits) -> str:
        # The CPU a run is pinned to changes nothing it computes.
        shape = {k: v for k, v in dataclasses.asdict(limits).items() if k != "cpuset"}
        body = {
            "version": CACHE_VERSION,
            "image": self.image_id(),
            "runtime": self.cold.runtime,
            "request": json.loads(job.request(limits)),
            "env": dict(job.env),
            "warm": list(job.warm),
            "limits": shape,
        }
        return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()

    def run(self, job: Job, limits: Limits, progress: Progress | None = None) -> RunResult:
        path = self.directory / f"{self.key(job, limits)}.json"
        cached = self._read(path)
        if cached is not None:
            self.hits += 1
            return cached
        self.misses += 1
        result = self.runner.run(job, limits, progress)
        if _settled(result):
            self._write(path, result)
        return result

    @staticmethod
    def _read(path: Path) -> RunResult | None:
        try:
            data: dict[str, Any] = json.loads(path.read_text())
            return RunResult(**data)
        except (OSError, ValueError, TypeError):
            return None  # absent, or unreadable: run it again

    def _write(self, path: Path, result: RunResult) -> None:
        data = dataclasses.asdict(result) | {"container_id": ""}
        with contextlib.suppress(OSError):  # a cache that cannot be written only costs time
            self.directory.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.directory, suffix=".tmp")
            with os.fdopen(fd, "w") as handle:
                json.dump(data, handle)
            os.replace(tmp, path)  # atomic: a concurrent reader sees the whole file or none
