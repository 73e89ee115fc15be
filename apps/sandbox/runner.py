"""Running untrusted code in a locked-down, single-use Docker container.

This module knows nothing about exercises, attempts or the database: it is a function from
(image, job, limits) to a ``RunResult``. ``verdict.py`` turns a result into a verdict; the Celery
task in ``tasks.py`` ties both to attempts.

Every container is created with the confinement below (``host_config``), labelled so a reaper can
find it after a crash, fed its job over an attached stdin (one JSON line: inputs, never expected
values) and read back over the attached stdout, with a deadline and a byte cap enforced here,
outside the container. It is always killed and removed, and it kills itself (``timeout -s KILL``)
if this process dies mid-run. Platform faults — no Docker Engine, no image, a failing API —
raise ``SandboxUnavailable``; they are never a verdict on the learner's code.

``pool.PooledRunner`` is a ``Runner`` too: it hands each job a container started ahead of it, created
and read by the same methods (``create``, ``attach``, ``finish``).
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import select
import socket
import threading
import time
import weakref
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import docker
import docker.errors
import requests.exceptions
from docker.types import LogConfig, Ulimit

logger = logging.getLogger(__name__)

LABEL = "mlsys.sandbox"
LABEL_DEADLINE = "mlsys.sandbox.deadline"
LABEL_OWNER = "mlsys.sandbox.owner"
LABEL_POOLED = "mlsys.sandbox.pooled"  # started ahead of its job, by a pool (pool.py)
SANDBOX_USER = "10001:10001"
DRIVER = ["/opt/venv/bin/python", "-I", "-S", "/opt/sandbox/driver.py", "/tmp/job"]
# What the learner's process may see in its environment: no secrets, nothing of the host's.
BASE_ENV: dict[str, str] = {
    "PATH": "/opt/venv/bin:/usr/bin:/bin",
    "HOME": "/tmp",
    "LANG": "C.UTF-8",
    "PYTHONDONTWRITEBYTECODE": "1",
    "JAX_PLATFORMS": "cpu",
}
EXTRA_ENV_ALLOWED = frozenset({"XLA_FLAGS", "JAX_ENABLE_X64"})
KILL_GRACE_S = 3.0  # past the time limit, before the worker kills the container itself
SELF_DESTRUCT_GRACE_S = 5.0  # past the time limit, before the container kills itself
REAP_GRACE_S = 60.0  # past the time limit, before any reaper may remove a container
STDERR_KEPT = 16_000
# After a run, its container's removal (and, in a pool, its replacement's start) waits this long:
# the caller records the verdict meanwhile, with the CPU not taken by the Engine's teardown.
SETTLE_S = 0.1

Status = Literal["completed", "timeout", "output_limit"]


class SandboxUnavailable(RuntimeError):
    """The platform, not the learner's code, failed: no Docker, no image, an API error."""


@dataclass(frozen=True)
class Limits:
    time_s: float = 10.0
    memory_mb: int = 512
    cpus: float = 1.0
    cpuset: str | None = None
    pids: int = 256
    tmpfs_mb: int = 64
    output_bytes: int = 1 << 20
    file_size_mb: int = 16
    open_files: int = 256


@dataclass(frozen=True)
class Job:
    """What runs: the files (``submission.py`` at least), the function and each test's inputs."""

    entry: str
    cases: list[dict[str, Any]]
    files: Mapping[str, str]
    env: Mapping[str, str] = field(default_factory=dict)
    # Modules the exercise's code imports, which a pooled container imports ahead (``pool.py``).
    warm: tuple[str, ...] = ()

    def request(self, limits: Limits) -> bytes:
        body = {
            "entry": self.entry,
            "cases": [{k: c[k] for k in ("id", "args", "kwargs", "probe") if k in c} for c in self.cases],
            "files": dict(self.files),
            "time_limit": limits.time_s,
            "output_limit": limits.output_bytes,
        }
        return json.dumps(body).encode() + b"\n"


@dataclass(frozen=True)
class RunResult:
    """What happened, as seen from outside the container. ``report`` is the driver's last line."""

    status: Status
    report: dict[str, Any] | None
    exit_code: int | None
    oom_killed: bool
    duration_s: float
    stderr: str = ""
    container_id: str = ""


