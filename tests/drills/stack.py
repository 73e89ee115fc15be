"""A private mini-stack for the fault drills: PostgreSQL, Redis, gunicorn and sandbox workers of its own.

Every drill breaks something on purpose (kills a worker, restarts Redis or PostgreSQL, removes an
image), so none of it may be the shared test services that other test runs use: the cluster is
initdb'd into a temporary directory, Redis runs without persistence (a restart loses its queue, as
the drill needs), gunicorn serves ``config.wsgi`` with both pointed at them, and the sandbox workers
(``apps/sandbox/tests/worker.py``) are named ``drill-<pid>-<n>`` so that no other run's reaper
touches their containers, and theirs none of ours.

Everything waits with a deadline (``wait_for``) and, when it runs out, fails saying what was stuck.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import docker
import httpx
import psycopg
import redis
from django.conf import settings

from apps.sandbox.runner import LABEL, LABEL_OWNER
from apps.sandbox.tests.worker import ROOT, WorkerProcess, spawn_worker

T = TypeVar("T")
PASSWORD = "drill-pass-7Hq2!w"  # the drill learners' password: a private, throwaway database
WORKER_TIME_LIMIT_S = "5"  # as the sandbox tests' worker: a run that hangs ends sooner
RUN_ID = f"drill-{os.getpid()}"
TIMING_SETTINGS = ("SANDBOX_LEASE_S", "SANDBOX_REPUBLISH_AFTER_S", "SANDBOX_HEARTBEAT_S", "SANDBOX_READY_TTL_S")


class Stuck(AssertionError):
    """A deadline ran out: the message says what was awaited and what it was stuck at."""


def wait_for(what: str, check: Callable[[], T | None], timeout: float, *, every: float = 0.1,
             describe: Callable[[], str] | None = None) -> T:  # fmt: skip
    """Poll ``check`` until it returns something truthy; fail after ``timeout`` seconds, saying what was stuck."""
    deadline = time.monotonic() + timeout
    last_error = ""
    while True:
        try:
            value = check()
        except Exception as exc:  # noqa: BLE001 - a server that is still starting raises; keep polling
            value, last_error = None, f"{type(exc).__name__}: {exc}"
        if value:
            return value
        if time.monotonic() >= deadline:
            state = describe() if describe is not None else ""
            raise Stuck(f"{what}: not within {timeout:.0f} s. {last_error}\n{state}".rstrip())
        time.sleep(every)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def tail(path: Path, chars: int = 3000) -> str:
    try:
        return path.read_text(errors="replace")[-chars:]
    except FileNotFoundError:
        return f"({path} does not exist)"


# ---- PostgreSQL ----------------------------------------------------------------------------------


def pg_bindir() -> Path:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=lambda p: int(p.parent.name))
    assert found, "no PostgreSQL binaries under /usr/lib/postgresql: run `bash scripts/services.sh start`"
    return found[-1]


@dataclass
class Postgres:
    """A throwaway cluster, as scripts/services.sh starts the shared one (Debian's binaries, trust on loopback)."""

    root: Path
    port: int = field(default_factory=free_port)
    bindir: Path = field(default_factory=pg_bindir)

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def log(self) -> Path:
        return self.root / "server.log"

    def _owner(self, *args: str | Path, timeout: float = 120) -> None:
        """As the cluster's owner: initdb and postgres refuse to run as root."""
        cmd = [str(a) for a in args]
        if os.geteuid() == 0:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)  # noqa: S603
        assert done.returncode == 0, f"{' '.join(cmd)} failed:\n{done.stdout}\n{done.stderr}\n{tail(self.log)}"

    def init(self) -> None:
        self.data.mkdir(parents=True)
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres", "postgres")
            shutil.chown(self.data, "postgres", "postgres")
        self.data.chmod(0o700)
        self._owner(self.bindir / "initdb", "-D", self.data, "-U", "postgres", "--auth-local=trust",
                    "--auth-host=trust", "--encoding=UTF8", "--locale=C.UTF-8")  # fmt: skip
        self.start()
        with psycopg.connect(self.url("postgres", user="postgres"), autocommit=True) as conn:
            conn.execute("CREATE ROLE mlsys LOGIN SUPERUSER")
            conn.execute("CREATE DATABASE drill OWNER mlsys")

    def start(self) -> None:
        # fsync off and friends: the cluster holds nothing worth keeping across a crash of the machine
        # (a restart of the server itself still goes through its WAL).
        self._owner(self.bindir / "pg_ctl", "-D", self.data, "-l", self.log, "-w", "-t", "60", "start", "-o",
                    f"-c listen_addresses=127.0.0.1 -p {self.port} -c unix_socket_directories={self.data} "
                    "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=100")  # fmt: skip

    def stop(self, mode: str = "fast") -> None:
        self._owner(self.bindir / "pg_ctl", "-D", self.data, "-m", mode, "-w", "-t", "60", "stop")

    def destroy(self) -> None:
        with contextlib.suppress(AssertionError, subprocess.TimeoutExpired):
            self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)

    def url(self, db: str = "drill", user: str = "mlsys") -> str:
        return f"postgres://{user}@127.0.0.1:{self.port}/{db}"

    def rows(self, query: str, *params: Any) -> list[tuple[Any, ...]]:
        with psycopg.connect(self.url(), autocommit=True, connect_timeout=5) as conn:
            return list(conn.execute(query, params).fetchall())

    def up(self) -> bool:
        with contextlib.suppress(psycopg.Error):
            return self.rows("SELECT 1") == [(1,)]
        return False


