"""Reads about the sandbox: is it there, which runner, which limits for an exercise."""

from __future__ import annotations

import math
import os
import threading
import time

from django.conf import settings
from django.core.cache import cache
from redis.exceptions import RedisError

from apps.sandbox.pool import PooledRunner
from apps.sandbox.runner import DockerRunner, SandboxUnavailable

# Each sandbox worker that passed its self-test refreshes its own key (``health.py``), which
# lives only a few heartbeats; the workers key lists the names that have said so. Both live
# under SANDBOX_READY_NAMESPACE: the web and its workers share it.
_LOCAL_CHECK_TTL_S = 30.0

_runner_lock = threading.Lock()
_runner: DockerRunner | PooledRunner | None = None
_local_check: tuple[float, bool] = (0.0, False)


def runner(owner: str = "") -> DockerRunner | PooledRunner:
    """The process's runner (one Docker client, shared): pooled unless SANDBOX_POOL_SIZE is 0."""
    global _runner
    with _runner_lock:
        if _runner is None or _runner.image != settings.SANDBOX_IMAGE:
            if isinstance(_runner, PooledRunner):
                _runner.stop()
            cold = DockerRunner(
                settings.SANDBOX_IMAGE, owner=owner or f"pid-{os.getpid()}", runtime=settings.SANDBOX_RUNTIME
            )
            _runner = cold
            if settings.SANDBOX_POOL_SIZE > 0:
                _runner = PooledRunner(
                    cold,
                    size=settings.SANDBOX_POOL_SIZE,
                    idle_s=settings.SANDBOX_POOL_IDLE_S,
                    max_time_s=settings.SANDBOX_MAX_TIME_LIMIT_S,
                    fillers=settings.SANDBOX_POOL_FILLERS,
                )
        elif owner and not _runner.owner.startswith(owner):
            _runner.owner = owner
        return _runner


def workers_key() -> str:
    return f"{settings.SANDBOX_READY_NAMESPACE}:workers"


def ready_key(worker: str) -> str:
    return f"{settings.SANDBOX_READY_NAMESPACE}:ready:{worker}"


def ready_workers() -> list[str]:
    """Names of the sandbox workers whose readiness is live. Raises RedisError without Redis."""
    names: list[str] = cache.get(workers_key()) or []
    if not names:
        return []
    live = cache.get_many([ready_key(n) for n in names])
    return [n for n in names if live.get(ready_key(n))]


def available() -> bool:
    """Can code be graded now? Workers say so through the cache; an eager setup checks Docker itself.

    Without Redis there is no broker either, so nothing could be queued: not available.
    """
    if not settings.CELERY_TASK_ALWAYS_EAGER:
        try:
            return bool(ready_workers())
        except RedisError:
            return False
    global _local_check
    checked_at, ok = _local_check
    if time.monotonic() - checked_at > _LOCAL_CHECK_TTL_S:
        try:
            ok = runner().image_present()
        except SandboxUnavailable:
            ok = False
        _local_check = (time.monotonic(), ok)
    return ok


def task_time_limits() -> tuple[int, int]:
    """Soft and hard Celery limits: longer than the longest run (a retry is a task of its own)."""
    soft = math.ceil(settings.SANDBOX_MAX_TIME_LIMIT_S + 60)
    return soft, soft + 30
