"""A real sandbox worker process for tests: `celery worker -Q sandbox`, real Redis, real containers.

The session's worker is the `sandbox_worker` fixture (root conftest.py), shared by the sandbox
tests and the browser tests. It is a separate process on the test database, so what it grades
must be committed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.core.cache import cache

from apps.sandbox import selectors

ROOT = Path(__file__).resolve().parents[3]
WORKER_TIME_LIMIT_S = "5"  # the tests' default run limit: hostile loops end sooner
# The test worker's name, which is also its containers' owner label: two test runs on one Docker
# daemon (say, two checkouts) name theirs apart so that neither reaps the other's containers, and
# so do the pytest-xdist workers of one run (gw0, gw1, ...): each starts a sandbox worker of its own.
WORKER_NAME = "-".join(
    filter(None, [os.environ.get("SANDBOX_TEST_WORKER", "sandbox-test"), os.environ.get("PYTEST_XDIST_WORKER")])
)


def _database_url() -> str:
    db = settings.DATABASES["default"]
    return f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"


@dataclass
class WorkerProcess:
    proc: subprocess.Popen[bytes]
    log: Path
    env: dict[str, str]

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill_hard(self) -> None:
        """SIGKILL to the worker and its pool processes: a crash, no shutdown hooks."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()


def spawn_worker(env: dict[str, str], log: Path, name: str) -> WorkerProcess:
    handle = log.open("wb")
    proc = subprocess.Popen(  # noqa: S603 - our own worker
        [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", "sandbox", "-c", "1",
         "-n", f"{name}@%h", "--without-gossip", "--without-mingle", "--loglevel", "INFO"],
        cwd=ROOT, env=env, stdout=handle, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    return WorkerProcess(proc, log, env)


def hostname(name: str) -> str:
    """The Celery hostname a worker started as ``-n name@%h`` goes by."""
    return f"{name}@{socket.gethostname()}"


def start_worker(env: dict[str, str], log: Path, name: str, timeout: float = 120.0) -> WorkerProcess:
    """A worker, once it has passed its self-test and said so."""
    cache.delete(selectors.ready_key(hostname(name)))
    worker = spawn_worker(env, log, name)
    proc = worker.proc
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if hostname(name) in selectors.ready_workers():
            return worker
        if not worker.alive():
            break
        time.sleep(0.2)
    proc.kill()
    raise AssertionError(f"the sandbox worker did not become ready:\n{worker.log_text()[-4000:]}")


def worker_env(**extra: str) -> dict[str, str]:
    return {
        **{k: v for k, v in os.environ.items() if k not in ("DATABASE_URL",)},
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": _database_url(),
        "SANDBOX_IMAGE": settings.SANDBOX_IMAGE,
        "SANDBOX_TIME_LIMIT_S": WORKER_TIME_LIMIT_S,
        **extra,
    }
