"""Writes for code attempts: submit (queue), grade (claim, run, finish), and fail the stuck ones.

The lifecycle is a compare-and-set on ``Attempt.status``: queued → running (claimed by exactly
one worker) → graded | not_graded. A final state is never overwritten, so a redelivered Celery
message, a retried task or a late beat sweep cannot change a verdict. Platform faults are
retried, then recorded as not graded: they never count as an attempt and never show as a pass.
"""

from __future__ import annotations

import ast
import logging
import time
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from apps.accounts.models import User
from apps.core.exceptions import ApplicationError, ServiceUnavailable
from apps.exercises import parts
from apps.exercises.choices import AttemptPart, AttemptStatus, CodeOutcome, Verdict
from apps.exercises.content import cache
from apps.exercises.models import Attempt, Exercise, ExerciseVersion
from apps.progress import services as progress_services
from apps.sandbox import selectors
from apps.sandbox.jobs import code_cases, code_job, limits_for
from apps.sandbox.runner import Runner, SandboxUnavailable
from apps.sandbox.verdict import Verdict as RunVerdict
from apps.sandbox.verdict import clean, judge

logger = logging.getLogger(__name__)

MAX_SOURCE_BYTES = 64_000
NOT_GRADED_MESSAGE = (
    "Your code could not be graded: the sandbox is unavailable right now. This did not count as an "
    "attempt; please submit again in a moment."
)


class UngradableCode(ApplicationError):
    """Code we refuse before running it (empty, too long, not Python): explained, costs nothing."""

    status_code = 400


def source_validate(payload: dict[str, Any]) -> str:
    source = payload.get("code")
    if not isinstance(source, str) or not source.strip():
        raise UngradableCode("Submit your code as `code`: the whole file, as text.", code="bad_payload")
    if "\x00" in source:
        raise UngradableCode("The code contains a NUL character.", code="bad_payload")
    if len(source.encode("utf-8", "surrogatepass")) > MAX_SOURCE_BYTES:
        raise UngradableCode(f"The code is longer than {MAX_SOURCE_BYTES // 1000} kB.", code="too_long")
    try:
        # Parsing is not running: the parser has its own nesting limits and executes nothing.
        ast.parse(source, filename="submission.py")
    except SyntaxError as exc:
        where = f"line {exc.lineno}" + (f", column {exc.offset}" if exc.offset else "")
        raise UngradableCode(
            f"Python could not parse your code ({where}): {exc.msg}. Nothing was recorded.",
            code="syntax_error",
            details={"line": exc.lineno, "column": exc.offset, "text": (exc.text or "").rstrip("\n")[:500]},
        ) from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise UngradableCode(f"Python could not parse your code: {exc}", code="syntax_error") from None
    return source


def code_attempt_submit(
    *, user: User, exercise: Exercise, version: ExerciseVersion, payload: dict[str, Any]
) -> Attempt:
    """Queue code for the sandbox. Bad code or no sandbox: an error, and nothing is recorded."""
    source = source_validate(payload)
    if not selectors.available():
        raise ServiceUnavailable(
            "Code is graded in a sandbox that is not running on this server right now. Nothing was recorded.",
            code="sandbox_unavailable",
        )
    with transaction.atomic():
        attempt = Attempt.objects.create(
            user=user,
            exercise=exercise,
            version=version,
            part=AttemptPart.CODE,
            status=AttemptStatus.QUEUED,
            raw={"code": source},
            parsed={"lines": source.count("\n") + 1, "bytes": len(source.encode())},
            verdict="",
        )
        transaction.on_commit(lambda: _enqueue(attempt.pk))
    logger.info("code attempt queued", extra={"user_id": user.pk, "exercise_id": exercise.pk, "attempt_id": attempt.pk})
    return attempt


def _enqueue(attempt_id: int) -> None:
    if settings.CELERY_TASK_ALWAYS_EAGER:
        # No broker (the embedded default): Celery would run the task right here, inside the
        # request, which would answer only after the run. A thread of this process runs it instead.
        from apps.sandbox import inprocess

        if not inprocess.submit(attempt_id):
            attempt_not_graded(attempt_id=attempt_id, reason="too many runs waiting in this process")
        return
    from apps.sandbox.tasks import grade_code_attempt

    try:
        grade_code_attempt.delay(attempt_id)
    except Exception:
        logger.exception("could not run a code attempt", extra={"attempt_id": attempt_id})
        attempt_not_graded(attempt_id=attempt_id, reason="could not queue the run")


