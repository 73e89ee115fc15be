"""Every write to an attempt: the one owner of ``Attempt``'s lifecycle.

An answer graded here (numbers, choices, orders, lines, tables, parts) is created, graded and
counted in one statement with the learner's progress (``progress.services.attempt_record``). Code
is created queued, claimed, run by the sandbox (``apps.sandbox``, which knows nothing of our
models), finished or failed, recovered and swept here; ``tasks.py`` is the Celery face of it.
Reveals and hints are here too: they are the learner's other moves on an exercise.

Code attempts: submit (queue), grade (claim, run, finish), recover and fail the stuck.

The lifecycle is a compare-and-set on ``Attempt.status``: queued → running (claimed by exactly
one worker) → graded | not_graded. A final state is never overwritten, so a redelivered Celery
message, a retried task or a late beat sweep cannot change a verdict. Platform faults are
retried, then recorded as not graded: they never count as an attempt and never show as a pass.

Nothing accepted is lost. Every pending attempt carries a lease (``lease_expires_at``):
- queued: when to publish it again. Publishing happens after the commit; if it fails, or the
  broker loses the message (a Redis restart without persistence), ``attempts_recover`` publishes
  it again once the lease is past. A duplicate message is harmless: the claim is a compare-and-set.
- running: the claiming worker renews it while the run goes on. A worker that dies (SIGKILL,
  `docker kill`, a lost host) stops renewing; once the lease is past the attempt is queued again,
  and after SANDBOX_MAX_CLAIMS claims it is closed as not graded, saying why.
A finish is recorded only under the claim that is current (``claims``), so a worker that lost its
lease but finished anyway cannot grade an attempt twice.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from celery import current_app
from django.conf import settings
from django.db import DatabaseError, connection, connections, transaction
from django.utils import timezone

from apps.accounts.models import User
from apps.core.exceptions import ApplicationError, ServiceUnavailable
from apps.exercises import parts
from apps.exercises import services as exercise_services
from apps.exercises.choices import AttemptPart, AttemptStatus, CodeOutcome, Verdict
from apps.exercises.content import cache, variants
from apps.exercises.jobs import (
    ReferenceFailed,
    code_cases,
    code_job,
    drawn_inputs,
    limits_for,
    new_seed,
    reference_job,
    with_reference,
)
from apps.exercises.models import Attempt, Exercise, ExerciseVersion
from apps.exercises.source import MAX_SOURCE_BYTES, UngradableCode, source_validate  # noqa: F401 - re-exported
from apps.learning import gates, live
from apps.learning import selectors as learning_selectors
from apps.progress import selectors as progress_selectors
from apps.progress import services as progress_services
from apps.progress.models import ExerciseProgress
from apps.progress.selectors.learner import (
    LearnerNumbers,
    learner_numbers_now,
    learner_numbers_remember,
    learner_numbers_remembered,
    learner_numbers_unchanged,
)
from apps.progress.services.attempts import AttemptGuard
from apps.sandbox import selectors
from apps.sandbox.pool import PooledRunner, Profile
from apps.sandbox.runner import Runner, SandboxUnavailable
from apps.sandbox.verdict import Verdict as RunVerdict
from apps.sandbox.verdict import clean, judge

logger = logging.getLogger(__name__)

GRADE_TASK = "learning.grade_code_attempt"  # tasks.grade_code_attempt
# What the learner reads, by what happened; the exact reason goes to ``details["reason"]``.
NOT_GRADED_MESSAGE = (
    "Your code could not be graded: the sandbox is unavailable right now. This did not count as an "
    "attempt; please submit again in a moment."
)
WORKER_LOST_MESSAGE = (
    "Your code could not be graded: the sandbox worker running it stopped before it finished, more than "
    "once. This did not count as an attempt; please submit again."
)
NOT_TAKEN_MESSAGE = (
    "Your code could not be graded: no sandbox took it within {minutes} minutes. This did not count as an "
    "attempt; please submit again."
)


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
            lease_expires_at=timezone.now() + timedelta(seconds=settings.SANDBOX_REPUBLISH_AFTER_S),
        )
        transaction.on_commit(lambda: _enqueue(attempt.pk))
    logger.info("code attempt queued", extra={"user_id": user.pk, "exercise_id": exercise.pk, "attempt_id": attempt.pk})
    return attempt


# How a committed queued attempt goes to a sandbox: published to the broker, unless the app config
# installed another way at start (apps.py: ``inprocess.dispatch``, which keeps the embedded
# default's runs off the request). This module imports neither the in-process pool nor the tasks:
# they call it.
_dispatch: Callable[[int], object] | None = None


def attempt_dispatch_set(dispatch: Callable[[int], object] | None) -> None:
    """Install how queued attempts are dispatched (None: published to the broker)."""
    global _dispatch
    _dispatch = dispatch


def _enqueue(attempt_id: int) -> None:
    (_dispatch or attempt_publish)(attempt_id)


def attempt_publish(attempt_id: int) -> bool:
    """Send the attempt to the sandbox queue. A failure loses nothing: it stays queued, and
    ``attempts_recover`` publishes it again when its lease is past."""
    try:
        # By the task's name: this module is what the task calls, and does not import it back.
        current_app.send_task(GRADE_TASK, args=[attempt_id])
    except Exception as exc:  # noqa: BLE001 - any broker failure: the attempt stays queued, see above
        logger.warning("could not publish a code attempt; it will be published again: %s", exc,
                       extra={"attempt_id": attempt_id})  # fmt: skip
        return False
    return True


def attempt_grade(*, attempt_id: int, runner: Runner, slot: int = 0) -> Attempt | None:
    """Claim a queued attempt, run it, record the verdict. Returns None if it was not ours to grade;
    raises ``SandboxFault`` (the attempt queued again) if the sandbox could not run it.

    The claim records the limits the run gets, so that a page following it can say them.
    """
    queued = Attempt.objects.filter(pk=attempt_id, status=AttemptStatus.QUEUED)
    attempt = queued.select_related("exercise__workbook", "version").first()
    if attempt is None:
        logger.info("code attempt not claimed (already taken or final)", extra={"attempt_id": attempt_id})
        return None
    code = cache.resolved(attempt.version).spec.code
    assert code is not None
    # Random cases: inputs drawn for this attempt (the seed kept, so a second claim draws the same).
    drawn = attempt.details.get("draw") if isinstance(attempt.details, dict) else None
    seed = int(drawn["seed"]) if isinstance(drawn, dict) and "seed" in drawn else new_seed()
    cases = code_cases(code, seed=seed)
    job = code_job(code, str(attempt.raw.get("code", "")), cases)
    reference = reference_job(code, cases)
    limits = limits_for(code, slot=slot)
    now = timezone.now()
    details = {
        **attempt.details,
        "limits": {"time_s": limits.time_s, "memory_mb": limits.memory_mb},
        "tests_total": len(cases),
    }
    if reference is not None:
        details["draw"] = drawn_inputs(cases, seed)  # instructors only (verdict.INSTRUCTOR_ONLY)
    claim = attempt.claims + 1
    claimed = queued.filter(claims=attempt.claims).update(
        status=AttemptStatus.RUNNING, started_at=now, details=details, claims=claim, lease_expires_at=_lease_end()
    )
    if not claimed:
        logger.info("code attempt claimed by another worker meanwhile", extra={"attempt_id": attempt_id})
        return None
    attempt.status, attempt.started_at, attempt.details, attempt.claims = AttemptStatus.RUNNING, now, details, claim
    with _Lease(attempt_id, claim):
        try:
            if reference is not None:
                # The reference first, in a container of its own: the expected values of the random
                # cases, which only this process sees. Its failure is no verdict on the learner.
                cases = with_reference(cases, runner.run(reference, limits))
            result = runner.run(job, limits, progress=live.Recorder(attempt_id, cases, code.entry))
        except (SandboxUnavailable, ReferenceFailed) as exc:
            fault = str(exc)
        else:
            fault = ""
    if fault:
        logger.warning("sandbox fault; the claim is given back", extra={"attempt_id": attempt_id, "error": fault})
        _claim_release(attempt_id, claim)
        raise SandboxFault(fault)
    verdict = judge(result, cases, code.entry)
    return attempt_finish(attempt=attempt, verdict=verdict, duration_s=result.duration_s)


def sandbox_pool_prepare(*, slot: int = 0) -> int:
    """Ask this process's pool (if any) to keep a container ready for each profile the active code
    exercises need on this slot, so that even a first submission finds one. Returns how many."""
    pool = selectors.runner()
    if not isinstance(pool, PooledRunner):
        return 0
    profiles = set()
    exercises = Exercise.objects.filter(is_active=True, current_version__spec__has_key="code").select_related(
        "current_version"
    )
    for exercise in exercises:
        if exercise.current_version is None:
            continue
        code = cache.resolved(exercise.current_version).spec.code
        if code is not None:
            profiles.add(Profile.of(code_job(code, code.solution), limits_for(code, slot=slot)))
    pool.want(profiles)
    return len(profiles)


class SandboxFault(Exception):
    """The run could not happen (Docker unreachable, the image gone): not the learner's doing. The
    attempt is queued again, its claim given back; the caller retries it later or closes it."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _claim_release(attempt_id: int, claim: int) -> None:
    """Running → queued under our claim, the claim count as before it (a fault is not a lost
    worker). Its lease says when recovery publishes it again, should the retry itself be lost."""
    Attempt.objects.filter(pk=attempt_id, status=AttemptStatus.RUNNING, claims=claim).update(
        status=AttemptStatus.QUEUED,
        claims=claim - 1,
        lease_expires_at=timezone.now() + timedelta(seconds=settings.SANDBOX_REPUBLISH_AFTER_S),
    )


