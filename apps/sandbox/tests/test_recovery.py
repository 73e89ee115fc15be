"""Nothing accepted is lost: leases, re-publishing and readiness (services.attempts_recover).

These run against the session's real worker, Redis and PostgreSQL. The drills in tests/drills/
break the real processes (kill -9, Redis and PostgreSQL restarts); here each rule is shown alone.
"""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

import pytest
from django.core.cache import cache
from django.utils import timezone

from apps.exercises.choices import AttemptPart, AttemptStatus, Verdict
from apps.exercises.content import cache as content_cache
from apps.exercises.models import Attempt, Exercise
from apps.learning import services
from apps.sandbox import health, selectors
from apps.sandbox.tests.conftest import Sandbox, SolutionReader
from apps.sandbox.verdict import Verdict as RunVerdict

NUMBER = "0.5"  # Transformer Math's first Build exercise: param_count


def _pending(sandbox: Sandbox, source: str, **fields: Any) -> int:
    """A code attempt as a dead worker or a lost message leaves it: in the database, no message."""

    def create() -> int:
        exercise = Exercise.objects.select_related("current_version").get(
            workbook__slug="transformer-math", number=NUMBER
        )
        assert exercise.current_version is not None
        return Attempt.objects.create(
            user=sandbox.user, exercise=exercise, version=exercise.current_version, part=AttemptPart.CODE,
            raw={"code": source}, parsed={}, verdict="", **fields,
        ).pk  # fmt: skip

    return sandbox._committed(create)


def _past(seconds: float = 1.0) -> Any:
    return timezone.now() - timedelta(seconds=seconds)


def test_a_dead_workers_running_attempt_is_queued_again_and_graded_once(
    sandbox: Sandbox, reference: SolutionReader
) -> None:
    source = reference("0.5-param-count/solution.py")
    attempt_id = _pending(sandbox, source, status=AttemptStatus.RUNNING, claims=1, started_at=_past(40),
                          lease_expires_at=_past())  # fmt: skip
    # The session's worker sweeps too (every heartbeat): either sweep may be the one that acts.
    sandbox._committed(services.attempts_recover)
    attempt = sandbox.wait(attempt_id)
    assert attempt.status == AttemptStatus.GRADED and attempt.verdict == Verdict.CORRECT
    assert attempt.claims == 2, "the second claim graded it"
    assert attempt.lease_expires_at is None
    progress = sandbox.progress(NUMBER)
    assert progress is not None and progress.attempts == 1 and progress.solved_at is not None
    # A late sweep or the first claim's worker coming back changes nothing.
    sandbox._committed(services.attempts_recover)
    assert sandbox._committed(lambda: Attempt.objects.get(pk=attempt_id)).claims == 2
    stale = RunVerdict(outcome="failed", message="late")
    old_claim = Attempt(pk=attempt_id, claims=1, details={}, version=attempt.version, part=attempt.part)
    assert sandbox._committed(lambda: services.attempt_finish(attempt=old_claim, verdict=stale, duration_s=1)) is None
    assert sandbox._committed(lambda: Attempt.objects.get(pk=attempt_id)).verdict == Verdict.CORRECT


def test_a_lost_message_is_published_again(sandbox: Sandbox, reference: SolutionReader) -> None:
    """Queued with no message anywhere (a broker restarted without persistence)."""
    attempt_id = _pending(sandbox, reference("0.5-param-count/solution.py"), status=AttemptStatus.QUEUED,
                          lease_expires_at=_past())  # fmt: skip
    sandbox._committed(services.attempts_recover)  # or the session worker's own sweep
    attempt = sandbox.wait(attempt_id)
    assert attempt.status == AttemptStatus.GRADED and attempt.verdict == Verdict.CORRECT and attempt.claims == 1


def test_a_queued_attempt_within_its_lease_is_left_alone(sandbox: Sandbox) -> None:
    lease = timezone.now() + timedelta(seconds=60)
    attempt_id = _pending(sandbox, "def f():\n    return 1\n", status=AttemptStatus.QUEUED, lease_expires_at=lease)
    assert sandbox._committed(services.attempts_recover)["republished"] == 0
    assert sandbox._committed(lambda: Attempt.objects.get(pk=attempt_id)).status == AttemptStatus.QUEUED


