"""Cohorts in the admin: instructors create and run their own, and monitor their learners.

An instructor sees only the cohorts they teach (anything else is a 404) and only read-only
views of their learners' data in the workbooks the cohort was assigned
(``selectors.workbooks_readable``): the progress table, per-exercise statistics and a learner's
attempt history, each exportable as CSV, and their skill ticks. Superusers see every cohort and
everything. Authors, who edit content, see no learner data at all.
"""

from __future__ import annotations

from typing import Any
from zoneinfo import available_timezones

from django import forms
from django.contrib import admin, messages
from django.db.models import Count, QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe
from django.utils.timezone import localtime

from apps.accounts.models import Role, User
from apps.core.request import request_user
from apps.exercises import selectors as exercise_selectors
from apps.progress import exports, selectors, services
from apps.progress.models import Cohort, CohortWorkbook, Membership, SkillCheck
from apps.progress.serializers import OverviewQueryIn


def _teaches(user: Any, cohort: Cohort | None = None) -> bool:
    """Superusers teach every cohort; instructors their own (or, with no cohort given, may teach)."""
    if not isinstance(user, User) or not user.is_active:
        return False
    if user.is_superuser:
        return True
    return user.role == Role.INSTRUCTOR and (cohort is None or cohort.instructor_id == user.pk)


class OwnCohortOnly:
    """Every permission follows "is this the caller's cohort?" (the inlines ask about the parent)."""

    def has_module_permission(self, request: HttpRequest) -> bool:
        return _teaches(request.user)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return _teaches(request.user, _cohort_of(obj))

    has_change_permission = has_view_permission
    has_delete_permission = has_view_permission

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return _teaches(request.user, _cohort_of(obj))


def _cohort_of(obj: Any) -> Cohort | None:
    if obj is None or isinstance(obj, Cohort):
        return obj
    return getattr(obj, "cohort", None)


class AssignmentInline(OwnCohortOnly, admin.TabularInline[CohortWorkbook, Cohort]):
    model = CohortWorkbook
    fields = ("workbook", "due_on")
    extra = 1
    verbose_name = "assigned workbook"


class MembershipInline(OwnCohortOnly, admin.TabularInline[Membership, Cohort]):
    model = Membership
    fields = ("learner", "joined_at")
    readonly_fields = fields
    extra = 0
    can_delete = False
    verbose_name = "learner"

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # learners join with the code

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def get_queryset(self, request: HttpRequest) -> QuerySet[Membership]:
        return super().get_queryset(request).select_related("user")

    @admin.display(description="Learner")
    def learner(self, obj: Membership) -> str:
        url = reverse("admin:progress_cohort_learner", args=[obj.cohort_id, obj.user_id])
        return format_html('<a href="{}">{}</a>', url, obj.user.username)


_ZONE_CHOICES = [(z, z) for z in sorted(available_timezones())]


class CohortForm(forms.ModelForm[Cohort]):
    time_zone = forms.ChoiceField(choices=_ZONE_CHOICES, initial="UTC")
    numbers = forms.ChoiceField(
        choices=Cohort.Numbers.choices,
        initial=Cohort.Numbers.PER_LEARNER,
        required=False,
        help_text=Cohort._meta.get_field("numbers").help_text,
    )

    def clean_numbers(self) -> str:
        return str(self.cleaned_data.get("numbers") or Cohort.Numbers.PER_LEARNER)

    class Meta:
        model = Cohort
        fields = ("name", "instructor", "time_zone", "numbers")