# Called with each test's result as the container reports it (before the run ends).
Progress = Callable[[dict[str, Any]], None]


class Runner(Protocol):
    def run(self, job: Job, limits: Limits, progress: Progress | None = None) -> RunResult: ...


def host_config_kwargs(limits: Limits, runtime: str = "") -> dict[str, Any]:
    """The confinement every sandbox container gets (asserted on a live container by a test).
    ``runtime`` names a Docker runtime (``runsc``: gVisor); empty is the engine's default (runc)."""
    memory = f"{limits.memory_mb}m"
    extra: dict[str, Any] = {"runtime": runtime} if runtime and runtime != "runc" else {}
    return extra | {
        "network_mode": "none",
        "read_only": True,
        "tmpfs": {"/tmp": f"rw,nosuid,nodev,noexec,size={limits.tmpfs_mb}m,mode=1777"},
        "mem_limit": memory,
        "memswap_limit": memory,  # equal: no swap, so the memory limit is a real limit
        "nano_cpus": int(limits.cpus * 1e9),
        "cpuset_cpus": limits.cpuset,
        "pids_limit": limits.pids,
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges"],
        "init": True,
        "ipc_mode": "private",
        "shm_size": "16m",
        "ulimits": [
            Ulimit(name="core", soft=0, hard=0),
            Ulimit(name="fsize", soft=limits.file_size_mb << 20, hard=limits.file_size_mb << 20),
            Ulimit(name="nofile", soft=limits.open_files, hard=limits.open_files),
        ],
        "log_config": LogConfig(type="json-file", config={"max-size": "64k", "max-file": "1"}),
    }


def container_env(extra: Mapping[str, str], limits: Limits) -> dict[str, str]:
    env = dict(BASE_ENV)
    threads = str(max(1, math.ceil(limits.cpus)))
    env["OMP_NUM_THREADS"] = threads
    for key, value in extra.items():
        if key not in EXTRA_ENV_ALLOWED:
            raise ValueError(f"environment variable {key} is not allowed in the sandbox")
        env[key] = value
    return env


_RUNNERS: weakref.WeakSet[DockerRunner] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    """A forked process (Celery's prefork pool) must not share the parent's HTTP connections to the
    Docker Engine, and inherits no live threads: give each runner a fresh client and remover."""
    for runner in list(_RUNNERS):
        runner._client = None
        runner._lock = threading.Lock()
        runner._remover = None


os.register_at_fork(after_in_child=_after_fork_in_child)


