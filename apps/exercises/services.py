"""Writes: syncing content, grading attempts, revealing answers and hints.

Views, the admin and management commands all call these. Grading is pure (``grading/``); the
writes here are atomic, and an input we cannot grade raises before anything is written, so it
costs the learner nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.db.models import QuerySet

from apps.core.exceptions import ApplicationError
from apps.exercises import formats
from apps.exercises.content import cache
from apps.exercises.content.resolve import grading_hash
from apps.exercises.content.schema import ChapterSpec, ExerciseSpec, SkillsSpec, WorkbookSpec
from apps.exercises.content.source import ChapterText
from apps.exercises.content.variants import Variant
from apps.exercises.grading import numeric, symbolic
from apps.exercises.grading.base import GradeResult, InvalidAnswer
from apps.exercises.models import Chapter, ChapterSource, Exercise, ExerciseSource, ExerciseVersion, Skill, Workbook

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
    renumbered: list[str] = field(default_factory=list)

    def changed(self, outcome: str) -> list[str]:
        return {"created": self.created, "new_version": self.new_versions, "updated": self.updated}[outcome]


@transaction.atomic
def workbook_sync(
    *, spec: WorkbookSpec, keep: frozenset[str] = frozenset(), sources: Mapping[int, ChapterText] | None = None
) -> SyncReport:
    """Upsert a workbook from its validated spec, keyed by slug and exercise id (the number is display).

    Never deletes: exercises that left the files are retired (hidden, attempts kept), and a retired
    exercise is only ever brought back by its own id. An exercise whose grading changed gets a new
    version; prose-only edits (and renumbering) update the current version. Exercises whose ids are
    in ``keep`` are left as they are, though absent from the spec (``sync_content`` could not load
    them without the sandbox). ``sources`` (``content.source.workbook_texts``, by chapter number)
    are the files' texts, kept as written for downloads and the admin's editor.
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
    _chapters_sync(workbook=workbook, chapters=spec.chapters, keep=keep, sources=sources or {}, report=report)
    skills_sync(workbook=workbook, spec=spec.skills)
    cache.bump_generation()
    logger.info("content synced", extra={"workbook": spec.slug})
    return report


@transaction.atomic
def chapter_sync(
    *, workbook: Workbook, spec: ChapterSpec, source: ChapterText, keep: frozenset[str] = frozenset()
) -> SyncReport:
    """One chapter file (an upload in the admin), synced as ``workbook_sync`` syncs it with its
    workbook: the same upserts, and the chapter's exercises that left the file retired. The rest of
    the workbook is left alone; a number another chapter holds is NumberTaken (nothing written)."""
    report = SyncReport(workbook=workbook.slug)
    _chapters_sync(
        workbook=workbook, chapters=[spec], keep=keep, sources={spec.number: source}, report=report, only=spec.number
    )
    cache.bump_generation()
    logger.info("chapter synced", extra={"workbook": workbook.slug, "chapter": spec.number})
    return report


def _chapters_sync(
    *,
    workbook: Workbook,
    chapters: list[ChapterSpec],
    keep: frozenset[str],
    sources: Mapping[int, ChapterText],
    report: SyncReport,
    only: int | None = None,
) -> None:
    """Upsert chapters and their exercises; retire the active exercises (of chapter ``only``, or of
    the whole workbook) that are not in them."""
    wanted = {e.id: e for c in chapters for e in c.exercises}
    # Phase one: free the numbers. Numbers are unique among active exercises only, so retiring the
    # exercises that left the files, and setting aside those about to change number, lets phase two
    # give every number to its new holder in any order (3.3 and 3.4 may swap).
    active = list(Exercise.objects.select_for_update().filter(workbook=workbook, is_active=True))
    scope = (
        None if only is None else Chapter.objects.filter(workbook=workbook, number=only).values_list("pk", flat=True)
    )
    in_scope = None if scope is None else set(scope)
    gone = [
        e
        for e in active
        if e.key not in wanted and e.key not in keep and (in_scope is None or e.chapter_id in in_scope)
    ]
    moving = [e for e in active if e.key in wanted and e.number != wanted[e.key].number]
    report.retired = sorted(e.number for e in gone)
    report.renumbered = [f"{e.number} → {wanted[e.key].number}" for e in moving]
    Exercise.objects.filter(pk__in=[e.pk for e in gone + moving]).update(is_active=False)
    # Phase two: upsert by id; exercise_upsert reactivates the moving ones under their new numbers.
    for chapter_spec in chapters:
        text = sources.get(chapter_spec.number)
        chapter = chapter_upsert(workbook=workbook, spec=chapter_spec, source=text)
        for position, exercise_spec in enumerate(chapter_spec.exercises):
            _, outcome = exercise_upsert(
                workbook=workbook,
                chapter=chapter,
                spec=exercise_spec,
                position=position,
                source=text.block(exercise_spec.id) if text is not None else None,
            )
            if outcome == "unchanged":
                report.unchanged += 1
            else:
                report.changed(outcome).append(exercise_spec.number)


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


