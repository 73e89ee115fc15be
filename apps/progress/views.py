"""Pages: your progress and streak, leaderboards, cohorts (join by code) and your profile.

Plain forms that post back here, so they work without JavaScript; the same services as the API.
"""

from __future__ import annotations

import functools
import zoneinfo
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_http_methods

from apps.accounts.forms import email_help
from apps.core.exceptions import ApplicationError
from apps.core.request import request_user
from apps.exercises import selectors as exercise_selectors
from apps.exercises.content.render import markdown_html
from apps.progress import charts, selectors, services


@login_required
def progress(request: HttpRequest) -> HttpResponse:
    """Streak, the year's calendar, solves per week and mastery per workbook: a fixed number of
    queries whatever the learner has done (the two charts share the activity rows)."""
    user = request_user(request)
    streak = selectors.streak_get(user=user)
    activity = selectors.activity_get(user=user)
    books = selectors.mastery(user=user)
    kept = selectors.retention(user=user, at=timezone.now())
    context = {
        "streak": streak,
        "activity": activity,
        "heatmap": charts.heatmap(activity, current_streak=streak.current, best_streak=streak.best),
        "weekly": charts.weekly(activity),
        "books": [
            (
                book,
                charts.chapter_bars(book),
                [(c, _percent(kept.get((book.key, int(c.key))))) for c in book.chapters],
            )
            for book in books
        ],
    }
    return render(request, "progress/progress.html", context)


def _percent(value: float | None) -> int | None:
    return None if value is None else round(100 * value)


@login_required
@require_http_methods(["POST"])
def workbook_reset(request: HttpRequest, slug: str) -> HttpResponse:
    workbook = exercise_selectors.workbook_get(slug=slug)
    cleared = services.workbook_reset(user=request_user(request), workbook=workbook)
    messages.success(request, f"{workbook.title} starts over: {cleared} exercises cleared. Your points stay.")
    return redirect("web:workbook", slug=slug)


@login_required
@require_http_methods(["GET", "POST"])
def skills(request: HttpRequest, slug: str) -> HttpResponse:
    """The workbook's skills checklist: tick what you can do cold, then review it when it is due."""
    user = request_user(request)
    workbook = exercise_selectors.workbook_get(slug=slug)
    if request.method == "POST":
        skill = selectors.skill_get(workbook=workbook, key=request.POST.get("skill", ""))
        try:
            services.skill_mark(user=user, skill=skill, action=request.POST.get("action", ""))
        except ApplicationError as exc:
            messages.error(request, exc.message)
        return redirect(reverse("web:skills", args=[slug]) + f"#skill-{skill.key}")
    board = selectors.skill_board(user=user, workbook=workbook)
    prefix = reverse("web:exercise", args=[slug, "0.0"]).removesuffix("0.0/")
    context = {
        "workbook": workbook,
        "board": board,
        "protocol_html": markdown_html(workbook.skills_protocol) if workbook.skills_protocol else "",
        "exercise_prefix": prefix,
    }
    return render(request, "progress/skills.html", context)


class BoardForm(forms.Form):
    scope = forms.ChoiceField(choices=[("global", "Everyone"), ("cohort", "My cohort")], required=False)
    period = forms.ChoiceField(choices=[("all", "All time"), ("week", "This week")], required=False)
    cohort = forms.IntegerField(required=False, min_value=1)


@login_required
def leaderboard(request: HttpRequest) -> HttpResponse:
    user = request_user(request)
    form = BoardForm(request.GET or None)
    query: dict[str, Any] = form.cleaned_data if form.is_valid() else {}
    cohorts = list(selectors.cohort_list(user=user))
    scope = query.get("scope") or "global"
    cohort_id = query.get("cohort") or (cohorts[0].pk if cohorts else None)
    if scope == "cohort" and cohort_id is None:
        scope = "global"
    board = selectors.leaderboard(
        user=user, scope=scope, period=query.get("period") or "all", cohort_id=cohort_id if scope == "cohort" else None
    )
    in_top = any(e.me for e in board.entries)
    context = {"board": board, "cohorts": cohorts, "cohort_id": cohort_id, "in_top": in_top}
    return render(request, "progress/leaderboard.html", context)


class JoinForm(forms.Form):
    code = forms.CharField(max_length=32, label="Join code", help_text="From your instructor, e.g. ABCD-2345.")


@login_required
@require_http_methods(["GET", "POST"])
def cohorts(request: HttpRequest) -> HttpResponse:
    user = request_user(request)
    form = JoinForm(request.POST or None)
    status = 200
    if request.method == "POST":
        action = request.POST.get("action", "join")
        try:
            if action == "leave":
                raw_id = request.POST.get("cohort", "")
                if not raw_id.isdigit():
                    raise Http404("No such cohort.")
                cohort = selectors.cohort_get(user=user, cohort_id=int(raw_id))
                services.cohort_leave(user=user, cohort=cohort)
                messages.success(request, f"You left {cohort.name}.")
                return redirect("web:cohorts")
            if form.is_valid():
                cohort, joined = services.cohort_join(user=user, code=form.cleaned_data["code"])
                text = f"You joined {cohort.name}." if joined else f"You are already in {cohort.name}."
                messages.success(request, text)
                return redirect("web:cohorts")
        except ApplicationError as exc:
            form.add_error("code", exc.message)
        status = 400
    cohorts = list(selectors.cohort_list(user=user))
    # Where the learner stands on each dated assignment (their own cohorts only: an instructor
    # sees the dates, and the learners' standing in the admin's progress table).
    due = selectors.due_by_assignment(user=user)
    listed = [(c, [(a, due.get((c.pk, a.workbook_id))) for a in selectors.assignments(cohort=c)]) for c in cohorts]
    context = {"form": form, "cohorts": listed}
    return render(request, "progress/cohorts.html", context, status=status)


@functools.cache
def _zone_names() -> list[str]:
    return sorted(zoneinfo.available_timezones())


class ProfileForm(forms.Form):
    email = forms.EmailField(
        required=False,
        widget=forms.EmailInput(attrs={"autocomplete": "email"}),
    )
    time_zone = forms.CharField(
        max_length=64,
        required=False,
        help_text="An IANA name such as Europe/Paris or Asia/Tokyo (type to see suggestions). Blank: your first cohort's, else UTC.",
        widget=forms.TextInput(attrs={"list": "time-zones", "autocomplete": "off", "spellcheck": "false"}),
    )
    on_global_board = forms.BooleanField(required=False, label="Show me on the global leaderboard")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["email"].help_text = email_help() + " Blank: no password reset is possible."


@login_required
@require_http_methods(["GET", "POST"])
def profile(request: HttpRequest) -> HttpResponse:
    user = request_user(request)
    initial = {"email": user.email, "time_zone": user.time_zone, "on_global_board": user.on_global_board}
    form = ProfileForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            services.profile_update(
                user=user,
                time_zone=form.cleaned_data["time_zone"].strip(),
                on_global_board=form.cleaned_data["on_global_board"],
                email=form.cleaned_data["email"],
            )
            messages.success(request, "Profile saved.")
            return redirect("web:profile")
        except ApplicationError as exc:
            form.add_error("email" if exc.code == "bad_email" else "time_zone", exc.message)
    status = 400 if form.errors else 200
    context = {"form": form, "effective": services.effective_time_zone(user), "zones": _zone_names()}
    return render(request, "progress/profile.html", context, status=status)