class DockerRunner:
    """One cold container per run. ``client`` is created lazily and shared by the process."""

    def __init__(
        self,
        image: str,
        *,
        owner: str = "",
        runtime: str = "",
        client_factory: Callable[[], docker.DockerClient] | None = None,
    ) -> None:
        self.image = image
        self.owner = owner
        self.runtime = runtime
        self._client_factory = client_factory or (lambda: docker.from_env(timeout=30))
        self._client: docker.DockerClient | None = None
        self._lock = threading.Lock()
        self._remover: ThreadPoolExecutor | None = None
        _RUNNERS.add(self)

    @property
    def api(self) -> docker.APIClient:
        with self._lock:
            if self._client is None:
                try:
                    self._client = self._client_factory()
                except docker.errors.DockerException as exc:
                    raise SandboxUnavailable(f"no Docker Engine: {exc}") from exc
            return self._client.api

    def run(self, job: Job, limits: Limits, progress: Progress | None = None) -> RunResult:
        started = time.monotonic()
        command = ["timeout", "-s", "KILL", f"{limits.time_s + SELF_DESTRUCT_GRACE_S:.0f}", *DRIVER]
        container_id = self.create(command, job.env, limits, deadline_s=limits.time_s + REAP_GRACE_S)
        try:
            stream = self.attach(container_id)
            try:
                self.api.start(container_id)
                stream.sock.sendall(job.request(limits))
                status = stream.read(
                    started + limits.time_s + KILL_GRACE_S, output_cap(limits), progress, until=is_report
                )
            finally:
                stream.close()
            return self.finish(container_id, stream, status, started)
        except (docker.errors.APIError, requests.exceptions.RequestException, OSError) as exc:
            raise SandboxUnavailable(f"the Docker Engine failed mid-run: {exc}") from exc
        finally:
            self.remove_later(container_id, delay=SETTLE_S)

    def finish(self, container_id: str, stream: AttachedStream, status: Status, started: float) -> RunResult:
        """The result of a run whose output was read. When the driver's report came, the run is
        accounted for (the driver reads the memory cgroup's OOM count itself); without it, the
        container's own exit state tells what happened."""
        report = parse_report(bytes(stream.out)) if status == "completed" else None
        if status != "completed":
            with contextlib.suppress(docker.errors.APIError, requests.exceptions.RequestException):
                self.api.kill(container_id)
        exit_code: int | None
        if report is not None and "limit" in report:
            exit_code, oom = 0, False
        else:
            exit_code, oom = self._exit_state(container_id)
        return RunResult(
            status=status,
            report=report,
            exit_code=exit_code,
            oom_killed=oom,
            duration_s=time.monotonic() - started,
            stderr=stream.err.decode("utf-8", "replace")[-STDERR_KEPT:],
            container_id=container_id,
        )

    def create(
        self, command: list[str], env: Mapping[str, str], limits: Limits, *, deadline_s: float, pooled: bool = False
    ) -> str:
        """A confined container, created (not started). The reaper may remove it ``deadline_s`` on."""
        labels = {
            LABEL: "1",
            LABEL_DEADLINE: str(int(time.time() + deadline_s)),
            LABEL_OWNER: self.owner,
        }
        if pooled:
            labels[LABEL_POOLED] = "1"
        try:
            api = self.api
            created = api.create_container(
                self.image,
                command=command,
                user=SANDBOX_USER,
                hostname="sandbox",  # Docker sets HOSTNAME; a fixed name tells the code nothing
                stdin_open=True,
                environment=container_env(env, limits),
                labels=labels,
                network_disabled=True,
                working_dir="/tmp",
                host_config=api.create_host_config(**host_config_kwargs(limits, self.runtime)),
            )
        except docker.errors.ImageNotFound as exc:
            raise SandboxUnavailable(f"the sandbox image {self.image} is missing") from exc
        except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
            raise SandboxUnavailable(f"could not create a sandbox container: {exc}") from exc
        return str(created["Id"])

    def attach(self, container_id: str) -> AttachedStream:
        response = self.api.attach_socket(container_id, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1})
        return AttachedStream(response)

    def _exit_state(self, container_id: str) -> tuple[int | None, bool]:
        try:
            code = self.api.wait(container_id, timeout=10).get("StatusCode")
        except requests.exceptions.ReadTimeout:
            self.api.kill(container_id)
            code = self.api.wait(container_id, timeout=10).get("StatusCode")
        state = self.api.inspect_container(container_id)["State"]
        return code, bool(state.get("OOMKilled"))

    def remove_later(self, container_id: str, *, delay: float = 0.0) -> None:
        """Removal is off the critical path: the verdict does not wait for it (nor, with ``delay``,
        compete with it for the CPU)."""
        with self._lock:
            if self._remover is None:
                self._remover = ThreadPoolExecutor(max_workers=2, thread_name_prefix="sandbox-remove")
            remover = self._remover
        remover.submit(self._remove, container_id, delay)

    def _remove(self, container_id: str, delay: float = 0.0) -> None:
        time.sleep(delay)
        with contextlib.suppress(Exception):
            self.api.remove_container(container_id, force=True, v=True)

    def reap(self, *, owner: str | None = None, now: float | None = None) -> list[str]:
        """Remove sandbox containers past their deadline, and all of ``owner``'s (a restarted worker's)."""
        now = time.time() if now is None else now
        removed = []
        for c in self.api.containers(all=True, filters={"label": LABEL}):
            labels = c.get("Labels") or {}
            try:
                deadline = float(labels.get(LABEL_DEADLINE, "0"))
            except ValueError:
                deadline = 0.0
            if deadline < now or (owner is not None and labels.get(LABEL_OWNER) == owner):
                try:
                    self.api.remove_container(c["Id"], force=True, v=True)
                except docker.errors.NotFound:
                    continue
                except docker.errors.APIError as exc:
                    # Another process (a worker's delayed removal, another reaper) got there
                    # first: the Engine answers 409 "removal ... already in progress".
                    if exc.status_code != 409:
                        raise
                removed.append(c["Id"])
        return removed

    def image_present(self) -> bool:
        try:
            self.api.inspect_image(self.image)  # type: ignore[no-untyped-call]
        except docker.errors.ImageNotFound:
            return False
        except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
            raise SandboxUnavailable(f"no Docker Engine: {exc}") from exc
        return True


