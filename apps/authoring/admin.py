"""The "Drafts" admin: write an exercise's YAML, save it as a draft, preview it as learners would
see it on four variants, check it (off the request; code in the sandbox), publish it.

Authors only: every view asks the exercise admin's own permission (``selectors.can_author``).
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html
from django.views.decorators.http import require_GET, require_POST

from apps.accounts.models import User
from apps.authoring import selectors, services, source, tasks
from apps.authoring.exceptions import DraftNotPublishable, DraftPublished
from apps.authoring.models import Draft, DraftStatus
from apps.exercises.models import Chapter, Exercise


class DraftForm(forms.ModelForm[Draft]):
    """The YAML is saved as written, even when it is not a valid exercise yet: it is a draft. The
    preview and the checks say what is wrong with it."""

    spec_text = forms.CharField(
        label="Exercise (YAML)",
        # Not stripped: the block's indentation and trailing newline are the author's text too.
        strip=False,
        widget=forms.Textarea(attrs={"rows": 40, "cols": 110, "class": "spec-yaml", "spellcheck": "false"}),
        help_text="The exercise's block of its chapter file (fixtures/README.md), read by the same rules as "
        "the files: the chapter's scenarios and presets apply; an existing exercise's code files are kept.",
    )

    class Meta:
        model = Draft
        fields = ("chapter", "exercise", "spec_text")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if "exercise" in self.fields:
            self.fields["exercise"].required = False
            self.fields["exercise"].help_text = "Leave empty for a new exercise of the chapter."

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        exercise: Exercise | None = data.get("exercise")
        if exercise is not None:
            data["chapter"] = exercise.chapter
        if "spec_text" in data:
            data["spec_text"] = source.normalized(data["spec_text"], exercise=exercise or self.instance.exercise)
        return data


@admin.register(Draft)
class DraftAdmin(admin.ModelAdmin[Draft]):
    form = DraftForm
    change_form_template = "authoring/change_form.html"
    list_display = ("__str__", "workbook", "status", "checks", "updated_by", "updated_at", "preview_link")
    list_filter = ("status", "chapter__workbook")
    list_select_related = ("chapter__workbook", "exercise", "updated_by")
    search_fields = ("spec_text", "exercise__key", "exercise__title")
    readonly_fields = ("status", "checks", "created_by", "created_at", "updated_by", "updated_at", "preview_link")

    class Media:
        css = {"all": ("css/admin-exercise.css", "css/authoring.css")}

    # ---- authors only ----------------------------------------------------------------------------

    def has_module_permission(self, request: HttpRequest) -> bool:
        return selectors.can_author(request.user)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return selectors.can_author(request.user)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return selectors.can_author(request.user)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        published = obj is not None and obj.status == DraftStatus.PUBLISHED
        return selectors.can_author(request.user) and not published

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return selectors.can_author(request.user)

    def get_queryset(self, request: HttpRequest) -> Any:
        return selectors.draft_list(user=_user(request))

    # ---- the form ----------------------------------------------------------------------------------

    def get_fields(self, request: HttpRequest, obj: Draft | None = None) -> tuple[str, ...]:
        if obj is None:
            return ("chapter", "exercise", "spec_text")
        return ("chapter", "exercise", "status", "checks", "preview_link", "spec_text", "updated_by", "updated_at")

    def get_readonly_fields(self, request: HttpRequest, obj: Draft | None = None) -> tuple[str, ...]:
        if obj is None:
            return ()
        # The target is fixed once begun; a new exercise's draft may still move to another chapter.
        fixed = ("exercise",) if obj.exercise_id is None else ("chapter", "exercise")
        return (*fixed, *self.readonly_fields)

    def get_changeform_initial_data(self, request: HttpRequest) -> dict[str, Any]:
        """``?exercise=<id>``: a draft of an edit, begun from the exercise's YAML as it is now;
        ``?chapter=<id>``: a new exercise in that chapter."""
        initial: dict[str, Any] = dict(super().get_changeform_initial_data(request))
        exercise_id = request.GET.get("exercise", "")
        if exercise_id.isdigit():
            exercise = Exercise.objects.select_related("current_version").filter(pk=int(exercise_id)).first()
            if exercise is not None:
                initial.update(
                    exercise=exercise.pk, chapter=exercise.chapter_id, spec_text=source.exercise_yaml(exercise=exercise)
                )
        return initial

    def save_model(self, request: HttpRequest, obj: Draft, form: Any, change: bool) -> None:
        user = _user(request)
        text: str = form.cleaned_data["spec_text"]
        if change:
            chapter: Chapter | None = form.cleaned_data.get("chapter")
            saved = services.draft_update(draft=obj, spec_text=text, user=user, chapter=chapter)
        else:
            saved = services.draft_create(
                chapter=form.cleaned_data["chapter"],
                exercise=form.cleaned_data.get("exercise"),
                spec_text=text,
                user=user,
            )
        obj.pk = saved.pk
        obj.refresh_from_db()

    def response_change(self, request: HttpRequest, obj: Draft) -> HttpResponse:
        if "_check" in request.POST:
            return self._start_check(request, obj)
        return super().response_change(request, obj)

    def response_add(self, request: HttpRequest, obj: Draft, post_url_continue: str | None = None) -> HttpResponse:
        if "_check" in request.POST:
            return self._start_check(request, obj)
        return super().response_add(request, obj, post_url_continue)

    # ---- columns ----------------------------------------------------------------------------------

    @admin.display(description="Workbook")
    def workbook(self, obj: Draft) -> str:
        return str(obj.chapter.workbook)

    @admin.display(description="Checks")
    def checks(self, obj: Draft) -> str:
        if obj.status == DraftStatus.CHECKING:
            return "running"
        if obj.report.get("state") != "done":
            return "not run"
        stale = obj.checked_hash != services.text_hash(obj.spec_text)
        verdict = "passed" if obj.report.get("passed") else f"failed ({len(obj.report.get('problems', []))})"
        return f"{verdict}, stale: edited since" if stale else verdict

    @admin.display(description="Preview")
    def preview_link(self, obj: Draft) -> str:
        return format_html(
            '<a href="{}">Preview and checks</a>', reverse("admin:authoring_draft_preview", args=[obj.pk])
        )

    # ---- preview, checks, publish ------------------------------------------------------------------

    def get_urls(self) -> list[URLPattern]:
        wrap = self.admin_site.admin_view
        return [
            path("<int:draft_id>/preview/", wrap(self.preview_view), name="authoring_draft_preview"),
            path("<int:draft_id>/status/", wrap(self.status_view), name="authoring_draft_status"),
            path("<int:draft_id>/check/", wrap(self.check_view), name="authoring_draft_check"),
            path("<int:draft_id>/publish/", wrap(self.publish_view), name="authoring_draft_publish"),
            *super().get_urls(),
        ]

    def _draft(self, request: HttpRequest, draft_id: int) -> Draft:
        if not selectors.can_author(request.user):
            raise PermissionDenied
        draft = selectors.draft_get(user=_user(request), draft_id=draft_id)
        if draft is None:
            raise Http404("No such draft.")
        return draft

    def preview_view(self, request: HttpRequest, draft_id: int) -> HttpResponse:
        draft = self._draft(request, draft_id)
        preview = selectors.draft_preview(draft=draft)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": f"Preview: {preview.number} {preview.title}" if preview.title else f"Preview: draft {draft.pk}",
            "draft": draft,
            "preview": preview,
            "status": status_data(draft),
            "refusal": services.publish_refusal(draft),
            "submitted": {},
        }
        return TemplateResponse(request, "authoring/preview.html", context)

    def status_view(self, request: HttpRequest, draft_id: int) -> HttpResponse:
        return require_GET(lambda r: JsonResponse(status_data(self._draft(r, draft_id))))(request)

    def check_view(self, request: HttpRequest, draft_id: int) -> HttpResponse:
        return require_POST(lambda r: self._start_check(r, self._draft(r, draft_id)))(request)

    def publish_view(self, request: HttpRequest, draft_id: int) -> HttpResponse:
        return require_POST(lambda r: self._publish(r, self._draft(r, draft_id)))(request)

    def _start_check(self, request: HttpRequest, draft: Draft) -> HttpResponse:
        try:
            with transaction.atomic():
                services.draft_check_request(draft=draft)
                tasks.enqueue_check(draft_id=draft.pk)
        except DraftPublished as exc:
            messages.error(request, exc.message)
        else:
            messages.info(request, "Checks started: this page shows their progress.")
        return HttpResponseRedirect(reverse("admin:authoring_draft_preview", args=[draft.pk]))

    def _publish(self, request: HttpRequest, draft: Draft) -> HttpResponse:
        try:
            version = services.draft_publish(draft=draft, user=_user(request))
        except DraftNotPublishable as exc:
            messages.error(request, f"Not published: {exc.message}")
            return HttpResponseRedirect(reverse("admin:authoring_draft_preview", args=[draft.pk]))
        messages.success(request, f"Published: {version.exercise} is now at version {version.version}.")
        return HttpResponseRedirect(reverse("admin:exercises_exercise_change", args=[version.exercise_id]))


def status_data(draft: Draft) -> dict[str, Any]:
    """The check's state and progress, as the preview page polls it."""
    report = draft.report or {}
    steps = report.get("steps", [])
    runs = services.live_runs(draft)
    return {
        "draft": draft.pk,
        "status": draft.status,
        "state": report.get("state", "not run"),
        "stale": bool(draft.checked_hash) and draft.checked_hash != services.text_hash(draft.spec_text),
        "passed": report.get("passed"),
        "steps": [
            {"key": s["key"], "title": s["title"], "state": s["state"], "problems": s["problems"]} for s in steps
        ],
        "done": sum(1 for s in steps if s["state"] in ("passed", "failed")),
        "total": len(steps),
        "runs": runs,
        "code_runs_in": report.get("code_runs_in", ""),
        "problems": report.get("problems", []),
        "publishable": not services.publish_refusal(draft),
    }


def _user(request: HttpRequest) -> User:
    user = request.user
    assert isinstance(user, User)
    return user
