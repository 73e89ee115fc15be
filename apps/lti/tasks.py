"""Celery tasks of the LTI tool: grades to the platform (coalesced), rosters from it. They take
ids, have explicit names, and running one twice is harmless (services read the state at run time)."""

from __future__ import annotations

import logging
import threading

from celery import shared_task
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
    costs one request. The pending mark is cleared when the task starts, before it reads mastery,
    so a solve after that schedules another post and the last figures always reach the platform.
    The mark outlives the countdown so that a lost message does not block posts for long.
    Returns whether a post was scheduled."""
    delay = settings.LTI_SCORE_COALESCE_S
    if not cache.add(_pending_key(binding_id), 1, delay + 60):
        return False
    if settings.CELERY_TASK_ALWAYS_EAGER:
        # The embedded default (no broker, no worker): an eager task would post inside the learner's
        # request, retries and all, and ignore the countdown. A timer thread keeps both out of it.
        timer = threading.Timer(delay, _post_in_thread, args=(binding_id,))
        timer.daemon = True
        timer.start()
        return True
    post_score.apply_async(args=(binding_id,), countdown=delay)
    return True


def _post_in_thread(binding_id: int) -> None:
    try:
        post_score.apply(args=(binding_id,))
    except Exception:
        logger.exception("lti score not posted", extra={"binding_id": binding_id})
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
