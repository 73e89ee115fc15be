"""Writes: syncing content, grading attempts, revealing answers and hints.

Views, the admin and management commands all call these. Grading is pure (``grading/``); the
writes here are atomic, and an input we cannot grade raises before anything is written, so it
costs the learner nothing.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.utils import timezone

from apps.accounts.models import User
from apps.core.exceptions import ApplicationError
from apps.exercises import parts, presentation
from apps.exercises.choices import AnswerFormat, AttemptPart, Verdict
from apps.exercises.content import cache
from apps.exercises.content.resolve import grading_hash
from apps.exercises.content.schema import ChapterSpec, ExerciseSpec, SkillsSpec, WorkbookSpec
from apps.exercises.grading import numeric
from apps.exercises.grading.base import GradeResult, InvalidAnswer
from apps.exercises.grading.structured import grade_choice, grade_lines, grade_order, grade_parts, grade_table
from apps.exercises.models import Attempt, Chapter, Exercise, ExerciseVersion, Skill, Workbook
from apps.progress import services as progress_services
from apps.progress.models import ExerciseProgress
from apps.sandbox import services as sandbox_services

logger = logging.getLogger(__name__)


# ---------------------------------------------------------------------------------------------
# Content
# ---------------------------------------------------------------------------------------------


@dataclass
class SyncReport:
    workbook: str
    created: list[str] = field(default_factory=list)
    new_versions: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: int = 0
    retired: list[str] = field(default_factory=list)

    def changed(self, outcome: str) -> list[str]:
        return {"created": self.created, "new_version": self.new_versions, "updated": self.updated}[outcome]


@transaction.atomic
def workbook_sync(*, spec: WorkbookSpec) -> SyncReport:
    """Upsert a workbook from its validated spec, keyed by slug and exercise number.

    Never deletes: exercises that left the files are retired (hidden, attempts kept). An exercise
    whose grading changed gets a new version; prose-only edits update the current version.
    """
    workbook, _ = Workbook.objects.update_or_create(
        slug=spec.slug,
        defaults={
            "title": spec.title,
            "summary": spec.summary,
            "prerequisites": spec.prerequisites,
            "source": spec.source,
            "position": spec.position,
        },
    )
    report = SyncReport(workbook=spec.slug)
    seen: set[str] = set()
    for chapter_spec in spec.chapters:
        chapter = chapter_upsert(workbook=workbook, spec=chapter_spec)
        for position, exercise_spec in enumerate(chapter_spec.exercises):
            seen.add(exercise_spec.number)
            _, outcome = exercise_upsert(workbook=workbook, chapter=chapter, spec=exercise_spec, position=position)
            if outcome == "unchanged":
                report.unchanged += 1
            else:
                report.changed(outcome).append(exercise_spec.number)
    gone = Exercise.objects.filter(workbook=workbook, is_active=True).exclude(number__in=seen)
    report.retired = sorted(gone.values_list("number", flat=True))
    gone.update(is_active=False)
    skills_sync(workbook=workbook, spec=spec.skills)
    cache.bump_generation()
    logger.info("content synced", extra={"workbook": spec.slug})
    return report


def skills_sync(*, workbook: Workbook, spec: SkillsSpec | None) -> None:
    """The checklist as in skills.yaml. Skills that left it are retired, learners' checks kept."""
    protocol = spec.protocol if spec else ""
    if workbook.skills_protocol != protocol:
        workbook.skills_protocol = protocol
        workbook.save(update_fields=["skills_protocol", "updated_at"])
    chapters = {c.number: c for c in workbook.chapters.all()}
    keys = []
    for position, skill in enumerate(spec.skills if spec else []):
        keys.append(skill.key)
        Skill.objects.update_or_create(
            workbook=workbook,
            key=skill.key,
            defaults={
                "text": skill.text,
                "chapter": chapters.get(skill.chapter),
                "exercises": list(skill.exercises),
                "position": position,
                "is_active": True,
            },
        )
    Skill.objects.filter(workbook=workbook).exclude(key__in=keys).update(is_active=False)


def chapter_upsert(*, workbook: Workbook, spec: ChapterSpec) -> Chapter:
    chapter, _ = Chapter.objects.update_or_create(
        workbook=workbook,
        number=spec.number,
        defaults={"title": spec.title, "intro": spec.intro, "givens": spec.givens, "derived": spec.derived},
    )
    return chapter