def chapter_upsert(*, workbook: Workbook, spec: ChapterSpec, source: ChapterText | None = None) -> Chapter:
    """The chapter row; with ``source``, its file's text around the exercises' blocks too."""
    chapter, _ = Chapter.objects.update_or_create(
        workbook=workbook,
        number=spec.number,
        defaults={"title": spec.title, "intro": spec.intro, "givens": spec.givens, "derived": spec.derived},
    )
    if source is not None:
        kept = {"name": source.name, "head": source.head, "tail": source.tail}
        stored, created = ChapterSource.objects.get_or_create(chapter=chapter, defaults=kept)
        if not created and any(getattr(stored, k) != v for k, v in kept.items()):
            ChapterSource.objects.filter(pk=stored.pk).update(**kept)
    return chapter


def _source_keep(*, exercise: Exercise, text: str) -> None:
    """An exercise's block as the author wrote it; written only when it changed (one query if not)."""
    stored, created = ExerciseSource.objects.get_or_create(exercise=exercise, defaults={"text": text})
    if not created and stored.text != text:
        ExerciseSource.objects.filter(pk=stored.pk).update(text=text)


class NumberTaken(ApplicationError):
    """Another active exercise of the workbook shows this number (``workbook_sync`` frees them first)."""

    status_code = 409


@transaction.atomic
def exercise_upsert(
    *, workbook: Workbook, chapter: Chapter, spec: ExerciseSpec, position: int, source: str | None = None
) -> tuple[Exercise, str]:
    """Create or update the exercise with this id. Returns it and what happened: created, new_version,
    updated, unchanged. Raises NumberTaken if another active exercise holds the number. ``source`` is
    its block as written (``content/source.py``), kept whatever the outcome: a comment is no change
    to the spec, but it is the author's text."""
    spec_json = spec.model_dump(mode="json")
    g_hash, c_hash = grading_hash(spec), cache.content_hash(spec_json)
    fields = {
        "chapter": chapter,
        "number": spec.number,
        "position": position,
        "title": spec.title,
        "kind": spec.kind,
        "format": spec.format,
        "difficulty": spec.difficulty,
        "is_active": True,
    }
    exercise = Exercise.objects.select_for_update().filter(workbook=workbook, key=spec.id).first()
    created = exercise is None
    if exercise is None or exercise.number != spec.number or not exercise.is_active:
        holder = (
            Exercise.objects.filter(workbook=workbook, number=spec.number, is_active=True)
            .exclude(key=spec.id)
            .values_list("key", flat=True)
            .first()
        )
        if holder is not None:
            raise NumberTaken(
                f"Exercise {spec.number} of {workbook.slug} is {holder!r}, not {spec.id!r}: renumber it first.",
                code="number_taken",
            )
    if exercise is None:
        exercise = Exercise.objects.create(workbook=workbook, key=spec.id, **fields)
    else:
        changed = [k for k, v in fields.items() if getattr(exercise, k) != v]
        for k in changed:
            setattr(exercise, k, fields[k])
        if changed:
            exercise.save(update_fields=changed)
            cache.bump_generation()
    if source is not None:
        _source_keep(exercise=exercise, text=source)
    current = exercise.current_version
    same_grading = current is not None and current.grading_hash in (g_hash, _legacy_grading_hash(current, spec))
    if current is not None and same_grading and current.content_hash == c_hash:
        return exercise, "unchanged"
    cache.bump_generation()
    if current is not None and same_grading:
        # A legacy hash (written before ids) is kept while the number it includes stays: option
        # and step ids derive from it, and they should not change under a learner for a prose edit.
        keep = current.grading_hash == grading_hash(spec, legacy=True)
        current.spec, current.content_hash = spec_json, c_hash
        current.grading_hash = current.grading_hash if keep else g_hash
        current.save(update_fields=["spec", "content_hash", "grading_hash"])
        return exercise, "updated"
    number = (current.version + 1) if current is not None else 1
    version = ExerciseVersion.objects.create(
        exercise=exercise, version=number, spec=spec_json, grading_hash=g_hash, content_hash=c_hash
    )
    exercise.current_version = version
    exercise.save(update_fields=["current_version"])
    return exercise, "created" if created else "new_version"


