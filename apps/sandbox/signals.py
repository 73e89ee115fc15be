"""Worker lifecycle hooks: a worker that consumes the sandbox queue checks itself before working.

The checks run at ``worker_init``, in the main process before the pool forks, so every pool
process inherits the result; at ``worker_ready`` a worker that failed stops consuming the queue,
and one that passed starts advertising readiness.
"""

from __future__ import annotations

import logging
from typing import Any

from celery.signals import worker_init, worker_ready, worker_shutting_down

from apps.sandbox import health

logger = logging.getLogger(__name__)
SANDBOX_QUEUE = "sandbox"


def _consumes_sandbox(app: Any) -> bool:
    queues = app.amqp.queues
    return SANDBOX_QUEUE in (queues.consume_from or queues)


@worker_init.connect
def sandbox_worker_init(sender: Any, **kwargs: Any) -> None:
    if _consumes_sandbox(sender.app):
        health.check(owner=sender.hostname)


@worker_ready.connect
def sandbox_worker_ready(sender: Any, **kwargs: Any) -> None:
    if not _consumes_sandbox(sender.app):
        return
    if health.ready():
        health.start_heartbeat()
    else:
        sender.cancel_task_queue(SANDBOX_QUEUE)


@worker_shutting_down.connect
def sandbox_worker_stopping(**kwargs: Any) -> None:
    health.stop()
