"""Server-rendered pages. Every page works without JavaScript (forms post back here); a small
script upgrades the exercise form to instant feedback through the JSON API."""

from __future__ import annotations

import dataclasses
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods

from apps.accounts.models import User
from apps.core.exceptions import ApplicationError
from apps.core.request import request_user
from apps.core.serializers import represent, represent_many
from apps.exercises import devloop, formats, selectors
from apps.exercises.choices import AttemptPart, Verdict
from apps.exercises.content import cache
from apps.exercises.content.plain import tex_plain
from apps.exercises.content.render import RenderError
from apps.exercises.content.resolve import ContentError
from apps.exercises.grading.formula import FormulaError
from apps.exercises.models import Attempt, Exercise
from apps.learning import gates, outlines, services
from apps.learning import selectors as learning_selectors
from apps.learning.serializers import AttemptOut, ExerciseDetailOut
from apps.precheck import selectors as precheck_selectors
from apps.precheck import services as precheck_services
from apps.precheck.records import NOTE as PRECHECK_NOTE
from apps.precheck.records import Precheck
from apps.precheck.serializers import PrecheckOut
from apps.progress import selectors as progress_selectors
from apps.progress import services as progress_services
from apps.progress import srs


def home(request: HttpRequest) -> HttpResponse:
    user = request.user if isinstance(request.user, User) else None
    context = {
        "reviews_due": learning_selectors.reviews_due_count(user=user, at=timezone.now()) if user is not None else 0,
        "workbooks": progress_selectors.workbook_list(user=user),
        "streak": progress_selectors.streak_get(user=user) if user is not None else None,
        "next_exercise": progress_selectors.continue_point(user=user) if user is not None else None,
        "due": progress_selectors.learner_due(user=user) if user is not None else [],
    }
    return render(request, "exercises/home.html", context)


# What content that loaded but does not render raises (dev mode shows it; see _content_broken).
CONTENT_ERRORS = (ContentError, RenderError, FormulaError)


def _content_broken(
    request: HttpRequest, dev: dict[str, Any], *, slug: str, chapter: int | None, title: str
) -> HttpResponse | None:
    """Dev mode only (``make content-dev``): a content file that does not load or fails its checks
    is shown instead of the old content, until it is fixed."""
    errors = devloop.errors_for(slug=slug, chapter=chapter)
    return _content_error_page(request, dev, errors, slug=slug, title=title) if errors else None


def _content_crashed(
    request: HttpRequest, dev: dict[str, Any], exc: Exception, *, slug: str, title: str
) -> HttpResponse:
    """Dev mode only: content synced but not yet checked raised ``exc`` while the page was built."""
    errors = [{"file": "this page, as synced", "message": str(exc)}, *devloop.errors_for(slug=slug)]
    return _content_error_page(request, dev, errors, slug=slug, title=title)


def _content_error_page(
    request: HttpRequest, dev: dict[str, Any], errors: list[dict[str, Any]], *, slug: str, title: str
) -> HttpResponse:
    """The errors instead of the page, with the reload script. The text (which may state answers)
    is shown to staff, the authors; anyone else is told only that the page is being edited."""
    context = {"title": title, "errors": errors, "content_dev": dev, "slug": slug}
    return render(request, "exercises/content_error.html", context)


@require_GET
def content_dev_status(request: HttpRequest) -> JsonResponse:
    """What static/js/content-dev.js polls in dev mode; a 404 otherwise."""
    if not devloop.dev_mode():
        raise Http404("No such page.")
    return JsonResponse(devloop.status(), headers={"Cache-Control": "no-store"})


@login_required
def workbook(request: HttpRequest, slug: str) -> HttpResponse:
    if not devloop.dev_mode():
        return _workbook(request, slug, None)
    # Dev mode: the reload token is read before the content, so a change in between still reloads.
    dev = devloop.status()
    if broken := _content_broken(request, dev, slug=slug, chapter=None, title=slug):
        return broken
    try:
        return _workbook(request, slug, dev)
    except CONTENT_ERRORS as exc:  # a chapter intro synced, not yet checked
        return _content_crashed(request, dev, exc, slug=slug, title=slug)


