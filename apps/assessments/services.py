"""Every write to assessments: opening an instance (drawing its questions and numbers), answering,
hints, submitting, overrides and score overrides. Reads are in ``selectors.py``."""

from __future__ import annotations

import hashlib
import logging
import random
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.db import IntegrityError, transaction
from django.db.models import OuterRef, Q, Subquery
from django.utils import timezone

from apps.accounts.models import User
from apps.assessments import selectors
from apps.assessments.models import (
    Assessment,
    Instance,
    InstanceQuestion,
    Kind,
    Override,
    Question,
    ScoreOverride,
    Submission,
)
from apps.assessments.signals import instance_scored
from apps.core.exceptions import ApplicationError
from apps.exercises import services as exercise_services
from apps.exercises.content import cache, variants
from apps.exercises.content.variants import Variant
from apps.exercises.models import Exercise, ExerciseVersion
from apps.progress import selectors as progress_selectors
from apps.progress.models import Cohort, Membership

logger = logging.getLogger(__name__)
MAX_EXAM_ROUNDS = 16  # rounds of the exam's own walk tried before one differs from all practice


def _when(at: datetime, zone: str = "UTC") -> str:
    """A time as the cohort reads it: in its time zone, named."""
    try:
        local = at.astimezone(ZoneInfo(zone))
    except (ZoneInfoNotFoundError, ValueError):
        local, zone = at.astimezone(ZoneInfo("UTC")), "UTC"
    return f"{local:%Y-%m-%d %H:%M} ({zone})"


def _refuse(message: str, code: str, status_code: int = 409) -> ApplicationError:
    return ApplicationError(message, code=code, status_code=status_code)


# ---- authoring ----------------------------------------------------------------------------------


def pool_check(exercises: list[Exercise]) -> None:
    """A pool takes active exercises graded here (numbers, choices, orders, tables, parts): code
    is graded by the sandbox on practice's path and is not offered in assessments yet."""
    for exercise in exercises:
        version = exercise.current_version
        if version is None or not exercise.is_active:
            raise _refuse(f"Exercise {exercise} has no live content.", "exercise_not_ready", 400)
        if cache.resolved(version).spec.code is not None:
            raise _refuse(
                f"Exercise {exercise} is graded by running code; assessments take exercises graded instantly "
                "(numbers, choices, orders, tables).",
                "code_not_in_assessments",
                400,
            )


def terms_check(
    *,
    opens_at: datetime,
    closes_at: datetime,
    due_at: datetime | None,
    late_rules: list[Any],
    attempt_credit: list[Any],
) -> list[dict[str, Any]]:
    """Validate the credit timeline; returns the late rules normalised (ISO datetimes, floats)."""
    if closes_at <= opens_at:
        raise _refuse("An assessment must close after it opens.", "invalid_window", 400)
    if due_at is not None and not opens_at <= due_at <= closes_at:
        raise _refuse("The due date must be between the opening and the close.", "invalid_window", 400)
    rules: list[dict[str, Any]] = []
    last = due_at
    for rule in late_rules or []:
        try:
            until = rule["until"] if isinstance(rule["until"], datetime) else datetime.fromisoformat(str(rule["until"]))
            credit = float(rule["credit"])
        except (KeyError, TypeError, ValueError):
            raise _refuse(
                'Each late rule is {"until": an ISO date and time, "credit": a percent}.', "invalid_late_rules", 400
            ) from None
        if due_at is None:
            raise _refuse("Late rules need a due date to follow.", "invalid_late_rules", 400)
        if until.utcoffset() is None:
            raise _refuse("A late rule's time needs its time zone (e.g. +00:00).", "invalid_late_rules", 400)
        if last is not None and until <= last:
            raise _refuse("Late rules must follow the due date and each other in time.", "invalid_late_rules", 400)
        if not 0 <= credit <= 100:
            raise _refuse("A late rule's credit is a percent from 0 to 100.", "invalid_late_rules", 400)
        rules.append({"until": until.isoformat(), "credit": credit})
        last = until
    for step in attempt_credit or []:
        if not isinstance(step, int | float) or not 0 <= step <= 100:
            raise _refuse("Attempt credit is a list of percents from 0 to 100.", "invalid_attempt_credit", 400)
    return rules


# ---- authoring: an assessment and its questions --------------------------------------------------


