"""Fault drills (issue 16): break one part of a private stack on purpose, then balance the books.

Each drill asserts that every attempt the API accepted ends final for the right reason, that nothing
is graded twice or counted without being graded (``assert_books_balance``), that nothing wrong passes
(wrong code and wrong numbers are in every flow), which status codes clients saw during the fault, and
how long recovery took. Every wait has a deadline derived from the recovery settings and fails
naming what was stuck. Recovery times are written to ``var/drills.json``.
"""

from __future__ import annotations

import os
import time
from collections import Counter

import docker
import pytest
from django.conf import settings

from apps.sandbox.tests.worker import hostname
from tests.drills.client import (
    SUBMISSIONS,
    Flow,
    Learner,
    assert_books_balance,
    attempts,
    clear,
    pending,
    shape,
)
from tests.drills.stack import Stack, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.drill, pytest.mark.xdist_group("drills")]

LEASE = settings.SANDBOX_LEASE_S
REPUBLISH = settings.SANDBOX_REPUBLISH_AFTER_S
HEARTBEAT = settings.SANDBOX_HEARTBEAT_S
TTL = settings.SANDBOX_READY_TTL_S
RIGHT = SUBMISSIONS[0]  # a reference solution, quick
SLOW_S = 2.0  # a run kept in flight this long, so that a fault finds code running


def settle(stack: Stack, learner: Learner, timeout: float, what: str) -> float:
    """Wait until every attempt the learner had accepted is final; the time it took."""
    started = time.monotonic()
    ids = list(learner.expected)
    wait_for(what, lambda: not pending(stack.pg, ids), timeout, every=0.25,
             describe=lambda: f"still pending: {pending(stack.pg, ids)}\n{stack.logs()}")  # fmt: skip
    return time.monotonic() - started


def in_flight(stack: Stack, name: str) -> None:
    wait_for(f"a run of {name} in flight (a container of its own)", lambda: stack.containers(name), 60,
             describe=stack.logs)  # fmt: skip


def each_running_one(stack: Stack, learner: Learner, workers: int) -> None:
    """Every worker (one run at a time each) has claimed one of the learner's attempts and is running it.

    A container of a worker's own is not enough: its warm pool keeps one started while it waits, so a
    kill could land before the worker claimed anything, and nothing would be left to run again.
    """

    def running() -> bool:
        return list(pending(stack.pg, list(learner.expected)).values()).count("running") >= workers

    wait_for(f"{workers} runs in flight", running, 60, every=0.1, describe=stack.logs)


def post_right(learner: Learner) -> str:
    return shape(learner.code(*RIGHT))


def test_kill_9_a_worker_mid_run_while_another_is_alive(healthy: Stack, learner: Learner) -> None:
    stack = healthy
    (_, victim), _ = stack.start_workers(2)
    learner.submit_all(sleep_s=SLOW_S)
    each_running_one(stack, learner, workers=2)  # so the one killed is killed mid-run
    killed_at = time.monotonic()
    victim.kill_hard()  # SIGKILL to its process group: no shutdown hook, its lease just stops being renewed
    during = Counter(post_right(learner) for _ in range(2))
    assert during == Counter({"202": 2}), during  # the other worker is alive: code is still accepted
    settle(stack, learner, LEASE + HEARTBEAT + 25, "every attempt final after a worker was killed mid-run")
    recovery = time.monotonic() - killed_at
    rows = attempts(stack.pg, list(learner.expected))
    # The right reason: the killed run is run again by the live worker, not failed and not lost.
    assert {a["status"] for a in rows.values()} == {"graded"}, rows
    claims = Counter(a["claims"] for a in rows.values())
    assert claims[2] >= 1 and set(claims) <= {1, 2}, claims  # the orphaned attempt was claimed again, once
    assert_books_balance(stack.pg, learner)
    assert recovery <= 60, recovery
    stack.timings["kill9_with_a_second_worker_recovery_s"] = round(recovery, 1)


