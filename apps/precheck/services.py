"""Every write of a precheck: start one (web), run one (a sandbox worker, or a thread of the
embedded default), close one.

A precheck runs the learner's code on the exercise's *examples* and its cheap structural checks
(probe cases marked ``precheck``), in the sandbox, through the same queue and workers as grading.
Hidden tests never run and are never sent to the container. It writes no database row: the
record lives in the cache for an hour (``records.KEEP_S``), it counts no attempt and moves no
mastery, streak, leaderboard or review (this app imports neither ``apps.progress`` nor the
services that write attempts: import-linter checks it).

Bounded: one pending precheck per learner (``records.active_key``) and a rate of its own
(``THROTTLE_PRECHECK``, the ``precheck`` scope, counted on the same key by the API's throttle and
by the page's form). A sandbox fault, or a precheck no worker finished in time, is *not run*:
never a pass.
"""

from __future__ import annotations

import logging
import math
import time
import uuid
from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.utils import timezone
from redis.exceptions import RedisError
from rest_framework import status

from apps.accounts.models import User
from apps.core.exceptions import ApplicationError, ServiceUnavailable
from apps.core.throttling import count_in_window
from apps.exercises.content import cache as content_cache
from apps.exercises.content.schema import CodeSpec
from apps.exercises.jobs import code_cases, code_job, limits_for
from apps.exercises.models import Exercise, ExerciseVersion
from apps.exercises.source import source_validate
from apps.precheck import dispatch
from apps.precheck.records import (
    KEEP_S,
    QUEUE_GRACE_S,
    UNAVAILABLE_MESSAGE,
    Precheck,
    PrecheckStatus,
    TestKind,
    active_key,
    claim_key,
    counts,
    describe,
    record_key,
)
from apps.sandbox import selectors as sandbox_selectors
from apps.sandbox.runner import Runner, SandboxUnavailable
from apps.sandbox.verdict import Case, CaseResult, clean, decide, judge

logger = logging.getLogger(__name__)

THROTTLE_SCOPE = "precheck"
NOT_RUN_MESSAGE = (
    "The precheck could not run: the sandbox is unavailable right now. Nothing was counted; try again in a moment."
)
_WRITE_EVERY_S = 0.1


# ---- what a precheck runs ---------------------------------------------------------------------


def precheck_spec(code: CodeSpec) -> CodeSpec:
    """The exercise's code spec with only what a precheck runs: its examples and its precheck probes.

    Hidden tests are not in it, so they are neither sent to the container nor judged."""
    return code.model_copy(update={"cases": [c for c in code.cases if c.example or c.precheck]})


def exercise_code(exercise: Exercise) -> tuple[ExerciseVersion, CodeSpec]:
    """The exercise's current version and code spec; a 400 for an exercise that takes no code."""
    version = exercise.current_version
    code = content_cache.resolved(version).spec.code if version is not None else None
    if version is None or code is None:
        raise ApplicationError(
            "Only Build and Debug exercises take code, so only they can be prechecked.", code="not_code"
        )
    return version, code


# ---- start (web) ------------------------------------------------------------------------------


