"""Celery tasks of the sandbox. They take ids, and running one twice is harmless (see services)."""

from __future__ import annotations

import logging

from billiard.process import current_process
from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded

from apps.sandbox import health, selectors, services

logger = logging.getLogger(__name__)
SOFT_LIMIT, HARD_LIMIT = selectors.task_time_limits()


def _slot() -> int:
    index = getattr(current_process(), "index", None)
    return index if isinstance(index, int) else 0


@shared_task(acks_late=True, ignore_result=True, soft_time_limit=SOFT_LIMIT, time_limit=HARD_LIMIT)
def grade_code_attempt(attempt_id: int) -> str:
    """Grade one queued code attempt in a fresh container. Returns what happened, for the logs."""
    from django.conf import settings

    if not settings.CELERY_TASK_ALWAYS_EAGER and not health.ready():
        # This worker cannot run code now (its image vanished, say): leave the attempt queued for
        # a worker that can; it is published again when its lease is past (services.attempts_recover).
        logger.warning("sandbox not ready here; attempt left queued", extra={"attempt_id": attempt_id})
        return "left queued"
    try:
        attempt = services.attempt_grade(attempt_id=attempt_id, runner=selectors.runner(), slot=_slot())
    except SoftTimeLimitExceeded:
        services.attempt_not_graded(attempt_id=attempt_id, reason="the run exceeded the task's time limit")
        return "timed out"
    return attempt.outcome if attempt is not None else "skipped"


@shared_task(ignore_result=True)
def fail_stuck_attempts() -> int:
    return services.attempts_fail_stuck()


@shared_task(ignore_result=True)
def recover_attempts() -> dict[str, int]:
    return services.attempts_recover()


@shared_task(ignore_result=True)
def reap_containers() -> int:
    return len(selectors.runner().reap())