# ---------------------------------------------------------------------------------------------
# Edits in the admin: every content write changes what learners see, so each bumps the content
# generation (every process drops its exercise lookups).
# ---------------------------------------------------------------------------------------------

Content = Workbook | Chapter | Exercise


@transaction.atomic
def exercise_save(
    *, chapter: Chapter, spec: ExerciseSpec, position: int, is_active: bool | None = None, source: str | None = None
) -> tuple[Exercise, str]:
    """An exercise authored in the admin: ``exercise_upsert`` (which reactivates it: the content
    files are the record), then retired if ``is_active`` is False. Returns it and the upsert's
    outcome. ``source`` is the block as the author wrote it in the editor."""
    exercise, outcome = exercise_upsert(
        workbook=chapter.workbook, chapter=chapter, spec=spec, position=position, source=source
    )
    if is_active is not None and exercise.is_active != is_active:
        exercise.is_active = is_active
        exercise.save(update_fields=["is_active"])
    cache.bump_generation()
    return exercise, outcome


@transaction.atomic
def content_save(*, obj: Workbook | Chapter) -> None:
    """A workbook or chapter edited as a row (its form validated it)."""
    obj.save()
    cache.bump_generation()


@transaction.atomic
def content_delete(*, objects: Content | QuerySet[Workbook] | QuerySet[Chapter] | QuerySet[Exercise]) -> None:
    """Delete one content row or a queryset of them (with what cascades from them)."""
    objects.delete()
    cache.bump_generation()


def _legacy_grading_hash(version: ExerciseVersion, spec: ExerciseSpec) -> str:
    """The hash ``spec`` would have had before exercises had ids, numbered as ``version`` was written."""
    written = version.spec.get("number") if isinstance(version.spec, dict) else None
    return grading_hash(spec.model_copy(update={"number": str(written or spec.number)}), legacy=True)


# ---------------------------------------------------------------------------------------------
# Grading
# ---------------------------------------------------------------------------------------------


class UngradableAnswer(ApplicationError):
    """Input we cannot grade: explained, and it costs no attempt."""

    status_code = 400


def _invalid(exc: InvalidAnswer) -> UngradableAnswer:
    details = {"understood": exc.understood} if exc.understood else {}
    if exc.field is not None:  # which part or cell to mark as unread
        details["field"] = exc.field
    return UngradableAnswer(exc.message, code=exc.code, details=details)


def grade_payload(
    *, version: ExerciseVersion, user_id: int, payload: dict[str, Any], variant: Variant | None = None
) -> GradeResult:
    """Grade a learner's payload against a version, on ``variant``'s numbers (default: the seed's).
    Raises UngradableAnswer; writes nothing."""
    r = cache.resolved(version, variant)
    try:
        result = formats.get(r.spec.format).grade(version, r, payload)
    except InvalidAnswer as exc:
        raise _invalid(exc) from None
    if result is None:
        raise ApplicationError("Code is graded in the sandbox, not here.", code="code_is_queued", status_code=400)
    return result


def answer_preview(*, exercise: Exercise, text: str, field: str | None = None) -> dict[str, Any]:
    """What a number would be read as, without grading it ("512 MiB = 536,870,912 bytes").

    The reading is ``numeric.interpret``'s, the same the grader takes. ``field`` names a numeric
    part or table cell; a numeric exercise has none.
    """
    version = exercise.current_version
    # Every variant reads a number the same way (units do not vary): the seed's targets serve all.
    r = cache.resolved(version) if version else None
    fmt = formats.get(r.spec.format) if r is not None else None
    targets = fmt.preview_targets(r) if fmt is not None and r is not None else {}
    expressions = fmt.preview_expressions(r) if fmt is not None and r is not None else {}
    if not targets and not expressions:
        raise ApplicationError("Only numbers and expressions have a preview.", code="no_preview")
    expression = expressions.get(field or "")
    if expression is not None:  # an expression part: how it parses, as the grader parses it
        try:
            parsed = symbolic.parse(text, expression.symbols)
        except InvalidAnswer as exc:
            raise _invalid(exc) from None
        return {"understood": symbolic.show(parsed), "value": None, "unit": ""}
    target = targets.get(field or "")
    if target is None:
        known = ", ".join(sorted(k for k in [*targets, *expressions] if k)) or "none (this exercise has one answer)"
        raise ApplicationError(f"No field {field!r} to preview here; fields: {known}.", code="unknown_field")
    try:
        reading = numeric.read(text, expected=target.dim)
        interp = numeric.interpret(reading, expected=target.dim, input_unit=target.input_unit)
    except InvalidAnswer as exc:
        raise _invalid(exc) from None
    return {"understood": interp.understood, "value": interp.value, "unit": target.dim.label()}
