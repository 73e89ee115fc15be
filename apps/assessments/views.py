"""The learner's assessment pages: their list, a start screen, the questions (each answered by a
form of its own, graded or saved by ``services.answer_submit``), hints on homework, and "submit and
close" behind a confirmation page.

Every page works without JavaScript. ``static/js/assessment.js`` only counts the time left down
(from the seconds the server computed) and reloads the page when it reaches zero; the server
refuses a late answer whatever the browser shows. No answer, explanation or untaken hint is ever
put on these pages; right or wrong, and points, only when ``selectors.verdicts_visible`` says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template import TemplateDoesNotExist
from django.template.loader import get_template
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_POST

from apps.accounts.models import User
from apps.assessments import selectors, services
from apps.assessments.models import Assessment, Instance, InstanceQuestion, Override, Submission, Verdicts
from apps.core.exceptions import ApplicationError
from apps.core.request import request_user
from apps.exercises import formats, presentation
from apps.exercises.content import cache
from apps.exercises.content.plain import tex_plain


def _widget_template(fmt: formats.Format) -> str | None:
    """This page's copy of the format's practice widget (``templates/assessments/widgets/``): the
    same inputs, with ids of their own per question (several share a page). None for a format
    with no copy (code is refused in pools)."""
    name = "assessments/widgets/" + fmt.template.rsplit("/", 1)[-1]
    try:
        get_template(name)
    except TemplateDoesNotExist:
        return None
    return name


def _assessment(user: User, assessment_id: int) -> Assessment:
    """The learner's assessment, or a 404 (another cohort's, or not open yet, looks like none)."""
    try:
        return selectors.assessment_for_learner(user=user, assessment_id=assessment_id)
    except ApplicationError as exc:
        raise Http404(exc.message) from None


def _state(instance: Instance | None, terms: selectors.Window, now: datetime) -> str:
    if instance is None or instance.started_at is None:
        return "closed" if now >= terms.closes_at else "not_started"
    if instance.submitted_at is not None:
        return "submitted"
    if selectors.instance_closed(instance, at=now, terms=terms):
        return "closed"
    return "in_progress"


STATE_LABELS = {
    "not_started": "Not started",
    "in_progress": "In progress",
    "submitted": "Submitted",
    "closed": "Closed",
}


@dataclass(frozen=True)
class Row:
    assessment: Assessment
    terms: selectors.Window
    state: str
    instance: Instance | None
    score_shown: bool

    @property
    def state_label(self) -> str:
        return STATE_LABELS[self.state]


@login_required
def assessment_list(request: HttpRequest) -> HttpResponse:
    user = request_user(request)
    now = timezone.now()
    assessments = list(selectors.assessments_for_learner(user=user).order_by("-opens_at", "-id"))
    # The learner's instances and overrides in two queries, whatever the number of assessments.
    instances = {
        i.assessment_id: i
        for i in Instance.objects.filter(user=user, assessment__in=assessments)
        .select_related("assessment")
        .prefetch_related("questions__question")
    }
    overrides = {
        o.assessment_id: o
        for o in Override.objects.filter(user=user, assessment__in=assessments, revoked_at__isnull=True)
    }
    rows = []
    for a in assessments:
        terms = selectors.window(assessment=a, override=overrides.get(a.pk))
        instance = instances.get(a.pk)
        state = _state(instance, terms, now)
        shown = (
            instance is not None
            and instance.started_at is not None
            and state in ("submitted", "closed")
            and selectors.score_visible(instance, at=now)
        )
        rows.append(Row(a, terms, state, instance, shown))
    return render(request, "assessments/list.html", {"rows": rows})


@dataclass
class ItemView:
    """One question as its learner sees it."""

    item: InstanceQuestion
    prompt_html: str
    widget: dict[str, Any]
    widget_template: str | None
    table_labels: dict[str, str]
    hints: dict[str, Any]
    status: str  # not_answered | saved | right | wrong
    visible: bool
    live: bool  # right or wrong shown after each answer (else once the assessment closes)
    answers: int
    attempts_left: int | None
    submitted: dict[str, Any]
    order_positions: dict[str, int] = field(default_factory=dict)
    error: ApplicationError | None = None
    can_hint: bool = False

    @property
    def prefix(self) -> str:
        return f"q{self.item.position}"


def _positions(submitted: dict[str, Any]) -> dict[str, int]:
    """Each step's position in an order answer: from its payload, or (when the form's positions
    could not be read, e.g. two steps in one place) from the form's own ``pos:<id>`` fields."""
    order = submitted.get("order")
    if isinstance(order, list):
        return {str(sid): i + 1 for i, sid in enumerate(order)}
    kept = {}
    for key, value in submitted.items():
        if key.startswith("pos:") and str(value).isdigit():
            kept[key.removeprefix("pos:")] = int(value)
    return kept


