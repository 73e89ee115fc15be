"""The runner against a real Docker Engine: confinement in effect, lifecycle, faults.

These use ``DockerRunner`` directly (it knows nothing of the models); the flow through Celery
and the attempts is in ``test_flow.py`` and ``test_hostile.py``.
"""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Any

import docker
import pytest
from django.conf import settings

from apps.sandbox import health, probe
from apps.sandbox.runner import LABEL, LABEL_OWNER, DockerRunner, Job, Limits, SandboxUnavailable
from apps.sandbox.verdict import judge

pytestmark = pytest.mark.slow

SLEEPER = Job(
    "f", [{"id": "a", "args": [], "kwargs": {}}], {"submission.py": "import time\ndef f():\n    time.sleep(60)\n"}
)


def _live_container(client: docker.DockerClient, owner: str, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = client.containers.list(filters={"label": f"{LABEL_OWNER}={owner}"}, ignore_removed=True)
        if found:
            return found[0]
        time.sleep(0.05)
    raise AssertionError("no live sandbox container appeared")


def test_a_live_container_has_every_confinement_setting(sandbox_image: str) -> None:
    owner = f"settings-{time.monotonic_ns()}"
    runner = DockerRunner(sandbox_image, owner=owner)
    limits = Limits(time_s=8.0, memory_mb=384, cpus=1.0, cpuset="0", pids=200, tmpfs_mb=32, open_files=128)
    done = threading.Thread(target=runner.run, args=(SLEEPER, limits))
    done.start()
    client = docker.from_env()
    try:
        container = _live_container(client, owner)
        container.reload()
        attrs = container.attrs
        host, config = attrs["HostConfig"], attrs["Config"]
        assert attrs["State"]["Running"] is True
        assert host["NetworkMode"] == "none"
        assert host["ReadonlyRootfs"] is True
        assert host["Tmpfs"] == {"/tmp": "rw,nosuid,nodev,noexec,size=32m,mode=1777"}  # noqa: S108
        assert host["Memory"] == 384 * 2**20
        assert host["MemorySwap"] == host["Memory"]  # no swap beyond the memory limit
        assert host["NanoCpus"] == 1_000_000_000
        assert host["CpusetCpus"] == "0"
        assert host["PidsLimit"] == 200
        assert host["CapDrop"] == ["ALL"] and not host["CapAdd"]
        assert host["SecurityOpt"] == ["no-new-privileges"]
        assert host["Privileged"] is False
        assert host["Init"] is True
        assert host["IpcMode"] == "private"
        assert {u["Name"]: (u["Soft"], u["Hard"]) for u in host["Ulimits"]} == {
            "core": (0, 0),
            "fsize": (16 * 2**20, 16 * 2**20),
            "nofile": (128, 128),
        }
        assert host["LogConfig"] == {"Type": "json-file", "Config": {"max-size": "64k", "max-file": "1"}}
        assert not host["Binds"] and not attrs["Mounts"]  # nothing of the host's is mounted
        assert config["User"] == "10001:10001"
        assert config["Hostname"] == "sandbox"
        assert config["Labels"][LABEL] == "1"
        assert config["NetworkDisabled"] is True
        env = dict(item.split("=", 1) for item in config["Env"])
        assert set(env) == {"PATH", "HOME", "LANG", "PYTHONDONTWRITEBYTECODE", "JAX_PLATFORMS", "OMP_NUM_THREADS"}
        assert config["Cmd"][:3] == ["timeout", "-s", "KILL"]  # the in-container self-destruct
        # And from inside: what the learner's process actually sees.
        top = container.top(ps_args="-eo user,pid,comm")["Processes"]
        assert {row[0] for row in top} <= {"10001"}, top
    finally:
        done.join(timeout=30)
        client.close()


def test_the_probe_finds_the_confinement_in_effect_from_inside(sandbox_image: str) -> None:
    runner = DockerRunner(sandbox_image, owner="probe-test")
    found = probe.facts(runner.run(probe.job(), Limits(cpuset="0")).report)
    assert probe.problems(found) == []
    assert found is not None
    assert found["uid"] == 10001 and found["cap_eff"] == "0000000000000000"
    assert found["interfaces"] == ["lo"] and found["connect"] != "ok" and found["resolve"] != "ok"
    assert found["write_root"] != "ok" and found["write_tmp"] == "ok"
    assert found["pid1"].endswith("docker-init")


def test_the_probe_notices_what_is_wrong() -> None:
    bad = {
        "uid": 0,
        "euid": 0,
        "cap_eff": "00000000a80425fb",
        "cap_bnd": "00000000a80425fb",
        "no_new_privs": "0",
        "seccomp": "0",
        "write_root": "ok",
        "write_opt": "ok",
        "write_tmp": "ok",
        "connect": "ok",
        "resolve": "ok",
        "interfaces": ["eth0", "lo"],
        "env": ["PATH", "DATABASE_URL"],
        "cpus": 2,
        "hostname": "abc",
        "pid1": "python",
    }
    problems = " ".join(probe.problems(bad))
    for fragment in ("uid", "cap_eff", "no_new_privs", "seccomp", "write_root", "TCP", "DNS", "interfaces",
                     "DATABASE_URL", "cpus", "init"):  # fmt: skip
        assert fragment in problems


def test_every_container_is_removed_after_its_run(sandbox_image: str) -> None:
    owner = f"cleanup-{time.monotonic_ns()}"
    runner = DockerRunner(sandbox_image, owner=owner)
    honest = Job("f", [{"id": "a", "args": [1], "kwargs": {}}], {"submission.py": "def f(x):\n    return x\n"})
    looping = Job("f", [{"id": "a", "args": [1], "kwargs": {}}], {"submission.py": "def f(x):\n    while True: pass\n"})
    assert runner.run(honest, Limits()).status == "completed"
    assert runner.run(looping, Limits(time_s=1.0)).status in ("completed", "timeout")
    client = docker.from_env()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and client.containers.list(
        all=True, filters={"label": f"{LABEL_OWNER}={owner}"}, ignore_removed=True
    ):
        time.sleep(0.1)
    assert client.containers.list(all=True, filters={"label": f"{LABEL_OWNER}={owner}"}, ignore_removed=True) == []


def test_the_reaper_removes_a_crashed_workers_leftovers(sandbox_image: str) -> None:
    """A worker killed mid-run leaves its container: the next start (same owner) removes it."""
    client = docker.from_env()
    owner = f"crashed-{time.monotonic_ns()}"
    orphan = client.containers.run(
        sandbox_image, ["sleep", "600"], detach=True, labels={LABEL: "1", LABEL_OWNER: owner, "mlsys.sandbox.deadline": str(int(time.time()) + 3600)},
        network_mode="none",
    )  # fmt: skip
    stale = client.containers.run(
        sandbox_image, ["sleep", "600"], detach=True, labels={LABEL: "1", LABEL_OWNER: "someone-else", "mlsys.sandbox.deadline": "1"},
        network_mode="none",
    )  # fmt: skip
    try:
        removed = DockerRunner(sandbox_image).reap(owner=owner)
        assert orphan.id in removed and stale.id in removed
        assert not client.containers.list(all=True, filters={"id": orphan.id}, ignore_removed=True)
    finally:
        for c in (orphan, stale):
            with contextlib.suppress(docker.errors.NotFound):
                c.remove(force=True)
        client.close()


def test_two_reapers_at_once_both_finish(sandbox_image: str) -> None:
    """Two processes reaping the same leftovers (a worker's start-up reap while another's
    removal is under way) both finish: the Engine's 409 "removal already in progress" is not a fault."""
    client = docker.from_env()
    owner = f"raced-{time.monotonic_ns()}"
    labels = {LABEL: "1", LABEL_OWNER: owner, "mlsys.sandbox.deadline": str(int(time.time()) + 3600)}
    leftovers = [
        client.containers.run(sandbox_image, ["sleep", "600"], detach=True, labels=labels, network_mode="none")
        for _ in range(6)
    ]
    try:
        start = threading.Barrier(2)
        outcomes: list[object] = []

        def reap() -> None:
            start.wait()
            try:
                outcomes.append(DockerRunner(sandbox_image).reap(owner=owner))
            except Exception as exc:  # noqa: BLE001 - the assertion below names it
                outcomes.append(exc)

        threads = [threading.Thread(target=reap) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        assert all(isinstance(o, list) for o in outcomes) and len(outcomes) == 2, outcomes
        claimed = {cid for o in outcomes if isinstance(o, list) for cid in o}
        assert {c.id for c in leftovers} <= claimed
        assert not client.containers.list(all=True, filters={"label": f"{LABEL_OWNER}={owner}"}, ignore_removed=True)
    finally:
        for c in leftovers:
            with contextlib.suppress(docker.errors.NotFound, docker.errors.APIError):
                c.remove(force=True)
        client.close()


def test_the_container_kills_itself_if_nobody_does(sandbox_image: str) -> None:
    """The in-container `timeout -s KILL`: a run whose worker vanished still ends."""
    client = docker.from_env()
    container = client.containers.run(
        sandbox_image,
        ["timeout", "-s", "KILL", "1", "sleep", "600"],
        detach=True,
        network_mode="none",
        labels={LABEL: "1"},
    )
    try:
        assert container.wait(timeout=20)["StatusCode"] == 137
    finally:
        container.remove(force=True)
        client.close()


def test_platform_faults_raise_and_are_never_verdicts(sandbox_image: str) -> None:
    missing = DockerRunner("mlsys-sandbox:does-not-exist")
    with pytest.raises(SandboxUnavailable, match="missing"):
        missing.run(SLEEPER, Limits())
    unreachable = DockerRunner(
        sandbox_image, client_factory=lambda: docker.DockerClient(base_url="unix:///nonexistent.sock")
    )
    with pytest.raises(SandboxUnavailable):
        unreachable.run(SLEEPER, Limits())


def test_the_worker_self_test_passes_on_a_sound_sandbox(sandbox_image: str) -> None:
    assert health.self_test(DockerRunner(sandbox_image, owner="self-test")) == []


def test_the_self_test_fails_when_the_canary_cannot_pass() -> None:
    class Broken:
        def run(self, job: Job, limits: Limits, progress: Any = None) -> Any:
            raise SandboxUnavailable("no Docker Engine")

    assert health.self_test(Broken()) == ["sandbox unavailable: no Docker Engine"]


def test_expected_values_never_enter_the_container() -> None:
    from apps.exercises.content.loader import Expected, load_workbook
    from apps.exercises.content.report import DEFAULT_ROOT
    from apps.exercises.jobs import code_cases, code_job

    runner = DockerRunner(settings.SANDBOX_IMAGE, owner="tests")
    spec = load_workbook(DEFAULT_ROOT / "transformer-math", expected=Expected(runner=runner), chapter_glob="00-*")
    code = next(e.code for c in spec.chapters for e in c.exercises if e.number == "0.5")
    assert code is not None
    request = code_job(code, "def param_count(d, n_layers, vocab_size):\n    return 0\n").request(Limits()).decode()
    for case in code_cases(code):
        assert str(case.expected) not in request, case.id
    assert "expected" not in request and code.solution not in request


def test_a_jax_submission_runs_and_arrays_are_compared_with_tolerance(sandbox_image: str) -> None:
    source = "import jax, jax.numpy as jnp\ndef f(n):\n    return jax.vmap(lambda x: x * 2.0)(jnp.arange(n, dtype=jnp.float32))\n"
    from apps.sandbox.verdict import Case

    cases = [Case("three", [3], {}, [0.0, 2.0, 4.0]), Case("none", [0], {}, [])]
    result = DockerRunner(sandbox_image).run(
        Job("f", [c.inputs() for c in cases], {"submission.py": source}),
        Limits(time_s=30.0, memory_mb=1024),
    )
    verdict = judge(result, cases, "f")
    assert verdict.outcome == "passed", verdict
