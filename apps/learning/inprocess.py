"""The embedded default's sandbox worker: a few threads of the web process run code attempts.

Without a broker (``make run``: SQLite, no Redis) Celery runs tasks eagerly, in the calling
thread, so the request that submitted code would answer only after the run. Here the run goes
to a small pool of daemon threads instead and the request answers 202 at once, as it does with
a real worker. The grading is the same service (``attempt_grade``): a compare-and-set claim, so a
job that ran twice would change nothing. The production path (a Celery worker) never uses this.

What a process does not finish — it exited or was reloaded mid-run; the threads are daemons so
that Ctrl-C is not held up by a run — stays queued or running. With no beat to sweep it, this
process closes such leftovers as not graded (never counted) on its first request, and runs the
usual stuck-attempt sweep before each job; at the pool's start it removes containers past their
deadline that a dead process left, and asks the sandbox pool to keep a container ready for each code
exercise's profile.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
from typing import Any

from django.conf import settings
from django.db import connections
from django.utils import timezone

from apps.learning import services
from apps.learning.tasks import retry_delay
from apps.sandbox import selectors
from apps.sandbox.runner import SandboxUnavailable

logger = logging.getLogger(__name__)

# Runs waiting beyond this are refused (not graded, not counted): the queue stays shorter than
# the stuck-attempt sweep's age at the default limits, and a burst cannot grow memory unbounded.
MAX_WAITING = 50

# This process's start: on the embedded default apps.py imports this module at app loading.
STARTED_AT = timezone.now()

_lock = threading.Lock()
_jobs: queue.Queue[int] | None = None
_orphans_swept = threading.Event()
_faults: dict[int, int] = {}  # attempt id -> sandbox faults so far


def size() -> int:
    """How many runs at once: one per CPU, at most ``SANDBOX_IN_PROCESS_WORKERS``."""
    return max(1, min(int(settings.SANDBOX_IN_PROCESS_WORKERS), os.cpu_count() or 1))


def dispatch(attempt_id: int) -> None:
    """How this process dispatches a queued attempt (apps.py installs it in ``services``).

    No broker (the embedded default): Celery would run the task right here, inside the request,
    which would answer only after the run. A thread of this process runs it instead. With a
    broker: published, as without this hook. Read at each call, so settings overridden at run
    time (tests) choose as ``make run`` would.
    """
    if not settings.CELERY_TASK_ALWAYS_EAGER:
        services.attempt_publish(attempt_id)
    elif not submit(attempt_id):
        services.attempt_not_graded(attempt_id=attempt_id, reason="too many runs waiting in this process")


def submit(attempt_id: int) -> bool:
    """Queue a run on this process's pool (started on first use). False if too many are waiting."""
    global _jobs
    with _lock:
        if _jobs is None:
            _jobs = queue.Queue(maxsize=MAX_WAITING)
            threading.Thread(target=_reap, name="sandbox-reap", daemon=True).start()
            for slot in range(size()):
                threading.Thread(target=_work, args=(_jobs, slot), name=f"sandbox-run-{slot}", daemon=True).start()
        jobs = _jobs
    try:
        jobs.put_nowait(attempt_id)
    except queue.Full:
        logger.warning("in-process sandbox queue full", extra={"attempt_id": attempt_id})
        return False
    return True


def _work(jobs: queue.Queue[int], slot: int) -> None:
    # The slot picks the CPU the container is pinned to, as a Celery pool process's index does.
    while True:
        attempt_id = jobs.get()
        try:
            _sweep_stuck()
            _grade(attempt_id, slot)
        finally:
            # Connections are per thread: one left open would hold a SQLite lock or a server slot.
            connections.close_all()


def _sweep_stuck() -> None:
    # What beat does every minute with a worker; here, before each run.
    try:
        services.attempts_fail_stuck()
    except Exception:
        logger.exception("stuck-attempt sweep failed")


def _grade(attempt_id: int, slot: int) -> None:
    try:
        services.attempt_grade(attempt_id=attempt_id, runner=selectors.runner(), slot=slot)
    except services.SandboxFault as fault:
        # As the Celery task does: try again later, without holding this thread; then give up.
        tries = _faults.get(attempt_id, 0)
        if tries >= settings.SANDBOX_RETRIES:
            _faults.pop(attempt_id, None)
            services.attempt_not_graded(attempt_id=attempt_id, reason=fault.reason)
            return
        _faults[attempt_id] = tries + 1
        timer = threading.Timer(retry_delay(tries), _resubmit, args=(attempt_id,))
        timer.daemon = True
        timer.start()
    except Exception:
        # Not a learner's failure (those are verdicts) but ours, a database error say: the attempt
        # is closed as not graded, and the thread lives on for the next job.
        logger.exception("in-process sandbox job failed", extra={"attempt_id": attempt_id})
        try:
            services.attempt_not_graded(attempt_id=attempt_id, reason="the run failed on the server")
        except Exception:
            logger.exception("could not close a failed run; the sweeps will", extra={"attempt_id": attempt_id})


def _resubmit(attempt_id: int) -> None:
    if not submit(attempt_id):
        services.attempt_not_graded(attempt_id=attempt_id, reason="too many runs waiting in this process")
        connections.close_all()


def _reap() -> None:
    try:
        removed = selectors.runner().reap()
    except SandboxUnavailable as exc:
        logger.warning("sandbox reaper could not reach Docker: %s", exc)
        return
    if removed:
        logger.info("removed %d sandbox containers past their deadline", len(removed))
    try:
        for slot in range(size()):  # then keep a container ready for each code exercise's profile
            services.sandbox_pool_prepare(slot=slot)
    except Exception:
        logger.exception("could not prepare the sandbox pool; runs start cold until it fills by demand")
    finally:
        connections.close_all()


def sweep_orphans(**kwargs: Any) -> None:
    """On this process's first request: close what an earlier process left queued or running.

    On the embedded default only this process grades, so a pending attempt older than the process
    was orphaned by the one before (stopped or reloaded mid-run); left alone it would wait for the
    stuck-attempt sweep's age. Connected to ``request_started`` (apps.py) only on that default.
    """
    if _orphans_swept.is_set() or not settings.CELERY_TASK_ALWAYS_EAGER:
        return
    with _lock:
        if _orphans_swept.is_set():
            return
        _orphans_swept.set()
    age = (timezone.now() - STARTED_AT).total_seconds()
    closed = services.attempts_fail_stuck(older_than_s=age, reason="the server stopped before it finished")
    if closed:
        logger.warning("closed %d code attempts an earlier server process left unfinished", closed)