def _workbook(request: HttpRequest, slug: str, dev: dict[str, Any] | None) -> HttpResponse:
    user = request_user(request)
    # The workbook, its chapters and exercises are the same for everyone: read and rendered once
    # per content generation (learning.outlines). Only the learner's own rows are read here.
    outline = outlines.workbook_outline(slug=slug)
    progress = learning_selectors.workbook_progress(user_id=user.pk, workbook_id=outline.workbook.pk)
    chapters = []
    solved_total = 0
    for item in outline.chapters:
        rows, solved = [], 0
        for row in item.rows:
            p = progress.get(row["id"])
            state = ""
            if p is not None:
                solved += p.solved
                state = "solved" if p.solved else "revealed" if p.revealed else "tried" if p.attempts else ""
            rows.append({**row, "state": state, "attempts": p.attempts if p else 0})
        solved_total += solved
        chapters.append(
            {
                "chapter": item.chapter,
                "counts": selectors.Counts(item.total, solved),
                "intro_html": item.intro_html,
                "exercises": rows,
            }
        )
    counts = selectors.Counts(outline.total, solved_total)
    due = learning_selectors.workbook_due(
        user_id=user.pk, workbook=outline.workbook, solved=solved_total, total=outline.total
    )
    context = {"workbook": outline.workbook, "chapters": chapters, "counts": counts, "due": due}
    if dev is not None:
        context["content_dev"] = dev
    return render(request, "exercises/workbook.html", context)


def _payload_from_form(exercise: Exercise, data: Any) -> dict[str, Any]:
    """The same payload the API takes, from a plain HTML form (no JavaScript needed)."""
    if "code" in data:  # a Build, or a Debug's fix (its own form on the page)
        return {"code": data.get("code", "")}
    return formats.get(exercise.format).form_payload(data)


def _own_attempt(user: User, exercise: Exercise, attempt_id: str) -> Attempt | None:
    """The learner's own code attempt on this exercise named in the URL, else None (ignored)."""
    if not attempt_id.isdigit():
        return None
    try:
        attempt = selectors.attempt_get(user=user, attempt_id=int(attempt_id))
    except Http404:
        return None
    return attempt if attempt.exercise_id == exercise.pk and attempt.part == AttemptPart.CODE else None


def _own_precheck(user: User, exercise: Exercise, precheck_id: str) -> Precheck | None:
    """The learner's own precheck of this exercise named in the URL, else None (ignored)."""
    if not precheck_id:
        return None
    try:
        checked = precheck_selectors.precheck_get(user=user, precheck_id=precheck_id)
    except (Http404, ApplicationError):
        return None
    return checked if checked.exercise_id == exercise.pk else None


@login_required
@require_http_methods(["GET", "POST"])
def exercise(request: HttpRequest, slug: str, number: str) -> HttpResponse:
    user = request_user(request)
    if not devloop.dev_mode():
        return _exercise(request, user, selectors.exercise_get(workbook_slug=slug, number=number), None)
    dev = devloop.status()  # before the content: see workbook()
    ex = selectors.exercise_get(workbook_slug=slug, number=number)
    title = f"Exercise {number}"
    if broken := _content_broken(request, dev, slug=slug, chapter=ex.chapter.number, title=title):
        return broken
    try:
        return _exercise(request, user, ex, dev)
    except CONTENT_ERRORS as exc:  # synced, not yet checked: its checks will say the same
        return _content_crashed(request, dev, exc, slug=slug, title=title)


