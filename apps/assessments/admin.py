"""Assessments in the admin: an instructor sets homework and exams for the cohorts they teach,
grants a learner other terms (an override, with its reason), corrects a score (with its reason,
kept forever), and follows the class in a gradebook and, during an exam, a live view.

Every queryset, choice list, object and custom view is scoped to ``selectors.cohorts_taught``:
another instructor's cohort, assessment, override or instance is a 404 here, as everywhere else.
Superusers see all. Writes go through ``services`` (terms and pools are checked with the same
functions the services use, and their messages are shown on the form)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, Q, QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils import timezone
from django.utils.html import format_html

from apps.accounts.models import Role, User
from apps.assessments import exports, selectors, services
from apps.assessments.models import Assessment, Instance, InstanceQuestion, Override, Question, ScoreOverride
from apps.core.exceptions import ApplicationError
from apps.core.request import request_user
from apps.progress.models import Cohort


def _instructor(user: Any) -> bool:
    """Superusers, and active instructors (who see only their own cohorts' rows)."""
    if not isinstance(user, User) or not user.is_active:
        return False
    return user.is_superuser or user.role == Role.INSTRUCTOR


def _taught(request: HttpRequest) -> QuerySet[Cohort]:
    return selectors.cohorts_taught(user=request_user(request))


def _teaches(request: HttpRequest, cohort_id: int | None) -> bool:
    if not _instructor(request.user):
        return False
    return cohort_id is None or _taught(request).filter(pk=cohort_id).exists()


def _cohort_id(obj: Any) -> int | None:
    if isinstance(obj, Assessment):
        return obj.cohort_id
    if isinstance(obj, Override | Instance):
        return obj.assessment.cohort_id
    return None


def _message(exc: ApplicationError) -> str:
    return str(exc.message)


class TaughtOnly:
    """Every permission follows "is this one of the caller's cohorts?"."""

    def has_module_permission(self, request: HttpRequest) -> bool:
        return _instructor(request.user)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return _teaches(request, _cohort_id(obj))

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return _teaches(request, _cohort_id(obj))

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return _teaches(request, _cohort_id(obj))

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return _teaches(request, _cohort_id(obj))

    def get_object(self, request: HttpRequest, object_id: str, from_field: str | None = None) -> Any:
        # Another instructor's row is a 404 (the admin alone would redirect to its index).
        found = super().get_object(request, object_id, from_field)  # type: ignore[misc]
        if found is None:
            raise Http404("No such object among your cohorts.")
        return found


# ---- assessments and their questions ------------------------------------------------------------


class QuestionForm(forms.ModelForm[Question]):
    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        pool = list(data.get("pool") or [])
        if self.cleaned_data.get("DELETE") or not pool:
            return data
        try:
            services.pool_check(pool)
        except ApplicationError as exc:
            raise ValidationError({"pool": _message(exc)}) from None
        choose = data.get("choose") or 1
        if choose > len(pool):
            raise ValidationError({"choose": f"The pool has {len(pool)} exercise(s): choose at most that many."})
        return data


class QuestionInline(admin.TabularInline[Question, Assessment]):
    model = Question
    form = QuestionForm
    fields = ("position", "zone", "pool", "choose", "points", "verdicts")
    autocomplete_fields = ("pool",)
    extra = 1
    verbose_name = "question"

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return _teaches(request, _cohort_id(obj))

    has_change_permission = has_view_permission
    has_delete_permission = has_view_permission
    has_add_permission = has_view_permission


class AssessmentForm(forms.ModelForm[Assessment]):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # A blank list is "none": shown as [] rather than an empty box that reads as null.
        for name in ("late_rules", "attempt_credit"):
            if name in self.fields:
                self.fields[name].required = False

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        opens_at, closes_at = data.get("opens_at"), data.get("closes_at")
        if not isinstance(opens_at, datetime) or not isinstance(closes_at, datetime):
            return data  # the field errors say what is missing
        late_rules = data.get("late_rules") or []
        attempt_credit = data.get("attempt_credit") or []
        if not isinstance(late_rules, list):
            raise ValidationError({"late_rules": 'A list: [{"until": "…+00:00", "credit": 50}, …] or [].'})
        if not isinstance(attempt_credit, list):
            raise ValidationError({"attempt_credit": "A list of percents, e.g. [100, 80, 50], or []."})
        try:
            data["late_rules"] = services.terms_check(
                opens_at=opens_at,
                closes_at=closes_at,
                due_at=data.get("due_at"),
                late_rules=late_rules,
                attempt_credit=attempt_credit,
            )
        except ApplicationError as exc:
            field = {
                "invalid_late_rules": "late_rules",
                "invalid_attempt_credit": "attempt_credit",
            }.get(str(exc.code))
            raise ValidationError({field: _message(exc)} if field else _message(exc)) from None
        data["attempt_credit"] = attempt_credit
        return data


@admin.register(Assessment)
class AssessmentAdmin(TaughtOnly, admin.ModelAdmin[Assessment]):
    form = AssessmentForm
    inlines = [QuestionInline]
    list_display = ("title", "cohort", "kind", "opens_at", "due_at", "closes_at", "question_count", "monitor")
    list_filter = ("kind",)
    search_fields = ("title", "slug", "cohort__name")
    list_select_related = ("cohort",)
    fieldsets = (
        (None, {"fields": ("cohort", "title", "slug", "kind", "instructions")}),
        ("When", {"fields": ("opens_at", "due_at", "closes_at", "late_rules", "time_limit_minutes")}),
        ("Grading", {"fields": ("max_attempts", "attempt_credit", "verdicts", "hints")}),
    )
    prepopulated_fields = {"slug": ("title",)}

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # Learners' work (answers, scores, their history) goes with an assessment: once anyone has an
        # instance, it stays (close it early instead).
        if obj is not None and obj.instances.exists():
            return False
        return super().has_delete_permission(request, obj)

    def get_actions(self, request: HttpRequest) -> Any:
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)  # one at a time, through the check above
        return actions

    def get_queryset(self, request: HttpRequest) -> QuerySet[Assessment]:
        return (
            super()
            .get_queryset(request)
            .filter(cohort__in=_taught(request))
            .annotate(question_total=Count("questions", distinct=True))
        )

    def get_fieldsets(self, request: HttpRequest, obj: Assessment | None = None) -> Any:
        sets = list(super().get_fieldsets(request, obj))
        if obj is not None:
            sets.append(("Follow the class", {"fields": ("monitor",)}))
        return sets

    def get_readonly_fields(self, request: HttpRequest, obj: Assessment | None = None) -> tuple[str, ...]:
        return ("monitor",) if obj is not None else ()

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.name == "cohort":
            kwargs["queryset"] = _taught(request)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def save_model(self, request: HttpRequest, obj: Assessment, form: Any, change: bool) -> None:
        if not change:
            obj.created_by = request_user(request)
        super().save_model(request, obj, form, change)
        if change:  # a new time limit or close applies to the instances already running
            services.deadlines_again(assessment=obj)

    def save_formset(self, request: HttpRequest, form: Any, formset: Any, change: bool) -> None:
        if formset.model is not Question:
            super().save_formset(request, form, formset, change)
            return
        # Rows that swap positions would meet the (assessment, position) constraint one save at a time:
        # the kept rows step aside first (positions no form can give, PositiveSmallIntegerField < 32768).
        kept = formset.save(commit=False)
        for question in formset.deleted_objects:
            question.delete()
        for i, question in enumerate(q for q in kept if q.pk):
            Question.objects.filter(pk=question.pk).update(position=30000 + i)
        for question in kept:
            question.save()
        formset.save_m2m()

    @admin.display(description="Questions", ordering="question_total")
    def question_count(self, obj: Assessment) -> int:
        return int(getattr(obj, "question_total", 0))

    @admin.display(description="Monitor")
    def monitor(self, obj: Assessment) -> str:
        return format_html(
            '<a href="{}">Gradebook</a> · <a href="{}">Live view</a>',
            reverse("admin:assessments_gradebook", args=[obj.cohort_id]),
            reverse("admin:assessments_assessment_live", args=[obj.pk]),
        )

    # ---- the gradebook, the live view, a score by hand ----------------------------------------

    def get_urls(self) -> list[URLPattern]:
        wrap = self.admin_site.admin_view
        return [
            path("gradebook/<int:cohort_id>/", wrap(self.gradebook_view), name="assessments_gradebook"),
            path("<int:assessment_id>/live/", wrap(self.live_view), name="assessments_assessment_live"),
            path(
                "<int:assessment_id>/learners/<int:user_id>/score/",
                wrap(self.score_view),
                name="assessments_assessment_score",
            ),
            *super().get_urls(),
        ]

    def _context(self, request: HttpRequest, title: str, subtitle: str) -> dict[str, Any]:
        return {**self.admin_site.each_context(request), "opts": self.model._meta, "title": title, "subtitle": subtitle}

    def _cohort(self, request: HttpRequest, cohort_id: int) -> Cohort:
        cohort = _taught(request).filter(pk=cohort_id).first() if _instructor(request.user) else None
        if cohort is None:
            raise Http404("No such cohort among yours.")
        return cohort

    def _assessment(self, request: HttpRequest, assessment_id: int) -> Assessment:
        if not _instructor(request.user):
            raise Http404("No such assessment among your cohorts.")
        try:
            return selectors.assessment_for_instructor(user=request_user(request), assessment_id=assessment_id)
        except ApplicationError:
            raise Http404("No such assessment among your cohorts.") from None

    def gradebook_view(self, request: HttpRequest, cohort_id: int) -> HttpResponse:
        """Learners × assessments: final scores, an instructor's override and late work marked;
        ``?format=csv`` is the same file the API gives."""
        cohort = self._cohort(request, cohort_id)
        book = selectors.gradebook(cohort=cohort)
        if request.GET.get("format") == "csv":
            response = HttpResponse(exports.gradebook_csv(book), content_type="text/csv; charset=utf-8")
            response["Content-Disposition"] = f'attachment; filename="{exports.gradebook_filename(book)}"'
            return response
        rows = []
        for learner in book.learners:
            cells = []
            for assessment in book.assessments:
                cell = book.cell(learner.pk, assessment.pk)
                instance = cell.instance
                cells.append(
                    {
                        "assessment": assessment,
                        "taken": exports.taken(instance),
                        "score": instance.final_score if instance is not None else None,
                        "overridden": instance is not None and instance.score_override is not None,
                        "late": instance is not None and instance.late,
                        "terms": cell.override is not None,
                        "instance": instance,
                    }
                )
            rows.append({"learner": learner, "cells": cells})
        context = {
            **self._context(request, "Gradebook", cohort.name),
            "cohort": cohort,
            "book": book,
            "columns": [(a, book.possible.get(a.pk, 0.0)) for a in book.assessments],
            "rows": rows,
        }
        return TemplateResponse(request, "admin/assessments/gradebook.html", context)

    def live_view(self, request: HttpRequest, assessment_id: int) -> HttpResponse:
        """Who started, how long each has left, who submitted (the page reloads itself every 30 s)."""
        assessment = self._assessment(request, assessment_id)
        now = timezone.now()
        learners = list(
            User.objects.filter(memberships__cohort_id=assessment.cohort_id).order_by("username").only("id", "username")
        )
        instances = {
            i.user_id: i
            for i in Instance.objects.filter(assessment=assessment).annotate(
                answered=Count("questions", filter=Q(questions__attempts__gt=0))
            )
        }
        overrides = {o.user_id: o for o in Override.objects.filter(assessment=assessment, revoked_at__isnull=True)}
        rows = []
        counts = {"started": 0, "submitted": 0, "working": 0, "not_started": 0}
        for learner in learners:
            instance = instances.get(learner.pk)
            terms = selectors.window(assessment=assessment, override=overrides.get(learner.pk))
            started = instance is not None and instance.started_at is not None
            closed = started and instance is not None and selectors.instance_closed(instance, at=now, terms=terms)
            ends = None
            if started and instance is not None and not closed:
                ends = min(instance.deadline, terms.closes_at) if instance.deadline else terms.closes_at
            state = (
                "not started"
                if not started
                else "submitted"
                if instance is not None and instance.submitted_at is not None
                else "closed"
                if closed
                else "working"
            )
            counts["started"] += started
            counts["submitted"] += state == "submitted"
            counts["working"] += state == "working"
            counts["not_started"] += not started
            rows.append(
                {
                    "learner": learner,
                    "instance": instance,
                    "state": state,
                    "left": _left(ends - now) if ends is not None else "—",
                    "answered": getattr(instance, "answered", 0) if instance is not None else 0,
                    "override": overrides.get(learner.pk),
                }
            )
        context = {
            **self._context(request, "Live view", assessment.title),
            "assessment": assessment,
            "rows": rows,
            "counts": counts,
            "now": now,
            "open": assessment.opens_at <= now < assessment.closes_at,
        }
        return TemplateResponse(request, "admin/assessments/live.html", context)

    def score_view(self, request: HttpRequest, assessment_id: int, user_id: int) -> HttpResponse:
        """Set (or remove) one learner's score by hand, with a reason; a learner who never opened
        it gets an empty instance to hold the score (``services.instance_for_grading``)."""
        assessment = self._assessment(request, assessment_id)
        learner = User.objects.filter(pk=user_id, memberships__cohort_id=assessment.cohort_id).first()
        if learner is None:
            raise Http404("No such learner in this cohort.")
        instance = Instance.objects.filter(assessment=assessment, user=learner).first()
        form = ScoreForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            try:
                with transaction.atomic():
                    held = instance or services.instance_for_grading(assessment=assessment, user=learner)
                    services.score_override_set(
                        instance=held,
                        score=form.cleaned_data["score"],
                        reason=form.cleaned_data["reason"],
                        by=request_user(request),
                    )
            except ApplicationError as exc:
                form.add_error(None, _message(exc))
            else:
                self.message_user(request, f"Score for {learner.username} saved, with your reason.", messages.SUCCESS)
                return HttpResponseRedirect(reverse("admin:assessments_gradebook", args=[assessment.cohort_id]))
        context = {
            **self._context(request, f"Set the score of {learner.username}", assessment.title),
            "assessment": assessment,
            "learner": learner,
            "instance": instance,
            "history": selectors.score_history(instance=instance) if instance is not None else [],
            "form": form,
        }
        return TemplateResponse(request, "admin/assessments/score.html", context)


