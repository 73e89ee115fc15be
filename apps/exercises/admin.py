"""Authoring and monitoring in the Django admin.

An exercise is edited as the same YAML as its content file, validated by the same schema and
checks as ``check_content`` and saved through the same service as ``sync_content`` — so a grading
change makes a new version here too. The content files stay the record: "Download YAML" gives
the text to commit, and the next ``sync_content`` brings the files back in charge.
"""

from __future__ import annotations

from typing import Any

import yaml
from django import forms
from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe
from pydantic import ValidationError

from apps.exercises import formats, services
from apps.exercises.content import cache
from apps.exercises.content.checks import check_exercise
from apps.exercises.content.render import RenderError, render
from apps.exercises.content.resolve import ContentError
from apps.exercises.content.schema import ExerciseSpec
from apps.exercises.grading.formula import FormulaError, scope_of
from apps.exercises.models import Attempt, Chapter, Exercise, ExerciseVersion, Skill, Workbook
from apps.exercises.selectors import chapter_scope
from apps.sandbox import queued
from apps.sandbox import selectors as sandbox_selectors

CODE_CHECKS_NEED_THE_SANDBOX = (
    "Code checks need the sandbox, which is unavailable: nothing was saved. The reference solution, "
    "starter and wrong solutions of a code exercise run only in the sandbox (Docker and the sandbox "
    "image, or a ready sandbox worker); exercises without code save as usual."
)


class BumpsContentGeneration:
    """Admin writes change what learners see: they go through the content services, which
    invalidate every process's exercise lookups."""

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        services.content_save(obj=obj)

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        services.content_delete(objects=obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        services.content_delete(objects=queryset)


class ChapterInline(admin.TabularInline[Chapter, Workbook]):
    model = Chapter
    fields = ("number", "title")
    extra = 0
    show_change_link = True


class SkillInline(admin.TabularInline[Skill, Workbook]):
    model = Skill
    fields = ("position", "key", "text", "chapter", "exercises", "is_active")
    extra = 0


@admin.register(Workbook)
class WorkbookAdmin(BumpsContentGeneration, admin.ModelAdmin[Workbook]):
    list_display = ("title", "slug", "position", "is_published", "exercise_count", "updated_at")
    list_filter = ("is_published",)
    search_fields = ("title", "slug", "summary")
    inlines = [ChapterInline, SkillInline]

    @admin.display(description="Exercises")
    def exercise_count(self, obj: Workbook) -> int:
        return obj.exercises.filter(is_active=True).count()


class ExerciseInline(admin.TabularInline[Exercise, Chapter]):
    model = Exercise
    fields = ("number", "title", "kind", "format", "difficulty", "is_active")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True
    ordering = ("position",)

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class ChapterForm(forms.ModelForm[Chapter]):
    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        try:
            render(data.get("intro") or "", scope_of(data.get("givens") or {}, data.get("derived") or {}))
        except (FormulaError, RenderError) as exc:
            raise forms.ValidationError(f"Intro does not render: {exc}") from None
        return data


@admin.register(Chapter)
class ChapterAdmin(BumpsContentGeneration, admin.ModelAdmin[Chapter]):
    form = ChapterForm
    list_display = ("__str__", "workbook", "number")
    list_filter = ("workbook",)
    search_fields = ("title", "intro")
    readonly_fields = ("intro_preview",)
    inlines = [ExerciseInline]

    @admin.display(description="Preview")
    def intro_preview(self, obj: Chapter) -> SafeString:
        try:
            return mark_safe(render(obj.intro, chapter_scope(obj)))  # noqa: S308 - sanitized by apps/core/html.py
        except (FormulaError, RenderError) as exc:
            return format_html("<strong>Does not render:</strong> {}", exc)


def spec_yaml(spec: dict[str, Any]) -> str:
    """An exercise spec as content-file YAML, code folded back to its folder reference."""
    data = dict(spec)
    if data.get("code"):
        data["code"] = {"entry": data["code"]["entry"], "dir": data["code"]["dir"]}
    data = {k: v for k, v in data.items() if v not in (None, [], {}, "") or k in ("prompt",)}
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)


