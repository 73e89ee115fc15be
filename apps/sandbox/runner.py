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

A warm pool of pre-started containers can implement ``Runner`` later without the callers changing.
"""

from __future__ import annotations

import contextlib
import json
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

LABEL = "mlsys.sandbox"
LABEL_DEADLINE = "mlsys.sandbox.deadline"
LABEL_OWNER = "mlsys.sandbox.owner"
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


class Runner(Protocol):
    def run(self, job: Job, limits: Limits) -> RunResult: ...


def host_config_kwargs(limits: Limits) -> dict[str, Any]:
    """The confinement every sandbox container gets (asserted on a live container by a test)."""
    memory = f"{limits.memory_mb}m"
    return {
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


def container_env(job: Job, limits: Limits) -> dict[str, str]:
    env = dict(BASE_ENV)
    threads = str(max(1, math.ceil(limits.cpus)))
    env["OMP_NUM_THREADS"] = threads
    for key, value in job.env.items():
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
        self, image: str, *, owner: str = "", client_factory: Callable[[], docker.DockerClient] | None = None
    ) -> None:
        self.image = image
        self.owner = owner
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

    def run(self, job: Job, limits: Limits) -> RunResult:
        started = time.monotonic()
        container_id = self._create(job, limits)
        try:
            status, stdout, stderr = self._attach_and_run(container_id, job.request(limits), limits, started)
            if status != "completed":
                with contextlib.suppress(docker.errors.APIError, requests.exceptions.RequestException):
                    self.api.kill(container_id)
            exit_code, oom = self._exit_state(container_id)
        except (docker.errors.APIError, requests.exceptions.RequestException, OSError) as exc:
            raise SandboxUnavailable(f"the Docker Engine failed mid-run: {exc}") from exc
        finally:
            self._remove_later(container_id)
        return RunResult(
            status=status,
            report=last_json_line(stdout) if status == "completed" else None,
            exit_code=exit_code,
            oom_killed=oom,
            duration_s=time.monotonic() - started,
            stderr=stderr.decode("utf-8", "replace")[-STDERR_KEPT:],
            container_id=container_id,
        )

    def _create(self, job: Job, limits: Limits) -> str:
        labels = {
            LABEL: "1",
            LABEL_DEADLINE: str(int(time.time() + limits.time_s + REAP_GRACE_S)),
            LABEL_OWNER: self.owner,
        }
        command = ["timeout", "-s", "KILL", f"{limits.time_s + SELF_DESTRUCT_GRACE_S:.0f}", *DRIVER]
        try:
            api = self.api
            created = api.create_container(
                self.image,
                command=command,
                user=SANDBOX_USER,
                hostname="sandbox",  # Docker sets HOSTNAME; a fixed name tells the code nothing
                stdin_open=True,
                environment=container_env(job, limits),
                labels=labels,
                network_disabled=True,
                working_dir="/tmp",
                host_config=api.create_host_config(**host_config_kwargs(limits)),
            )
        except docker.errors.ImageNotFound as exc:
            raise SandboxUnavailable(f"the sandbox image {self.image} is missing") from exc
        except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
            raise SandboxUnavailable(f"could not create a sandbox container: {exc}") from exc
        return str(created["Id"])

    def _attach_and_run(
        self, container_id: str, request: bytes, limits: Limits, started: float
    ) -> tuple[Status, bytes, bytes]:
        response = self.api.attach_socket(container_id, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1})
        sock: socket.socket = getattr(response, "_sock", response)
        try:
            self.api.start(container_id)
            sock.sendall(request)
            deadline = started + limits.time_s + KILL_GRACE_S
            # Room for every result at the cap, the kept prints and JSON framing.
            cap = limits.output_bytes + 256_000
            return _read_frames(sock, deadline, cap)
        finally:
            with contextlib.suppress(OSError):
                sock.close()
            with contextlib.suppress(Exception):
                response.close()

    def _exit_state(self, container_id: str) -> tuple[int | None, bool]:
        try:
            code = self.api.wait(container_id, timeout=10).get("StatusCode")
        except requests.exceptions.ReadTimeout:
            self.api.kill(container_id)
            code = self.api.wait(container_id, timeout=10).get("StatusCode")
        state = self.api.inspect_container(container_id)["State"]
        return code, bool(state.get("OOMKilled"))

    def _remove_later(self, container_id: str) -> None:
        """Removal is off the critical path: the verdict does not wait for it."""
        with self._lock:
            if self._remover is None:
                self._remover = ThreadPoolExecutor(max_workers=2, thread_name_prefix="sandbox-remove")
            remover = self._remover
        remover.submit(self._remove, container_id)

    def _remove(self, container_id: str) -> None:
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
                with contextlib.suppress(docker.errors.NotFound):
                    self.api.remove_container(c["Id"], force=True, v=True)
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


def _read_frames(sock: socket.socket, deadline: float, cap: int) -> tuple[Status, bytes, bytes]:
    """Read Docker's multiplexed attach stream (8-byte headers) until EOF, the deadline or the cap."""
    buffer = bytearray()
    out, err = bytearray(), bytearray()
    sock.setblocking(False)
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return "timeout", bytes(out), bytes(err)
        readable, _, _ = select.select([sock], [], [], remaining)
        if not readable:
            continue
        try:
            chunk = sock.recv(262_144)
        except BlockingIOError:
            continue
        if not chunk:
            break
        buffer += chunk
        while len(buffer) >= 8:
            size = int.from_bytes(buffer[4:8], "big")
            if len(buffer) < 8 + size:
                break
            stream, payload = buffer[0], bytes(buffer[8 : 8 + size])
            del buffer[: 8 + size]
            if stream == 2:
                err += payload[: max(0, STDERR_KEPT - len(err))]
            else:
                out += payload
        if len(out) > cap:
            return "output_limit", bytes(out[:cap]), bytes(err)
    return "completed", bytes(out), bytes(err)


def last_json_line(stdout: bytes) -> dict[str, Any] | None:
    for line in reversed(stdout.replace(b"\x00", b"").splitlines()):
        try:
            value = json.loads(line)
        except ValueError:
            continue
        return value if isinstance(value, dict) else None
    return None
