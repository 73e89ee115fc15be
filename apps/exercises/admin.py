"""Authoring and monitoring in the Django admin.

An exercise is edited as its block of the chapter file, as the author wrote it (comments, key
order, number spelling: ``content/source.py``), read by the same loader rules and checks as
``sync_content``/``check_content`` and saved through the same services — so a grading change makes
a new version here too, and a comment or spacing edit none. The content files stay the record:
downloads give the text to commit byte for byte (an exercise's block, a whole chapter file, which
differs from the file only in the lines edited here), and a chapter file uploaded here is synced as
``sync_content`` syncs it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from apps.core.exceptions import ApplicationError
from apps.exercises import formats, selectors, services
from apps.exercises.content import cache, loader, source
from apps.exercises.content.checks import check_exercise
from apps.exercises.content.render import RenderError, render
from apps.exercises.content.resolve import ContentError
from apps.exercises.content.schema import ChapterSpec, ExerciseSpec
from apps.exercises.grading.formula import FormulaError, scope_of
from apps.exercises.models import Attempt, Chapter, ChapterSource, Exercise, ExerciseVersion, Skill, Workbook
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


def _yaml_file(text: str, filename: str) -> HttpResponse:
    """A content file to save into the workbook folder: the text, encoded as it was read (UTF-8)."""
    response = HttpResponse(text.encode("utf-8"), content_type="text/yaml; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{_SAFE_NAME.sub("_", filename)}"'
    return response


_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]")
MAX_CHAPTER_BYTES = 1_000_000


def _workbook_folder(workbook: Workbook) -> Path | None:
    """The workbook's folder in the content roots, where its presets and code folders are read."""
    folders = loader.workbook_folders(workbook.slug)
    return folders[0] if folders else None


def _no_code_folder(ex: dict[str, Any]) -> None:
    if isinstance(ex.get("code"), dict):
        raise loader.LoadError(
            f"exercise {ex.get('number')}: its code folder is read from the workbook's content folder, "
            "and this workbook has none"
        )


class ChapterUploadForm(forms.Form):
    """A chapter file for a workbook, read as ``sync_content`` reads it (``content/source.py``)."""

    workbook = forms.ModelChoiceField(queryset=Workbook.objects.all())
    file = forms.FileField(
        label="Chapter file (.yaml)",
        help_text="A file of the workbook's chapters/ folder. Code folders and presets.yaml are read from the "
        "workbook's content folder, as sync_content reads them. Nothing changes if any of it does not load.",
    )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        upload, workbook = data.get("file"), data.get("workbook")
        if upload is None or workbook is None:
            return data
        name = Path(upload.name or "").name
        if not name.endswith(".yaml") or _SAFE_NAME.search(name):
            raise forms.ValidationError(f"{name!r}: a chapter file is named like 03-memory-budget.yaml.")
        if upload.size is not None and upload.size > MAX_CHAPTER_BYTES:
            raise forms.ValidationError(f"{name}: larger than {MAX_CHAPTER_BYTES // 1000} kB.")
        try:
            text = upload.read().decode("utf-8")
        except UnicodeDecodeError as exc:
            raise forms.ValidationError(f"{name}: not UTF-8 text ({exc}).") from None
        try:
            folder = _workbook_folder(workbook)
            presets = loader.read_presets(folder) if folder is not None else {}
            runner = queued.content_runner() if sandbox_selectors.available() else None
            # Expected test values as sync_content finds them: kept from the last sync of the same
            # code, else computed in the sandbox (never in this process).
            expected = loader.Expected(runner=runner, known=selectors.code_synced(slug=workbook.slug))
            code = source.folder_code(folder, expected) if folder is not None else _no_code_folder
            spec, text_kept = source.chapter_load(text, name=name, presets=presets, code=code)
        except loader.SandboxNeeded as exc:
            raise forms.ValidationError(f"{name}: {exc}. {CODE_CHECKS_NEED_THE_SANDBOX}") from None
        except loader.LoadError as exc:
            raise forms.ValidationError(str(exc)) from None
        data["spec"], data["source"] = spec, text_kept
        return data