def test_kill_9_the_only_worker_then_start_a_new_one(healthy: Stack, learner: Learner) -> None:
    stack = healthy
    ((_, victim),) = stack.start_workers(1)
    learner.submit_all(sleep_s=SLOW_S, count=3)
    each_running_one(stack, learner, workers=1)
    killed_at = time.monotonic()
    victim.kill_hard()
    # Its readiness lapses within the TTL of its last heartbeat: code is refused plainly, not queued for nobody.
    seen: list[str] = []

    def refused() -> bool:
        seen.append(post_right(learner))
        return seen[-1] == "503 sandbox_unavailable"

    wait_for("code refused once the only worker's readiness lapsed", refused, TTL + 2, every=1.0, describe=stack.logs)
    refused_after = time.monotonic() - killed_at
    assert set(seen) <= {"202", "503 sandbox_unavailable"}, seen
    stack.start_workers(1)  # as a supervisor restarts a crashed worker
    settle(stack, learner, LEASE + HEARTBEAT + 25, "every attempt final after the only worker was killed")
    recovery = time.monotonic() - killed_at
    rows = attempts(stack.pg, list(learner.expected))
    assert {a["status"] for a in rows.values()} == {"graded"}, rows
    assert max(a["claims"] for a in rows.values()) == 2, rows
    assert_books_balance(stack.pg, learner)
    assert recovery <= 60, recovery
    stack.timings["kill9_only_worker_recovery_s"] = round(recovery, 1)
    stack.timings["kill9_only_worker_statuses"] = dict(Counter(seen))
    stack.timings["kill9_only_worker_code_refused_after_s"] = round(refused_after, 1)


def test_redis_restart_loses_the_queue_and_nothing_is_lost(healthy: Stack, learner: Learner) -> None:
    stack = healthy
    ((idle, worker),) = stack.start_workers(1)
    # Readiness stays (the worker heartbeats) but nobody consumes: the 10 messages wait in Redis.
    stack.celery("control", "cancel_consumer", "sandbox", "--destination", hostname(idle), "--timeout", "10")
    learner.submit_all(count=10)
    with stack.redis.client(stack.BROKER_DB) as r:
        assert r.llen("sandbox") == 10
    worker.proc.terminate()  # a graceful stop: nothing of its own in flight
    worker.proc.wait(timeout=30)
    stack.redis.stop()
    stack.redis.start()
    restarted_at = time.monotonic()
    with stack.redis.client(stack.BROKER_DB) as r:
        assert r.llen("sandbox") == 0  # the queue is really gone
    assert pending(stack.pg, list(learner.expected)) == dict.fromkeys(learner.expected, "queued")
    stack.start_workers(1)  # its start and its heartbeats publish again what lost its message
    settle(stack, learner, REPUBLISH + HEARTBEAT + 45, "the 10 queued attempts graded after a Redis restart")
    recovery = time.monotonic() - restarted_at
    rows = attempts(stack.pg, list(learner.expected))
    assert {a["status"] for a in rows.values()} == {"graded"}, rows
    assert {a["claims"] for a in rows.values()} == {1}, rows  # each claimed once: graded once
    assert_books_balance(stack.pg, learner)
    stack.timings["redis_restart_all_graded_s"] = round(recovery, 1)


def test_redis_down_10_s_while_answers_flow(healthy: Stack, learner: Learner) -> None:
    stack = healthy
    stack.start_workers(1)
    code: Counter[str] = Counter()
    with Flow(learner) as flow:
        flow_started = time.monotonic()
        wait_for("answers flowing", lambda: flow.between(flow_started, time.monotonic())["201"] >= 5, 30)
        down_at = time.monotonic()
        stack.redis.stop()
        while time.monotonic() < down_at + 10:
            code[post_right(learner)] += 1
            time.sleep(1.0)
        stack.redis.start()
        up_at = time.monotonic()
        wait_for("code accepted again after Redis came back", lambda: post_right(learner) == "202",
                 HEARTBEAT + TTL + 5, every=0.5, describe=stack.logs)  # fmt: skip
        accepted_again = time.monotonic() - up_at
        wait_for("answers after the outage", lambda: flow.between(up_at + accepted_again, time.monotonic())["201"], 10)
    outage = flow.between(down_at, up_at)
    every = Counter(s for _, s in flow.seen)
    assert all(clear(s) for s in every), every  # 2xx or the JSON error shape: no HTML, no dropped connection
    assert outage["201"] > 0, outage  # numeric answers are graded on PostgreSQL alone
    assert code and set(code) == {"503 sandbox_unavailable"}, code
    settle(stack, learner, 60, "the code accepted after the outage graded")
    assert_books_balance(stack.pg, learner)
    assert accepted_again <= HEARTBEAT + TTL, accepted_again
    stack.timings["redis_down_answers_during_outage"] = dict(outage)
    stack.timings["redis_down_code_accepted_again_s"] = round(accepted_again, 1)