def _lease_end() -> datetime:
    return timezone.now() + timedelta(seconds=settings.SANDBOX_LEASE_S)


class _Lease:
    """Renews a running attempt's lease from a thread while the run goes on (a third of the
    lease at a time), so that only a dead worker's attempts ever see their lease run out."""

    def __init__(self, attempt_id: int, claim: int) -> None:
        self.attempt_id, self.claim = attempt_id, claim
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._renew, name=f"lease-{attempt_id}", daemon=True)

    def __enter__(self) -> _Lease:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        self.thread.join(timeout=5)

    def _renew(self) -> None:
        try:
            while not self.done.wait(settings.SANDBOX_LEASE_S / 3):
                try:
                    mine = Attempt.objects.filter(pk=self.attempt_id, status=AttemptStatus.RUNNING, claims=self.claim)
                    if not mine.update(lease_expires_at=_lease_end()):
                        return  # finished, or recovered after we lost the lease: nothing to renew
                except DatabaseError as exc:  # the database is restarting: try again next time
                    logger.warning("could not renew a lease: %s", exc, extra={"attempt_id": self.attempt_id})
                    connections.close_all()
        finally:
            connections.close_all()


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
    mine = Attempt.objects.filter(pk=attempt.pk, status=AttemptStatus.RUNNING, claims=attempt.claims)
    updated = mine.update(**fields, lease_expires_at=None)
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


