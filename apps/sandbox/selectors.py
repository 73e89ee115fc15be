"""Reads about the sandbox: is it there, which runner, which limits for an exercise."""

from __future__ import annotations

import math
import os
import threading
import time

from django.conf import settings
from django.core.cache import cache

from apps.sandbox.runner import DockerRunner, SandboxUnavailable

# Sandbox workers that passed their self-test refresh this key (see ``health.py``).
READY_KEY = "sandbox:ready"
_LOCAL_CHECK_TTL_S = 30.0

_runner_lock = threading.Lock()
_runner: DockerRunner | None = None
_local_check: tuple[float, bool] = (0.0, False)


def runner(owner: str = "") -> DockerRunner:
    """The process's runner (one Docker client, shared)."""
    global _runner
    with _runner_lock:
        if _runner is None or _runner.image != settings.SANDBOX_IMAGE:
            _runner = DockerRunner(settings.SANDBOX_IMAGE, owner=owner or f"pid-{os.getpid()}")
        elif owner and not _runner.owner.startswith(owner):
            _runner.owner = owner
        return _runner


def available() -> bool:
    """Can code be graded now? Workers say so through the cache; an eager setup checks Docker itself."""
    if not settings.CELERY_TASK_ALWAYS_EAGER:
        return bool(cache.get(READY_KEY))
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
    """Soft and hard Celery limits: longer than every try of the longest run."""
    soft = math.ceil(settings.SANDBOX_MAX_TIME_LIMIT_S * (settings.SANDBOX_RETRIES + 1) + 60)
    return soft, soft + 30
