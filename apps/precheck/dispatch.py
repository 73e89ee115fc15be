"""How a queued precheck reaches a sandbox: a message on the ``sandbox`` queue to the workers that
grade, or, on the embedded default (no broker), a thread of this process, as its attempts do
(``apps/learning/inprocess.py``). Either way the run is ``services.precheck_run``."""

from __future__ import annotations

import logging
import threading

from celery import current_app
from django.conf import settings
from django.db import connections

from apps.core.queues import Queue

logger = logging.getLogger(__name__)

RUN_TASK = "precheck.run"  # tasks.run_precheck
# The embedded default's runs at once; more wait their turn (each learner has one pending at most).
_here = threading.BoundedSemaphore(2)


def send(precheck_id: str, *, expires_s: float) -> bool:
    """Send the precheck to a sandbox. False when the broker cannot be reached (nothing was sent)."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        threading.Thread(target=_run_here, args=(precheck_id,), name=f"precheck-{precheck_id[:8]}", daemon=True).start()
        return True
    try:
        # By the task's name and with its queue: the web process publishes, a sandbox worker runs.
        # The message expires with the precheck: a late one would answer no one.
        current_app.send_task(RUN_TASK, args=[precheck_id], queue=Queue.SANDBOX.value, expires=expires_s)
    except Exception as exc:  # noqa: BLE001 - any broker failure means no sandbox for this precheck
        logger.warning("could not publish a precheck: %s", exc, extra={"precheck_id": precheck_id})
        return False
    return True


def _run_here(precheck_id: str) -> None:
    from apps.precheck import services
    from apps.sandbox import selectors

    with _here:
        try:
            services.precheck_run(precheck_id=precheck_id, runner=selectors.runner())
        except Exception:
            logger.exception("precheck failed in this process", extra={"precheck_id": precheck_id})
            services.precheck_fail(precheck_id=precheck_id, reason="the run failed on the server")
        finally:
            connections.close_all()  # connections are per thread: do not leave this one open