def attempt_not_graded(
    *, attempt_id: int, reason: str, claim: int | None = None, feedback: str = NOT_GRADED_MESSAGE
) -> Attempt | None:
    """A platform fault: the attempt is closed as not graded and does not count. With ``claim``,
    only if that claim is still the current one."""
    pending = Attempt.objects.filter(pk=attempt_id, status__in=[AttemptStatus.QUEUED, AttemptStatus.RUNNING])
    if claim is not None:
        pending = pending.filter(claims=claim)
    updated = pending.update(
        status=AttemptStatus.NOT_GRADED,
        verdict="",
        outcome=CodeOutcome.NOT_GRADED,
        feedback=feedback,
        details={"outcome": CodeOutcome.NOT_GRADED, "reason": clean(reason, 500)},
        finished_at=timezone.now(),
        lease_expires_at=None,
    )
    if not updated:
        return None
    logger.warning("code attempt not graded", extra={"attempt_id": attempt_id, "reason": reason})
    return Attempt.objects.get(pk=attempt_id)


def attempts_recover(*, limit: int = 500) -> dict[str, int]:
    """Queue again what dead workers were running, publish again what may have been lost.

    Run by every ready sandbox worker's heartbeat, at its start, and by beat. Each step is a
    compare-and-set on (status, claims, lease), so any number of these may run at once.
    """
    now = timezone.now()
    expired = Attempt.objects.filter(
        status__in=[AttemptStatus.QUEUED, AttemptStatus.RUNNING], lease_expires_at__lt=now
    ).order_by("lease_expires_at")
    done = {"requeued": 0, "republished": 0, "failed": 0}
    for pk, status, claims, lease in expired.values_list("pk", "status", "claims", "lease_expires_at")[:limit]:
        same = Attempt.objects.filter(pk=pk, status=status, claims=claims, lease_expires_at=lease)
        republish_at = now + timedelta(seconds=settings.SANDBOX_REPUBLISH_AFTER_S)
        if status == AttemptStatus.RUNNING and claims >= settings.SANDBOX_MAX_CLAIMS:
            times = "once" if claims == 1 else f"{claims} times"
            reason = f"the sandbox worker running it stopped before it finished ({times})"
            if attempt_not_graded(attempt_id=pk, reason=reason, claim=claims, feedback=WORKER_LOST_MESSAGE):
                done["failed"] += 1
            continue
        if status == AttemptStatus.RUNNING:
            if not same.update(status=AttemptStatus.QUEUED, lease_expires_at=republish_at):
                continue
            logger.warning("code attempt queued again: its worker stopped renewing its lease",
                           extra={"attempt_id": pk, "claims": claims})  # fmt: skip
            done["requeued"] += 1
        elif same.update(lease_expires_at=republish_at):
            done["republished"] += 1
        else:
            continue
        attempt_publish(pk)
    if any(done.values()):
        logger.info("pending code attempts recovered", extra=done)
    return done