def _left(delta: Any) -> str:
    seconds = max(0, int(delta.total_seconds()))
    hours, rest = divmod(seconds, 3600)
    minutes = rest // 60
    return f"{hours} h {minutes:02d} min" if hours else f"{minutes} min"


class ScoreForm(forms.Form):
    score = forms.FloatField(
        required=False, min_value=0, help_text="Points; leave blank to remove the override (the computed score stands)."
    )
    reason = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), help_text="Required; kept with the change.")


# ---- overrides --------------------------------------------------------------------------------


class OverrideForm(forms.ModelForm[Override]):
    """A grant, validated by the service's own rules (``services.override_check``), so the form
    shows the service's message and the real grant (in ``save_model``) cannot fail."""

    request: HttpRequest

    class Meta:
        model = Override
        fields = ("assessment", "user", "due_at", "closes_at", "time_factor", "extra_attempts", "reason")

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        assessment, user = data.get("assessment"), data.get("user")
        if assessment is None or user is None:
            return data
        try:
            services.override_check(**_grant_args(data))
        except ApplicationError as exc:
            raise ValidationError(_message(exc)) from None
        return data


def _grant_args(data: dict[str, Any]) -> dict[str, Any]:
    return {
        "assessment": data["assessment"],
        "user": data["user"],
        "reason": data.get("reason") or "",
        "due_at": data.get("due_at"),
        "closes_at": data.get("closes_at"),
        "time_factor": data.get("time_factor"),
        "extra_attempts": data.get("extra_attempts") or 0,
    }


