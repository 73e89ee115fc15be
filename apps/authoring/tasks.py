"""The draft check task, and how a check is started on each kind of deployment.

With a broker the task goes to the default queue: a worker there runs the checks and hands each
run of an author's code to a sandbox worker over the sandbox queue (``queued.QueuedRunner``), as
the exercise admin's save does. On the embedded default (``make run``: no broker, tasks eager)
Celery would run it inside the request, which would answer only after the code ran: a daemon
thread of the web process runs it instead (as ``assessments.tasks.close_due_lazily`` does), and
its code runs in sandbox containers this process starts (``queued.content_runner``), never in it.
"""

from __future__ import annotations

import logging
import threading

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import connection, transaction

from apps.authoring import services
from apps.core.queues import Queue

logger = logging.getLogger(__name__)

CHECK_TASK = "authoring.check_draft"


# Longer limits than the default task's: a Build's checks run its reference, starter and every
# wrong solution in the sandbox, each up to its own time limit.
@shared_task(name=CHECK_TASK, ignore_result=True, soft_time_limit=600, time_limit=660)
def check_draft(draft_id: int) -> str:
    """Run the requested check of a draft (a second delivery finds it claimed and does nothing)."""
    try:
        return services.draft_check_run(draft_id=draft_id)
    except SoftTimeLimitExceeded:
        services.draft_check_abandon(draft_id=draft_id, reason="they ran past their time limit")
        raise


def enqueue_check(*, draft_id: int) -> None:
    """Start the check after the surrounding transaction commits (the worker must see it)."""
    transaction.on_commit(lambda: dispatch(draft_id))


def dispatch(draft_id: int) -> threading.Thread | None:
    """Publish the task; on the embedded default, run it on a daemon thread of this process.
    Returns the thread it started (if any)."""
    if not settings.CELERY_TASK_ALWAYS_EAGER:
        check_draft.apply_async(args=(draft_id,), queue=Queue.DEFAULT.value)
        return None
    thread = threading.Thread(target=_check_in_thread, args=(draft_id,), name=f"draft-check-{draft_id}", daemon=True)
    thread.start()
    return thread


def _check_in_thread(draft_id: int) -> None:
    try:
        check_draft.apply(args=(draft_id,))
    except Exception as exc:
        logger.exception("checking a draft failed", extra={"draft_id": draft_id})
        services.draft_check_abandon(draft_id=draft_id, reason=f"an error in the checks ({type(exc).__name__})")
    finally:
        connection.close()  # this thread's own
