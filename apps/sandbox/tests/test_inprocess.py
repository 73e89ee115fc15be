"""The embedded default (no broker): code runs on threads of the web process, off the request.

These tests switch this process to that mode (``CELERY_TASK_ALWAYS_EAGER``, as `make run` has it)
and grade in real containers; no Celery worker takes part. What the request and the pool's
threads write is committed, so the test's own database work goes through ``Committed``.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any, TypeVar

import pytest
from django.conf import settings
from django.db import connection
from django.test import override_settings
from django.utils import timezone
from rest_framework.test import APIClient

from apps.accounts import services as account_services
from apps.accounts.models import User
from apps.exercises.choices import AttemptStatus
from apps.exercises.models import Attempt, Exercise
from apps.learning import inprocess, services
from apps.progress import services as progress_services
from apps.progress.models import ExerciseProgress
from apps.sandbox.tests.conftest import SolutionReader

pytestmark = pytest.mark.slow

T = TypeVar("T")
URL = "/api/v1/workbooks/transformer-math/exercises/0.5/attempts/"
SLEEP_S = 3.0


class Committed:
    """Database work on a thread of its own, outside the test's rolled-back transaction."""

    def __init__(self, thread: ThreadPoolExecutor, user: User) -> None:
        self.thread, self.user = thread, user

    def __call__(self, fn: Callable[[], T]) -> T:
        return self.thread.submit(fn).result()

    def attempt(self, attempt_id: int) -> Attempt:
        return self(lambda: Attempt.objects.get(pk=attempt_id))

    def queued_attempt(self, *, age_s: float = 0.0) -> int:
        def make() -> int:
            exercise = Exercise.objects.get(workbook__slug="transformer-math", number="0.5")
            assert exercise.current_version_id is not None
            attempt = Attempt.objects.create(
                user=self.user, exercise=exercise, version_id=exercise.current_version_id, part="code",
                status=AttemptStatus.QUEUED, raw={"code": "def param_count(d, n_layers, vocab_size):\n    return 0\n"},
            )  # fmt: skip
            if age_s:
                Attempt.objects.filter(pk=attempt.pk).update(created_at=timezone.now() - timedelta(seconds=age_s))
            return attempt.pk

        return self(make)


@pytest.fixture
def committed(db: None, sandbox_image: str) -> Iterator[Committed]:
    thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="committed-db")
    user = thread.submit(
        lambda: account_services.user_create(username=f"inproc{time.monotonic_ns()}", password="a-strong-pass-123")
    ).result()

    def clean_up() -> None:
        ExerciseProgress.objects.filter(user=user).delete()
        Attempt.objects.filter(user=user).delete()
        user.delete()
        progress_services.scores_rebuild()
        connection.close()

    try:
        with override_settings(CELERY_TASK_ALWAYS_EAGER=True):
            yield Committed(thread, user)
    finally:
        thread.submit(clean_up).result()
        thread.shutdown()


def test_the_post_answers_at_once_and_the_run_is_graded_off_the_request(
    committed: Committed, reference: SolutionReader
) -> None:
    client = APIClient()
    client.force_authenticate(committed.user)
    source = f"import time\ntime.sleep({SLEEP_S})\n\n" + reference("0.5-param-count/solution.py")

    started = time.monotonic()
    response = committed(lambda: client.post(URL, {"code": source}, format="json"))
    answered_in = time.monotonic() - started
    assert response.status_code == 202, response.json()
    body = response.json()
    assert answered_in < SLEEP_S / 2, answered_in  # the run sleeps 3 s: it was not in the request
    assert body["status"] in (AttemptStatus.QUEUED, AttemptStatus.RUNNING)
    assert body["run"]["elapsed_s"] is None or body["run"]["elapsed_s"] < SLEEP_S

    # Followed as the page does: running with the run's time limit and the time so far, then graded.
    running: list[dict[str, Any]] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        body = client.get(body["url"]).json()
        if body["status"] == AttemptStatus.RUNNING:
            running.append(body["run"])
        if body["status"] in (AttemptStatus.GRADED, AttemptStatus.NOT_GRADED):
            break
        time.sleep(0.2)
    assert (body["status"], body["outcome"], body["correct"]) == ("graded", "passed", True), body
    assert running, "never seen running"
    assert {r["time_limit_s"] for r in running} == {settings.SANDBOX_TIME_LIMIT_S}
    assert running[-1]["elapsed_s"] >= running[0]["elapsed_s"] >= 0
    assert body["run"]["time_limit_s"] == settings.SANDBOX_TIME_LIMIT_S
    assert SLEEP_S <= body["run"]["elapsed_s"] < settings.SANDBOX_TIME_LIMIT_S
    assert body["details"]["limits"] == {
        "time_s": settings.SANDBOX_TIME_LIMIT_S,
        "memory_mb": settings.SANDBOX_MEMORY_MB,
    }
    assert body["feedback"] == body["details"]["message"] == f"All {len(body['details']['tests'])} tests passed."
    progress = committed(lambda: ExerciseProgress.objects.get(user=committed.user, exercise__number="0.5"))
    assert progress.solved and progress.attempts == 1
    # The OpenAPI schema documents the run as the API serves it.
    components = client.get("/api/schema/?format=json").json()["components"]["schemas"]
    assert components["AttemptOut"]["properties"]["run"]["allOf"] == [{"$ref": "#/components/schemas/RunOut"}]
    assert set(components["RunOut"]["properties"]) == set(body["run"])


