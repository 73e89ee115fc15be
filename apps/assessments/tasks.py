"""Celery tasks of assessments. They have explicit names and running one twice is harmless."""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from celery import shared_task
from django.conf import settings
from django.db import connection

from apps.assessments import services

logger = logging.getLogger(__name__)

# ---- closing what is due (beat, every minute) -----------------------------------------------------
#
# An instance past its time limit or its (learner's) close takes no answer whatever runs: the
# services check the clock. What this adds is the record: ``closed_at`` set, once, and the score sent
# (``instance_scored``: the LMS link posts it). With a broker, beat runs the task every minute
# (CELERY_BEAT_SCHEDULE "assessments-close-due"). On the embedded default (``make run``: no broker,
# no beat, tasks eager) the web process runs it itself: ``close_due_lazily`` listens to
# ``request_started`` and, at most once a minute per process, runs the task on a daemon thread, so
# no learner's request waits for it.

CLOSE_DUE_TASK = "assessments.close_due"
CLOSE_DUE_EVERY_S = 60.0

_lazy_lock = threading.Lock()
_lazy_next_at = 0.0  # time.monotonic() before which the embedded default does not run it again


@shared_task(name=CLOSE_DUE_TASK, ignore_result=True)
def close_due() -> int:
    """Close the instances whose time limit or close has passed; returns how many it closed."""
    closed = services.instances_close_due()
    if closed:
        logger.info("assessment instances closed", extra={"closed": closed})
    return closed


def close_due_lazily(**kwargs: Any) -> threading.Thread | None:
    """``request_started`` receiver on the embedded default: beat's work, at most once every
    ``CLOSE_DUE_EVERY_S`` per process, on a daemon thread. Returns the thread it started (if any)."""
    global _lazy_next_at
    if not settings.CELERY_TASK_ALWAYS_EAGER:
        return None  # a broker: beat does it
    now = time.monotonic()
    with _lazy_lock:
        if now < _lazy_next_at:
            return None
        _lazy_next_at = now + CLOSE_DUE_EVERY_S
    thread = threading.Thread(target=_close_due_in_thread, name="assessments-close-due", daemon=True)
    thread.start()
    return thread


def _close_due_in_thread() -> None:
    try:
        close_due.apply()
    except Exception:
        logger.exception("closing due assessment instances failed; the next request tries again in a minute")
    finally:
        connection.close()  # this thread's own


def close_due_lazily_reset() -> None:
    """Forget the last lazy run (tests)."""
    global _lazy_next_at
    with _lazy_lock:
        _lazy_next_at = 0.0
