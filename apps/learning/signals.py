"""Worker lifecycle hooks: a worker that consumes the sandbox queue checks itself before working.

The checks run at ``worker_init``, in the main process before the pool forks, so every pool
process inherits the result. At ``worker_ready`` the heartbeat starts (``health.py``): it
advertises readiness while the worker is sound, stops and resumes consuming the queue as the
sandbox image goes and comes back, and recovers attempts that dead workers left. A worker that
failed its self-test does not consume the queue. A graceful stop withdraws readiness at once.
"""

from __future__ import annotations

import logging
from typing import Any

from billiard.process import current_process
from celery.signals import worker_init, worker_process_init, worker_process_shutdown, worker_ready, worker_shutting_down
from django.db import connections

from apps.core.queues import Queue
from apps.sandbox import health

logger = logging.getLogger(__name__)
SANDBOX_QUEUE = Queue.SANDBOX.value


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
    from apps.learning import services

    app, hostname = sender.app, sender.hostname

    def consume(on: bool) -> None:
        # Through the broker's control channel: safe from the heartbeat thread.
        if on:
            app.control.add_consumer(SANDBOX_QUEUE, destination=[hostname])
        else:
            app.control.cancel_consumer(SANDBOX_QUEUE, destination=[hostname])

    if not health.passed():
        sender.cancel_task_queue(SANDBOX_QUEUE)
    health.start_heartbeat(consume=consume, recover=services.attempts_recover)


@worker_shutting_down.connect
def sandbox_worker_stopping(**kwargs: Any) -> None:
    health.stop()


@worker_process_init.connect
def sandbox_pool_start(**kwargs: Any) -> None:
    """Each pool process of a sandbox worker fills its own pool of pre-started containers (a
    forked child starts with none: apps/sandbox/pool.py) with the profiles the content needs."""
    from celery import current_app

    if not _consumes_sandbox(current_app) or not health.passed():
        return
    from apps.learning import services

    index = getattr(current_process(), "index", None)
    try:
        services.sandbox_pool_prepare(slot=index if isinstance(index, int) else 0)
    except Exception:
        logger.exception("could not prepare the sandbox pool; runs start cold until it fills by demand")
    finally:
        connections.close_all()


@worker_process_shutdown.connect
def sandbox_pool_stop(**kwargs: Any) -> None:
    from apps.sandbox import selectors
    from apps.sandbox.pool import PooledRunner

    runner = selectors.runner()
    if isinstance(runner, PooledRunner):
        runner.stop()