def _pool(refs: list[str]) -> list[Exercise]:
    """``"<workbook-slug>/<exercise-number>"`` → the exercises, in order, each once."""
    found: list[Exercise] = []
    for ref in dict.fromkeys(refs):
        slug, _, number = ref.partition("/")
        exercise = (
            Exercise.objects.filter(workbook__slug=slug, number=number)
            .select_related("current_version", "workbook")
            .first()
        )
        if exercise is None:
            raise _refuse(
                f'No exercise "{ref}": name each as "<workbook-slug>/<exercise-number>".', "unknown_exercise", 400
            )
        found.append(exercise)
    return found


def _questions_set(assessment: Assessment, questions: list[dict[str, Any]]) -> None:
    positions = [q["position"] for q in questions]
    if len(set(positions)) != len(positions):
        raise _refuse("Each question needs a position of its own.", "duplicate_position", 400)
    for q in questions:
        pool = _pool(q["pool"])
        pool_check(pool)
        if q["choose"] > len(pool):
            raise _refuse(
                f"Question {q['position']} draws {q['choose']} from a pool of {len(pool)}.", "pool_too_small", 400
            )
        question = Question.objects.create(
            assessment=assessment,
            position=q["position"],
            zone=q.get("zone", ""),
            points=q["points"],
            choose=q["choose"],
            verdicts=q.get("verdicts", ""),
        )
        question.pool.set(pool)


def _terms(values: dict[str, Any]) -> dict[str, Any]:
    values["late_rules"] = terms_check(
        opens_at=values["opens_at"],
        closes_at=values["closes_at"],
        due_at=values.get("due_at"),
        late_rules=values.get("late_rules") or [],
        attempt_credit=values.get("attempt_credit") or [],
    )
    return values


def _slug_free(cohort_id: int, slug: str, *, but: int | None = None) -> None:
    taken = Assessment.objects.filter(cohort_id=cohort_id, slug=slug)
    if but is not None:
        taken = taken.exclude(pk=but)
    if taken.exists():
        raise _refuse(f"This cohort already has an assessment “{slug}”.", "slug_taken")


@transaction.atomic
def assessment_create(*, cohort: Cohort, by: User, questions: list[dict[str, Any]], **terms: Any) -> Assessment:
    """An assessment with its questions, in one transaction: nothing is kept if any part is refused."""
    values = _terms(terms)
    if values.get("kind") == Kind.EXAM:
        values["hints"] = False  # an exam never offers hints: say so where the terms are read
    _slug_free(cohort.pk, values["slug"])
    assessment = Assessment.objects.create(cohort=cohort, created_by=by, **values)
    _questions_set(assessment, questions)
    return assessment


TERMS = (
    "slug", "title", "kind", "instructions", "opens_at", "due_at", "closes_at", "late_rules", "time_limit_minutes",
    "max_attempts", "attempt_credit", "verdicts", "hints",
)  # fmt: skip


@transaction.atomic
def assessment_update(
    *, assessment: Assessment, questions: list[dict[str, Any]] | None = None, **changes: Any
) -> Assessment:
    """Change terms (checked as a whole); questions only while no learner has an instance."""
    locked = Assessment.objects.select_for_update().get(pk=assessment.pk)
    values = {name: getattr(locked, name) for name in TERMS}
    values.update(changes)
    values = _terms(values)
    if values.get("kind") == Kind.EXAM:
        values["hints"] = False
    _slug_free(locked.cohort_id, values["slug"], but=locked.pk)
    if questions is not None:
        if Instance.objects.filter(assessment=locked).exists():
            raise _refuse(
                "Questions cannot change once a learner has an instance (they were drawn their questions and "
                "numbers): change the terms, or create another assessment.",
                "questions_locked",
            )
        locked.questions.all().delete()
        _questions_set(locked, questions)
    for name, value in values.items():
        setattr(locked, name, value)
    locked.save()
    deadlines_again(assessment=locked)
    return locked


@transaction.atomic
def deadlines_again(*, assessment: Assessment) -> None:
    """After the terms changed: a new time limit or close applies to instances already running,
    each from its own start (with its learner's override)."""
    running = Instance.objects.filter(assessment=assessment, started_at__isnull=False, submitted_at__isnull=True)
    for user_id in running.values_list("user_id", flat=True):
        _deadline_again(assessment, user_id)


