"""A sandbox worker's health: reap leftovers, prove confinement, then advertise readiness.

At start a worker (1) removes sandbox containers a previous incarnation left behind and any
past their deadline, (2) runs the canary — a trivial submission that must come back as passed
through the real runner and verdict — and (3) runs the confinement probe (network, writes, uid,
capabilities, environment). Only if all hold does it consume the ``sandbox`` queue and advertise
readiness: its own key in the cache (``selectors.ready_key``), which lives SANDBOX_READY_TTL_S,
and the file SANDBOX_READY_FILE (its container's healthcheck reads the file's age).

Its heartbeat (a thread of the worker's main process, every SANDBOX_HEARTBEAT_S) then:
- re-advertises while the sandbox image is present; when the image disappears the worker stops
  advertising and consuming at once, and when it is back the self-test runs again;
- recovers attempts that dead workers or a restarted broker left (``services.attempts_recover``).
A graceful stop withdraws readiness at once; after a crash it lapses within the TTL.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

from django.conf import settings
from django.core.cache import cache
from django.db import connections
from redis.exceptions import RedisError

from apps.sandbox import probe, selectors
from apps.sandbox.pool import PooledRunner, Profile
from apps.sandbox.runner import Job, Limits, Runner, RunResult, SandboxUnavailable
from apps.sandbox.verdict import Case, judge

logger = logging.getLogger(__name__)

CANARY_CASES = [Case("canary", [20, 22], {}, 42)]
CANARY = Job("canary", [c.inputs() for c in CANARY_CASES], {"submission.py": "def canary(a, b):\n    return a + b\n"})

# ready: may take work; retry: the last failure was the platform's (no Docker, no image), so the
# heartbeat runs the self-test again once the image is there; a failed confinement probe stays failed.
_state: dict[str, object] = {"ready": False, "name": "", "problem": "", "retry": False}
_stop = threading.Event()


def ready_file(name: str = "") -> Path:
    """The file a ready worker keeps fresh (its container's healthcheck reads it)."""
    if settings.SANDBOX_READY_FILE:
        return Path(settings.SANDBOX_READY_FILE)
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", name or str(_state["name"]) or f"pid-{os.getpid()}")
    return Path(tempfile.gettempdir()) / f"mlsys-sandbox-ready-{safe}"


def passed() -> bool:
    """Did this worker's last self-test pass (and nothing since take it back)?"""
    return bool(_state["ready"])


def ready() -> bool:
    """May this process run code now? In a pool process the main process's word is its file."""
    if not _state["ready"]:
        return False
    name = str(_state["name"])
    return not name or ready_file(name).exists()


def self_test(runner: Runner) -> list[str]:
    """Problems found by the canary and the confinement probe; empty when the sandbox is sound.
    With a pool, both run in a cold container and again in a pooled one, started here for them
    (no filler thread: this runs in a worker's main process, before its pool processes fork)."""
    limits = Limits(time_s=20.0, memory_mb=256, cpuset="0")
    ways: list[tuple[str, Callable[[Job], RunResult]]] = [("", lambda job: runner.run(job, limits))]
    if isinstance(runner, PooledRunner):
        pool = runner

        def pooled(job: Job) -> RunResult:
            return pool.run_in(pool.start_one(Profile.of(job, limits)), job, limits)

        ways = [("", lambda job: pool.cold.run(job, limits)), ("pooled ", pooled)]
    runtime = str(getattr(runner, "runtime", ""))  # a runner for tests may not say
    problems = []
    for way, run in ways:
        try:
            canary = judge(run(CANARY), CANARY_CASES, "canary")
            found = probe.facts(run(probe.job()).report)
        except SandboxUnavailable as exc:
            return [f"sandbox unavailable: {exc}"]
        problems += [] if canary.passed else [f"{way}canary: {canary.outcome} {canary.message}"]
        problems += [way + p for p in probe.problems(found, runtime)]
    return problems


def check(owner: str) -> bool:
    """Run at worker start: reap, then canary and probe. Returns whether this worker may take work."""
    _state["name"] = owner
    runner = selectors.runner(owner)
    try:
        removed = runner.reap(owner=owner)
    except SandboxUnavailable as exc:
        removed = []
        logger.error("sandbox reaper could not reach Docker: %s", exc)
    problems = self_test(runner)
    _state["ready"] = not problems
    _state["problem"] = "; ".join(problems)
    _state["retry"] = bool(problems) and all(p.startswith("sandbox unavailable") for p in problems)
    if problems:
        logger.critical("sandbox self-test failed; this worker refuses sandbox work: %s", "; ".join(problems))
    else:
        logger.info("sandbox self-test passed (reaped %d leftover containers)", len(removed))
    return not problems


def advertise() -> None:
    name = str(_state["name"])
    ready_file(name).touch()
    cache.set(selectors.ready_key(name), True, timeout=settings.SANDBOX_READY_TTL_S)
    names: list[str] = cache.get(selectors.workers_key()) or []
    if name not in names:
        # Read-modify-write: two workers starting at once may drop one name; every heartbeat
        # adds it back. Names whose key lapsed are pruned here.
        cache.set(selectors.workers_key(), [*selectors.ready_workers(), name], None)


def withdraw() -> None:
    """Stop saying this worker is ready: the file and the key, now."""
    name = str(_state["name"])
    with contextlib.suppress(FileNotFoundError):
        ready_file(name).unlink()
    try:
        cache.delete(selectors.ready_key(name))
    except RedisError as exc:
        logger.warning("could not withdraw sandbox readiness (the key lapses by itself): %s", exc)


def start_heartbeat(
    *, consume: Callable[[bool], None] | None = None, recover: Callable[[], object] | None = None
) -> None:
    """Advertise now, then beat. ``consume(on)`` starts/stops taking sandbox tasks; ``recover``
    closes or re-queues what others left (both given by the Celery signal handlers)."""
    _stop.clear()
    _beat(consume, recover)
    threading.Thread(target=_heartbeat, args=(consume, recover), name="sandbox-heartbeat", daemon=True).start()


def stop() -> None:
    _stop.set()
    _state["ready"] = False
    withdraw()


def _heartbeat(consume: Callable[[bool], None] | None, recover: Callable[[], object] | None) -> None:
    while not _stop.wait(settings.SANDBOX_HEARTBEAT_S):
        _beat(consume, recover)


def _beat(consume: Callable[[bool], None] | None, recover: Callable[[], object] | None) -> None:
    try:
        _check_image(consume)
        if _state["ready"]:
            advertise()
    except (RedisError, OSError) as exc:
        logger.warning("sandbox heartbeat could not advertise: %s", exc)
    except Exception:
        logger.exception("sandbox heartbeat failed")
    if recover is not None and _state["ready"]:
        try:
            recover()
        except Exception:
            logger.exception("recovering attempts failed")
        finally:
            connections.close_all()  # this thread's connection must not outlive the beat (forks)


def _check_image(consume: Callable[[bool], None] | None) -> None:
    """Image gone: stop advertising and consuming. Image back: self-test again, then resume."""
    name = str(_state["name"])
    runner = selectors.runner(name)
    try:
        present = runner.image_present()
    except SandboxUnavailable as exc:
        present, reason = False, str(exc)
    else:
        reason = f"the sandbox image {runner.image} is missing"
    if not present and _state["ready"]:
        _state["ready"], _state["problem"], _state["retry"] = False, reason, True
        logger.critical("%s; this worker stops taking sandbox work", reason)
        withdraw()
        if consume is not None:
            consume(False)
    elif present and not _state["ready"] and _state["retry"] and check(name):
        logger.info("the sandbox is back and the self-test passed; taking sandbox work again")
        if consume is not None:
            consume(True)