@admin.register(Chapter)
class ChapterAdmin(BumpsContentGeneration, admin.ModelAdmin[Chapter]):
    form = ChapterForm
    list_display = ("__str__", "workbook", "number")
    list_filter = ("workbook",)
    search_fields = ("title", "intro")
    readonly_fields = ("intro_preview", "download")
    inlines = [ExerciseInline]
    change_list_template = "admin/exercises/chapter/change_list.html"

    def save_model(self, request: HttpRequest, obj: Chapter, form: Any, change: bool) -> None:
        super().save_model(request, obj, form, change)
        edited = sorted(set(form.changed_data) & {"number", "title", "intro", "givens", "derived"})
        if change and edited and ChapterSource.objects.filter(chapter=obj).exists():
            # The chapter file's head is the author's text, kept as written: it is not rewritten
            # from these fields, so the download would not carry the edit.
            messages.warning(
                request,
                f"Saved. The chapter file's text is kept as written, so its download does not show this edit "
                f"({', '.join(edited)}): make it in the file too, or upload the edited file here.",
            )

    @admin.display(description="Chapter file")
    def download(self, obj: Chapter) -> SafeString:
        if not obj.pk:  # the add page
            return mark_safe("—")
        url = reverse("admin:exercises_chapter_source", args=[obj.pk])
        return format_html('<a href="{}">Download the chapter file (YAML, as written)</a>', url)

    def get_urls(self) -> list[URLPattern]:
        wrap = self.admin_site.admin_view
        return [
            path("<int:chapter_id>/source/", wrap(self.source_view), name="exercises_chapter_source"),
            path("upload/", wrap(self.upload_view), name="exercises_chapter_upload"),
            *super().get_urls(),
        ]

    def source_view(self, request: HttpRequest, chapter_id: int) -> HttpResponse:
        """The chapter file byte for byte: its text as synced, each exercise's block as last saved."""
        chapter = get_object_or_404(Chapter, pk=chapter_id)
        if not self.has_view_permission(request, chapter):
            raise PermissionDenied
        text = selectors.chapter_source(chapter=chapter)
        return _yaml_file(text.text, text.name)

    def upload_view(self, request: HttpRequest) -> HttpResponse:
        """A chapter file uploaded for a workbook: loaded and synced as ``sync_content`` does, or
        refused with the line that does not read, and then nothing changes."""
        if not (self.has_add_permission(request) and self.has_change_permission(request)):
            raise PermissionDenied
        form = ChapterUploadForm(request.POST or None, request.FILES or None)
        if request.method == "POST" and form.is_valid():
            spec: ChapterSpec = form.cleaned_data["spec"]
            try:
                report = services.chapter_sync(
                    workbook=form.cleaned_data["workbook"], spec=spec, source=form.cleaned_data["source"]
                )
            except ApplicationError as exc:
                form.add_error(None, f"Nothing was changed: {exc.message}")
            else:
                chapter = Chapter.objects.get(workbook=form.cleaned_data["workbook"], number=spec.number)
                messages.success(
                    request,
                    f"{chapter}: {len(report.created)} created, {len(report.new_versions)} new versions, "
                    f"{len(report.updated)} updated, {report.unchanged} unchanged, {len(report.retired)} retired.",
                )
                return HttpResponseRedirect(reverse("admin:exercises_chapter_change", args=[chapter.pk]))
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": "Upload a chapter file",
            "form": form,
        }
        return TemplateResponse(request, "admin/exercises/chapter/upload.html", context)

    @admin.display(description="Preview")
    def intro_preview(self, obj: Chapter) -> SafeString:
        try:
            return mark_safe(render(obj.intro, chapter_scope(obj)))  # noqa: S308 - sanitized by apps/core/html.py
        except (FormulaError, RenderError) as exc:
            return format_html("<strong>Does not render:</strong> {}", exc)


def spec_yaml(spec: dict[str, Any]) -> str:
    """A stored spec dumped as a content-file mapping (PyYAML), code folded back to its folder reference.

    Not what the editor shows any more (``selectors.exercise_source``: the author's text); kept for
    callers that want a spec as a plain mapping."""
    data = dict(spec)
    if data.get("code"):
        data["code"] = {"entry": data["code"]["entry"], "dir": data["code"]["dir"]}
    data = {k: v for k, v in data.items() if v not in (None, [], {}, "") or k in ("prompt",)}
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)


