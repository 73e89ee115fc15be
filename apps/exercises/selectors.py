"""Reads. Every read a user can reach takes the acting user and is scoped to them: another
learner's attempt is a 404, never a 403. Lists run a fixed number of queries."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import QuerySet
from django.http import Http404

from apps.accounts.models import Role, User
from apps.core.exceptions import ApplicationError
from apps.exercises.choices import AttemptPart, AttemptStatus
from apps.exercises.content import cache, export, loader, source
from apps.exercises.grading.formula import scope_of
from apps.exercises.models import (
    Attempt,
    Chapter,
    ChapterSource,
    Exercise,
    ExerciseSource,
    ExerciseVersion,
    Verdict,
    Workbook,
)


@dataclass(frozen=True)
class Counts:
    total: int
    solved: int

    @property
    def percent(self) -> int:
        return round(100 * self.solved / self.total) if self.total else 0


def chapter_scope(chapter: Chapter) -> dict[str, Any]:
    """The chapter's givens and derived values, evaluated: what its prose and exercises refer to."""
    return scope_of(chapter.givens or {}, chapter.derived or {})


def workbook_get(*, slug: str) -> Workbook:
    try:
        return Workbook.objects.get(slug=slug, is_published=True)
    except Workbook.DoesNotExist:
        raise Http404("No such workbook.") from None


def chapter_get(*, workbook: Workbook, number: int) -> Chapter:
    try:
        return workbook.chapters.get(number=number)
    except Chapter.DoesNotExist:
        raise Http404("No such chapter.") from None


def exercise_queryset() -> QuerySet[Exercise]:
    # The version's spec is only read on a cache miss (content/cache.py), so it is deferred:
    # decoding kilobytes of jsonb on every request was most of the grading path's cost.
    return (
        Exercise.objects.filter(is_active=True)
        .select_related("workbook", "chapter", "current_version")
        .defer("current_version__spec", "chapter__intro", "workbook__summary", "workbook__prerequisites")
    )


def exercise_list(*, workbook: Workbook, chapter: Chapter | None = None) -> QuerySet[Exercise]:
    """A workbook's (or chapter's) active exercises in order, with their workbook and chapter.

    Listings show numbers, titles, kinds and chapter numbers: the version and the chapter's
    intro and formulas are not fetched (and decoded) once per exercise (bench/pages.py).
    """
    qs = (
        Exercise.objects.filter(is_active=True, workbook=workbook)
        .select_related("workbook", "chapter")
        .defer("chapter__intro", "chapter__givens", "chapter__derived", "workbook__summary", "workbook__prerequisites")
    )
    if chapter is not None:
        qs = qs.filter(chapter=chapter)
    return qs.order_by("chapter__number", "position")


_lookups: dict[tuple[str, str], tuple[str, Exercise]] = {}


def exercise_get(*, workbook_slug: str, number: str) -> Exercise:
    """An active exercise of a published workbook, with its current version (spec deferred).

    Cached per process and invalidated by the content generation token (content/cache.py):
    this lookup is on every exercise request and the four-table query dominated grading time.
    The instance is shared read-only between requests of a process.
    """
    generation = cache.generation()
    hit = _lookups.get((workbook_slug, number))
    if hit is not None and hit[0] == generation:
        return hit[1]
    try:
        exercise = exercise_queryset().get(workbook__slug=workbook_slug, workbook__is_published=True, number=number)
    except Exercise.DoesNotExist:
        raise Http404("No such exercise.") from None
    if len(_lookups) > 10_000:
        _lookups.clear()
    _lookups[(workbook_slug, number)] = (generation, exercise)
    return exercise


def neighbours(*, exercise: Exercise) -> tuple[str | None, str | None]:
    """The numbers of the previous and next exercise in the workbook, for navigation: one query."""
    ordered = list(
        Exercise.objects.filter(workbook_id=exercise.workbook_id, is_active=True)
        .order_by("chapter__number", "position")
        .values_list("pk", "number")
    )
    i = [pk for pk, _ in ordered].index(exercise.pk)
    previous = ordered[i - 1][1] if i > 0 else None
    following = ordered[i + 1][1] if i + 1 < len(ordered) else None
    return previous, following


def attempt_list(
    *, user: User, exercise: Exercise | None = None, workbook_slug: str | None = None
) -> QuerySet[Attempt]:
    """The caller's own attempts, newest first."""
    qs = Attempt.objects.filter(user=user).select_related("exercise__workbook", "version")
    if exercise is not None:
        qs = qs.filter(exercise=exercise)
    if workbook_slug is not None:
        qs = qs.filter(exercise__workbook__slug=workbook_slug)
    return qs.order_by("-created_at", "-id")


def attempt_get(*, user: User, attempt_id: int) -> Attempt:
    """One of the caller's attempts; anyone else's is a 404."""
    try:
        return attempt_list(user=user).get(pk=attempt_id)
    except Attempt.DoesNotExist:
        raise Http404("No such attempt.") from None