def _items(
    user: User,
    instance: Instance,
    terms: selectors.Window,
    *,
    now: datetime,
    closed: bool,
    failed: tuple[int, ApplicationError, dict[str, Any]] | None = None,
) -> list[ItemView]:
    assessment = instance.assessment
    subs = selectors.submissions_of(instance=instance)
    views = []
    for item in instance.questions.all():
        variant = services.variant_of(item)
        spec = cache.resolved(item.version, variant).spec
        fmt = formats.get(spec.format)
        mine = subs.get(item.pk, [])
        visible = selectors.verdicts_visible(instance, item, at=now)
        if not mine:
            status = "not_answered"
        elif not visible:
            status = "saved"
        else:
            status = "right" if any(s.correct and s.counted for s in mine) else "wrong"
        left = None if terms.max_attempts is None else max(0, terms.max_attempts - item.attempts)
        error: ApplicationError | None = None
        submitted: dict[str, Any] = mine[-1].raw if mine and isinstance(mine[-1].raw, dict) else {}
        if failed is not None and failed[0] == item.pk:
            error, submitted = failed[1], failed[2]
        hints = presentation.hints(item.version, item.hints_used, variant)
        views.append(
            ItemView(
                item=item,
                prompt_html=cache.rendered(item.version, variant).prompt_html,
                widget=presentation.widget(item.version, user.pk, variant),
                widget_template=_widget_template(fmt),
                table_labels={k: tex_plain(v) for k, v in fmt.field_labels(spec).items()},
                hints=hints,
                status=status,
                visible=visible,
                live=(item.question.verdicts or assessment.verdicts) == Verdicts.LIVE,
                answers=item.attempts,
                attempts_left=left,
                submitted=submitted,
                order_positions=_positions(submitted),
                error=error,
                can_hint=(
                    not closed and not assessment.is_exam and assessment.hints and len(hints["shown"]) < hints["total"]
                ),
            )
        )
    return views


def _clock(seconds: int) -> str:
    """What static/js/assessment.js shows too: 1:05:09, 4:09."""
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02}:{secs:02}" if hours else f"{minutes}:{secs:02}"