# ---- Redis ---------------------------------------------------------------------------------------


@dataclass
class Redis:
    """No persistence: a restart starts empty, so whatever was queued in it is gone (the real risk)."""

    root: Path
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None

    @property
    def log(self) -> Path:
        return self.root / "redis.log"

    def start(self) -> None:
        server = shutil.which("redis-server")
        assert server, "redis-server is missing: run `bash scripts/services.sh start`"
        self.root.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(  # noqa: S603
            [server, "--bind", "127.0.0.1", "--port", str(self.port), "--save", "", "--appendonly", "no",
             "--dir", str(self.root), "--logfile", str(self.log)],
            stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        wait_for("private redis answering PING", self.up, 15, describe=lambda: tail(self.log))

    def stop(self) -> None:
        """SIGTERM: with ``--save ''`` nothing is written, so the next start is empty."""
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=30)
            self.proc = None

    def client(self, db: int) -> redis.Redis:
        return redis.Redis(host="127.0.0.1", port=self.port, db=db, socket_timeout=3, socket_connect_timeout=3)

    def up(self) -> bool:
        with contextlib.suppress(redis.RedisError), self.client(0) as r:
            return bool(r.ping())
        return False

    def url(self, db: int) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"


# ---- the web and the workers ---------------------------------------------------------------------