# The exercise page's reads of one attempt are plain statements mapped by ``raw()``: composing
# them with the ORM cost more Python than PostgreSQL's work on them (bench/pages.py).
_LAST_CODE_SQL = f"""SELECT * FROM {Attempt._meta.db_table}
WHERE user_id = %s AND exercise_id = %s AND part = %s
ORDER BY created_at DESC, id DESC LIMIT 1"""  # noqa: S608 - table names are ours, values are parameters


def last_code_attempt(*, user: User, exercise: Exercise) -> Attempt | None:
    """The caller's latest code submission on an exercise (a Build's code, a Debug's fix), on any
    version and whatever its outcome (queued, graded, or not graded for a sandbox fault): the code
    they last sent is theirs to carry on from. Code does not vary with a learner's numbers, so
    there is no round to match. One query, on the (user, exercise, created_at) index."""
    found = next(iter(Attempt.objects.raw(_LAST_CODE_SQL, [user.pk, exercise.pk, AttemptPart.CODE.value])), None)
    if found is not None:
        found.exercise = exercise
    return found


_LAST_ANSWER_SQL = f"""SELECT id, parsed, details, verdict, part FROM {Attempt._meta.db_table}
WHERE user_id = %s AND version_id = %s AND round = %s AND status = %s AND part IN (%s, %s)
ORDER BY created_at DESC, id DESC LIMIT 1"""  # noqa: S608 - table names are ours, values are parameters


def last_answer(*, user_id: int, version: ExerciseVersion, round: int) -> Attempt | None:  # noqa: A002 - the word
    """The learner's latest graded answer to a version on one round of numbers, or None: what a
    solution shows beside the correct one (their choice, order, lines, cells). Code is left out
    (a Debug's lines are its answer here). One query; the attempt's other fields are deferred."""
    params = [user_id, version.pk, round, AttemptStatus.GRADED.value, AttemptPart.WHOLE.value, AttemptPart.LINES.value]
    return next(iter(Attempt.objects.raw(_LAST_ANSWER_SQL, params)), None)


def latest_values(*, user_id: int, version: ExerciseVersion, limit: int = 20) -> dict[str, float]:
    """The learner's most recent number for each field of a version (base units): for the plot.

    A numeric answer is keyed ``answer``; parts and table cells by their key. One query.
    """
    out: dict[str, float] = {}
    rows = (
        Attempt.objects.filter(user_id=user_id, version=version, verdict__in=[Verdict.CORRECT, Verdict.INCORRECT])
        .order_by("-created_at", "-id")
        .values_list("parsed", "details")[:limit]
    )
    for parsed, details in rows:
        if isinstance(parsed, dict) and isinstance(parsed.get("value"), int | float):
            out.setdefault("answer", float(parsed["value"]))
        cells = details.get("cells") if isinstance(details, dict) else None
        for key, verdict in (cells or {}).items():
            if isinstance(verdict, dict) and isinstance(verdict.get("value"), int | float):
                out.setdefault(key, float(verdict["value"]))
    return out


def code_synced(*, slug: str) -> dict[str, dict[str, Any]]:
    """The code of each exercise of a workbook as last synced (its current version's), by exercise
    id: ``sync_content`` keeps the expected values it computed then for unchanged code."""
    versions = ExerciseVersion.objects.filter(
        exercise__workbook__slug=slug, exercise__current_version=models.F("pk"), spec__has_key="code"
    ).values_list("exercise__key", "spec")
    return {key: spec["code"] for key, spec in versions if isinstance(spec.get("code"), dict)}


def workbook_export(*, user: User, slug: str) -> dict[str, Any]:
    """What ``manage.py export_content --workbook <slug>`` prints, for authors (and superusers):
    the content files' exercises with their evaluated answers. Everyone else is refused whatever
    the slug (403 before 404, so the refusal says nothing about which workbooks exist). Reads the
    content folder and runs no code: reference solutions fill in expected test values, which the
    export only counts."""
    if not (user.is_active and (user.role == Role.AUTHOR or user.is_superuser)):
        raise ApplicationError("Only authors export content.", code="permission_denied", status_code=403)
    try:
        return export.workbook_export(settings.CONTENT_DIRS, slug)
    except export.WorkbookMissing:
        raise Http404("No such workbook.") from None
    except export.ExportError as exc:
        raise ApplicationError(
            "The workbook's content files do not load; `manage.py check_content` explains.",
            code="content_invalid",
            status_code=409,
            details={"problems": str(exc)},
        ) from None