@transaction.atomic
def assessment_delete(*, assessment: Assessment) -> None:
    if Instance.objects.filter(assessment=assessment).exists():
        raise _refuse(
            "Learners have instances of this assessment (answers, scores): it cannot be deleted.", "has_instances"
        )
    assessment.delete()


# ---- a learner's instance -------------------------------------------------------------------------


def _pick(question: Question, user_id: int) -> list[Exercise]:
    """``choose`` of the pool for this learner: the same draw every time (seeded), then stored."""
    pool = sorted(question.pool.select_related("current_version"), key=lambda e: e.pk)
    key = hashlib.sha256(f"assessment:{question.assessment_id}:q{question.pk}:u{user_id}".encode()).digest()
    return random.Random(key).sample(pool, min(question.choose, len(pool)))  # noqa: S311 - not security


def exam_variant(*, user_id: int, exercise: Exercise, version: ExerciseVersion, assessment_id: int) -> Variant:
    """Numbers of their own for this assessment: the learner's walk for it, skipping any round whose
    numbers they met in practice (the book's seed included), so graded work is never a replay."""
    spec = cache.resolved(version).spec
    if spec.vary is None:
        return variants.SEED
    round_, seed, offset = progress_selectors.learner_numbers(user_id=user_id, exercise=exercise)
    seen = {
        variants.variant(spec, seed=seed, chapter=exercise.chapter_id, round=r).values
        for r in range(0, max(0, round_ + offset) + 1)
    }
    found = variants.SEED
    for r in range(1, MAX_EXAM_ROUNDS + 1):
        found = variants.variant(
            spec, seed=f"learner:{user_id}:assessment:{assessment_id}", chapter=exercise.chapter_id, round=r
        )
        if found.values not in seen:
            return found
    return found


def _member(assessment: Assessment, user: User) -> None:
    if not Membership.objects.filter(cohort_id=assessment.cohort_id, user=user).exists():
        raise _refuse("No such assessment for you.", "not_found", 404)


def _pause_practice(assessment: Assessment, user: User | int, until: datetime) -> None:
    """For an exam: mark the learner's practice as possibly paused until ``until`` (their deadline,
    or the close), so the practice gate (``learning.gates``) looks at their exams until then and
    costs nothing otherwise. Only ever moved later; the gate's own check says what is paused."""
    if not assessment.is_exam:
        return
    user_id = user if isinstance(user, int) else user.pk
    User.objects.filter(pk=user_id).filter(
        Q(practice_paused_until__isnull=True) | Q(practice_paused_until__lt=until)
    ).update(practice_paused_until=until)
    if isinstance(user, User) and (user.practice_paused_until is None or user.practice_paused_until < until):
        user.practice_paused_until = until


def instance_open(*, assessment: Assessment, user: User) -> Instance:
    """The learner's instance, created at their first open (questions drawn, numbers fixed, the
    time limit started). Opening again returns it unchanged."""
    _member(assessment, user)
    found = selectors.instance_of(assessment=assessment, user_id=user.pk)
    if found is not None and found.started_at is not None:
        return found
    now = timezone.now()
    terms = selectors.window_for(assessment=assessment, user_id=user.pk)
    if now < assessment.opens_at:
        raise _refuse(
            f"This assessment opens at {_when(assessment.opens_at, assessment.cohort.time_zone)}.", "not_open"
        )
    if now >= terms.closes_at:
        raise _refuse(f"This assessment closed at {_when(terms.closes_at, assessment.cohort.time_zone)}.", "closed")
    deadline = min(now + terms.time_limit, terms.closes_at) if terms.time_limit is not None else None
    try:
        with transaction.atomic():
            instance, _ = Instance.objects.select_for_update().get_or_create(assessment=assessment, user=user)
            if instance.started_at is not None:  # another request opened it meanwhile
                return selectors.instance_of(assessment=assessment, user_id=user.pk) or instance
            items = []
            position = 0
            for question in assessment.questions.order_by("position", "id"):
                for exercise in _pick(question, user.pk):
                    version = exercise.current_version
                    if version is None:
                        continue
                    variant = exam_variant(
                        user_id=user.pk, exercise=exercise, version=version, assessment_id=assessment.pk
                    )
                    position += 1
                    items.append(
                        InstanceQuestion(
                            instance=instance,
                            question=question,
                            exercise=exercise,
                            version=version,
                            position=position,
                            points=question.points,
                            variant=variants.record(variant) if not variant.is_seed else {},
                        )
                    )
            InstanceQuestion.objects.bulk_create(items)
            instance.started_at, instance.deadline = now, deadline
            instance.max_score = sum(i.points for i in items)
            instance.save(update_fields=["started_at", "deadline", "max_score", "updated_at"])
            _pause_practice(assessment, user, deadline or terms.closes_at)
    except IntegrityError:  # a concurrent first open won the race: theirs is the instance
        pass
    logger.info("assessment opened", extra={"user_id": user.pk, "assessment_id": assessment.pk})
    opened = selectors.instance_of(assessment=assessment, user_id=user.pk)
    assert opened is not None
    return opened


