"""A workbook's content as JSON, answers evaluated: ``manage.py export_content`` prints it and
``GET /api/v1/workbooks/<slug>/export/`` serves it to authors."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from apps.exercises import formats
from apps.exercises.content.loader import LoadError, load_workbook, workbook_folders
from apps.exercises.content.resolve import ContentError, resolve
from apps.exercises.content.schema import ChapterSpec, ExerciseSpec, WorkbookSpec
from apps.exercises.content.variants import Variant


class ExportError(ValueError):
    """The workbook's files do not load or resolve."""


class WorkbookMissing(ExportError):
    """No such workbook in the content folder."""


# Which numbers to export an exercise with: its chapter and itself → a variant (None: the seed's).
VariantOf = Callable[[ChapterSpec, ExerciseSpec], Variant | None]


def workbook_export(roots: Path | Sequence[Path], slug: str, *, variant_of: VariantOf | None = None) -> dict[str, Any]:
    """Load ``<root>/<slug>`` from whichever content root holds it, and export it. The export only
    counts a code exercise's cases, so it runs no code (expected values a tests.py leaves out are not
    computed). ``variant_of`` picks the numbers (a learner's round); without it, the seed's (round 0).
    A slug in two roots is an ``ExportError`` naming both files."""
    roots = [roots] if isinstance(roots, Path) else list(roots)
    try:
        dirs = workbook_folders(slug, roots=roots)
    except LoadError as exc:
        raise ExportError(str(exc)) from None
    if not dirs:
        raise WorkbookMissing(f"no workbook {slug!r} under {', '.join(map(str, roots))}")
    try:
        spec = load_workbook(dirs[0], compute_expected=False)
    except LoadError as exc:
        raise ExportError(str(exc)) from None
    return export_spec(spec, variant_of=variant_of)


def export_spec(spec: WorkbookSpec, *, variant_of: VariantOf | None = None) -> dict[str, Any]:
    """Every exercise's number, kind, format, and evaluated answers. With ``variant_of``, a
    varying exercise also says which round and givens its answers are for."""
    exercises = []
    for chapter in spec.chapters:
        for ex in chapter.exercises:
            variant = variant_of(chapter, ex) if variant_of is not None and ex.vary is not None else None
            try:
                r = resolve(ex, variant)
            except ContentError as exc:
                raise ExportError(f"{ex.number}: {exc}") from None
            item: dict[str, Any] = {
                "number": ex.number,
                "chapter": chapter.number,
                "title": ex.title,
                "kind": ex.kind,
                "format": ex.format,
            }
            if variant is not None:
                item["round"] = variant.round
                item["givens"] = variant.givens(ex)
            item.update(formats.get(ex.format).export(r.spec, r))
            if spec.skills is not None:
                item["skills"] = [s.key for s in spec.skills.skills if ex.number in s.exercises]
            if ex.code:
                item["entry"] = ex.code.entry
                item["tests"] = len(ex.code.cases)
            exercises.append(item)
    out: dict[str, Any] = {
        "workbook": spec.slug,
        "title": spec.title,
        "count": len(exercises),
        "exercises": exercises,
    }
    if spec.skills is not None:
        out["skills"] = [s.model_dump() for s in spec.skills.skills]
    return out