class ExerciseForm(forms.ModelForm[Exercise]):
    spec_text = forms.CharField(
        label="Exercise (YAML)",
        # Not stripped: the block's indentation and trailing newline are the author's text too.
        strip=False,
        widget=forms.Textarea(attrs={"rows": 40, "cols": 110, "class": "spec-yaml"}),
        help_text="The exercise's block of its chapter file, as written (fixtures/README.md), read by the same "
        "rules as the files. Code files are edited in fixtures/ and kept from the current version.",
    )

    class Meta:
        model = Exercise
        fields = ("chapter", "is_active")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            self.fields["spec_text"].initial = selectors.exercise_source(exercise=self.instance)

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        chapter: Chapter | None = data.get("chapter")
        text = data.get("spec_text", "")
        if chapter is None or not text:
            return data
        try:
            edit = selectors.exercise_edit_read(
                chapter=chapter, exercise=self.instance if self.instance.pk else None, text=text
            )
        except loader.LoadError as exc:
            raise forms.ValidationError(str(exc).splitlines()) from None
        block, spec = edit.block, edit.spec
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
        data["spec"], data["source"] = spec, block
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
    readonly_fields = ("preview", "download", "authoring")
    fields = ("chapter", "is_active", "preview", "download", "spec_text")

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

    @admin.display(description="Content file")
    def download(self, obj: Exercise) -> SafeString:
        exercise_url = reverse("admin:exercises_exercise_source", args=[obj.pk])
        chapter_url = reverse("admin:exercises_chapter_source", args=[obj.chapter_id])
        return format_html(
            '<a href="{}">Download this exercise (YAML, as written)</a> · <a href="{}">Download its chapter file</a>',
            exercise_url,
            chapter_url,
        )

    @admin.display(description="Authoring")
    def authoring(self, obj: Exercise) -> SafeString:
        # By URL name: the drafts (apps.authoring) and item analysis (apps.itemstats) sit above this
        # app, which may not import them.
        draft_url = f"{reverse('admin:authoring_draft_add')}?exercise={obj.pk}"
        analysis_url = reverse("admin:itemstats_analysis", args=[obj.pk])
        return format_html(
            '<a href="{}">Draft an edit</a> (preview on four variants, checks run in the sandbox, publish later)'
            ' · <a href="{}">Item analysis</a> (how learners fare, by variant)',
            draft_url,
            analysis_url,
        )

    def get_readonly_fields(self, request: HttpRequest, obj: Exercise | None = None) -> tuple[str, ...]:
        return ("preview", "download", "authoring") if obj else ()

    def get_fields(self, request: HttpRequest, obj: Exercise | None = None) -> tuple[str, ...]:
        if obj is None:
            return ("chapter", "spec_text")
        return ("chapter", "is_active", "authoring", "preview", "download", "spec_text")

    def get_urls(self) -> list[URLPattern]:
        wrap = self.admin_site.admin_view
        return [
            path("<int:exercise_id>/source/", wrap(self.source_view), name="exercises_exercise_source"),
            *super().get_urls(),
        ]

    def source_view(self, request: HttpRequest, exercise_id: int) -> HttpResponse:
        """The exercise's block of its chapter file, byte for byte as written (or as last saved here)."""
        exercise = get_object_or_404(Exercise.objects.select_related("current_version"), pk=exercise_id)
        if not self.has_view_permission(request, exercise):
            raise PermissionDenied
        return _yaml_file(selectors.exercise_source(exercise=exercise), f"{exercise.key}.yaml")

    def save_model(self, request: HttpRequest, obj: Exercise, form: Any, change: bool) -> None:
        spec: ExerciseSpec = form.cleaned_data["spec"]
        chapter: Chapter = form.cleaned_data["chapter"]
        position = obj.position if change else chapter.exercises.count()
        # The upsert reactivates (content files are the record); the admin may retire it here.
        is_active = form.cleaned_data["is_active"] if change else None
        saved, _ = services.exercise_save(
            chapter=chapter, spec=spec, position=position, is_active=is_active, source=form.cleaned_data["source"]
        )
        obj.pk = saved.pk
        obj.refresh_from_db()

    @admin.action(description="Download YAML for the content files (the blocks as written)")
    def download_yaml(self, request: HttpRequest, queryset: QuerySet[Exercise]) -> HttpResponse:
        exercises = list(
            queryset.select_related("current_version").order_by("workbook__slug", "chapter__number", "position")
        )
        texts = selectors.exercise_sources(exercises=exercises)
        name = f"{exercises[0].key}.yaml" if len(exercises) == 1 else "exercises.yaml"
        return _yaml_file("".join(texts[e.pk] for e in exercises), name)


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