def attempts_fail_stuck(*, older_than_s: float | None = None, reason: str = "") -> int:
    """Close attempts pending far longer than any run may take (no worker took them, or a run
    outlived every limit), saying which unless ``reason`` says what happened."""
    seconds = older_than_s if older_than_s is not None else settings.SANDBOX_STUCK_AFTER_S
    cutoff = timezone.now() - timedelta(seconds=seconds)
    stuck = Attempt.objects.filter(status__in=[AttemptStatus.QUEUED, AttemptStatus.RUNNING], created_at__lt=cutoff)
    minutes = max(1, round(seconds / 60))
    count = 0
    for attempt_id, status in stuck.values_list("pk", "status"):
        if reason:
            why, feedback = reason, NOT_GRADED_MESSAGE
        elif status == AttemptStatus.QUEUED:
            why = f"no sandbox worker took it within {minutes} minutes"
            feedback = NOT_TAKEN_MESSAGE.format(minutes=minutes)
        else:
            why, feedback = f"still running after {minutes} minutes", NOT_GRADED_MESSAGE
        if attempt_not_graded(attempt_id=attempt_id, reason=why, feedback=feedback):
            count += 1
    return count


# ---------------------------------------------------------------------------------------------
# Answers graded here
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AttemptOutcome:
    attempt: Attempt
    progress: ExerciseProgress | None
    first_solve: bool

    @property
    def pending(self) -> bool:
        """Queued for the sandbox: the verdict comes later (poll the attempt's URL)."""
        return not self.attempt.is_final


_ATTEMPT_INSERT = (
    f"INSERT INTO {Attempt._meta.db_table} (user_id, exercise_id, version_id, part, status, raw, parsed, verdict, "
    "outcome, score, feedback, details, created_at, accepted_with_note, counted, round) "
    "SELECT %s, %s, %s, %s, 'graded', %s::jsonb, %s::jsonb, %s, '', %s, %s, %s::jsonb, %s, %s, %s, %s"
)


def _attempt_insert(a: Attempt) -> progress_services.AttemptInsert:
    """A graded attempt's row, for progress to insert in one statement with its upsert (PostgreSQL)."""
    params = [
        a.user_id, a.exercise_id, a.version_id, a.part, json.dumps(a.raw), json.dumps(a.parsed), a.verdict, a.score,
        a.feedback, json.dumps(a.details), a.created_at, a.accepted_with_note, a.counted, a.round,
    ]  # fmt: skip
    return progress_services.AttemptInsert(_ATTEMPT_INSERT, params)


