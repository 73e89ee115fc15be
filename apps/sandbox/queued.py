"""Running a job on a sandbox worker, over the sandbox queue: the web process's way to the sandbox.

A web process behind a broker cannot start containers (in production it has no Docker socket)
and must not run code itself. ``QueuedRunner`` is a ``Runner`` for it: each job goes over the
``sandbox`` queue as one message (the ``sandbox.run_job`` task: the job's files, inputs and
limits), a ready sandbox worker runs it in a fresh container with its own runner (the same
``DockerRunner`` or pool that grades learners' code, after the same self-test), and puts the
``RunResult`` in the cache (Redis) under a key only this call knows, where the caller waits for it.
No worker, no broker, no answer in time: ``SandboxUnavailable``, never a verdict on the code.

Used for authors' code (the admin's checks on save, ``sync_content`` where this process has no
Docker); learners' attempts go through their own task (``learning.grade_code_attempt``), which
records verdicts in the database.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import time
import uuid
from typing import Any

from celery import current_app
from django.conf import settings
from django.core.cache import cache
from redis.exceptions import RedisError

from apps.core.queues import Queue
from apps.sandbox import health, selectors
from apps.sandbox.cache import CachedRunner, default_directory
from apps.sandbox.runner import Job, Limits, Progress, Runner, RunResult, SandboxUnavailable

logger = logging.getLogger(__name__)

RUN_TASK = "sandbox.run_job"
# Past the run's own time limit: the wait for a free worker slot and a container's start.
QUEUE_GRACE_S = 30.0
REPLY_TTL_S = 600
POLL_S = 0.05


def reply_key(token: str) -> str:
    return f"{settings.SANDBOX_READY_NAMESPACE}:run:{token}"


def job_message(job: Job, limits: Limits) -> dict[str, Any]:
    """A job and its limits as the task's JSON argument."""
    return {
        "entry": job.entry,
        "cases": job.cases,
        "files": dict(job.files),
        "env": dict(job.env),
        "warm": list(job.warm),
        "limits": dataclasses.asdict(limits),
    }


def job_from_message(message: dict[str, Any], *, slot: int = 0) -> tuple[Job, Limits]:
    """The job, with the limits clamped to this site's maxima and pinned to this worker's CPU."""
    job = Job(
        str(message["entry"]),
        list(message["cases"]),
        {str(k): str(v) for k, v in message["files"].items()},
        env={str(k): str(v) for k, v in message.get("env", {}).items()},
        warm=tuple(str(m) for m in message.get("warm", ())),
    )
    given = Limits(**message["limits"])
    limits = dataclasses.replace(
        given,
        time_s=min(given.time_s, settings.SANDBOX_MAX_TIME_LIMIT_S),
        memory_mb=min(given.memory_mb, settings.SANDBOX_MAX_MEMORY_MB),
        cpuset=str(slot % (os.cpu_count() or 1)),
    )
    return job, limits


def job_serve(*, message: dict[str, Any], reply: str, slot: int = 0) -> str:
    """On a sandbox worker: run the job, put the result (or the fault) where the caller waits."""
    if not health.ready():
        answer: dict[str, Any] = {"fault": "the sandbox worker that took the job is not ready"}
    else:
        try:
            job, limits = job_from_message(message, slot=slot)
            result = selectors.runner().run(job, limits)
        except SandboxUnavailable as exc:
            answer = {"fault": str(exc)}
        except (KeyError, TypeError, ValueError) as exc:
            answer = {"fault": f"a malformed job: {exc}"}
        else:
            answer = {"result": dataclasses.asdict(result)}
    cache.set(reply_key(reply), answer, timeout=REPLY_TTL_S)
    return "fault" if "fault" in answer else "ran"


class QueuedRunner:
    """A ``Runner`` whose jobs run on a ready sandbox worker (see the module)."""

    def run(self, job: Job, limits: Limits, progress: Progress | None = None) -> RunResult:
        token = uuid.uuid4().hex
        wait_s = limits.time_s + QUEUE_GRACE_S
        try:
            # By the task's name and with its queue: the web process publishes, a sandbox worker runs.
            current_app.send_task(
                RUN_TASK, args=[job_message(job, limits), token], queue=Queue.SANDBOX.value, expires=wait_s
            )
        except Exception as exc:  # any broker failure means no sandbox for this run
            raise SandboxUnavailable(f"could not reach the sandbox queue: {exc}") from exc
        deadline = time.monotonic() + wait_s
        key = reply_key(token)
        while time.monotonic() < deadline:
            try:
                answer = cache.get(key)
            except RedisError as exc:
                raise SandboxUnavailable(f"lost the sandbox's answer: {exc}") from exc
            if answer is not None:
                cache.delete(key)
                if "fault" in answer:
                    raise SandboxUnavailable(str(answer["fault"]))
                return RunResult(**answer["result"])
            time.sleep(POLL_S)
        raise SandboxUnavailable(f"no sandbox worker answered within {wait_s:.0f} s")


def content_runner() -> Runner:
    """Where this process runs code it did not write, as it runs learners' code: without a broker
    (the embedded default, ``make run``) in sandbox containers it starts itself (``selectors.runner``,
    as ``apps/learning/inprocess.py`` does for attempts); with one, on a ready sandbox worker over
    the queue. ``selectors.available()`` says whether that way is open now."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return selectors.runner()
    return QueuedRunner()


def command_runner(owner: str) -> tuple[Runner | None, str]:
    """The sandbox for a management command (``sync_content``): this process's own Docker Engine when
    it has the image (a developer's machine, ``make run``, the tests), through check_content's cache of
    settled runs (keyed by the image's id, so the same reference solution in the same image runs
    once per machine), else a ready sandbox worker over the queue (the web container, which has no
    Docker socket). ``(None, why)`` when neither is there."""
    local = selectors.runner(owner)
    try:
        if local.image_present():
            return CachedRunner(local, default_directory()), ""
        why = f"the sandbox image {local.image} is missing (build it: make sandbox-image)"
    except SandboxUnavailable as exc:
        why = f"{exc}"
    if not settings.CELERY_TASK_ALWAYS_EAGER and selectors.available():
        return QueuedRunner(), ""
    return None, why