@admin.register(Override)
class OverrideAdmin(TaughtOnly, admin.ModelAdmin[Override]):
    form = OverrideForm
    list_display = (
        "learner",
        "assessment",
        "due_at",
        "closes_at",
        "time_factor",
        "extra_attempts",
        "granted_by",
        "granted_at",
        "in_force",
    )
    list_filter = (("assessment__cohort", admin.RelatedOnlyFieldListFilter),)  # their cohorts' names only
    search_fields = ("user__username", "assessment__title", "reason")
    list_select_related = ("user", "assessment", "granted_by")
    actions = ["revoke"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Override]:
        return super().get_queryset(request).filter(assessment__cohort__in=_taught(request))

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any) -> Any:
        form = super().get_form(request, obj, change, **kwargs)

        class WithRequest(form):  # type: ignore[valid-type,misc]
            pass

        WithRequest.request = request
        return WithRequest

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # kept as granted: a new grant replaces it (and keeps it, revoked)

    def get_readonly_fields(self, request: HttpRequest, obj: Override | None = None) -> Any:
        if obj is None:
            return ()
        return [f.name for f in Override._meta.fields]

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.name == "assessment":
            kwargs["queryset"] = Assessment.objects.filter(cohort__in=_taught(request)).select_related("cohort")
        if db_field.name == "user":
            kwargs["queryset"] = (
                User.objects.filter(memberships__cohort__in=_taught(request)).distinct().order_by("username")
            )
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def save_model(self, request: HttpRequest, obj: Override, form: Any, change: bool) -> None:
        granted = services.override_grant(**_grant_args(form.cleaned_data), by=request_user(request))
        obj.pk = granted.pk
        obj.refresh_from_db()

    def delete_model(self, request: HttpRequest, obj: Override) -> None:
        services.override_revoke(override=obj, by=request_user(request))

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Override]) -> None:
        for override in queryset:
            services.override_revoke(override=override, by=request_user(request))

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # revoked (and kept), never deleted: the "Revoke" action

    @admin.action(description="Revoke the selected overrides (kept, marked revoked)")
    def revoke(self, request: HttpRequest, queryset: QuerySet[Override]) -> None:
        n = 0
        for override in queryset.filter(revoked_at__isnull=True).select_related("assessment"):
            services.override_revoke(override=override, by=request_user(request))
            n += 1
        self.message_user(request, f"{n} override(s) revoked.", messages.SUCCESS)

    @admin.display(description="Learner", ordering="user__username")
    def learner(self, obj: Override) -> str:
        return obj.user.username

    @admin.display(description="In force", boolean=True)
    def in_force(self, obj: Override) -> bool:
        return obj.revoked_at is None