def _recorded(
    attempt: Attempt, part_bit: int, all_parts: int, guard: AttemptGuard | None = None
) -> tuple[ExerciseProgress, bool] | None:
    """Store a graded attempt and count it (None: ``guard`` did not hold, nothing was written)."""
    if connection.vendor == "postgresql":
        insert = _attempt_insert(attempt)
        return progress_services.attempt_record(
            attempt=attempt, insert=insert, part_bit=part_bit, all_parts=all_parts, guard=guard
        )
    with transaction.atomic():
        attempt.save()
        return progress_services.attempt_count(attempt=attempt, part_bit=part_bit, all_parts=all_parts)


def _variant_on(version: ExerciseVersion, numbers: LearnerNumbers, *, chapter: int) -> variants.Variant:
    return cache.drawn(version, seed=numbers.seed, chapter=chapter, round=max(0, numbers.round + numbers.offset))


def _graded(
    user: User, exercise: Exercise, version: ExerciseVersion, part: str, payload: dict[str, Any],
    numbers: LearnerNumbers | None,
) -> Attempt:  # fmt: skip
    """The attempt graded on ``numbers`` (None: on the learner's variant read now), unsaved."""
    if numbers is None:
        variant = learning_selectors.current_variant(user_id=user.pk, exercise=exercise, version=version)
    else:
        variant = _variant_on(version, numbers, chapter=exercise.chapter_id)
    result = exercise_services.grade_payload(version=version, user_id=user.pk, payload=payload, variant=variant)
    details = result.details
    if not variant.is_seed:  # the numbers it answered, so it can be shown as the learner saw it
        details = {**details, "variant": variants.record(variant)}
    return Attempt(
        round=variant.round,
        user=user,
        exercise=exercise,
        version=version,
        part=part,
        raw=payload,
        parsed=result.parsed,
        verdict=Verdict.CORRECT if result.correct else Verdict.INCORRECT,
        score=result.score,
        accepted_with_note=result.noted,
        counted=result.counts,
        feedback=result.feedback,
        details=details,
        created_at=timezone.now(),
    )


def attempt_create(*, user: User, exercise: Exercise, payload: dict[str, Any]) -> AttemptOutcome:
    """Grade and record an attempt, and update the learner's progress in the same transaction.

    Code (a Build, or a Debug's fix) is queued for the sandbox instead: the attempt comes back
    ``queued`` and is counted when a worker grades it.
    """
    version = exercise.current_version
    if version is None:
        raise ApplicationError("This exercise has no content yet.", code="not_ready", status_code=409)
    gates.practice_check(user=user, exercise_id=exercise.pk)
    spec = cache.resolved(version).spec
    part = parts.part_of(spec, payload)
    if part == AttemptPart.CODE:
        queued = code_attempt_submit(user=user, exercise=exercise, version=version, payload=payload)
        return AttemptOutcome(attempt=queued, progress=None, first_solve=False)
    part_bit, all_parts = parts.bit(spec, part), parts.all_bits(spec)
    # A varying exercise: the numbers the learner answered on last, if this process remembers
    # them, checked by the attempt's own statement (no read first). When they moved, nothing is
    # written and the answer is graded again on the numbers read now.
    plain = spec.vary is not None and not cache.references(version) and connection.vendor == "postgresql"
    numbers = learner_numbers_remembered(user_id=user.pk, exercise_id=exercise.pk) if plain else None
    recorded = None
    if numbers is not None:
        attempt = _graded(user, exercise, version, part, payload, numbers)
        unchanged = AttemptGuard(*learner_numbers_unchanged(user_id=user.pk, exercise=exercise, numbers=numbers))
        recorded = _recorded(attempt, part_bit, all_parts, guard=unchanged)
    if recorded is None:
        numbers = learner_numbers_now(user_id=user.pk, exercise=exercise) if plain else None
        attempt = _graded(user, exercise, version, part, payload, numbers)
        recorded = _recorded(attempt, part_bit, all_parts)
        assert recorded is not None
    progress, first_solve = recorded
    if numbers is not None:
        numbers = numbers._replace(round=progress.round)
        learner_numbers_remember(user_id=user.pk, exercise_id=exercise.pk, numbers=numbers)
    logger.info(
        "attempt graded",
        extra={"user_id": user.pk, "exercise_id": exercise.pk, "attempt_id": attempt.pk, "verdict": attempt.verdict},
    )
    return AttemptOutcome(attempt=attempt, progress=progress, first_solve=first_solve)