def test_postgres_restart_while_answers_flow(healthy: Stack, learner: Learner) -> None:
    stack = healthy
    stack.start_workers(1)
    with Flow(learner) as flow:
        flow_started = time.monotonic()
        wait_for("answers flowing", lambda: flow.between(flow_started, time.monotonic())["201"] >= 5, 30)
        down_at = time.monotonic()
        stack.pg.stop("fast")
        # Down until answers have met the outage: three of them refused while it lasts.
        wait_for("answers refused while PostgreSQL is down",
                 lambda: sum(n for s, n in flow.between(down_at, time.monotonic()).items() if s != "201") >= 3, 30)  # fmt: skip
        stack.pg.start()
        up_at = time.monotonic()
        first = wait_for("an answer graded after PostgreSQL came back", lambda: flow.first_after(up_at), 30,
                         describe=stack.logs)  # fmt: skip
        wait_for("answers after the restart", lambda: flow.between(first, time.monotonic())["201"] >= 10, 30)
    every = Counter(s for _, s in flow.seen)
    outage = flow.between(down_at, first)
    after = flow.between(first, time.monotonic())
    assert all(clear(s) for s in every), every  # failures during the outage are the JSON error shape
    # ...and say what happened: the database is away for a moment (503 + Retry-After), not a crash.
    assert set(outage) <= {"201", "503 database_unavailable"}, outage
    assert set(after) == {"201"}, after  # everything after recovery works
    learner.submit_all(count=2)  # and code still flows through the worker, which lived through it
    settle(stack, learner, 60, "code submitted after the PostgreSQL restart graded")
    assert_books_balance(stack.pg, learner)  # no attempt half-written: none stored that was not answered 201
    stack.timings["postgres_restart_statuses_during"] = dict(outage)
    stack.timings["postgres_restart_recovery_s"] = round(first - up_at, 2)
    stack.timings["postgres_restart_outage_s"] = round(first - down_at, 2)


def test_sandbox_image_removed(healthy: Stack, learner: Learner) -> None:
    stack = healthy
    engine = docker.from_env()
    shared = stack.env()["SANDBOX_IMAGE"]
    repository, tag = "mlsys-sandbox-drill", str(os.getpid())
    private = f"{repository}:{tag}"
    # Only this drill's own tag is removed: the image keeps its shared names, which others use.
    assert engine.images.get(shared).tag(repository, tag)
    try:
        ((name, _),) = stack.start_workers(1, SANDBOX_IMAGE=private)
        learner.submit_all(count=12)  # a queue the worker works through, one container after another
        in_flight(stack, name)
        # Just after a heartbeat (it touches the ready file), so that the worker starts its next run
        # before its next heartbeat notices the image is gone: that run meets the missing image.
        beat = stack.ready_file(name).stat().st_mtime
        wait_for("a heartbeat of the worker", lambda: stack.ready_file(name).stat().st_mtime > beat, HEARTBEAT + 5)
        removed_at = time.monotonic()
        engine.images.remove(private)
        assert engine.images.get(shared)
        seen: list[str] = []

        def refused() -> bool:
            seen.append(post_right(learner))
            return seen[-1] == "503 sandbox_unavailable"

        wait_for("new code refused after the image was removed", refused, HEARTBEAT + TTL + 5, every=0.5,
                 describe=stack.logs)  # fmt: skip
        refused_after = time.monotonic() - removed_at
        assert set(seen) <= {"202", "503 sandbox_unavailable"}, seen
        wait_for(
            "nothing running once the image is gone",
            lambda: "running" not in pending(stack.pg, list(learner.expected)).values(),
            30,
            describe=stack.logs,
        )
        failed = {i: a for i, a in attempts(stack.pg, list(learner.expected)).items() if a["status"] == "not_graded"}
        # The run that met the missing image: not graded, saying why (and, below, never counted).
        assert failed, f"no run met the missing image:\n{stack.logs()}"
        assert all(private in a["details"].get("reason", "") for a in failed.values()), failed
        # The operator puts the image back: the worker tests itself again and takes what was left queued.
        assert engine.images.get(shared).tag(repository, tag)
        back_at = time.monotonic()
        wait_for("code accepted again once the image is back", lambda: post_right(learner) == "202",
                 HEARTBEAT + 30, every=0.5, describe=stack.logs)  # fmt: skip
        stack.timings["image_back_code_accepted_s"] = round(time.monotonic() - back_at, 1)
        settle(stack, learner, REPUBLISH + HEARTBEAT + 45, "every attempt final once the image is back")
    finally:
        for image in engine.images.list(name=repository):
            if private in image.tags:
                engine.images.remove(private)
        engine.close()
    rows = attempts(stack.pg, list(learner.expected))
    for attempt in rows.values():  # not graded names the image, and never counts; graded is right
        assert attempt["status"] == "graded" or private in attempt["details"].get("reason", ""), attempt
    assert_books_balance(stack.pg, learner)
    assert refused_after <= HEARTBEAT + TTL, refused_after
    stack.timings["image_removed_refused_after_s"] = round(refused_after, 1)
    stack.timings["image_removed_not_graded"] = len([a for a in rows.values() if a["status"] == "not_graded"])