def _page(
    request: HttpRequest,
    user: User,
    assessment: Assessment,
    *,
    failed: tuple[int, ApplicationError, dict[str, Any]] | None = None,
    start_error: ApplicationError | None = None,
) -> HttpResponse:
    now = timezone.now()
    terms = selectors.window_for(assessment=assessment, user_id=user.pk)
    instance = selectors.instance_of(assessment=assessment, user_id=user.pk)
    status = 200
    if failed is not None:
        status = failed[1].status_code
    elif start_error is not None:
        status = start_error.status_code
    context: dict[str, Any] = {
        "assessment": assessment,
        "terms": terms,
        "now": now,
        "start_error": start_error,
        "time_limit_minutes": round(terms.time_limit.total_seconds() / 60) if terms.time_limit else None,
        "questions_count": sum(q.choose for q in assessment.questions.all()),
    }
    if instance is None or instance.started_at is None:
        context["state"] = _state(instance, terms, now)
        return render(request, "assessments/start.html", context, status=status)
    closed = selectors.instance_closed(instance, at=now, terms=terms)
    items = _items(user, instance, terms, now=now, closed=closed, failed=failed)
    ends = None
    if not closed:
        ends = min(instance.deadline, terms.closes_at) if instance.deadline is not None else None
    left = max(0, int((ends - now).total_seconds())) if ends is not None else None
    context.update(
        {
            "instance": instance,
            "state": _state(instance, terms, now),
            "closed": closed,
            "items": items,
            "answered": sum(1 for v in items if v.status != "not_answered"),
            "ends": ends,
            "seconds_left": left,
            "clock": _clock(left) if left is not None else "",
            "minutes_left": -(-left // 60) if left is not None else None,
            "score_shown": closed and selectors.score_visible(instance, at=now),
        }
    )
    return render(request, "assessments/assessment.html", context, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def assessment(request: HttpRequest, assessment_id: int) -> HttpResponse:
    """GET: the start screen, or the learner's questions. POST: start (``instance_open``)."""
    user = request_user(request)
    found = _assessment(user, assessment_id)
    if request.method == "POST":
        try:
            services.instance_open(assessment=found, user=user)
        except ApplicationError as exc:
            return _page(request, user, found, start_error=exc)
        return redirect(reverse("web:assessment", args=[found.pk]))
    return _page(request, user, found)


def _payload(item: InstanceQuestion, data: Any) -> dict[str, Any]:
    spec = cache.resolved(item.version, services.variant_of(item)).spec
    return formats.get(spec.format).form_payload(data)


@login_required
@require_POST
def question(request: HttpRequest, assessment_id: int, position: int) -> HttpResponse:
    """One question's form: an answer (``action=answer``) or the next hint (``action=hint``).

    A refusal is shown beside the question with what the learner typed; nothing is recorded."""
    user = request_user(request)
    found = _assessment(user, assessment_id)
    instance = selectors.instance_of(assessment=found, user_id=user.pk)
    if instance is None or instance.started_at is None:
        return redirect(reverse("web:assessment", args=[found.pk]))
    item = next((i for i in instance.questions.all() if i.position == position), None)
    if item is None:
        raise Http404("No such question.")
    anchor = f"{reverse('web:assessment', args=[found.pk])}#q{item.position}"
    submitted: dict[str, Any] = {}
    try:
        if request.POST.get("action") == "hint":
            services.hint_next(user=user, item_id=item.pk)
            return redirect(anchor)
        # What was typed, kept for the page if the form cannot even be read (order positions).
        submitted = {k: v for k, v in request.POST.items() if k.startswith("pos:")}
        submitted = _payload(item, request.POST)
        services.answer_submit(user=user, item_id=item.pk, payload=submitted)
    except ApplicationError as exc:
        return _page(request, user, found, failed=(item.pk, exc, submitted))
    return redirect(anchor)


@login_required
@require_http_methods(["GET", "POST"])
def submit(request: HttpRequest, assessment_id: int) -> HttpResponse:
    """'Submit and close': GET asks for confirmation, POST submits."""
    user = request_user(request)
    found = _assessment(user, assessment_id)
    instance = selectors.instance_of(assessment=found, user_id=user.pk)
    page = reverse("web:assessment", args=[found.pk])
    if instance is None or instance.started_at is None:
        return redirect(page)
    if request.method == "POST":
        already = instance.submitted_at is not None
        services.instance_submit(user=user, instance=instance)
        if not already:
            messages.success(request, "Submitted: your answers are in and this assessment is closed for you.")
        return redirect(page)
    items = list(instance.questions.all())
    answered = Submission.objects.filter(item__instance=instance).values("item_id").distinct().count()
    closed = selectors.instance_closed(instance)
    return render(
        request,
        "assessments/submit.html",
        {"assessment": found, "instance": instance, "total": len(items), "answered": answered, "closed": closed},
    )