def attempt_grade(*, attempt_id: int, runner: Runner, slot: int = 0) -> Attempt | None:
    """Claim a queued attempt, run it, record the verdict. Returns None if it was not ours to grade.

    The claim records the limits the run gets, so that a page following it can say them.
    """
    queued = Attempt.objects.filter(pk=attempt_id, status=AttemptStatus.QUEUED)
    attempt = queued.select_related("exercise__workbook", "version").first()
    if attempt is None:
        logger.info("code attempt not claimed (already taken or final)", extra={"attempt_id": attempt_id})
        return None
    code = cache.resolved(attempt.version).spec.code
    assert code is not None
    job = code_job(code, str(attempt.raw.get("code", "")))
    limits = limits_for(code, slot=slot)
    now = timezone.now()
    details = {"limits": {"time_s": limits.time_s, "memory_mb": limits.memory_mb}}
    if not queued.update(status=AttemptStatus.RUNNING, started_at=now, details=details):
        logger.info("code attempt claimed by another worker meanwhile", extra={"attempt_id": attempt_id})
        return None
    attempt.status, attempt.started_at, attempt.details = AttemptStatus.RUNNING, now, details
    fault = ""
    for attempt_no in range(settings.SANDBOX_RETRIES + 1):
        try:
            result = runner.run(job, limits)
            break
        except SandboxUnavailable as exc:
            fault = str(exc)
            logger.warning("sandbox fault", extra={"attempt_id": attempt_id, "try": attempt_no + 1, "error": fault})
            if attempt_no < settings.SANDBOX_RETRIES:
                time.sleep(min(4.0, 0.5 * 2**attempt_no))
    else:
        return attempt_not_graded(attempt_id=attempt_id, reason=fault)
    verdict = judge(result, code_cases(code), code.entry)
    return attempt_finish(attempt=attempt, verdict=verdict, duration_s=result.duration_s)


@transaction.atomic
def attempt_finish(*, attempt: Attempt, verdict: RunVerdict, duration_s: float) -> Attempt | None:
    """Record a verdict on a RUNNING attempt and count it; a final attempt is left as it is."""
    now = timezone.now()
    details = {**attempt.details, **verdict.as_dict(), "duration_s": round(duration_s, 3)}  # keeps the limits
    fields = {
        "status": AttemptStatus.GRADED,
        "verdict": Verdict.CORRECT if verdict.passed else Verdict.INCORRECT,
        "outcome": verdict.outcome,
        "score": 1.0
        if verdict.passed
        else (sum(c.passed for c in verdict.cases) / len(verdict.cases) if verdict.cases else 0.0),
        "feedback": clean(verdict.message, 2000),
        "details": details,
        "finished_at": now,
    }
    updated = Attempt.objects.filter(pk=attempt.pk, status=AttemptStatus.RUNNING).update(**fields)
    if not updated:
        return None
    for key, value in fields.items():
        setattr(attempt, key, value)
    spec = cache.resolved(attempt.version).spec
    progress_services.attempt_count(
        attempt=attempt, part_bit=parts.bit(spec, attempt.part), all_parts=parts.all_bits(spec)
    )
    logger.info(
        "code attempt graded",
        extra={"attempt_id": attempt.pk, "outcome": verdict.outcome, "duration_s": round(duration_s, 3)},
    )
    return attempt


def attempt_not_graded(*, attempt_id: int, reason: str) -> Attempt | None:
    """A platform fault: the attempt is closed as not graded and does not count."""
    updated = Attempt.objects.filter(pk=attempt_id, status__in=[AttemptStatus.QUEUED, AttemptStatus.RUNNING]).update(
        status=AttemptStatus.NOT_GRADED,
        verdict="",
        outcome=CodeOutcome.NOT_GRADED,
        feedback=NOT_GRADED_MESSAGE,
        details={"outcome": CodeOutcome.NOT_GRADED, "reason": clean(reason, 500)},
        finished_at=timezone.now(),
    )
    if not updated:
        return None
    logger.warning("code attempt not graded", extra={"attempt_id": attempt_id, "reason": reason})
    return Attempt.objects.get(pk=attempt_id)


def attempts_fail_stuck(*, older_than_s: float | None = None, reason: str = "no worker finished it in time") -> int:
    """Close attempts queued or running far longer than any run may take (a lost worker)."""
    age = timedelta(seconds=older_than_s if older_than_s is not None else settings.SANDBOX_STUCK_AFTER_S)
    cutoff = timezone.now() - age
    stuck = Attempt.objects.filter(status__in=[AttemptStatus.QUEUED, AttemptStatus.RUNNING], created_at__lt=cutoff)
    count = 0
    for attempt_id in stuck.values_list("pk", flat=True):
        if attempt_not_graded(attempt_id=attempt_id, reason=reason):
            count += 1
    return count
