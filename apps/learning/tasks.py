"""Celery tasks of the attempts' lifecycle. They take ids, have explicit names, and running one
twice is harmless: every step is a compare-and-set in ``services``."""

from __future__ import annotations

import logging

from billiard.process import current_process
from celery import Task, shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings

from apps.learning import services
from apps.sandbox import health, selectors

logger = logging.getLogger(__name__)
SOFT_LIMIT, HARD_LIMIT = selectors.task_time_limits()


def _slot() -> int:
    index = getattr(current_process(), "index", None)
    return index if isinstance(index, int) else 0


def retry_delay(retries: int) -> float:
    """Seconds before the next try after ``retries`` sandbox faults: 0.5, 1, 2, … at most 4."""
    return min(4.0, 0.5 * 2.0**retries)


@shared_task(
    name=services.GRADE_TASK,
    bind=True,
    acks_late=True,
    ignore_result=True,
    soft_time_limit=SOFT_LIMIT,
    time_limit=HARD_LIMIT,
)
def grade_code_attempt(self: Task[[int], str], attempt_id: int) -> str:
    """Grade one queued code attempt in a fresh container. Returns what happened, for the logs.

    A sandbox fault (Docker unreachable, the image gone) gives the claim back and retries through
    Celery, later and possibly on another worker; after ``SANDBOX_RETRIES`` retries the attempt is
    closed as not graded and never counted.
    """
    if not self.request.is_eager and not settings.CELERY_TASK_ALWAYS_EAGER and not health.ready():
        # This worker cannot run code now (its image vanished, say): leave the attempt queued for
        # a worker that can; it is published again when its lease is past (services.attempts_recover).
        logger.warning("sandbox not ready here; attempt left queued", extra={"attempt_id": attempt_id})
        return "left queued"
    try:
        attempt = services.attempt_grade(attempt_id=attempt_id, runner=selectors.runner(), slot=_slot())
    except services.SandboxFault as fault:
        retries = self.request.retries or 0
        if retries >= settings.SANDBOX_RETRIES:
            services.attempt_not_graded(attempt_id=attempt_id, reason=fault.reason)
            return "not graded"
        raise self.retry(countdown=retry_delay(retries), max_retries=settings.SANDBOX_RETRIES) from fault
    except SoftTimeLimitExceeded:
        services.attempt_not_graded(attempt_id=attempt_id, reason="the run exceeded the task's time limit")
        return "timed out"
    return attempt.outcome if attempt is not None else "skipped"


@shared_task(name="learning.fail_stuck_attempts", ignore_result=True)
def fail_stuck_attempts() -> int:
    return services.attempts_fail_stuck()


@shared_task(name="learning.recover_attempts", ignore_result=True)
def recover_attempts() -> dict[str, int]:
    return services.attempts_recover()
