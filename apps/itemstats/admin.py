"""Item analysis in the admin: "Item analysis" lists the exercises the caller may analyse, and
each opens its page (``<exercise id>/analysis/``): the figures whole and by variant, with the known
mistakes most often matched, over a cohort the caller teaches or (authors, superusers) every
learner. Read-only. An instructor sees only the exercises of workbooks assigned to their cohorts
and only their cohorts' learners; another cohort is a 404, as everywhere else; learners (not
staff) never reach the admin."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html

from apps.accounts.models import User
from apps.core.exceptions import ApplicationError
from apps.core.request import request_user
from apps.itemstats import selectors
from apps.itemstats.models import ItemAnalysis
from apps.progress import selectors as progress_selectors


@admin.register(ItemAnalysis)
class ItemAnalysisAdmin(admin.ModelAdmin[ItemAnalysis]):
    list_display = ("number", "title", "workbook", "format", "analysis_link")
    list_filter = (("workbook", admin.RelatedOnlyFieldListFilter),)  # only the workbooks listed
    search_fields = ("number", "title", "key")
    ordering = ("workbook__position", "workbook__slug", "chapter__number", "position")
    list_select_related = ("workbook",)

    # ---- permissions: instructors, authors and superusers; nothing is ever written ------------

    def has_module_permission(self, request: HttpRequest) -> bool:
        return selectors.may_analyse(request.user)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return selectors.may_analyse(request.user)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def get_queryset(self, request: HttpRequest) -> QuerySet[ItemAnalysis]:
        qs = super().get_queryset(request).filter(is_active=True)
        user = request.user
        if not isinstance(user, User) or not selectors.may_analyse(user):
            return qs.none()
        if selectors.sees_everyone(user):
            return qs
        taught = progress_selectors.cohorts_taught(user=user).values("assignments__workbook_id")
        return qs.filter(workbook_id__in=taught)

    @admin.display(description="Analysis")
    def analysis_link(self, obj: ItemAnalysis) -> str:
        return format_html('<a href="{}">Item analysis</a>', reverse("admin:itemstats_analysis", args=[obj.pk]))

    def change_view(
        self, request: HttpRequest, object_id: str, form_url: str = "", extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        # A row's page is its analysis.
        if not object_id.isdigit():
            raise Http404("No such exercise.")
        return HttpResponseRedirect(reverse("admin:itemstats_analysis", args=[int(object_id)]))

    def get_urls(self) -> list[URLPattern]:
        wrap = self.admin_site.admin_view
        return [
            path("<int:exercise_id>/analysis/", wrap(self.analysis_view), name="itemstats_analysis"),
            *super().get_urls(),
        ]

    def analysis_view(self, request: HttpRequest, exercise_id: int) -> HttpResponse:
        """One exercise's analysis; ``?cohort=<id>`` picks the cohort (an instructor's first one
        with the workbook assigned when not given; authors and superusers: every learner)."""
        user = request_user(request)
        if not selectors.may_analyse(user):
            raise Http404("No such exercise.")
        try:
            exercise = selectors.exercise_for_analysis(viewer=user, exercise_id=exercise_id)
        except ApplicationError:
            raise Http404("No such exercise.") from None
        cohorts = selectors.cohorts_for(viewer=user, exercise=exercise)
        raw = request.GET.get("cohort", "")
        if raw.isdigit() and len(raw) <= 12:
            cohort_id: int | None = int(raw)
        elif selectors.sees_everyone(user):
            cohort_id = None
        elif cohorts:
            cohort_id = cohorts[0].pk
        else:
            raise Http404("You teach no cohort with this exercise's workbook assigned.")
        try:
            analysis = selectors.item_analysis(viewer=user, exercise=exercise, cohort_id=cohort_id)
        except ApplicationError:
            raise Http404("No such cohort.") from None
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": f"Item analysis: {exercise.workbook.slug} {exercise.number}",
            "subtitle": exercise.title,
            "exercise": exercise,
            "analysis": analysis,
            "cohorts": cohorts,
            "everyone": selectors.sees_everyone(user),
            "cohort_id": cohort_id,
            "api_url": reverse("api:exercise-analysis", args=[exercise.workbook.slug, exercise.number]),
        }
        return TemplateResponse(request, "itemstats/analysis.html", context)