class ExerciseForm(forms.ModelForm[Exercise]):
    spec_text = forms.CharField(
        label="Exercise (YAML)",
        widget=forms.Textarea(attrs={"rows": 40, "cols": 110, "class": "spec-yaml"}),
        help_text="The same format as a chapter file's exercise entry (fixtures/README.md). "
        "Code files are edited in fixtures/ and kept from the current version.",
    )

    class Meta:
        model = Exercise
        fields = ("chapter", "is_active")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        version = self.instance.current_version if self.instance.pk else None
        if version is not None:
            self.fields["spec_text"].initial = spec_yaml(version.spec)

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        text = data.get("spec_text", "")
        try:
            raw = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise forms.ValidationError(f"Not valid YAML: {exc}") from None
        if not isinstance(raw, dict):
            raise forms.ValidationError("Expected a mapping with number, title, kind, format, prompt, ...")
        current = self.instance.current_version if self.instance.pk else None
        if raw.get("code") and current is not None and current.spec.get("code"):
            kept = current.spec["code"]
            raw["code"] = {**kept, "entry": raw["code"].get("entry", kept["entry"])}
        try:
            spec = ExerciseSpec.model_validate(raw)
        except ValidationError as exc:
            raise forms.ValidationError(
                ["; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())]
            ) from None
        if self.instance.pk and spec.id != self.instance.key:
            raise forms.ValidationError(
                "The exercise id is its identity (attempts and progress follow it); add a new exercise instead."
            )
        chapter = data.get("chapter")
        if chapter is not None:
            same_workbook = Exercise.objects.filter(workbook_id=chapter.workbook_id)
            if not self.instance.pk and same_workbook.filter(key=spec.id).exists():
                raise forms.ValidationError(f"The id {spec.id!r} is taken in this workbook (ids are never reused).")
            if same_workbook.filter(number=spec.number, is_active=True).exclude(key=spec.id).exists():
                raise forms.ValidationError(f"Another active exercise of this workbook is numbered {spec.number}.")
        if spec.code is not None and not sandbox_selectors.available():
            raise forms.ValidationError(CODE_CHECKS_NEED_THE_SANDBOX, code="sandbox_unavailable")
        try:
            # Authors' code is untrusted input here, as learners' is: it runs only in the sandbox,
            # the way this process would run a learner's (queued.content_runner), never in it.
            problems = check_exercise(spec, runner=queued.content_runner() if spec.code is not None else None)
        except ContentError as exc:
            problems = [str(exc)]
        if problems:
            raise forms.ValidationError(problems)
        data["spec"] = spec
        return data


class VersionInline(admin.TabularInline[ExerciseVersion, Exercise]):
    model = ExerciseVersion
    fields = ("version", "grading_hash", "created_at", "attempt_count")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description="Attempts")
    def attempt_count(self, obj: ExerciseVersion) -> int:
        return obj.attempts.count()


@admin.register(Exercise)
class ExerciseAdmin(BumpsContentGeneration, admin.ModelAdmin[Exercise]):
    form = ExerciseForm
    list_display = ("number", "key", "title", "workbook", "kind", "format", "difficulty", "version_number", "is_active")
    list_filter = ("workbook", "kind", "format", "difficulty", "is_active")
    search_fields = ("number", "key", "title", "workbook__title")
    list_select_related = ("workbook", "current_version")
    ordering = ("workbook", "chapter__number", "position")
    readonly_fields = ("preview",)
    fields = ("chapter", "is_active", "preview", "spec_text")

    class Media:
        # The YAML editor's font and the preview's width: a stylesheet, as the CSP allows no inline style.
        css = {"all": ("css/admin-exercise.css",)}

    inlines = [VersionInline]
    actions = ["download_yaml"]

    @admin.display(description="Version")
    def version_number(self, obj: Exercise) -> int | None:
        return obj.current_version.version if obj.current_version else None

    @admin.display(description="Preview (as learners see it, and the evaluated answer)")
    def preview(self, obj: Exercise) -> SafeString:
        version = obj.current_version
        if version is None:
            return mark_safe("—")
        try:
            r = cache.resolved(version)
            html = cache.rendered(version)
        except ContentError as exc:
            return format_html("<strong>Does not resolve:</strong> {}", exc)
        rows = formats.get(r.spec.format).preview_rows(r)
        answers = format_html_join("", "<tr><th>{}</th><td>{}</td></tr>", rows)
        return format_html(
            '<div class="exercise-preview">{}<table>{}</table><h3>Derivation</h3>{}</div>',
            mark_safe(html.prompt_html),  # noqa: S308 - sanitized by apps/core/html.py
            answers,
            mark_safe(html.explanation_html),  # noqa: S308 - sanitized by apps/core/html.py
        )

    def get_readonly_fields(self, request: HttpRequest, obj: Exercise | None = None) -> tuple[str, ...]:
        return ("preview",) if obj else ()

    def get_fields(self, request: HttpRequest, obj: Exercise | None = None) -> tuple[str, ...]:
        return ("chapter", "is_active", "preview", "spec_text") if obj else ("chapter", "spec_text")

    def save_model(self, request: HttpRequest, obj: Exercise, form: Any, change: bool) -> None:
        spec: ExerciseSpec = form.cleaned_data["spec"]
        chapter: Chapter = form.cleaned_data["chapter"]
        position = obj.position if change else chapter.exercises.count()
        # The upsert reactivates (content files are the record); the admin may retire it here.
        is_active = form.cleaned_data["is_active"] if change else None
        saved, _ = services.exercise_save(chapter=chapter, spec=spec, position=position, is_active=is_active)
        obj.pk = saved.pk
        obj.refresh_from_db()

    @admin.action(description="Download YAML for the content files")
    def download_yaml(self, request: HttpRequest, queryset: QuerySet[Exercise]) -> HttpResponse:
        docs = [
            spec_yaml(e.current_version.spec) for e in queryset.select_related("current_version") if e.current_version
        ]
        body = "".join(f"- {doc.replace(chr(10), chr(10) + '  ').rstrip()}\n" for doc in docs)
        response = HttpResponse(body, content_type="text/yaml; charset=utf-8")
        response["Content-Disposition"] = 'attachment; filename="exercises.yaml"'
        return response


@admin.register(Attempt)
class AttemptAdmin(admin.ModelAdmin[Attempt]):
    list_display = ("id", "user", "exercise", "verdict", "score", "created_at")
    list_filter = ("verdict", "exercise__workbook")
    search_fields = ("user__username", "exercise__number", "exercise__title")
    list_select_related = ("user", "exercise__workbook")
    readonly_fields = [f.name for f in Attempt._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
