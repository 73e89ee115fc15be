"""Submitting to the session's real sandbox worker (`sandbox_worker`, root conftest.py).

The worker is a separate process on the test database, so what it grades must be committed.
Tests that go through it use ``sandbox``: it does its database work on a thread of its own, whose
connection is outside the test's rolled-back transaction (so it commits), and deletes what it
wrote afterwards. The content synced for the session stays.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import pytest
from django.db import connection

from apps.accounts import services as account_services
from apps.accounts.models import User
from apps.exercises.models import Attempt, Exercise
from apps.learning import services as learning_services
from apps.progress import services as progress_services
from apps.progress.models import ExerciseProgress
from apps.sandbox.tests.worker import ROOT, WorkerProcess

T = TypeVar("T")


@dataclass
class Sandbox:
    """Submits through the real service (as the API does) and waits for the real worker."""

    user: User
    worker: WorkerProcess
    thread: ThreadPoolExecutor

    def _committed(self, fn: Callable[[], T]) -> T:
        return self.thread.submit(fn).result()

    def submit(
        self, number: str, payload: dict[str, Any], *, timeout: float = 90.0, workbook: str = "transformer-math"
    ) -> Attempt:
        def create() -> int:
            exercise = Exercise.objects.get(workbook__slug=workbook, number=number)
            return learning_services.attempt_create(user=self.user, exercise=exercise, payload=payload).attempt.pk

        return self.wait(self._committed(create), timeout=timeout)

    def code(self, number: str, source: str, *, timeout: float = 90.0, workbook: str = "transformer-math") -> Attempt:
        return self.submit(number, {"code": source}, timeout=timeout, workbook=workbook)

    def wait(self, attempt_id: int, *, timeout: float = 90.0) -> Attempt:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            attempt = self._committed(lambda: Attempt.objects.get(pk=attempt_id))
            if attempt.is_final:
                return attempt
            time.sleep(0.05)
        raise AssertionError(f"attempt {attempt_id} not graded in {timeout}s:\n{self.worker.log_text()[-3000:]}")

    def progress(self, number: str, *, workbook: str = "transformer-math") -> ExerciseProgress | None:
        return self._committed(
            lambda: ExerciseProgress.objects.filter(
                user=self.user, exercise__workbook__slug=workbook, exercise__number=number
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
        user.delete()  # its score rows go with it; the per-score learner counts are rebuilt
        progress_services.scores_rebuild()
        connection.close()

    user = thread.submit(make_user).result()
    try:
        yield Sandbox(user, sandbox_worker, thread)
    finally:
        thread.submit(clean_up).result()
        thread.shutdown()


class SolutionReader(Protocol):
    def __call__(self, path: str, *, workbook: str = "transformer-math") -> str: ...


@pytest.fixture(scope="session")
def reference() -> SolutionReader:
    """The reference (or starter) code of an exercise folder, by file name (Transformer Math's by default)."""

    def read(path: str, *, workbook: str = "transformer-math") -> str:
        return (ROOT / "fixtures" / "workbooks" / workbook / "code" / path).read_text()

    return read
