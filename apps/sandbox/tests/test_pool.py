"""The pool of pre-started, single-use containers, against a real Docker Engine.

Each test builds its own ``PooledRunner`` (its own owner label, so the containers it leaves are
its own) and stops it at the end. What runs through the session's worker with the pool on is in
``test_flow.py`` and ``test_hostile.py``; ``test_runtimes.py`` runs the hostile suite here too.
"""

from __future__ import annotations

import contextlib
import io
import time
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import docker
import pytest
from django.test import override_settings

from apps.sandbox import health, selectors
from apps.sandbox.pool import PooledRunner, Profile
from apps.sandbox.runner import LABEL_OWNER, LABEL_POOLED, DockerRunner, Job, Limits, RunResult
from apps.sandbox.verdict import Case, judge

pytestmark = pytest.mark.slow

LIMITS = Limits(time_s=5.0, memory_mb=256, cpuset="0")
ADD = [Case("a", [20, 22], {}, 42), Case("b", [1, 2], {}, 3)]


def job(source: str, cases: list[Case] = ADD, warm: tuple[str, ...] = ()) -> Job:
    return Job("f", [c.inputs() for c in cases], {"submission.py": source}, warm=warm)


HONEST = job("def f(a, b):\n    return a + b\n")


@pytest.fixture
def pool(sandbox_image: str) -> Iterator[PooledRunner]:
    runner = PooledRunner(DockerRunner(sandbox_image, owner=f"pool-test-{time.monotonic_ns()}"), size=1, idle_s=60)
    yield runner
    runner.stop()


def ready(pool: PooledRunner, j: Job = HONEST, limits: Limits = LIMITS) -> Profile:
    profile = Profile.of(j, limits)
    assert pool.wait_ready(profile), "no pooled container became ready"
    return profile


def test_a_pooled_run_is_graded_like_a_cold_one_and_its_container_is_gone_after(pool: PooledRunner) -> None:
    ready(pool)
    result = pool.run(HONEST, LIMITS)
    assert judge(result, ADD, "f").passed
    assert pool.stats["warm"] == 1 and pool.stats["cold"] == 0
    engine = docker.from_env()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and engine.containers.list(
        all=True, filters={"id": result.container_id}, ignore_removed=True
    ):
        time.sleep(0.05)
    assert (
        engine.containers.list(all=True, filters={"id": result.container_id}, ignore_removed=True) == []
    )  # single use
    # Its replacement: a pooled container of the same confinement, waiting.
    assert pool.wait_ready(Profile.of(HONEST, LIMITS))
    (waiting,) = engine.containers.list(filters={"label": f"{LABEL_OWNER}={pool.owner}"}, ignore_removed=True)
    assert waiting.labels[LABEL_POOLED] == "1" and waiting.id != result.container_id
    host = waiting.attrs["HostConfig"]
    assert host["NetworkMode"] == "none" and host["ReadonlyRootfs"] is True and host["CapDrop"] == ["ALL"]
    assert host["Memory"] == host["MemorySwap"] == 256 << 20 and host["PidsLimit"] == LIMITS.pids
    assert host["SecurityOpt"] == ["no-new-privileges"] and host["Init"] is True
    assert waiting.attrs["Config"]["User"] == "10001:10001"
    engine.close()


def test_two_submissions_in_a_row_share_no_process_file_or_import(pool: PooledRunner) -> None:
    """The first plants state every way it can; the next, in the same pool, finds none of it."""
    plant = job(
        "import os, sys, types\n"
        "def f(a, b):\n"
        "    open('/tmp/planted', 'w').write('x')\n"
        "    open('/tmp/job/planted.py', 'w').write('X = 1')\n"
        "    sys.modules['planted'] = types.ModuleType('planted')\n"
        "    import numpy\n    numpy.planted = True\n"
        "    os.environ['PLANTED'] = '1'\n"
        "    return [os.getpid(), os.getppid()]\n",
        [Case("a", [0, 0], {}, None)],
        warm=("numpy",),
    )
    look = job(
        "import os, sys\n"
        "def f(a, b):\n"
        "    import numpy\n"
        "    return [os.path.exists('/tmp/planted'), os.path.exists('/tmp/job/planted.py'), 'planted' in sys.modules,\n"
        "            hasattr(numpy, 'planted'), 'PLANTED' in os.environ]\n",
        [Case("a", [0, 0], {}, [False] * 5)],
        warm=("numpy",),  # the same profile: both pre-imported numpy, each its own
    )
    ready(pool, plant)
    first = pool.run(plant, LIMITS)
    ready(pool, look)
    second = pool.run(look, LIMITS)
    assert pool.stats["warm"] == 2
    assert first.container_id != second.container_id
    assert judge(second, [Case("a", [0, 0], {}, [False] * 5)], "f").passed, second.report


def _started_at(container: Any) -> float:
    """When Docker started a container, in seconds since the epoch (its clock is this machine's)."""
    stamp = container.attrs["State"]["StartedAt"]  # RFC 3339 with nanoseconds: 2026-11-27T09:40:28.123456789Z
    whole, _, fraction = stamp.rstrip("Z").partition(".")
    return datetime.fromisoformat(whole).replace(tzinfo=UTC).timestamp() + float(f"0.{fraction or 0}")