@admin.register(Cohort)
class CohortAdmin(OwnCohortOnly, admin.ModelAdmin[Cohort]):
    form = CohortForm
    list_display = ("name", "instructor", "time_zone", "numbers", "learners", "join_code", "monitor")
    search_fields = ("name", "join_code")
    readonly_fields = ("join_code", "created_at")
    inlines = [AssignmentInline, MembershipInline]
    actions = ["rotate_code"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Cohort]:
        return selectors.cohorts_taught(user=request_user(request)).annotate(
            learner_count=Count("memberships", distinct=True)
        )

    def get_object(self, request: HttpRequest, object_id: str, from_field: str | None = None) -> Cohort | None:
        # Another instructor's cohort is a 404, as everywhere else (the admin would redirect).
        found = super().get_object(request, object_id, from_field)
        if found is None:
            raise Http404("No such cohort.")
        return found

    def get_fields(self, request: HttpRequest, obj: Cohort | None = None) -> tuple[str, ...]:
        own = (
            ("name", "time_zone", "numbers")
            if not request.user.is_superuser
            else ("name", "instructor", "time_zone", "numbers")
        )
        return (*own, "join_code", "created_at") if obj else own

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any) -> Any:
        if request.user.is_superuser:
            kwargs["fields"] = ("name", "instructor", "time_zone", "numbers")
        else:
            kwargs["fields"] = ("name", "time_zone", "numbers")
        return super().get_form(request, obj, change, **kwargs)

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.name == "instructor":
            kwargs["queryset"] = User.objects.filter(role=Role.INSTRUCTOR)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def save_model(self, request: HttpRequest, obj: Cohort, form: Any, change: bool) -> None:
        if change:
            # The form has set the fields on obj; the service validates and saves them.
            handover = obj.instructor if request.user.is_superuser else None
            services.cohort_update(
                cohort=obj, name=obj.name, time_zone=obj.time_zone, instructor=handover, numbers=obj.numbers
            )
            return
        instructor = obj.instructor if request.user.is_superuser and obj.instructor_id else request.user
        assert isinstance(instructor, User)
        created = services.cohort_create(
            instructor=instructor, name=obj.name, time_zone=obj.time_zone, numbers=obj.numbers
        )
        obj.pk, obj.instructor, obj.join_code, obj.created_at = (
            created.pk,
            instructor,
            created.join_code,
            created.created_at,
        )
        obj._state.adding = False

    def save_formset(self, request: HttpRequest, form: Any, formset: Any, change: bool) -> None:
        if formset.model is not CohortWorkbook:
            super().save_formset(request, form, formset, change)
            return
        # Assignments go through the services. commit=False fills new_objects, changed_objects and
        # deleted_objects (the change message reads them) and writes nothing; every removal comes
        # before every assignment, so rows that swap workbooks do not collide.
        cohort: Cohort = formset.instance
        kept = formset.save(commit=False)
        gone = [
            row.initial["workbook"]  # the row's workbook as stored (the form has set the new one on it)
            for row in formset.initial_forms
            if row.instance in formset.deleted_objects or (row.instance in kept and "workbook" in row.changed_data)
        ]
        for workbook_id in gone:
            services.cohort_unassign(cohort=cohort, workbook_id=workbook_id)
        for assignment in kept:
            saved = services.cohort_assign(cohort=cohort, workbook=assignment.workbook, due_on=assignment.due_on)
            assignment.pk = saved.pk

    def delete_model(self, request: HttpRequest, obj: Cohort) -> None:
        services.cohort_delete(cohort=obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Cohort]) -> None:
        for cohort in queryset:
            services.cohort_delete(cohort=cohort)

    @admin.display(description="Learners", ordering="learner_count")
    def learners(self, obj: Cohort) -> int:
        return int(getattr(obj, "learner_count", 0))

    @admin.display(description="Monitor")
    def monitor(self, obj: Cohort) -> str:
        return format_html(
            '<a href="{}">Overview</a> · <a href="{}">Exercises</a>',
            reverse("admin:progress_cohort_progress", args=[obj.pk]),
            reverse("admin:progress_cohort_exercises", args=[obj.pk]),
        )

    @admin.action(description="Give the selected cohorts new join codes")
    def rotate_code(self, request: HttpRequest, queryset: QuerySet[Cohort]) -> None:
        for cohort in queryset:
            services.cohort_code_rotate(cohort=cohort)
        self.message_user(request, f"New join codes for {queryset.count()} cohort(s).", messages.SUCCESS)

    # ---- monitoring views -------------------------------------------------------------------

    def get_urls(self) -> list[URLPattern]:
        wrap = self.admin_site.admin_view
        return [
            path("<int:cohort_id>/progress/", wrap(self.progress_view), name="progress_cohort_progress"),
            path("<int:cohort_id>/exercises/", wrap(self.exercises_view), name="progress_cohort_exercises"),
            path("<int:cohort_id>/learners/<int:user_id>/", wrap(self.learner_view), name="progress_cohort_learner"),
            *super().get_urls(),
        ]

    def _cohort(self, request: HttpRequest, cohort_id: int) -> Cohort:
        user = request.user
        if not isinstance(user, User) or not _teaches(user):
            raise Http404("No such cohort.")
        return selectors.cohort_taught(user=user, cohort_id=cohort_id)

    def _context(self, request: HttpRequest, cohort: Cohort, title: str) -> dict[str, Any]:
        return {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "cohort": cohort,
            "title": title,
            "subtitle": cohort.name,
        }

    def progress_view(self, request: HttpRequest, cohort_id: int) -> HttpResponse:
        """The overview: learners × assigned workbooks, sortable, with who is at risk and why, and
        the exercises the cohort is stuck on. ``?format=csv`` is the progress table,
        ``overview-csv`` the learners with their risks, ``stuck-csv`` every stuck point."""
        cohort = self._cohort(request, cohort_id)
        wanted = request.GET.get("format")
        if wanted == "csv":
            assigned, rows = selectors.cohort_progress(cohort=cohort)
            return exports.csv_response(exports.progress_table(cohort, assigned, rows))
        query = OverviewQueryIn(data=request.GET)
        if not query.is_valid():  # a hand-edited bad value: the defaults rather than a failed page
            query = OverviewQueryIn(data={})
            query.is_valid(raise_exception=True)
        q = query.validated_data
        overview = selectors.cohort_overview(
            cohort=cohort,
            idle_days=q["idle_days"],
            sort=q["sort"],
            descending=q["desc"],
            stuck_sort=q["stuck_sort"],
            stuck_limit=None if wanted == "stuck-csv" else q["stuck_limit"],
        )
        if wanted == "overview-csv":
            return exports.csv_response(exports.overview_table(overview))
        if wanted == "stuck-csv":
            return exports.csv_response(exports.stuck_table(overview))
        only_risk = request.GET.get("at_risk") == "1"
        context = {
            **self._context(request, cohort, "Overview"),
            "overview": overview,
            "assigned": overview.assigned,
            "rows_html": _overview_rows(
                cohort, [r for r in overview.rows if r.at_risk] if only_risk else overview.rows
            ),
            "only_risk": only_risk,
            "summary": selectors.risk_counts(overview),
            "sort": q["sort"],
            "desc": q["desc"],
            "stuck_sort": q["stuck_sort"],
            "idle_days": q["idle_days"],
        }
        return TemplateResponse(request, "admin/progress/cohort_progress.html", context)

    def exercises_view(self, request: HttpRequest, cohort_id: int) -> HttpResponse:
        cohort = self._cohort(request, cohort_id)
        assigned = selectors.assignments(cohort=cohort)
        slug = request.GET.get("workbook") or (assigned[0].workbook.slug if assigned else "")
        if not slug:
            return render(request, "admin/progress/cohort_exercises.html", self._context(request, cohort, "Exercises"))
        workbook = exercise_selectors.workbook_get(slug=slug)
        stats = selectors.exercise_stats(viewer=request_user(request), cohort=cohort, workbook=workbook)
        if request.GET.get("format") == "csv":
            return exports.csv_response(exports.exercises_table(cohort, slug, stats))
        context = {
            **self._context(request, cohort, "Exercise statistics"),
            "assigned": assigned,
            "workbook": workbook,
            "stats": stats,
        }
        return TemplateResponse(request, "admin/progress/cohort_exercises.html", context)

    def learner_view(self, request: HttpRequest, cohort_id: int, user_id: int) -> HttpResponse:
        """The learner's newest attempts by exercise, as they saw them (``selectors.learner_history``)."""
        cohort = self._cohort(request, cohort_id)
        history = selectors.learner_history(viewer=request_user(request), cohort=cohort, user_id=user_id)
        context = {
            **self._context(request, cohort, f"Attempts by {history.learner.username}"),
            "learner": history.learner,
            "history": history,
        }
        return TemplateResponse(request, "admin/progress/learner_attempts.html", context)