@transaction.atomic
def exercise_upsert(*, workbook: Workbook, chapter: Chapter, spec: ExerciseSpec, position: int) -> tuple[Exercise, str]:
    """Create or update one exercise. Returns it and what happened: created, new_version, updated, unchanged."""
    spec_json = spec.model_dump(mode="json")
    g_hash, c_hash = grading_hash(spec), cache.content_hash(spec_json)
    fields = {
        "chapter": chapter,
        "position": position,
        "title": spec.title,
        "kind": spec.kind,
        "format": spec.format,
        "difficulty": spec.difficulty,
        "is_active": True,
    }
    exercise = Exercise.objects.select_for_update().filter(workbook=workbook, number=spec.number).first()
    created = exercise is None
    if exercise is None:
        exercise = Exercise.objects.create(workbook=workbook, number=spec.number, **fields)
    else:
        changed = [k for k, v in fields.items() if getattr(exercise, k) != v]
        for k in changed:
            setattr(exercise, k, fields[k])
        if changed:
            exercise.save(update_fields=changed)
            cache.bump_generation()
    current = exercise.current_version
    if current is not None and current.grading_hash == g_hash and current.content_hash == c_hash:
        return exercise, "unchanged"
    cache.bump_generation()
    if current is not None and current.grading_hash == g_hash:
        current.spec, current.content_hash = spec_json, c_hash
        current.save(update_fields=["spec", "content_hash"])
        return exercise, "updated"
    number = (current.version + 1) if current is not None else 1
    version = ExerciseVersion.objects.create(
        exercise=exercise, version=number, spec=spec_json, grading_hash=g_hash, content_hash=c_hash
    )
    exercise.current_version = version
    exercise.save(update_fields=["current_version"])
    return exercise, "created" if created else "new_version"


# ---------------------------------------------------------------------------------------------
# Grading
# ---------------------------------------------------------------------------------------------


class UngradableAnswer(ApplicationError):
    """Input we cannot grade: explained, and it costs no attempt."""

    status_code = 400


def _invalid(exc: InvalidAnswer) -> UngradableAnswer:
    details = {"understood": exc.understood} if exc.understood else {}
    return UngradableAnswer(exc.message, code=exc.code, details=details)


def grade_payload(*, version: ExerciseVersion, user_id: int, payload: dict[str, Any]) -> GradeResult:
    """Grade a learner's payload against a version. Raises UngradableAnswer; writes nothing."""
    r = cache.resolved(version)
    spec = r.spec
    try:
        if spec.format == AnswerFormat.NUMERIC:
            assert r.numeric is not None
            return numeric.grade(_field(payload, "answer", str), r.numeric)
        if spec.format == AnswerFormat.CHOICE:
            ids = presentation.option_ids(version, len(spec.options or []))
            chosen = presentation.map_ids(_field(payload, "choices", list), {v: i for i, v in enumerate(ids)}, "option")
            return grade_choice(spec.options or [], chosen, multiple=spec.multiple)
        if spec.format == AnswerFormat.ORDER:
            mapping = {v: k for k, v in presentation.step_ids(version, spec).items()}
            order = presentation.map_ids(_field(payload, "order", list), mapping, "step")
            return grade_order(spec.steps or [], spec.constraints, order)
        if spec.format == AnswerFormat.LINES and "code" not in payload:
            assert spec.code is not None
            lines = _field(payload, "lines", list)
            if not all(isinstance(n, int) and not isinstance(n, bool) for n in lines):
                raise InvalidAnswer("bad_payload", "Lines are given by their numbers.")
            return grade_lines(spec.buggy_lines or [], lines, line_count=len(spec.code.starter.splitlines()))
        if spec.format == AnswerFormat.TABLE:
            cells = _field(payload, "cells", dict)
            return grade_table(r.cells, presentation.table_labels(spec), {str(k): str(v) for k, v in cells.items()})
        if spec.format == AnswerFormat.PARTS:
            answers = _field(payload, "parts", dict)
            return grade_parts(r.parts, presentation.part_labels(spec), {str(k): str(v) for k, v in answers.items()})
    except InvalidAnswer as exc:
        raise _invalid(exc) from None
    raise ApplicationError("Code is graded in the sandbox, not here.", code="code_is_queued", status_code=400)


_KIND_NAMES: dict[type, str] = {str: "a string", list: "a list", dict: "an object"}


def _field(payload: dict[str, Any], name: str, kind: type) -> Any:
    value = payload.get(name)
    if not isinstance(value, kind):
        expected = _KIND_NAMES[kind]
        raise InvalidAnswer("bad_payload", f"This exercise takes `{name}`: {expected}.")
    return value


