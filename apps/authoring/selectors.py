"""Reads of drafts: who may see them (authors only), and a draft rendered as learners would see it.

Nothing here is reachable from a learner's page or API: drafts are read only by the authoring
admin, whose every view asks ``can_author`` first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

from django.db.models import QuerySet

from apps.accounts.models import User
from apps.authoring import services
from apps.authoring.exceptions import DraftInvalid
from apps.authoring.models import Draft
from apps.exercises import formats
from apps.exercises.content import cache
from apps.exercises.content.plain import tex_plain
from apps.exercises.content.resolve import ContentError, grading_hash
from apps.exercises.content.schema import ExerciseSpec
from apps.exercises.content.variants import Variant, variant
from apps.exercises.grading.formula import FormulaError
from apps.exercises.grading.numeric import format_number
from apps.exercises.models import ExerciseVersion

# The permission the exercise admin asks of whoever edits content: drafts ask the same.
AUTHOR_PERMISSION = "exercises.change_exercise"
# The made-up learners whose numbers the preview shows beside the seed's (round 0).
PREVIEW_LEARNERS = ("preview-learner-a", "preview-learner-b", "preview-learner-c")


def can_author(user: Any) -> bool:
    return bool(getattr(user, "is_active", False) and user.is_staff and user.has_perm(AUTHOR_PERMISSION))


def draft_list(*, user: User) -> QuerySet[Draft]:
    """Every draft, for an author; none for anyone else."""
    if not can_author(user):
        return Draft.objects.none()
    return Draft.objects.select_related("chapter__workbook", "exercise", "created_by", "updated_by")


def draft_get(*, user: User, draft_id: int) -> Draft | None:
    """One draft, for an author (None for anyone else, as for a draft that is not there)."""
    return draft_list(user=user).filter(pk=draft_id).first()


@dataclass
class DraftVersion:
    """A draft's spec where the content caches and the formats expect an exercise version: its own
    key (a draft's text is never confused with a stored version's) and the hashes of its content."""

    pk: str
    content_hash: str
    grading_hash: str
    exercise_id: int
    spec: dict[str, Any]


@dataclass
class VariantPreview:
    title: str
    round: int
    givens: list[tuple[str, Any]]
    labels: list[tuple[str, str]]
    prompt_html: str = ""
    explanation_html: str = ""
    hints_html: list[str] = field(default_factory=list)
    widget: dict[str, Any] = field(default_factory=dict)
    answers: list[tuple[str, str]] = field(default_factory=list)
    table_labels: dict[str, str] = field(default_factory=dict)
    # The reference code, for the formats whose answer is code (what a learner sees once solved).
    reference_solution: str = ""
    error: str = ""

    @property
    def data(self) -> dict[str, Any]:
        """What the exercise page's widget templates read (``data.widget``)."""
        return {"widget": self.widget, "format": self.widget.get("format", "")}


@dataclass
class DraftPreview:
    problems: list[str]
    title: str = ""
    number: str = ""
    kind: str = ""
    format: str = ""
    varies: bool = False
    widget_template: str = ""
    submit_label: str = ""
    variants: list[VariantPreview] = field(default_factory=list)


def preview_variants(spec: ExerciseSpec, *, chapter: int) -> list[tuple[str, Variant]]:
    """Round 0 (the seed's numbers), then round 1 of three made-up learners."""
    shown = [("Round 0 (the seed's numbers)", variant(spec, seed="preview", chapter=chapter, round=0))]
    for i, learner in enumerate(PREVIEW_LEARNERS):
        shown.append((f"Learner {'ABC'[i]} (round 1)", variant(spec, seed=learner, chapter=chapter, round=1)))
    return shown


def draft_preview(*, draft: Draft) -> DraftPreview:
    """The draft as learners would see it on four variants — prompt, answer widget (no answers in
    it), then each variant's answers, derivation and hints — all HTML through the one sanitizer
    (the content renderer's)."""
    try:
        spec = services.spec_parse(text=draft.spec_text, chapter=draft.chapter, exercise=draft.exercise).spec
    except DraftInvalid as exc:
        return DraftPreview(problems=exc.problems)
    spec_json = spec.model_dump(mode="json")
    digest = cache.content_hash(spec_json)
    version = DraftVersion(
        pk=f"draft-{draft.pk}-{digest}",
        content_hash=digest,
        grading_hash=grading_hash(spec),
        exercise_id=draft.exercise_id or 0,
        spec=spec_json,
    )
    fmt = formats.get(spec.format)
    out = DraftPreview(
        problems=[],
        title=spec.title,
        number=spec.number,
        kind=spec.kind,
        format=spec.format,
        varies=spec.vary is not None,
        widget_template=fmt.template,
        submit_label=fmt.submit_label,
    )
    for title, v in preview_variants(spec, chapter=draft.chapter.number):
        shown = VariantPreview(
            title=title,
            round=v.round,
            givens=[(k, format_number(x) if isinstance(x, float) else x) for k, x in sorted(v.givens(spec).items())],
            labels=list(v.labels),
        )
        try:
            r = cache.resolved(version, v)
            html = cache.rendered(version, v)
            # The formats take a stored version; a draft's stands in for one (the fields they read).
            stored = cast(ExerciseVersion, version)
            shown.widget = {"format": spec.format, **fmt.widget(stored, r, html, 0)}
            shown.prompt_html = html.prompt_html
            shown.explanation_html = html.explanation_html
            shown.hints_html = list(html.hints_html)
            shown.answers = fmt.preview_rows(r)
            shown.reference_solution = str(fmt.solution(stored, r, html).get("reference_solution") or "")
            shown.table_labels = {k: tex_plain(t) for k, t in fmt.field_labels(r.spec).items()}
        except (ContentError, FormulaError, ValueError) as exc:
            shown.error = str(exc)
        out.variants.append(shown)
    return out