def _overview_rows(cohort: Cohort, rows: list[selectors.OverviewRow]) -> SafeString:
    """The overview's body rows, built here rather than in the template: 500 learners' rows through
    the template engine cost more than the whole overview's queries (bench/overview.py)."""
    learner_url = reverse("admin:progress_cohort_learner", args=[cohort.pk, 0]).removesuffix("0/")
    html = []
    for r in rows:
        learner = r.learner
        cells = format_html_join(
            "",
            "<td>{} / {} ({}%){}</td>",
            (
                (c.solved, c.total, c.percent, mark_safe(" <strong>overdue</strong>") if c.overdue else "")
                for c in learner.cells
            ),
        )
        risks = (
            format_html(
                '<strong>at risk</strong><ul class="risks">{}</ul>',
                format_html_join("", "<li>{}</li>", ((risk.detail,) for risk in r.risks)),
            )
            if r.risks
            else "—"
        )
        html.append(
            format_html(
                '<tr class="{}" data-learner="{}"><th scope="row"><a href="{}{}/">{}</a></th>{}<td>{}%</td>'
                "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                "at-risk" if r.at_risk else "",
                r.username,
                learner_url,
                r.user_id,
                r.username,
                cells,
                r.percent,
                learner.current_streak,
                learner.best_streak,
                localtime(learner.last_active).strftime("%Y-%m-%d %H:%M") if learner.last_active else "never",
                "never solved" if r.days_since_solve is None else r.days_since_solve,
                ", ".join(learner.overdue) or "—",
                risks,
            )
        )
    return mark_safe("\n".join(html))  # noqa: S308 - every piece is format_html's


@admin.register(SkillCheck)
class SkillCheckAdmin(admin.ModelAdmin[SkillCheck]):
    """Read-only: which skills learners ticked and how their reviews go. Instructors see their cohorts."""

    list_display = ("user", "skill", "stability", "checked_at", "due_at", "reviews", "lapses")
    list_filter = ("skill__workbook",)
    search_fields = ("user__username", "skill__text")
    list_select_related = ("user", "skill", "skill__workbook")

    def get_queryset(self, request: HttpRequest) -> QuerySet[SkillCheck]:
        return selectors.skill_checks_taught(user=request_user(request), queryset=super().get_queryset(request))

    def has_module_permission(self, request: HttpRequest) -> bool:
        return _teaches(request.user)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return _teaches(request.user)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