# ---------------------------------------------------------------------------------------------
# Reveal, hints and new numbers
# ---------------------------------------------------------------------------------------------


@transaction.atomic
def exercise_new_numbers(*, user: User, exercise: Exercise) -> list[Exercise]:
    """The next round of numbers, for a learner who solved or revealed a varying exercise.

    The exercise starts over on the new numbers (answer hidden, hints and parts cleared) like a
    reset: points are earned once, so a solve on new numbers earns none, but it counts toward
    mastery and the day streak again. In a scenario, its exercises not finished yet move with it
    (returned); finished ones keep their numbers.
    """
    gates.practice_check(user=user, exercise_id=exercise.pk)
    version = exercise.current_version
    if version is None or cache.resolved(version).spec.vary is None:
        raise ApplicationError(
            "This exercise has the same numbers for everyone.", code="numbers_fixed", status_code=409
        )
    progress = progress_services.progress_lock(user=user, exercise=exercise)
    if not progress.answer_visible:
        raise ApplicationError(
            "Solve this exercise or reveal its answer first; then try it on new numbers.",
            code="answer_not_visible",
            status_code=409,
        )
    round_, seed, offset = progress_selectors.learner_numbers(user_id=user.pk, exercise=exercise)
    spec = cache.resolved(version).spec
    hidden = set(spec.implicit)

    def shown(at: int) -> tuple[object, ...]:
        """What the exercise shows of round ``at``'s numbers: its drawn givens (not the scenario's
        it leaves unused) and its preset rows' names."""
        drawn = variants.variant(spec, seed=seed, chapter=exercise.chapter_id, round=max(0, at + offset))
        return tuple((k, v) for k, v in drawn.values if k not in hidden), drawn.labels

    now_shown = shown(round_)
    moved = progress_services.progress_next_round(progress=progress, differs=lambda at: shown(at) != now_shown)
    logger.info(
        "new numbers",
        extra={"user_id": user.pk, "exercise_id": exercise.pk, "round": progress.round, "moved": [m.pk for m in moved]},
    )
    return moved


@transaction.atomic
def exercise_reveal(*, user: User, exercise: Exercise) -> ExerciseProgress:
    """Give up and see the answer. Solving afterwards completes the exercise but earns no points."""
    gates.practice_check(user=user, exercise_id=exercise.pk)
    progress = progress_services.progress_lock(user=user, exercise=exercise)
    if progress.reviewing:
        progress_services.review_revealed(progress=progress, at=timezone.now())
    if progress.revealed_at is None:
        progress.revealed_at = timezone.now()
        # Revealing before ever solving gives up this exercise's points for good (a reset keeps it).
        progress.forfeited = progress.forfeited or progress.first_solved_at is None
        progress.save(update_fields=["revealed_at", "forfeited"])
        logger.info("answer revealed", extra={"user_id": user.pk, "exercise_id": exercise.pk})
    return progress


@transaction.atomic
def hint_reveal_next(*, user: User, exercise: Exercise) -> ExerciseProgress:
    gates.practice_check(user=user, exercise_id=exercise.pk)
    version = exercise.current_version
    total = len(cache.resolved(version).spec.hints) if version else 0
    progress = progress_services.progress_lock(user=user, exercise=exercise)
    if progress.hints_used >= total:
        raise ApplicationError("There are no more hints for this exercise.", code="no_more_hints", status_code=409)
    progress.hints_used += 1
    progress.save(update_fields=["hints_used"])
    return progress