@dataclass
class Stack:
    root: Path
    pg: Postgres
    redis: Redis
    web_port: int = field(default_factory=free_port)
    web: subprocess.Popen[bytes] | None = None
    workers: list[tuple[str, WorkerProcess]] = field(default_factory=list)
    timings: dict[str, Any] = field(default_factory=dict)  # figures for the report (var/drills.json)
    _serial: Iterator[int] = field(default_factory=lambda: iter(range(1, 10_000)))

    CACHE_DB = 0
    BROKER_DB = 1

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.web_port}"

    @property
    def web_log(self) -> Path:
        return self.root / "gunicorn.log"

    def env(self, **extra: str) -> dict[str, str]:
        """What every process of the stack reads: the private services, test settings, the shared image."""
        named = ROOT / "var" / "sandbox-image"
        assert named.exists(), f"{named} is missing: run `make sandbox-image`"
        image = named.read_text().strip()
        # Not PYTEST_XDIST_WORKER either: under it the test settings move Redis to a worker's own databases.
        drop = ("DATABASE_", "REDIS_", "CELERY_", "SANDBOX_", "PYTEST_XDIST_")
        keep = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
        return {
            **keep,
            "DJANGO_SETTINGS_MODULE": "config.settings.test",
            "DATABASE_URL": self.pg.url(),
            "REDIS_URL": self.redis.url(self.CACHE_DB),
            "CELERY_BROKER_URL": self.redis.url(self.BROKER_DB),
            "SANDBOX_IMAGE": image,
            "SANDBOX_TIME_LIMIT_S": WORKER_TIME_LIMIT_S,
            # The recovery settings the drills' deadlines are computed from: this process's, stated.
            **{k: str(getattr(settings, k)) for k in TIMING_SETTINGS},
            "PYTHONUNBUFFERED": "1",
            **extra,
        }

    def manage(self, *args: str, timeout: float = 300) -> str:
        done = subprocess.run(  # noqa: S603 - our own manage.py
            [sys.executable, "manage.py", *args], cwd=ROOT, env=self.env(), capture_output=True, text=True,
            timeout=timeout, check=False,
        )  # fmt: skip
        assert done.returncode == 0, f"manage.py {' '.join(args)} failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
        return done.stdout

    def celery(self, *args: str) -> str:
        """The celery command on the private broker (remote control of this stack's workers)."""
        done = subprocess.run(  # noqa: S603 - our own app
            [sys.executable, "-m", "celery", "-A", "config", *args], cwd=ROOT, env=self.env(), capture_output=True,
            text=True, timeout=60, check=False,
        )  # fmt: skip
        assert done.returncode == 0 and "OK" in done.stdout, f"celery {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
        return done.stdout

    def start_web(self) -> None:
        self.web = subprocess.Popen(  # noqa: S603 - our own server
            [sys.executable, "-m", "gunicorn", "config.wsgi:application", "--workers", "2",
             "--bind", f"127.0.0.1:{self.web_port}", "--timeout", "60", "--graceful-timeout", "5",
             "--error-logfile", "-", "--access-logfile", "-"],
            cwd=ROOT, env=self.env(), stdout=self.web_log.open("ab"), stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        wait_for(
            "gunicorn answering /api/v1/me/",
            lambda: httpx.get(f"{self.base_url}/api/v1/me/", timeout=5).status_code == 401,
            60,
            describe=lambda: tail(self.web_log),
        )

    def stop_web(self) -> None:
        if self.web is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.web.pid, signal.SIGTERM)
            try:
                self.web.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.web.pid, signal.SIGKILL)
                self.web.wait()
            self.web = None

    # -- sandbox workers

    def ready_file(self, name: str) -> Path:
        return self.root / f"{name}.ready"

    def spawn_worker(self, **extra: str) -> tuple[str, WorkerProcess]:
        """A sandbox worker on the private stack, started (not yet ready): ``drill-<pid>-<n>``."""
        name = f"{RUN_ID}-{next(self._serial)}"
        env = self.env(SANDBOX_READY_FILE=str(self.ready_file(name)), **extra)
        worker = spawn_worker(env, self.root / f"{name}.log", name)
        self.workers.append((name, worker))
        return name, worker

    def wait_ready(self, name: str, worker: WorkerProcess, timeout: float = 120) -> None:
        def ready() -> bool:
            assert worker.alive(), f"worker {name} exited:\n{worker.log_text()[-3000:]}"
            return self.ready_file(name).exists()

        wait_for(f"worker {name} ready (its SANDBOX_READY_FILE)", ready, timeout,
                 describe=lambda: worker.log_text()[-3000:])  # fmt: skip

    def start_workers(self, count: int = 1, **extra: str) -> list[tuple[str, WorkerProcess]]:
        """``count`` workers (started together), once each says it is ready (its SANDBOX_READY_FILE exists)."""
        started = time.monotonic()
        spawned = [self.spawn_worker(**extra) for _ in range(count)]
        for name, worker in spawned:
            self.wait_ready(name, worker)
        self.timings.setdefault("worker_start_s", round(time.monotonic() - started, 1))
        return spawned

    def logs(self) -> str:
        """The tail of every log of the stack, for a deadline's message."""
        parts = [f"--- {name}\n{worker.log_text()[-1500:]}" for name, worker in self.workers]
        return "\n".join([*parts, f"--- gunicorn\n{tail(self.web_log, 1500)}"])

    def stop_workers(self) -> None:
        for _name, worker in self.workers:
            if worker.alive():
                worker.proc.terminate()
                try:
                    worker.proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    worker.kill_hard()
        self.workers.clear()
        self.reap_containers()

    def containers(self, name: str) -> list[str]:
        """Sandbox containers the worker ``name`` started (their owner label is its hostname)."""
        engine = docker.from_env()
        try:
            found = engine.containers.list(all=True, filters={"label": LABEL}, ignore_removed=True)
            return [str(c.id) for c in found if c.labels.get(LABEL_OWNER, "").startswith(f"{name}@")]
        finally:
            engine.close()

    def reap_containers(self) -> None:
        """Remove this run's containers (a killed worker's orphans); never another run's."""
        engine = docker.from_env()
        try:
            for c in engine.containers.list(all=True, filters={"label": LABEL}, ignore_removed=True):
                if c.labels.get(LABEL_OWNER, "").startswith(f"{RUN_ID}-"):
                    with contextlib.suppress(docker.errors.NotFound):
                        c.remove(force=True, v=True)
        finally:
            engine.close()

    def down(self) -> None:
        self.stop_workers()
        self.stop_web()
        self.redis.stop()
        self.pg.destroy()
        shutil.rmtree(self.root, ignore_errors=True)


def build_stack() -> Stack:
    """PostgreSQL migrated and synced, Redis, gunicorn: timed, for the report."""
    root = Path(tempfile.mkdtemp(prefix=f"{RUN_ID}-"))
    root.chmod(0o755)  # the cluster's owner (postgres) must reach its directory
    stack = Stack(root, Postgres(root / "pg"), Redis(root / "redis"))
    try:
        started = time.monotonic()
        stack.pg.init()
        stack.redis.start()
        stack.timings["services_s"] = round(time.monotonic() - started, 1)
        started = time.monotonic()
        stack.manage("migrate", "--noinput", "-v", "0")
        stack.timings["migrate_s"] = round(time.monotonic() - started, 1)
        started = time.monotonic()
        stack.manage("sync_content", "-v", "0")
        stack.timings["sync_content_s"] = round(time.monotonic() - started, 1)
        started = time.monotonic()
        stack.start_web()
        stack.timings["web_s"] = round(time.monotonic() - started, 1)
    except BaseException:
        stack.down()
        raise
    return stack