def test_a_full_queue_refuses_the_run_without_counting_it(
    committed: Committed, monkeypatch: pytest.MonkeyPatch
) -> None:
    full: queue.Queue[int] = queue.Queue(maxsize=1)
    full.put(0)
    monkeypatch.setattr(inprocess, "_jobs", full)
    attempt_id = committed.queued_attempt()
    committed(lambda: services._enqueue(attempt_id))
    attempt = committed.attempt(attempt_id)
    assert (attempt.status, attempt.outcome) == (AttemptStatus.NOT_GRADED, "not_graded")
    assert attempt.details["reason"] == "too many runs waiting in this process"
    assert committed(lambda: ExerciseProgress.objects.filter(user=committed.user).exists()) is False


def test_the_orphan_sweep_closes_what_an_earlier_process_left(
    committed: Committed, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run orphaned by a stopped server is closed at once, not after the stuck-attempt age;
    what this process queued is left to its threads, and the sweep runs once per process."""
    monkeypatch.setattr(inprocess, "_orphans_swept", threading.Event())
    orphan = committed.queued_attempt(age_s=(timezone.now() - inprocess.STARTED_AT).total_seconds() + 5)
    ours = committed.queued_attempt()
    with override_settings(CELERY_TASK_ALWAYS_EAGER=False):
        committed(inprocess.sweep_orphans)  # a broker's workers may still be on it: not ours to close
    assert committed.attempt(orphan).status == AttemptStatus.QUEUED

    committed(inprocess.sweep_orphans)
    closed = committed.attempt(orphan)
    assert (closed.status, closed.details["reason"]) == (
        AttemptStatus.NOT_GRADED,
        "the server stopped before it finished",
    )
    assert committed.attempt(ours).status == AttemptStatus.QUEUED

    again = committed.queued_attempt(age_s=(timezone.now() - inprocess.STARTED_AT).total_seconds() + 5)
    committed(inprocess.sweep_orphans)
    assert committed.attempt(again).status == AttemptStatus.QUEUED  # once per process


def test_a_fault_in_a_run_closes_it_as_not_graded(committed: Committed) -> None:
    """A fault of ours, not the learner's (here: a code attempt on an exercise without code, which
    grading refuses), is closed as not graded and not counted, not left running."""

    def make() -> int:
        exercise = Exercise.objects.get(workbook__slug="transformer-math", number="0.1")
        assert exercise.current_version_id is not None
        return Attempt.objects.create(
            user=committed.user, exercise=exercise, version_id=exercise.current_version_id, part="code",
            status=AttemptStatus.QUEUED, raw={"code": "x = 1\n"},
        ).pk  # fmt: skip

    attempt_id = committed(make)
    assert inprocess.submit(attempt_id)
    deadline = time.monotonic() + 30
    while not (attempt := committed.attempt(attempt_id)).is_final and time.monotonic() < deadline:
        time.sleep(0.1)
    assert (attempt.status, attempt.details["reason"]) == (AttemptStatus.NOT_GRADED, "the run failed on the server")
    assert committed(lambda: ExerciseProgress.objects.filter(user=committed.user).exists()) is False
