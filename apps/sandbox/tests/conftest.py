"""A real sandbox worker for the tests: `celery worker -Q sandbox`, real Redis, real containers.

The worker is a separate process on the test database, so what it grades must be committed.
Tests that go through it use ``sandbox``: it does its database work on a thread of its own, whose
connection is outside the test's rolled-back transaction (so it commits), and deletes what it
wrote afterwards. The content synced for the session stays.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest
from django.conf import settings
from django.core.cache import cache
from django.db import connection

from apps.accounts import services as account_services
from apps.accounts.models import User
from apps.exercises import services
from apps.exercises.models import Attempt, Exercise
from apps.progress.models import ExerciseProgress
from apps.sandbox import selectors
from apps.sandbox.runner import DockerRunner

T = TypeVar("T")
ROOT = Path(__file__).resolve().parents[3]
WORKER_TIME_LIMIT_S = "5"  # the tests' default run limit: hostile loops end sooner


def _database_url() -> str:
    db = settings.DATABASES["default"]
    return f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"


@pytest.fixture(scope="session")
def sandbox_image() -> str:
    """The image ``make test`` built. Missing is a failure, never a skip."""
    runner = DockerRunner(settings.SANDBOX_IMAGE)
    assert runner.image_present(), f"{settings.SANDBOX_IMAGE} is missing: run deploy/sandbox/build-sandbox-image.sh"
    return str(settings.SANDBOX_IMAGE)


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


def start_worker(env: dict[str, str], log: Path, name: str, timeout: float = 120.0) -> WorkerProcess:
    """A worker, once it has passed its self-test and said so."""
    cache.delete(selectors.READY_KEY)
    worker = spawn_worker(env, log, name)
    proc = worker.proc
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cache.get(selectors.READY_KEY):
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


@pytest.fixture(scope="session")
def sandbox_worker(
    django_db_setup: None, sandbox_image: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[WorkerProcess]:
    worker = start_worker(worker_env(), tmp_path_factory.mktemp("worker") / "worker.log", "sandbox-test")
    yield worker
    worker.proc.terminate()
    try:
        worker.proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        worker.kill_hard()


@dataclass
class Sandbox:
    """Submits through the real service (as the API does) and waits for the real worker."""

    user: User
    worker: WorkerProcess
    thread: ThreadPoolExecutor

    def _committed(self, fn: Callable[[], T]) -> T:
        return self.thread.submit(fn).result()

    def submit(self, number: str, payload: dict[str, Any], *, timeout: float = 90.0) -> Attempt:
        def create() -> int:
            exercise = Exercise.objects.get(workbook__slug="transformer-math", number=number)
            return services.attempt_create(user=self.user, exercise=exercise, payload=payload).attempt.pk

        return self.wait(self._committed(create), timeout=timeout)

    def code(self, number: str, source: str, *, timeout: float = 90.0) -> Attempt:
        return self.submit(number, {"code": source}, timeout=timeout)

    def wait(self, attempt_id: int, *, timeout: float = 90.0) -> Attempt:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            attempt = self._committed(lambda: Attempt.objects.get(pk=attempt_id))
            if attempt.is_final:
                return attempt
            time.sleep(0.05)
        raise AssertionError(f"attempt {attempt_id} not graded in {timeout}s:\n{self.worker.log_text()[-3000:]}")

    def progress(self, number: str) -> ExerciseProgress | None:
        return self._committed(
            lambda: ExerciseProgress.objects.filter(
                user=self.user, exercise__workbook__slug="transformer-math", exercise__number=number
            ).first()
        )


@pytest.fixture
def sandbox(sandbox_worker: WorkerProcess, db: None) -> Iterator[Sandbox]:
    thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="committed-db")

    def make_user() -> User:
        return account_services.user_create(username=f"sbx{time.monotonic_ns()}", password="a-strong-pass-123")

    def clean_up() -> None:
        ExerciseProgress.objects.filter(user=user).delete()
        Attempt.objects.filter(user=user).delete()
        user.delete()
        connection.close()

    user = thread.submit(make_user).result()
    try:
        yield Sandbox(user, sandbox_worker, thread)
    finally:
        thread.submit(clean_up).result()
        thread.shutdown()


SolutionReader = Callable[[str], str]


@pytest.fixture(scope="session")
def reference() -> SolutionReader:
    """The reference (or starter) code of a Transformer Math exercise folder, by file name."""

    def read(path: str) -> str:
        return (ROOT / "fixtures" / "workbooks" / "transformer-math" / "code" / path).read_text()

    return read