def _item_for(user: User, item_id: int) -> InstanceQuestion:
    item = (
        InstanceQuestion.objects.select_related("instance__assessment__cohort", "question", "exercise", "version")
        .filter(pk=item_id, instance__user=user)
        .first()
    )
    if item is None:
        raise _refuse("No such question for you.", "not_found", 404)
    return item


def _open_or_refuse(instance: Instance, terms: selectors.Window, now: datetime, zone: str) -> None:
    if instance.submitted_at is not None:
        raise _refuse(
            f"You submitted this assessment at {_when(instance.submitted_at, zone)}: it takes no more answers. "
            "Everything you answered before is kept.",
            "submitted",
        )
    if instance.deadline is not None and now >= instance.deadline:
        raise _refuse(
            f"Your time ran out at {_when(instance.deadline, zone)}: this answer was not recorded. Everything you "
            "answered before then is kept and graded.",
            "time_up",
        )
    if now >= terms.closes_at:
        raise _refuse(
            f"This assessment closed at {_when(terms.closes_at, zone)}: this answer was not recorded. Everything you "
            "answered before is kept and graded.",
            "closed",
        )


def variant_of(item: InstanceQuestion) -> Variant:
    return variants.recorded({"variant": item.variant}) if item.variant else variants.SEED


def answer_submit(*, user: User, item_id: int, payload: dict[str, Any]) -> Submission:
    """Grade an answer on the question's own numbers, with its credit (time × attempt).

    Refused with a clear message, and nothing recorded, after the time limit, the close or the
    last attempt; an unreadable answer is explained (400) and costs no attempt. The submission
    returned carries its question (``.item``, attempts and best as now) and the question its
    instance (``.item.instance``, score as now, with its assessment): no read is needed after."""
    return answer_grade(user=user, item_id=item_id, payload=payload)[0]


@transaction.atomic
def answer_grade(*, user: User, item_id: int, payload: dict[str, Any]) -> tuple[Submission, selectors.Window]:
    """``answer_submit``, and the learner's terms it was graded under (for the response)."""
    # One answer at a time per instance: the question and its instance are locked in the read that
    # finds them (with the id of the learner's override in force), so the limit checks and the count
    # cannot race, and the common answer costs one read before grading.
    in_force = Override.objects.filter(
        assessment_id=OuterRef("instance__assessment_id"), user_id=user.pk, revoked_at__isnull=True
    ).values("pk")[:1]
    item = (
        InstanceQuestion.objects.select_for_update(of=("self", "instance"))
        .select_related("instance__assessment__cohort", "question", "version")
        .annotate(override_id=Subquery(in_force))
        .filter(pk=item_id, instance__user=user)
        .order_by()
        .first()
    )
    if item is None:
        raise _refuse("No such question for you.", "not_found", 404)
    instance = item.instance
    assessment = instance.assessment
    now = timezone.now()
    override = Override.objects.get(pk=item.override_id) if item.override_id else None
    terms = selectors.window(assessment=assessment, override=override)
    _open_or_refuse(instance, terms, now, assessment.cohort.time_zone)
    if terms.max_attempts is not None and item.attempts >= terms.max_attempts:
        raise _refuse(f"You have used all {terms.max_attempts} attempts on this question.", "no_attempts_left")
    result = exercise_services.grade_payload(
        version=item.version, user_id=user.pk, payload=payload, variant=variant_of(item)
    )
    counted = result.counts
    k = item.attempts + 1
    time_credit = terms.credit_at(now)
    credit = time_credit * selectors.attempt_credit(assessment, k) / 100
    points = round(result.score * item.points * credit / 100, 6) if counted else 0.0
    submission = Submission.objects.create(
        item=item,
        raw=payload,
        parsed=result.parsed,
        correct=result.correct,
        score=result.score,
        counted=counted,
        late=time_credit < 100,
        credit=credit,
        points=points,
        feedback=result.feedback,
        details=result.details,
        created_at=now,
    )
    if counted:
        gain = max(0.0, points - item.best)
        item.attempts, item.best = k, item.best + gain
        item.save(update_fields=["attempts", "best"])
        if gain > 0:  # the instance's score is the sum of its questions' best
            instance.score = round(instance.score + gain, 6)
            instance.late = instance.late or time_credit < 100
            Instance.objects.filter(pk=instance.pk).update(score=instance.score, late=instance.late, updated_at=now)
    logger.info(
        "assessment answer graded",
        extra={"user_id": user.pk, "item_id": item.pk, "correct": result.correct, "credit": credit},
    )
    return submission, terms