@dataclass(frozen=True)
class AttemptOutcome:
    attempt: Attempt
    progress: ExerciseProgress | None
    first_solve: bool

    @property
    def pending(self) -> bool:
        """Queued for the sandbox: the verdict comes later (poll the attempt's URL)."""
        return not self.attempt.is_final


def attempt_create(*, user: User, exercise: Exercise, payload: dict[str, Any]) -> AttemptOutcome:
    """Grade and record an attempt, and update the learner's progress in the same transaction.

    Code (a Build, or a Debug's fix) is queued for the sandbox instead: the attempt comes back
    ``queued`` and is counted when a worker grades it.
    """
    version = exercise.current_version
    if version is None:
        raise ApplicationError("This exercise has no content yet.", code="not_ready", status_code=409)
    spec = cache.resolved(version).spec
    part = parts.part_of(spec, payload)
    if part == AttemptPart.CODE:
        queued = sandbox_services.code_attempt_submit(user=user, exercise=exercise, version=version, payload=payload)
        return AttemptOutcome(attempt=queued, progress=None, first_solve=False)
    result = grade_payload(version=version, user_id=user.pk, payload=payload)
    attempt = Attempt(
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
        details=result.details,
        created_at=timezone.now(),
    )
    progress, first_solve = progress_services.attempt_record(
        attempt=attempt, part_bit=parts.bit(spec, part), all_parts=parts.all_bits(spec)
    )
    logger.info(
        "attempt graded",
        extra={"user_id": user.pk, "exercise_id": exercise.pk, "attempt_id": attempt.pk, "verdict": attempt.verdict},
    )
    return AttemptOutcome(attempt=attempt, progress=progress, first_solve=first_solve)


def answer_preview(*, exercise: Exercise, text: str, field: str | None = None) -> dict[str, Any]:
    """What a number would be read as, without grading it ("512 MiB = 536,870,912 bytes").

    The reading is ``numeric.interpret``'s, the same the grader takes. ``field`` names a numeric
    part or table cell; a numeric exercise has none.
    """
    version = exercise.current_version
    r = cache.resolved(version) if version else None
    targets: dict[str, numeric.NumericTarget] = {}
    if r is not None:
        if r.numeric is not None:
            targets[""] = r.numeric
        targets |= {k: t for k, t in r.parts.items() if isinstance(t, numeric.NumericTarget)}
        targets |= r.cells
    if not targets:
        raise ApplicationError("Only numbers have a preview.", code="no_preview")
    target = targets.get(field or "")
    if target is None:
        known = ", ".join(sorted(k for k in targets if k)) or "none (this exercise has one answer)"
        raise ApplicationError(f"No numeric field {field!r} here; fields: {known}.", code="unknown_field")
    try:
        reading = numeric.read(text, expected=target.dim)
        interp = numeric.interpret(reading, expected=target.dim, input_unit=target.input_unit)
    except InvalidAnswer as exc:
        raise _invalid(exc) from None
    return {"understood": interp.understood, "value": interp.value, "unit": target.dim.label()}


# ---------------------------------------------------------------------------------------------
# Reveal and hints
# ---------------------------------------------------------------------------------------------


@transaction.atomic
def exercise_reveal(*, user: User, exercise: Exercise) -> ExerciseProgress:
    """Give up and see the answer. Solving afterwards completes the exercise but earns no points."""
    progress = progress_services.progress_lock(user=user, exercise=exercise)
    if progress.revealed_at is None:
        progress.revealed_at = timezone.now()
        # Revealing before ever solving gives up this exercise's points for good (a reset keeps it).
        progress.forfeited = progress.forfeited or progress.first_solved_at is None
        progress.save(update_fields=["revealed_at", "forfeited"])
        logger.info("answer revealed", extra={"user_id": user.pk, "exercise_id": exercise.pk})
    return progress


@transaction.atomic
def hint_reveal_next(*, user: User, exercise: Exercise) -> ExerciseProgress:
    version = exercise.current_version
    total = len(cache.resolved(version).spec.hints) if version else 0
    progress = progress_services.progress_lock(user=user, exercise=exercise)
    if progress.hints_used >= total:
        raise ApplicationError("There are no more hints for this exercise.", code="no_more_hints", status_code=409)
    progress.hints_used += 1
    progress.save(update_fields=["hints_used"])
    return progress