def test_an_attempt_that_kills_its_worker_every_time_ends_not_graded_saying_so(sandbox: Sandbox) -> None:
    attempt_id = _pending(sandbox, "def f():\n    return 1\n", status=AttemptStatus.RUNNING, claims=3,
                          lease_expires_at=_past())  # fmt: skip
    sandbox._committed(services.attempts_recover)  # or the session worker's own sweep
    attempt = sandbox._committed(lambda: Attempt.objects.get(pk=attempt_id))
    assert attempt.status == AttemptStatus.NOT_GRADED and attempt.verdict == "" and attempt.score == 0
    assert "stopped before it finished (3 times)" in attempt.details["reason"]
    assert attempt.feedback == services.WORKER_LOST_MESSAGE
    assert sandbox.progress(NUMBER) is None, "a platform fault costs no attempt"


def test_the_stuck_sweep_says_whether_nobody_took_it(sandbox: Sandbox) -> None:
    queued = _pending(sandbox, "def f():\n    return 1\n", status=AttemptStatus.QUEUED,
                      lease_expires_at=timezone.now() + timedelta(hours=1))  # fmt: skip
    sandbox._committed(lambda: Attempt.objects.filter(pk=queued).update(created_at=_past(3600)))
    assert sandbox._committed(lambda: services.attempts_fail_stuck(older_than_s=600)) == 1
    attempt = sandbox._committed(lambda: Attempt.objects.get(pk=queued))
    assert attempt.details["reason"] == "no sandbox worker took it within 10 minutes"
    assert "no sandbox took it within 10 minutes" in attempt.feedback


def test_the_lease_is_renewed_while_the_run_goes_on(sandbox: Sandbox, settings: Any) -> None:
    settings.SANDBOX_LEASE_S = 0.6  # renewed every 0.2 s
    first = timezone.now() + timedelta(seconds=0.6)
    attempt_id = _pending(sandbox, "def f():\n    return 1\n", status=AttemptStatus.RUNNING, claims=1,
                          lease_expires_at=first)  # fmt: skip

    def lease_end() -> Any:
        return sandbox._committed(lambda: Attempt.objects.get(pk=attempt_id)).lease_expires_at

    with services._Lease(attempt_id, claim=1):
        deadline = time.monotonic() + 10
        while not (lease_end() > first) and time.monotonic() < deadline:
            time.sleep(0.05)
    renewed = lease_end()
    assert renewed is not None and renewed > first
    # A lease is renewed only under its own claim. (Set far ahead: the session's worker recovers
    # expired leases every heartbeat, and must not be what changes it here.)
    later = timezone.now() + timedelta(hours=1)
    sandbox._committed(
        lambda: Attempt.objects.filter(pk=attempt_id).update(
            status=AttemptStatus.RUNNING, claims=2, lease_expires_at=later
        )
    )
    with services._Lease(attempt_id, claim=1) as lease:
        # Its first renewal finds no attempt under its claim, and the renewing thread ends by itself.
        lease.thread.join(timeout=10)
        assert not lease.thread.is_alive()
    assert lease_end() == later
    sandbox._committed(lambda: services.attempt_not_graded(attempt_id=attempt_id, reason="test over"))


def test_the_session_worker_advertises_itself_and_its_file(sandbox: Sandbox) -> None:
    from apps.sandbox.tests.worker import WORKER_NAME, hostname

    name = hostname(WORKER_NAME)
    assert name in selectors.ready_workers()
    assert selectors.available()
    ready_file = health.ready_file(name)
    assert ready_file.exists() and time.time() - ready_file.stat().st_mtime < 20


@pytest.mark.django_db
def test_without_redis_code_is_unavailable_and_exercises_come_from_the_database(settings: Any) -> None:
    """A Redis nobody answers on: readiness reads as 'none' and lookups go to PostgreSQL."""
    from apps.core.redis import shared_client
    from apps.exercises import selectors as exercise_selectors

    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:9/0",  # the discard port: nothing listens
            "OPTIONS": settings.REDIS_CLIENT_OPTIONS,
        }
    }
    shared_client.cache_clear()
    try:
        started = time.monotonic()
        assert selectors.available() is False
        first, second = content_cache.generation(), content_cache.generation()
        assert first.startswith("no-redis-") and first != second, "no process may trust its lookups"
        exercise = exercise_selectors.exercise_get(workbook_slug="transformer-math", number=NUMBER)
        assert exercise.number == NUMBER
        assert time.monotonic() - started < 5, "an unreachable Redis must fail fast"
    finally:
        shared_client.cache_clear()
        cache.close()