@transaction.atomic
def hint_next(*, user: User, item_id: int) -> InstanceQuestion:
    item = _item_for(user, item_id)
    instance = Instance.objects.select_for_update().get(pk=item.instance_id)
    assessment = item.instance.assessment
    if assessment.is_exam or not assessment.hints:
        raise _refuse("This assessment offers no hints.", "no_hints")
    terms = selectors.window_for(assessment=assessment, user_id=user.pk)
    _open_or_refuse(instance, terms, timezone.now(), assessment.cohort.time_zone)
    total = len(cache.resolved(item.version, variant_of(item)).spec.hints)
    if item.hints_used >= total:
        raise _refuse("There are no more hints for this question.", "no_more_hints")
    item.hints_used += 1
    item.save(update_fields=["hints_used"])
    return item


def instance_submit(*, user: User, instance: Instance) -> Instance:
    """'Submit and close': no more answers; the score goes to the LMS. Submitting again is a no-op."""
    with transaction.atomic():
        locked = Instance.objects.select_for_update().get(pk=instance.pk, user=user)
        if locked.submitted_at is None and locked.started_at is not None:
            now = timezone.now()
            locked.submitted_at = now
            locked.closed_at = locked.closed_at or now
            locked.save(update_fields=["submitted_at", "closed_at", "updated_at"])
            transaction.on_commit(lambda: instance_scored.send(sender=Instance, instance_id=locked.pk))
    return selectors.instance_of(assessment=instance.assessment, user_id=user.pk) or locked


def instances_close_due(*, now: datetime | None = None, limit: int = 1000) -> int:
    """Mark instances closed whose time limit or close has passed without a submit, and send their
    scores (beat runs this every minute; safe to run in parallel: a compare-and-set per row)."""
    now = now or timezone.now()
    # Only what can be due: submitted, past its deadline, or past the assessment's close (an override
    # only ever moves a close later, so nothing due is missed; the exact check is per row below).
    candidates = (
        Instance.objects.filter(closed_at__isnull=True, started_at__isnull=False)
        .filter(Q(submitted_at__isnull=False) | Q(deadline__lte=now) | Q(assessment__closes_at__lte=now))
        .select_related("assessment")
    )
    closed = 0
    for instance in candidates.order_by("id")[:limit]:
        if not selectors.instance_closed(instance, at=now):
            continue
        if Instance.objects.filter(pk=instance.pk, closed_at__isnull=True).update(closed_at=now):
            closed += 1
            instance_scored.send(sender=Instance, instance_id=instance.pk)
    return closed


# ---- instructors ---------------------------------------------------------------------------------


def _reason(reason: str) -> str:
    text = (reason or "").strip()
    if not text:
        raise _refuse("Say why: a reason is required and kept with the change.", "reason_required", 400)
    return text[:2000]