def output_cap(limits: Limits) -> int:
    """Room for every result at the cap, the kept prints and JSON framing."""
    return limits.output_bytes * 2 + 256_000


class AttachedStream:
    """Docker's multiplexed attach stream (8-byte frame headers) of one container, read with a
    deadline and a byte cap; stdout is kept whole, stderr up to STDERR_KEPT."""

    def __init__(self, response: Any) -> None:
        self.response = response
        self.sock: socket.socket = getattr(response, "_sock", response)
        self.sock.setblocking(False)
        self.buffer = bytearray()
        self.out, self.err = bytearray(), bytearray()
        self.scanned = 0  # stdout up to here was split into lines already
        self.eof = False

    def read(
        self,
        deadline: float,
        cap: int,
        progress: Progress | None = None,
        until: Callable[[dict[str, Any]], bool] | None = None,
    ) -> Status:
        """Until EOF ("completed"), the deadline ("timeout"), the cap ("output_limit"), or, with
        ``until``, a stdout line for which it holds (returns "completed" with ``eof`` False)."""
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return "timeout"
            readable, _, _ = select.select([self.sock], [], [], remaining)
            if not readable:
                continue
            try:
                chunk = self.sock.recv(262_144)
            except BlockingIOError:
                continue
            if not chunk:
                self.eof = True
                self._lines(progress, None)
                return "completed"
            self._frames(chunk)
            if len(self.out) > cap:
                return "output_limit"
            if self._lines(progress, until):
                return "completed"

    def _frames(self, chunk: bytes) -> None:
        self.buffer += chunk
        while len(self.buffer) >= 8:
            size = int.from_bytes(self.buffer[4:8], "big")
            if len(self.buffer) < 8 + size:
                break
            stream, payload = self.buffer[0], bytes(self.buffer[8 : 8 + size])
            del self.buffer[: 8 + size]
            if stream == 2:
                self.err += payload[: max(0, STDERR_KEPT - len(self.err))]
            else:
                self.out += payload

    def _lines(self, progress: Progress | None, until: Callable[[dict[str, Any]], bool] | None) -> bool:
        """Pass each new complete stdout line's result to ``progress``; True once ``until`` holds."""
        if progress is None and until is None:
            return False
        end = self.out.rfind(b"\n") + 1
        if end <= self.scanned:
            return False
        lines, self.scanned = bytes(self.out[self.scanned : end]).splitlines(), end
        for line in lines:
            try:
                item = json.loads(line)
            except ValueError:
                continue
            if not isinstance(item, dict):
                continue
            if until is not None and until(item):
                return True
            if progress is not None and isinstance(item.get("result"), dict):
                try:
                    progress(item["result"])
                except Exception:  # showing progress must never break a run
                    logger.exception("a progress callback failed")
        return False

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()
        with contextlib.suppress(Exception):
            self.response.close()


def is_report(line: dict[str, Any]) -> bool:
    """Is this stdout line the driver's last word (its report), so the run needs no more reading?"""
    return "result" not in line and "ready" not in line and ("limit" in line or "fatal" in line)


def parse_report(stdout: bytes) -> dict[str, Any] | None:
    """The driver's report (its last JSON line), with the results it passed on one by one before
    it (``{"result": ...}`` lines) gathered into ``results``. None if no report came."""
    report = last_json_line(stdout)
    if report is None or "result" in report:
        return None
    if report.get("results") == "streamed":
        results: list[Any] = []
        if report.get("limit") != "output_limit":
            for line in stdout.replace(b"\x00", b"").splitlines():
                try:
                    item = json.loads(line)
                except ValueError:
                    continue
                if isinstance(item, dict) and isinstance(item.get("result"), dict) and len(item) == 1:
                    results.append(item["result"])
        report["results"] = results
    return report


def last_json_line(stdout: bytes) -> dict[str, Any] | None:
    for line in reversed(stdout.replace(b"\x00", b"").splitlines()):
        try:
            value = json.loads(line)
        except ValueError:
            continue
        return value if isinstance(value, dict) else None
    return None
