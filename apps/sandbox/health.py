"""A sandbox worker's health: reap leftovers, prove confinement, then advertise readiness.

At start a worker (1) removes sandbox containers a previous incarnation left behind and any
past their deadline, (2) runs the canary — a trivial submission that must come back as passed
through the real runner and verdict — and (3) runs the confinement probe (network, writes, uid,
capabilities, environment). Only if all hold does it consume the ``sandbox`` queue and refresh
``selectors.READY_KEY``, which the web process reads to say whether code can be graded.
"""

from __future__ import annotations

import logging
import threading

from django.core.cache import cache

from apps.sandbox import probe, selectors
from apps.sandbox.runner import Job, Limits, Runner, SandboxUnavailable
from apps.sandbox.verdict import Case, judge

logger = logging.getLogger(__name__)

HEARTBEAT_S = 15.0
READY_TTL_S = 45

CANARY_CASES = [Case("canary", [20, 22], {}, 42)]
CANARY = Job("canary", [c.inputs() for c in CANARY_CASES], {"submission.py": "def canary(a, b):\n    return a + b\n"})

_state = {"ready": False}
_stop = threading.Event()


def ready() -> bool:
    return _state["ready"]


def self_test(runner: Runner) -> list[str]:
    """Problems found by the canary and the confinement probe; empty when the sandbox is sound."""
    limits = Limits(time_s=20.0, memory_mb=256, cpuset="0")
    try:
        canary = judge(runner.run(CANARY, limits), CANARY_CASES, "canary")
        found = probe.facts(runner.run(probe.job(), limits).report)
    except SandboxUnavailable as exc:
        return [f"sandbox unavailable: {exc}"]
    problems = [] if canary.passed else [f"canary: {canary.outcome} {canary.message}"]
    return problems + probe.problems(found)


def check(owner: str) -> bool:
    """Run at worker start: reap, then canary and probe. Returns whether this worker may take work."""
    runner = selectors.runner(owner)
    try:
        removed = runner.reap(owner=owner)
    except SandboxUnavailable as exc:
        removed = []
        logger.error("sandbox reaper could not reach Docker: %s", exc)
    problems = self_test(runner)
    _state["ready"] = not problems
    if problems:
        logger.critical("sandbox self-test failed; this worker refuses sandbox work: %s", "; ".join(problems))
    else:
        logger.info("sandbox self-test passed (reaped %d leftover containers)", len(removed))
    return not problems


def start_heartbeat() -> None:
    advertise()
    _stop.clear()
    threading.Thread(target=_heartbeat, name="sandbox-heartbeat", daemon=True).start()


def advertise() -> None:
    cache.set(selectors.READY_KEY, True, timeout=READY_TTL_S)


def stop() -> None:
    _state["ready"] = False
    _stop.set()


def _heartbeat() -> None:
    while not _stop.wait(HEARTBEAT_S):
        if _state["ready"]:
            try:
                advertise()
            except Exception:
                logger.exception("sandbox heartbeat failed")