def override_check(
    *,
    assessment: Assessment,
    user: User,
    reason: str,
    due_at: datetime | None = None,
    closes_at: datetime | None = None,
    time_factor: float | None = None,
    extra_attempts: int = 0,
) -> str:
    """The rules of a grant, without writing it (the admin's form shows their message); returns
    the reason as it will be kept."""
    _member(assessment, user)
    text = _reason(reason)
    if due_at is None and closes_at is None and time_factor is None and not extra_attempts:
        raise _refuse("An override changes a due date, the close, the time or the attempts.", "empty_override", 400)
    if time_factor is not None and not 1 <= time_factor <= 10:
        raise _refuse("The time factor is from 1 to 10 (e.g. 1.5).", "invalid_time_factor", 400)
    if extra_attempts < 0 or extra_attempts > 100:
        raise _refuse("Extra attempts are from 0 to 100.", "invalid_extra_attempts", 400)
    if due_at is not None and due_at < assessment.opens_at:
        raise _refuse("A due date before the assessment opens gives no extension.", "invalid_window", 400)
    if closes_at is not None and closes_at < assessment.closes_at:
        raise _refuse("An override may move the close later, not earlier.", "invalid_window", 400)
    return text


@transaction.atomic
def override_grant(
    *,
    assessment: Assessment,
    user: User,
    by: User,
    reason: str,
    due_at: datetime | None = None,
    closes_at: datetime | None = None,
    time_factor: float | None = None,
    extra_attempts: int = 0,
) -> Override:
    """Give one learner other terms. The override in force before it (if any) is revoked and kept;
    an instance already running gets its deadline recomputed from its start."""
    text = override_check(
        assessment=assessment,
        user=user,
        reason=reason,
        due_at=due_at,
        closes_at=closes_at,
        time_factor=time_factor,
        extra_attempts=extra_attempts,
    )
    now = timezone.now()
    Override.objects.select_for_update().filter(assessment=assessment, user=user, revoked_at__isnull=True).update(
        revoked_at=now, revoked_by=by
    )
    override = Override.objects.create(
        assessment=assessment,
        user=user,
        due_at=due_at,
        closes_at=closes_at,
        time_factor=time_factor,
        extra_attempts=extra_attempts,
        reason=text,
        granted_by=by,
    )
    _deadline_again(assessment, user.pk)
    logger.info("override granted", extra={"assessment_id": assessment.pk, "user_id": user.pk, "by": by.pk})
    return override


@transaction.atomic
def override_revoke(*, override: Override, by: User) -> Override:
    if override.revoked_at is None:
        override.revoked_at, override.revoked_by = timezone.now(), by
        override.save(update_fields=["revoked_at", "revoked_by"])
        _deadline_again(override.assessment, override.user_id)
    return override


def _deadline_again(assessment: Assessment, user_id: int) -> None:
    instance = Instance.objects.select_for_update().filter(assessment=assessment, user_id=user_id).first()
    if instance is None or instance.started_at is None or instance.submitted_at is not None:
        return
    terms = selectors.window_for(assessment=assessment, user_id=user_id)
    deadline = min(instance.started_at + terms.time_limit, terms.closes_at) if terms.time_limit is not None else None
    fields = ["deadline", "updated_at"]
    instance.deadline = deadline
    _pause_practice(assessment, user_id, deadline or terms.closes_at)
    if instance.closed_at is not None and not selectors.instance_closed(instance, terms=terms):
        instance.closed_at = None  # reopened by more time: it closes (and posts) again later
        fields.append("closed_at")
    instance.save(update_fields=fields)


@transaction.atomic
def score_override_set(*, instance: Instance, score: float | None, reason: str, by: User) -> Instance:
    """Set (or, with None, remove) an instance's score by hand; the change and its reason are kept."""
    text = _reason(reason)
    if score is not None and not 0 <= score <= 1_000_000:
        raise _refuse("A score is a number of points from 0.", "invalid_score", 400)
    locked = Instance.objects.select_for_update().get(pk=instance.pk)
    ScoreOverride.objects.create(instance=locked, score=score, previous=locked.final_score, reason=text, by=by)
    locked.score_override = score
    locked.save(update_fields=["score_override", "updated_at"])
    transaction.on_commit(lambda: instance_scored.send(sender=Instance, instance_id=locked.pk))
    logger.info("score overridden", extra={"instance_id": locked.pk, "by": by.pk})
    return locked


@transaction.atomic
def instance_for_grading(*, assessment: Assessment, user: User) -> Instance:
    """The learner's instance, or an empty one when they never opened it (so an instructor can
    enter a score for a learner who did not take it); opening it later still draws their questions."""
    _member(assessment, user)
    instance, _ = Instance.objects.get_or_create(assessment=assessment, user=user)
    return instance
