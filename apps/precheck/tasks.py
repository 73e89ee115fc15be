"""The precheck's Celery task, on the ``sandbox`` queue beside grading. It takes an id, has an
explicit name, and running it twice is harmless (the run is claimed once: ``services``)."""

from __future__ import annotations

import logging

from billiard.process import current_process
from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings

from apps.precheck import dispatch, services
from apps.sandbox import health, selectors

logger = logging.getLogger(__name__)
SOFT_LIMIT, HARD_LIMIT = selectors.task_time_limits()


# Not acks_late: a precheck redelivered after its worker died would run past its deadline, when
# the learner has been told it could not run (the message also expires then).
@shared_task(
    name=dispatch.RUN_TASK, ignore_result=True, acks_late=False, soft_time_limit=SOFT_LIMIT, time_limit=HARD_LIMIT
)
def run_precheck(precheck_id: str) -> str:
    """Run one precheck in a fresh container and leave its result where the learner polls it."""
    if not settings.CELERY_TASK_ALWAYS_EAGER and not health.ready():
        return services.precheck_fail(precheck_id=precheck_id, reason="the sandbox worker that took it is not ready")
    index = getattr(current_process(), "index", None)
    slot = index if isinstance(index, int) else 0
    try:
        return services.precheck_run(precheck_id=precheck_id, runner=selectors.runner(), slot=slot)
    except SoftTimeLimitExceeded:
        return services.precheck_fail(precheck_id=precheck_id, reason="the run exceeded the task's time limit")