# ---- instances (read-only) ----------------------------------------------------------------------


class ReadOnlyInline:
    extra = 0
    can_delete = False
    template = "admin/assessments/readonly_inline.html"

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return _teaches(request, _cohort_id(obj))


class ItemInline(ReadOnlyInline, admin.TabularInline[InstanceQuestion, Instance]):
    model = InstanceQuestion
    fields = ("position", "exercise", "points", "attempts", "best", "hints_used")
    readonly_fields = fields
    verbose_name = "question as drawn"
    verbose_name_plural = "questions as drawn"

    def get_queryset(self, request: HttpRequest) -> QuerySet[InstanceQuestion]:
        return super().get_queryset(request).select_related("exercise__workbook")


class HistoryInline(ReadOnlyInline, admin.TabularInline[ScoreOverride, Instance]):
    model = ScoreOverride
    fields = ("at", "previous", "score", "reason", "by")
    readonly_fields = fields
    verbose_name = "score change"
    verbose_name_plural = "score history"


@admin.register(Instance)
class InstanceAdmin(TaughtOnly, admin.ModelAdmin[Instance]):
    list_display = (
        "learner",
        "assessment",
        "started_at",
        "deadline",
        "submitted_at",
        "closed_at",
        "score",
        "max_score",
        "late",
        "score_override",
    )
    list_filter = (("assessment__cohort", admin.RelatedOnlyFieldListFilter), "late")
    search_fields = ("user__username", "assessment__title")
    list_select_related = ("user", "assessment")
    inlines = [ItemInline, HistoryInline]
    fields = (
        "assessment",
        "user",
        "started_at",
        "deadline",
        "submitted_at",
        "closed_at",
        "score",
        "max_score",
        "late",
        "score_override",
        "posted_score",
        "posted_at",
        "set_score",
    )
    readonly_fields = fields

    def get_queryset(self, request: HttpRequest) -> QuerySet[Instance]:
        return super().get_queryset(request).filter(assessment__cohort__in=_taught(request))

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description="Learner", ordering="user__username")
    def learner(self, obj: Instance) -> str:
        return obj.user.username

    @admin.display(description="Score by hand")
    def set_score(self, obj: Instance) -> str:
        url = reverse("admin:assessments_assessment_score", args=[obj.assessment_id, obj.user_id])
        return format_html('<a href="{}">Set score (with a reason)</a>', url)
