"""Pre-started, single-use sandbox containers: the wait for Docker and for imports moves off the
learner's path, the isolation stays one fresh container per submission.

A ``PooledRunner`` is a ``Runner``. It keeps, per *profile* — the modules the exercise's code
imports, its extra environment and the container limits (memory, CPU, pids, tmpfs; everything but
the time and output limits, which travel with the job) — up to ``size`` containers that are
already running: created with exactly the confinement of a cold one (``DockerRunner.create``),
attached, started, their learner process already started with the profile's imports done
(``driver.py --warm``), each waiting on stdin for the one job it will ever run. A job takes a
fresh container of its profile, runs (its time limit counts from the hand-over), and the container
is killed and removed off the critical path; a filler thread starts its replacement. A job with no
ready container of its profile runs in a cold container, and the profile is remembered so the
next one finds one ready.

A pooled container is never handed a job unless it is fresh: from this image generation, younger
than its idle lifetime (less a margin; the driver gives up waiting at ``idle_s`` and the container
kills itself soon after), and silent since it said ready (a dead container's stream has ended, so
a Docker Engine restart empties the pool by itself). A platform fault drains the pool; so does a
change of the image the tag names, which the filler checks every ``IMAGE_CHECK_S``.

The pool belongs to one process. A forked child (Celery's prefork pool) starts with an empty one
and never touches its parent's containers; the filler threads start on first use.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import threading
import time
import weakref
from collections import Counter, deque
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

import docker.errors
import requests.exceptions

from apps.sandbox.runner import (
    DRIVER,
    KILL_GRACE_S,
    REAP_GRACE_S,
    SELF_DESTRUCT_GRACE_S,
    SETTLE_S,
    AttachedStream,
    DockerRunner,
    Job,
    Limits,
    Progress,
    RunResult,
    SandboxUnavailable,
    is_report,
    output_cap,
)

logger = logging.getLogger(__name__)

IMAGE_CHECK_S = 10.0  # how often the filler asks which image the tag names
FRESH_MARGIN_S = 5.0  # a container this close to its idle lifetime (or a quarter of it) gets no job
WARM_TIMEOUT_S = 120.0  # a container that has not said ready by then is discarded
FAULT_BACKOFF_S = 2.0  # after the Engine failed to start one, before trying again


@dataclass(frozen=True)
class Profile:
    """What a pooled container is made for: the job must match it exactly."""

    warm: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    limits: Limits  # time_s and output_bytes zeroed: they belong to the job, not the container

    @classmethod
    def of(cls, job: Job, limits: Limits) -> Profile:
        return cls(tuple(job.warm), tuple(sorted(job.env.items())), replace(limits, time_s=0.0, output_bytes=0))

    def __str__(self) -> str:
        env = ",".join(f"{k}" for k, _ in self.env)
        return f"{'+'.join(self.warm) or 'bare'}/{self.limits.memory_mb}MB/cpu{self.limits.cpuset}{'/' + env if env else ''}"


@dataclass
class Warm:
    container_id: str
    stream: AttachedStream
    profile: Profile
    ready_at: float  # monotonic, when it said ready
    generation: int
    started_at: float = field(default_factory=time.monotonic)


_POOLS: weakref.WeakSet[PooledRunner] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    for pool in list(_POOLS):
        pool._forget_after_fork()


os.register_at_fork(after_in_child=_after_fork_in_child)


class PooledRunner:
    """A ``Runner`` that hands each job a pre-started container of its profile (see the module)."""

    def __init__(
        self,
        cold: DockerRunner,
        *,
        size: int = 1,
        idle_s: float = 300.0,
        max_time_s: float = 120.0,
        fillers: int = 2,
        forget_s: float = 900.0,
    ) -> None:
        self.cold = cold
        self.size = size
        self.idle_s = idle_s
        self.max_time_s = max_time_s
        self.fillers = fillers
        self.forget_s = forget_s
        self.stats: Counter[str] = Counter()
        self._init_state()
        _POOLS.add(self)

    def _init_state(self) -> None:
        self._cond = threading.Condition()
        self._ready: dict[Profile, deque[Warm]] = {}
        self._starting: Counter[Profile] = Counter()
        self._wanted: dict[Profile, float] = {}  # profile -> when it was last asked for
        self._generation = 0
        self._image_id = ""
        self._image_checked = 0.0
        self._threads: list[threading.Thread] = []
        self._stopped = False
        self._settle_until = 0.0
        self._pid = os.getpid()

    def _forget_after_fork(self) -> None:
        """In a forked child: the parent's containers and threads are not ours."""
        self._init_state()

    @property
    def image(self) -> str:
        return self.cold.image

    @property
    def runtime(self) -> str:
        return self.cold.runtime

    @property
    def owner(self) -> str:
        return self.cold.owner

    @owner.setter
    def owner(self, value: str) -> None:
        self.cold.owner = value

    # ---- the Runner protocol and what the worker asks of a runner -------------------------------

    def run(self, job: Job, limits: Limits, progress: Progress | None = None) -> RunResult:
        profile = Profile.of(job, limits)
        warm = self.take(profile) if limits.time_s <= self.max_time_s else None
        if warm is None:
            self.stats["cold"] += 1
            try:
                return self.cold.run(job, limits, progress)
            except SandboxUnavailable:
                self.drain("a cold run failed")
                raise
        self.stats["warm"] += 1
        return self.run_in(warm, job, limits, progress)

    def reap(self, *, owner: str | None = None, now: float | None = None) -> list[str]:
        return self.cold.reap(owner=owner, now=now)

    def image_present(self) -> bool:
        return self.cold.image_present()

    # ---- the pool --------------------------------------------------------------------------------

    def want(self, profiles: Iterable[Profile]) -> None:
        """Keep these profiles ready from now on (until ``forget_s`` passes without a job)."""
        now = time.monotonic()
        with self._cond:
            for profile in profiles:
                self._wanted[profile] = now
            self._cond.notify_all()
        self._ensure_fillers()

    def take(self, profile: Profile) -> Warm | None:
        """A fresh ready container of this profile, or None (the profile is then kept ready)."""
        self._ensure_fillers()
        stale: list[Warm] = []
        found = None
        with self._cond:
            self._wanted[profile] = time.monotonic()
            queue = self._ready.get(profile)
            while queue and found is None:
                warm = queue.popleft()
                if self._fresh(warm):
                    found = warm
                else:
                    stale.append(warm)
            if found is not None:
                self._settle_until = time.monotonic() + SETTLE_S  # its replacement starts after the run's verdict
            self._cond.notify_all()
        for warm in stale:
            self.stats["discarded_stale"] += 1
            self._discard(warm)
        return found

    def run_in(self, warm: Warm, job: Job, limits: Limits, progress: Progress | None = None) -> RunResult:
        """Hand ``job`` to a ready container: the time limit counts from now."""
        started = time.monotonic()
        try:
            try:
                warm.stream.sock.sendall(job.request(limits))
            except OSError:
                # It died after the freshness check: nothing of the job ran, so run it cold.
                self.stats["handover_failed"] += 1
                return self.cold.run(job, limits, progress)
            deadline = started + limits.time_s + KILL_GRACE_S
            status = warm.stream.read(deadline, output_cap(limits), progress, until=is_report)
            return self.cold.finish(warm.container_id, warm.stream, status, started)
        except (docker.errors.APIError, requests.exceptions.RequestException, OSError) as exc:
            self.drain("a pooled run failed")
            raise SandboxUnavailable(f"the Docker Engine failed mid-run: {exc}") from exc
        finally:
            warm.stream.close()
            self.cold.remove_later(warm.container_id, delay=SETTLE_S)

    def start_one(self, profile: Profile) -> Warm:
        """Create, start and warm one container of ``profile``; returns once it said ready."""
        limits = profile.limits
        lifetime = self.idle_s + self.max_time_s + SELF_DESTRUCT_GRACE_S
        warm_arg = ",".join(profile.warm)
        command = [
            "timeout",
            "-s",
            "KILL",
            f"{lifetime:.0f}",
            *DRIVER,
            "--warm",
            warm_arg,
            "--idle",
            f"{self.idle_s:.0f}",
        ]
        container_id = self.cold.create(
            command, dict(profile.env), limits, deadline_s=self.idle_s + self.max_time_s + REAP_GRACE_S, pooled=True
        )
        generation = self._generation
        try:
            stream = self.cold.attach(container_id)
            self.cold.api.start(container_id)
            said = stream.read(time.monotonic() + WARM_TIMEOUT_S, 1 << 16, until=lambda line: line.get("ready") is True)
        except (docker.errors.APIError, requests.exceptions.RequestException, OSError) as exc:
            self.cold.remove_later(container_id)
            raise SandboxUnavailable(f"could not start a pooled container: {exc}") from exc
        if said != "completed" or stream.eof:
            stream.close()
            self.cold.remove_later(container_id)
            raise SandboxUnavailable(f"a pooled container did not become ready ({said}): {stream.err[-500:]!r}")
        stream.out.clear()  # the ready line: what follows is the job's
        stream.scanned = 0
        return Warm(container_id, stream, profile, time.monotonic(), generation)

    def drain(self, why: str) -> int:
        """Discard every ready container (a new generation: ones still starting are discarded too)."""
        with self._cond:
            self._generation += 1
            drained = [w for q in self._ready.values() for w in q]
            self._ready.clear()
            self._cond.notify_all()
        for warm in drained:
            self._discard(warm)
        if drained:
            logger.info("sandbox pool drained (%s): %d containers", why, len(drained))
        self.stats["drained"] += len(drained)
        return len(drained)

    def ready_count(self, profile: Profile | None = None) -> int:
        with self._cond:
            if profile is not None:
                return len(self._ready.get(profile, ()))
            return sum(len(q) for q in self._ready.values())

    def wait_ready(self, profile: Profile, count: int = 1, timeout: float = 120.0) -> bool:
        """Until ``count`` containers of ``profile`` are ready (tests and benchmarks)."""
        self.want([profile])
        deadline = time.monotonic() + timeout
        with self._cond:
            while len(self._ready.get(profile, ())) < count:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._cond.wait(min(remaining, 0.5))
        return True

    def stop(self) -> None:
        """Stop refilling and remove what is ready (a worker shutting down)."""
        with self._cond:
            self._stopped = True
            self._cond.notify_all()
        self.drain("stopping")

    # ---- inside ----------------------------------------------------------------------------------

    def _fresh(self, warm: Warm) -> bool:
        if warm.generation != self._generation:
            return False
        if time.monotonic() - warm.ready_at > self.idle_s - min(FRESH_MARGIN_S, self.idle_s / 4):
            return False
        try:
            # It said ready and nothing since: anything to read now (output, or the end of the
            # stream because it died or the Engine restarted) means it is not waiting any more.
            readable, _, _ = select.select([warm.stream.sock], [], [], 0)
        except (OSError, ValueError):
            return False
        return not readable

    def _discard(self, warm: Warm) -> None:
        warm.stream.close()
        self.cold.remove_later(warm.container_id)

    def _ensure_fillers(self) -> None:
        if self.size <= 0:
            return
        with self._cond:
            if self._pid != os.getpid():
                self._init_state()
            self._threads = [t for t in self._threads if t.is_alive()]
            while len(self._threads) < self.fillers and not self._stopped:
                thread = threading.Thread(target=self._fill, name=f"sandbox-pool-{len(self._threads)}", daemon=True)
                self._threads.append(thread)
                thread.start()

    def _next(self) -> Profile | None:
        """The profile most short of ready containers (under the condition's lock)."""
        now = time.monotonic()
        best, short = None, 0
        for profile, asked in list(self._wanted.items()):
            if now - asked > self.forget_s:
                del self._wanted[profile]
                continue
            missing = self.size - len(self._ready.get(profile, ())) - self._starting[profile]
            if missing > short:
                best, short = profile, missing
        return best

    def _tidy(self) -> list[Warm]:
        """Take out ready containers that are no longer fresh (under the condition's lock)."""
        stale = []
        for queue in self._ready.values():
            keep = [w for w in queue if self._fresh(w)]
            stale += [w for w in queue if w not in keep]
            queue.clear()
            queue.extend(keep)
        return stale

    def _check_image(self) -> None:
        if time.monotonic() - self._image_checked < IMAGE_CHECK_S:
            return
        self._image_checked = time.monotonic()
        try:
            image_id = str(self.cold.api.inspect_image(self.image)["Id"])  # type: ignore[no-untyped-call]
        except (docker.errors.DockerException, requests.exceptions.RequestException):
            image_id = ""
        if image_id != self._image_id:
            if self._image_id:
                self.drain(f"the image {self.image} changed")
            self._image_id = image_id

    def _fill(self) -> None:
        while True:
            with contextlib.suppress(Exception):
                self._check_image()
            with self._cond:
                if self._stopped or self._pid != os.getpid():
                    return
                stale = self._tidy()
                profile = self._next()
                if profile is None and not stale:
                    self._cond.wait(timeout=1.0)
                if profile is not None:
                    self._starting[profile] += 1
            for warm in stale:
                self.stats["discarded_stale"] += 1
                self._discard(warm)
            if profile is None:
                continue
            time.sleep(max(0.0, self._settle_until - time.monotonic()))
            try:
                warm = self.start_one(profile)
            except SandboxUnavailable as exc:
                # Not again until a job asks for this profile: no image (or no Engine) must not
                # keep a thread starting containers that nobody wants.
                logger.warning("sandbox pool could not start a container: %s", exc)
                self.stats["start_failed"] += 1
                with self._cond:
                    self._starting[profile] -= 1
                    self._wanted.pop(profile, None)
                time.sleep(FAULT_BACKOFF_S)
                continue
            except Exception:
                logger.exception("sandbox pool filler failed")
                with self._cond:
                    self._starting[profile] -= 1
                time.sleep(FAULT_BACKOFF_S)
                continue
            with self._cond:
                self._starting[profile] -= 1
                keep = warm.generation == self._generation and not self._stopped
                if keep:
                    self._ready.setdefault(profile, deque()).append(warm)
                    self.stats["started"] += 1
                    self._cond.notify_all()
            if not keep:
                self._discard(warm)