def test_the_time_limit_counts_from_the_hand_over_not_from_the_container_start(pool: PooledRunner) -> None:
    sleeper = job("import time\ndef f(a, b):\n    if a == 20:\n        time.sleep(1.5)\n    return a + b\n")
    ready(pool, sleeper, replace(LIMITS, time_s=2.5))
    # Until the waiting container has been up longer than the run's whole limit.
    engine = docker.from_env()
    (waiting,) = engine.containers.list(filters={"label": f"{LABEL_OWNER}={pool.owner}"}, ignore_removed=True)
    started = _started_at(waiting)
    deadline = time.monotonic() + 30
    while time.time() - started <= 3.0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert time.time() - started > 3.0
    engine.close()
    result = pool.run(sleeper, replace(LIMITS, time_s=2.5))
    assert pool.stats["warm"] == 1
    assert judge(result, ADD, "f").passed, result.report
    # And a run past its limit still ends at the limit.
    looping = job("def f(a, b):\n    while True:\n        pass\n")
    ready(pool, looping, replace(LIMITS, time_s=1.0))
    started = time.monotonic()
    assert judge(pool.run(looping, replace(LIMITS, time_s=1.0)), ADD, "f").outcome == "timeout"
    assert time.monotonic() - started < 1.0 + 3.5


def test_a_dead_pooled_container_is_discarded_never_handed_a_job(pool: PooledRunner) -> None:
    ready(pool)
    engine = docker.from_env()
    (waiting,) = engine.containers.list(filters={"label": f"{LABEL_OWNER}={pool.owner}"}, ignore_removed=True)
    waiting.kill()  # as a Docker Engine restart would: its stream ends
    waiting.wait(timeout=10)
    result = pool.run(HONEST, LIMITS)
    assert judge(result, ADD, "f").passed
    assert result.container_id != waiting.id
    assert pool.stats["discarded_stale"] == 1
    engine.close()


def test_a_pooled_container_past_its_idle_lifetime_is_replaced(sandbox_image: str) -> None:
    pool = PooledRunner(DockerRunner(sandbox_image, owner=f"pool-idle-{time.monotonic_ns()}"), size=1, idle_s=6)
    try:
        profile = ready(pool)
        engine = docker.from_env()
        (first,) = engine.containers.list(filters={"label": f"{LABEL_OWNER}={pool.owner}"}, ignore_removed=True)
        # Fresh for idle_s less a margin (a quarter of it here); then discarded and removed (and
        # the driver itself gives up waiting at idle_s).
        gone: dict[str, str | list[str] | bool] = {"id": str(first.id)}
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and engine.containers.list(all=True, filters=gone, ignore_removed=True):
            time.sleep(0.1)
        assert engine.containers.list(all=True, filters=gone, ignore_removed=True) == []
        assert pool.stats["discarded_stale"] >= 1
        assert pool.wait_ready(profile)
        result = pool.run(HONEST, LIMITS)
        assert judge(result, ADD, "f").passed and result.container_id != first.id
        engine.close()
    finally:
        pool.stop()


def test_an_image_change_drains_the_pool(sandbox_image: str) -> None:
    """The tag the pool runs is pointed at another image: what waits is discarded, then rebuilt."""
    engine = docker.from_env()
    tag = f"mlsys-sandbox-pooltest:{time.monotonic_ns()}"
    engine.images.get(sandbox_image).tag(tag)
    pool = PooledRunner(DockerRunner(tag, owner=f"pool-image-{time.monotonic_ns()}"), size=1, idle_s=60)
    try:
        profile = ready(pool)
        pool._check_image()  # records the image id the tag names now
        other = engine.images.build(fileobj=_dockerfile(sandbox_image), rm=True)[0]
        other.tag(tag)
        pool._image_checked = 0.0  # the filler checks every IMAGE_CHECK_S; now
        pool._check_image()
        assert pool.stats["drained"] == 1
        assert pool.wait_ready(profile)
        assert judge(pool.run(HONEST, LIMITS), ADD, "f").passed
    finally:
        pool.stop()
        with contextlib.suppress(docker.errors.APIError):
            engine.images.remove(tag, force=True)
        engine.close()


def _dockerfile(base: str) -> io.BytesIO:
    return io.BytesIO(f"FROM {base}\nLABEL mlsys.pooltest={time.monotonic_ns()}\n".encode())


def test_the_canary_and_the_probe_pass_in_a_pooled_container_too(pool: PooledRunner) -> None:
    assert health.self_test(pool) == []


def test_each_tests_result_arrives_as_it_completes(pool: PooledRunner) -> None:
    slow_second = job("import time\ndef f(a, b):\n    if a == 1:\n        time.sleep(1.0)\n    return a + b\n")
    ready(pool, slow_second)
    seen: list[tuple[float, str]] = []
    started = time.monotonic()
    result: RunResult = pool.run(slow_second, LIMITS, progress=lambda r: seen.append((time.monotonic(), r["id"])))
    ended = time.monotonic()
    assert [i for _, i in seen] == ["a", "b"]
    assert seen[0][0] - started < ended - started - 0.8  # the first came long before the end
    assert judge(result, ADD, "f").passed


def test_the_pool_is_a_setting(sandbox_image: str) -> None:
    with override_settings(SANDBOX_POOL_SIZE=0, SANDBOX_IMAGE=sandbox_image + "-off"):
        assert type(selectors.runner()) is DockerRunner
    with override_settings(SANDBOX_POOL_SIZE=2, SANDBOX_IMAGE=sandbox_image + "-on"):
        on = selectors.runner()
        assert isinstance(on, PooledRunner) and on.size == 2