def precheck_admit(*, user: User, now: float | None = None) -> None:
    """Count a precheck from the page's form on the key the API's ``precheck`` throttle counts
    (DRF's ``throttle_<scope>_<user id>``, per fixed window): one budget, whichever way it came."""
    limit, period = _rate()
    now = time.time() if now is None else now
    window = int(now // period)
    count = count_in_window(f"throttle_{THROTTLE_SCOPE}_{user.pk}:{window}", period)
    if count > limit:
        seconds = max(1, math.ceil((window + 1) * period - now))
        raise ApplicationError(
            f"Too many prechecks: at most {limit} per {_period_words(period)}. Try again in {seconds} seconds.",
            code="throttled",
            status_code=status.HTTP_429_TOO_MANY_REQUESTS,
            details={"retry_after": seconds},
        )


def _rate() -> tuple[int, int]:
    number, period = str(settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"][THROTTLE_SCOPE]).split("/")
    return int(number), {"s": 1, "m": 60, "h": 3600, "d": 86400}[period[0]]


def _period_words(period: int) -> str:
    return {1: "second", 60: "minute", 3600: "hour", 86400: "day"}.get(period, f"{period} seconds")


def precheck_start(*, user: User, exercise: Exercise, payload: dict[str, Any]) -> Precheck:
    """Queue a precheck of the learner's code. Bad code, nothing to precheck, one already pending
    or no sandbox: an error, and nothing runs."""
    version, code = exercise_code(exercise)
    examples, checks = counts(code.cases)
    if not examples and not checks:
        raise ApplicationError(
            "This exercise has no examples or structural checks to precheck: submit your code to run its tests.",
            code="nothing_to_precheck",
        )
    source = source_validate(payload)
    if not sandbox_selectors.available():
        raise ServiceUnavailable(
            "Code runs in a sandbox that is not running on this server right now. Nothing ran.",
            code="sandbox_unavailable",
        )
    limits = limits_for(code)
    now = timezone.now()
    precheck = Precheck(
        id=str(uuid.uuid4()),
        user_id=user.pk,
        exercise_id=exercise.pk,
        version_id=version.pk,
        workbook=exercise.workbook.slug,
        number=exercise.number,
        code=source,
        created_at=now,
        deadline=time.time() + limits.time_s + QUEUE_GRACE_S,
        tests_total=examples + checks,
    )
    hold_s = math.ceil(limits.time_s + QUEUE_GRACE_S)
    try:
        if not cache.add(active_key(user.pk), precheck.id, timeout=hold_s):
            pending = cache.get(active_key(user.pk))
            raise ApplicationError(
                "A precheck of yours is still running: wait for its result, then precheck again.",
                code="precheck_running",
                status_code=status.HTTP_409_CONFLICT,
                details={"id": str(pending or "")},
            )
        cache.set(record_key(precheck.id), precheck.as_record(), timeout=KEEP_S)
    except RedisError as exc:
        raise ServiceUnavailable(UNAVAILABLE_MESSAGE, code="precheck_unavailable") from exc
    if not dispatch.send(precheck.id, expires_s=hold_s):
        _forget(precheck)
        raise ServiceUnavailable(
            "Code runs in a sandbox that could not be reached just now. Nothing ran.", code="sandbox_unavailable"
        )
    logger.info("precheck queued", extra={"user_id": user.pk, "exercise_id": exercise.pk, "precheck_id": precheck.id})
    return precheck


def _forget(precheck: Precheck) -> None:
    try:
        cache.delete_many([record_key(precheck.id), active_key(precheck.user_id)])
    except RedisError:
        logger.warning("could not remove a precheck that was never sent", extra={"precheck_id": precheck.id})


# ---- run (a sandbox worker) -------------------------------------------------------------------


def _load(precheck_id: str) -> Precheck | None:
    return Precheck.from_record(cache.get(record_key(precheck_id)))


def _save(precheck: Precheck) -> None:
    cache.set(record_key(precheck.id), precheck.as_record(), timeout=KEEP_S)


def precheck_run(*, precheck_id: str, runner: Runner, slot: int = 0) -> str:
    """Claim a queued precheck, run it, record its result. Returns what happened, for the logs.

    The claim is an add on the cache (one winner), so a message delivered twice runs once."""
    precheck = _load(precheck_id)
    if precheck is None:
        return "gone"
    if precheck.status != PrecheckStatus.QUEUED or not cache.add(claim_key(precheck_id), 1, timeout=KEEP_S):
        return "skipped"
    if time.time() > precheck.deadline:
        return precheck_close(precheck, status=PrecheckStatus.NOT_RUN, message=NOT_RUN_MESSAGE, reason="too late")
    version = ExerciseVersion.objects.filter(pk=precheck.version_id).first()
    code = content_cache.resolved(version).spec.code if version is not None else None
    if code is None:
        return precheck_close(precheck, status=PrecheckStatus.NOT_RUN, message=NOT_RUN_MESSAGE, reason="no code")
    subset = precheck_spec(code)
    cases = code_cases(subset)
    limits = limits_for(code, slot=slot)
    precheck.status, precheck.started_at = PrecheckStatus.RUNNING, timezone.now()
    precheck.time_limit_s, precheck.tests_total = limits.time_s, len(cases)
    _save(precheck)
    try:
        result = runner.run(code_job(subset, precheck.code), limits, progress=_Live(precheck, cases, code.entry))
    except SandboxUnavailable as exc:
        return precheck_close(precheck, status=PrecheckStatus.NOT_RUN, message=NOT_RUN_MESSAGE, reason=str(exc))
    verdict = judge(result, cases, code.entry)
    # Failing first (otherwise in the exercise's order), as a submission's results are.
    tests = sorted((precheck_test(case, r) for case, r in _paired(cases, verdict.cases)), key=lambda t: t["passed"])
    examples, checks = counts(cases)
    what = describe(examples, checks)
    failed = sum(not t["passed"] for t in tests)
    if verdict.outcome == "passed":
        message = f"All {len(tests)} passed ({what}). Not graded: submitting runs the hidden tests too."
    elif verdict.outcome == "failed":
        message = f"{failed} of {len(tests)} failed ({what})."
    else:
        message = verdict.message
    return precheck_close(
        precheck,
        status=PrecheckStatus.CHECKED,
        outcome=verdict.outcome,
        message=message,
        tests=tests,
        traceback=verdict.traceback,
        prints=verdict.prints,
    )


def precheck_close(
    precheck: Precheck,
    *,
    status: PrecheckStatus,
    message: str,
    outcome: str = "",
    tests: list[dict[str, Any]] | None = None,
    traceback: str = "",
    prints: str = "",
    reason: str = "",
) -> str:
    """Record the result (checked, or not run) and free the learner for the next precheck."""
    precheck.status, precheck.outcome, precheck.message = status, outcome, clean(message, 2000)
    precheck.tests = tests if tests is not None else precheck.tests
    precheck.traceback, precheck.prints = traceback, prints
    precheck.finished_at = timezone.now()
    _save(precheck)
    if cache.get(active_key(precheck.user_id)) == precheck.id:
        cache.delete(active_key(precheck.user_id))
    extra = {"user_id": precheck.user_id, "exercise_id": precheck.exercise_id, "precheck_id": precheck.id}
    if status == PrecheckStatus.NOT_RUN:
        logger.warning("precheck not run: %s", reason, extra=extra)
    else:
        logger.info("precheck checked", extra={**extra, "outcome": outcome})
    return str(outcome or status)


def precheck_fail(*, precheck_id: str, reason: str) -> str:
    """Close a pending precheck as not run (a platform fault: never a pass, never counted)."""
    precheck = _load(precheck_id)
    if precheck is None or not precheck.pending:
        return "skipped"
    return precheck_close(precheck, status=PrecheckStatus.NOT_RUN, message=NOT_RUN_MESSAGE, reason=reason)


def _paired(cases: Sequence[Case], results: Sequence[CaseResult]) -> list[tuple[Case, CaseResult]]:
    by_id = {r.id: r for r in results}
    return [(c, by_id[c.id]) for c in cases if c.id in by_id]


def precheck_test(case: Case, result: CaseResult) -> dict[str, Any]:
    """One case's result as the learner sees it. An example is public: its call, expected value and
    what came back. A check shows only its requirement, in plain words, and what it found."""
    if case.example:
        return {
            "id": case.id,
            "kind": TestKind.EXAMPLE,
            "passed": result.passed,
            "call": result.call,
            "expected": result.expected,
            "got": result.got,
            "requirement": "",
            "message": "" if result.passed else result.message,
        }
    message = "" if result.passed else result.message
    if case.requirement and message.startswith(case.requirement):
        message = message[len(case.requirement) :].strip()  # the requirement is shown beside it
    return {
        "id": case.id,
        "kind": TestKind.CHECK,
        "passed": result.passed,
        "call": "",
        "expected": "",
        "got": "",
        "requirement": case.requirement,
        "message": message,
    }


class _Live:
    """The runner's ``progress``: each case judged as it reports, published at most every 100 ms
    (and not before the first 100 ms: a quick run goes straight to its result)."""

    def __init__(self, precheck: Precheck, cases: Sequence[Case], entry: str) -> None:
        self.precheck, self.entry = precheck, entry
        self.cases = {c.id: c for c in cases}
        self.last_write = time.monotonic()

    def __call__(self, item: dict[str, Any]) -> None:
        case = self.cases.get(str(item.get("id")))
        if case is None:
            return
        self.precheck.tests.append(precheck_test(case, decide([item], [case], self.entry)[0]))
        if time.monotonic() - self.last_write >= _WRITE_EVERY_S:
            self.last_write = time.monotonic()
            try:
                _save(self.precheck)
            except RedisError as exc:  # the result does not depend on this
                logger.warning("could not publish a precheck's progress: %s", exc)
