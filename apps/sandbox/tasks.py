"""The sandbox's own Celery tasks: housekeeping of containers, and jobs sent over the queue. No database."""

from __future__ import annotations

from typing import Any

from billiard.process import current_process
from celery import shared_task

from apps.sandbox import queued, selectors

SOFT_LIMIT, HARD_LIMIT = selectors.task_time_limits()


@shared_task(name="sandbox.reap_containers", ignore_result=True)
def reap_containers() -> int:
    """Remove sandbox containers past their deadline that a dead run left behind."""
    return len(selectors.runner().reap())


# Not acks_late: the caller waits only until the run's deadline, so a run redelivered after a
# worker died would answer no one (the message also expires then).
@shared_task(
    name=queued.RUN_TASK, ignore_result=True, acks_late=False, soft_time_limit=SOFT_LIMIT, time_limit=HARD_LIMIT
)
def run_job(message: dict[str, Any], reply: str) -> str:
    """Run one job sent by ``queued.QueuedRunner`` (an author's code) and leave its result for the caller."""
    index = getattr(current_process(), "index", None)
    return queued.job_serve(message=message, reply=reply, slot=index if isinstance(index, int) else 0)
