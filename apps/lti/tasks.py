"""Celery tasks of the LTI tool: grades to the platform (coalesced), rosters from it. They take
ids, have explicit names, and running one twice is harmless (services read the state at run time)."""

from __future__ import annotations

import logging
import threading

from celery import Task, shared_task
from django.conf import settings
from django.core.cache import cache
from django.db import connection

from apps.lti import selectors, services
from apps.lti.exceptions import PlatformUnavailable

logger = logging.getLogger(__name__)

POST_SCORE_TASK = "lti.post_score"


def _pending_key(binding_id: int) -> str:
    return f"lti:score-pending:{binding_id}"


def score_post_schedule(*, binding_id: int) -> bool:
    """Post this grade in LTI_SCORE_COALESCE_S, unless a post is already pending: a burst of solves
    costs one request (``coalesced_post``). Returns whether a post was scheduled."""
    return coalesced_post(pending_key=_pending_key(binding_id), task=post_score, object_id=binding_id)


def coalesced_post(*, pending_key: str, task: Task[[int], str], object_id: int) -> bool:
    """Run ``task(object_id)`` in LTI_SCORE_COALESCE_S unless one is pending under ``pending_key``.

    The task clears the mark when it starts, before it reads what to post, so a change after that
    schedules another post and the last figures always reach the platform. The mark outlives the
    countdown so that a lost message does not block posts for long. On the embedded default (no
    broker) a timer thread runs it: an eager task would post inside the learner's request, retries
    and all, and ignore the countdown. Returns whether a post was scheduled."""
    delay = settings.LTI_SCORE_COALESCE_S
    if not cache.add(pending_key, 1, delay + 60):
        return False
    if settings.CELERY_TASK_ALWAYS_EAGER:
        timer = threading.Timer(delay, _apply_in_thread, args=(task, object_id))
        timer.daemon = True
        timer.start()
        return True
    task.apply_async(args=(object_id,), countdown=delay)
    return True


def _apply_in_thread(task: Task[[int], str], object_id: int) -> None:
    try:
        task.apply(args=(object_id,))
    except Exception:
        logger.exception("lti score not posted", extra={"task": task.name, "object_id": object_id})
    finally:
        connection.close()  # this thread's own


@shared_task(
    name=POST_SCORE_TASK,
    ignore_result=True,
    acks_late=True,
    autoretry_for=(PlatformUnavailable,),
    retry_backoff=5,
    retry_backoff_max=600,
    retry_jitter=True,
    max_retries=settings.LTI_SCORE_RETRIES,
)
def post_score(binding_id: int) -> str:
    cache.delete(_pending_key(binding_id))
    return services.score_post(binding_id=binding_id)


@shared_task(
    name="lti.sync_roster",
    ignore_result=True,
    acks_late=True,
    autoretry_for=(PlatformUnavailable,),
    retry_backoff=30,
    retry_backoff_max=1800,
    max_retries=3,
)
def sync_roster(link_id: int) -> dict[str, int]:
    result = services.roster_sync(link_id=link_id)
    return {"added": result.added, "removed": result.removed}


@shared_task(name="lti.sync_rosters", ignore_result=True)
def sync_rosters() -> int:
    """Nightly (CELERY_BEAT_SCHEDULE): one roster task per linked course that has a roster."""
    ids = list(selectors.roster_links().values_list("pk", flat=True))
    for link_id in ids:
        sync_roster.delay(link_id)
    return len(ids)