def scenario_members(*, exercise: Exercise) -> list[Exercise]:
    """The other active exercises of ``exercise``'s chapter that share its scenario (none outside
    a scenario): new numbers for one move them too."""
    version = exercise.current_version
    if version is None:
        return []
    vary = cache.resolved(version).spec.vary
    if vary is None or vary.scenario is None:
        return []
    name = vary.scenario.name
    members = []
    for other in (
        Exercise.objects.filter(chapter_id=exercise.chapter_id, is_active=True)
        .exclude(pk=exercise.pk)
        .select_related("current_version")
        .order_by("position")
    ):
        other_vary = cache.resolved(other.current_version).spec.vary if other.current_version else None
        if other_vary is not None and other_vary.scenario is not None and other_vary.scenario.name == name:
            members.append(other)
    return members


# ---------------------------------------------------------------------------------------------
# The author's text (content/source.py): what the admin's editor shows and downloads give
# ---------------------------------------------------------------------------------------------


def exercise_source(*, exercise: Exercise) -> str:
    """The exercise's block as written in its chapter file (``  - number: ...`` up to the next item,
    comments included), as last synced or saved; for an exercise that has none (made in the admin
    before texts were kept) a block written from its current spec. Empty without a version.
    ``content.source.as_block``/``chapter_load`` read such a block back with the loader's rules."""
    text = ExerciseSource.objects.filter(exercise_id=exercise.pk).values_list("text", flat=True).first()
    if text:
        return text
    version = exercise.current_version
    return source.dump_block(version.spec) if version is not None else ""


def exercise_sources(*, exercises: list[Exercise]) -> dict[int, str]:
    """``exercise_source`` of each exercise (with its current version selected), by pk: one query."""
    kept = dict(
        ExerciseSource.objects.filter(exercise_id__in=[e.pk for e in exercises]).values_list("exercise_id", "text")
    )
    out = {}
    for exercise in exercises:
        version = exercise.current_version
        out[exercise.pk] = kept.get(exercise.pk) or (source.dump_block(version.spec) if version is not None else "")
    return out


def exercise_edit_read(*, chapter: Chapter, exercise: Exercise | None, text: str) -> source.Edit:
    """An exercise's block as an author edited it (the admin's form, a draft), read as part of its
    chapter file by the loader's rules (``source.block_read``: its presets apply; code folders keep
    the current version's files), then held to what identifies an exercise: an edit keeps its id,
    a new exercise takes an id never used in the workbook, and a number no other active exercise
    holds. Raises ``LoadError`` (a broken block names the chapter file's line) or ``SourceError``."""
    folders = loader.workbook_folders(chapter.workbook.slug)
    edit = source.block_read(
        text,
        chapter=chapter_source(chapter=chapter),
        key=exercise.key if exercise is not None else None,
        presets=loader.read_presets(folders[0]) if folders else {},
        code=source.kept_code(code_synced(slug=chapter.workbook.slug)),
    )
    spec = edit.spec
    if exercise is not None and spec.id != exercise.key:
        raise source.SourceError(
            "The exercise id is its identity (attempts and progress follow it); add a new exercise instead."
        )
    same_workbook = Exercise.objects.filter(workbook_id=chapter.workbook_id)
    if exercise is None and same_workbook.filter(key=spec.id).exists():
        raise source.SourceError(f"The id {spec.id!r} is taken in this workbook (ids are never reused).")
    if same_workbook.filter(number=spec.number, is_active=True).exclude(key=spec.id).exists():
        raise source.SourceError(f"Another active exercise of this workbook is numbered {spec.number}.")
    return edit


def chapter_source(*, chapter: Chapter) -> source.ChapterText:
    """The chapter file as it stands: its head and tail as last synced, and the blocks of its active
    exercises in order (as saved: an edit in the admin changes only its own lines). A chapter with no
    stored text (made in the admin) gets a head written from its fields. Two queries."""
    stored = ChapterSource.objects.filter(chapter_id=chapter.pk).first()
    exercises = list(
        Exercise.objects.filter(chapter_id=chapter.pk, is_active=True)
        .select_related("source", "current_version")
        .order_by("position", "pk")
    )
    kept = {}
    for exercise in exercises:
        with contextlib.suppress(ExerciseSource.DoesNotExist):
            kept[exercise.pk] = exercise.source.text
    indent = source.indent_of(list(kept.values()))  # a block written here lines up with the author's
    blocks = []
    for exercise in exercises:
        text = kept.get(exercise.pk, "")
        if not text:
            spec = exercise.current_version.spec if exercise.current_version else None
            text = source.dump_block(spec, indent=indent) if isinstance(spec, dict) else ""
        blocks.append(source.Block(id=exercise.key, line=0, text=text))
    if stored is None:
        specs = [e.current_version.spec for e in exercises if e.current_version is not None]
        head = source.dump_head(chapter, source.scenarios_of(specs))
        return source.ChapterText(name=f"{chapter.number:02d}-chapter.yaml", head=head, blocks=tuple(blocks), tail="")
    return source.ChapterText(name=stored.name, head=stored.head, blocks=tuple(blocks), tail=stored.tail)
