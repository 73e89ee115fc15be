"""What the workbook page shows every learner alike: the workbook, its chapters with their totals
and rendered introductions, and a row per active exercise. Read and rendered once per process
and content generation (``apps.exercises.content.cache.generation``, one Redis GET): every
content write bumps the generation, so no outline outlives the content it was read from.

The workbook page read these with four queries and rendered every chapter's introduction
(formulas evaluated, Markdown, sanitizer) on every request: half of its time (bench/pages.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.urls import reverse

from apps.exercises import selectors
from apps.exercises.content import cache
from apps.exercises.content.render import render
from apps.exercises.models import Chapter, Exercise, Workbook
from apps.progress import selectors as progress_selectors


@dataclass(frozen=True)
class OutlineChapter:
    chapter: Chapter
    total: int  # active exercises
    intro_html: str  # sanitized (content.render)
    # Per active exercise: its id, url (its page), number, title, kind and kind_label. Plain dicts,
    # which the page copies with the learner's state added: the template reads a dict's keys
    # faster than attributes (bench/pages.py). Shared between requests: never modified.
    rows: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class WorkbookOutline:
    workbook: Workbook
    chapters: tuple[OutlineChapter, ...]
    exercises: tuple[Exercise, ...]  # active, in order

    @property
    def total(self) -> int:
        return len(self.exercises)


# slug → (generation, outline). The instances are shared read-only between requests.
_outlines: dict[str, tuple[str, WorkbookOutline]] = {}


def workbook_outline(*, slug: str) -> WorkbookOutline:
    """The published workbook ``slug`` as every learner sees it (Http404 if there is none).

    The generation is read before the content, as ``selectors.exercise_get`` reads it: content
    written in between is stored under the older token and read again on the next request."""
    generation = cache.generation()
    hit = _outlines.get(slug)
    if hit is not None and hit[0] == generation:
        return hit[1]
    outline = _outline_read(slug)
    if len(_outlines) > 1_000:
        _outlines.clear()
    _outlines[slug] = (generation, outline)
    return outline


def _outline_read(slug: str) -> WorkbookOutline:
    workbook = selectors.workbook_get(slug=slug)
    exercises = tuple(selectors.exercise_list(workbook=workbook))
    # Links are the workbook's URL plus the number: what `web:exercise` reverses to.
    base = reverse("web:workbook", args=[workbook.slug])
    rows: dict[int, list[dict[str, Any]]] = {}
    for e in exercises:
        row = {
            "id": e.pk,
            "url": f"{base}{e.number}/",
            "number": e.number,
            "title": e.title,
            "kind": e.kind,
            "kind_label": e.get_kind_display(),
        }
        rows.setdefault(e.chapter_id, []).append(row)
    chapters = tuple(
        OutlineChapter(
            chapter,
            counts.total,
            render(chapter.intro, selectors.chapter_scope(chapter)),
            tuple(rows.get(chapter.pk, ())),
        )
        for chapter, counts in progress_selectors.chapter_list(workbook=workbook, user=None)
    )
    return WorkbookOutline(workbook, chapters, exercises)