def _exercise(request: HttpRequest, user: User, ex: Exercise, dev: dict[str, Any] | None) -> HttpResponse:
    slug, number = ex.workbook.slug, ex.number
    paused = gates.practice_refusal(user=user, exercise_id=ex.pk)
    if paused:  # an exam the learner is taking has this exercise: no practice, no peeking
        return render(request, "exercises/paused.html", {"exercise": ex, "why": paused}, status=409)
    result: dict[str, Any] | None = None
    error: ApplicationError | None = None
    submitted: dict[str, Any] = {}
    precheck: dict[str, Any] | None = None
    precheck_error: ApplicationError | None = None
    if request.method == "POST" and request.POST.get("precheck"):
        # The code form's Precheck button, without JavaScript: start it, then show its page (a GET).
        submitted = {"code": request.POST.get("code", "")}
        try:
            precheck_services.precheck_admit(user=user)
            started = precheck_services.precheck_start(user=user, exercise=ex, payload=submitted)
            url = reverse("web:exercise", args=[slug, number])
            return redirect(f"{url}?precheck={started.id}#precheck-result")
        except ApplicationError as exc:
            precheck_error = exc
    elif request.method == "POST":
        action = request.POST.get("action", "submit")
        try:
            if action == "reveal":
                services.exercise_reveal(user=user, exercise=ex)
                return redirect(reverse("web:exercise", args=[slug, number]) + "#solution")
            if action == "new_numbers":
                moved = services.exercise_new_numbers(user=user, exercise=ex)
                query = f"?moved={','.join(m.number for m in moved)}" if moved else ""
                return redirect(reverse("web:exercise", args=[slug, number]) + query)
            if action == "hint":
                services.hint_reveal_next(user=user, exercise=ex)
                return redirect(reverse("web:exercise", args=[slug, number]) + "#hints")
            submitted = _payload_from_form(ex, request.POST)
            outcome = services.attempt_create(user=user, exercise=ex, payload=submitted)
            if outcome.pending:
                # Queued for the sandbox: answer with a page about this attempt that a reload (a GET)
                # brings up to date, where reloading this POST's answer would submit the code again.
                url = reverse("web:exercise", args=[slug, number])
                return redirect(f"{url}?attempt={outcome.attempt.pk}#feedback")
            result = represent(AttemptOut, outcome.attempt)
        except ApplicationError as exc:
            error = exc
    elif (checked := _own_precheck(user, ex, request.GET.get("precheck", ""))) is not None:
        precheck = represent(PrecheckOut, checked)
        submitted = {"code": checked.code}
    elif (shown := _own_attempt(user, ex, request.GET.get("attempt", ""))) is not None:
        result = represent(AttemptOut, shown)
        submitted = {"code": shown.raw.get("code", "")} if isinstance(shown.raw, dict) else {}
    page = learning_selectors.exercise_page(user=user, exercise=ex)
    if request.method == "GET" and request.GET.get("moved"):
        # After new numbers: which of the scenario's exercises moved with it (only its members'
        # numbers are taken from the query; anything else in it is ignored).
        page = dataclasses.replace(page, moved=learning_selectors.moved_numbers(page, request.GET["moved"]))
    data = represent(ExerciseDetailOut, page)
    fmt = formats.get(ex.format)
    recent = represent_many(AttemptOut, learning_selectors.recent_attempts(user_id=user.pk, exercise=ex))
    context = {
        "exercise": ex,
        "data": data,
        "result": result,
        "error": error,
        "submitted": submitted,
        "recent": recent,
        "correct_verdict": Verdict.CORRECT,
        "api_attempts": reverse("api:exercise-attempts", args=[slug, number]),
        "api_preview": reverse("api:exercise-preview", args=[slug, number]),
        "api_hints": reverse("api:exercise-hints", args=[slug, number]),
        "api_reveal": reverse("api:exercise-reveal", args=[slug, number]),
        # Plain readings ("N* as a formula in C"): they go in aria-labels and plain-text verdicts.
        "table_labels": (
            {k: tex_plain(v) for k, v in fmt.field_labels(cache.resolved(ex.current_version).spec).items()}
            if ex.current_version
            else {}
        ),
        "widget_template": fmt.template,
        "beside_template": fmt.beside_template,
        "prechecks": fmt.prechecks,
        # A Debug's buggy-lines verdict goes by its own button, not below the fix's editor.
        "by_lines": bool(data["widget"].get("fix")) and "lines" in submitted,
        # Where static/js/drafts.js keeps this learner's unsaved code for this version (their own
        # browser only; another account, or new content, starts from a key of its own).
        "draft_key": f"{user.pk}:{ex.workbook.slug}/{ex.number}@{data['version']}",
        "submit_label": fmt.submit_label,
    }
    context["precheck"] = {
        "offer": precheck_selectors.precheck_offer(exercise=ex),
        "result": precheck,
        "error": precheck_error,
        "api": reverse("api:exercise-precheck", args=[slug, number]),
        "note": PRECHECK_NOTE,
    }
    if dev is not None:
        context["content_dev"] = dev
    status = 400 if error is not None and error.status_code == 400 else 200
    if precheck_error is not None:
        status = precheck_error.status_code
    return render(request, "exercises/exercise.html", context, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def reviews(request: HttpRequest) -> HttpResponse:
    """Reviews due today: start one (the exercise, on fresh numbers), or mark a skill."""
    user = request_user(request)
    if request.method == "POST":
        try:
            card = progress_services.review_start(
                user=user, card_id=int(request.POST.get("card", "0") or 0), at=timezone.now()
            )
        except (ApplicationError, ValueError) as exc:
            messages.error(request, getattr(exc, "message", "No such review."))
            return redirect(reverse("web:reviews"))
        return redirect(reverse("web:exercise", args=[card.exercise.workbook.slug, card.exercise.number]))
    at = timezone.now()
    page = learning_selectors.review_page(user=user, at=at)
    cards = [(card, round(100 * srs.retrievability(card, at))) for card in page.queue.cards]
    return render(request, "exercises/reviews.html", {"page": page, "cards": cards})
