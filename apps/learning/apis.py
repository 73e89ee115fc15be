"""REST API: one view per operation — validate, call a service or selector, serialize."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from django.utils import timezone
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.accounts.models import User
from apps.core import schema
from apps.core.pagination import PAGE_PARAMETERS, Pagination, paginated
from apps.core.request import request_user
from apps.core.serializers import ErrorOut, represent, represent_many
from apps.core.throttling import FixedWindowScopedThrottle
from apps.exercises import formats, presentation, selectors
from apps.exercises import services as exercise_services
from apps.exercises.choices import AttemptPart
from apps.exercises.content import cache
from apps.exercises.content.render import markdown_html, render
from apps.exercises.models import Attempt, Chapter, Exercise, Verdict, Workbook
from apps.exercises.selectors import chapter_scope
from apps.exercises.serializers import (
    AttemptOut,
    AttemptRequest,
    AttemptResultOut,
    ChapterDetailOut,
    ExerciseDetailOut,
    ExerciseSummaryOut,
    HintRevealOut,
    PreviewIn,
    PreviewOut,
    RevealOut,
    WorkbookDetailOut,
    WorkbookExportOut,
    WorkbookOut,
)
from apps.learning import services
from apps.progress import selectors as progress_selectors
from apps.progress.models import ExerciseProgress

ERRORS = {
    400: OpenApiResponse(ErrorOut, description="The answer could not be graded (explained; costs no attempt)."),
    **schema.ERRORS,
}
ERRORS_PAGE = schema.ERRORS_PAGE


# ---- dict builders shared with the web views ----------------------------------------------------


def state_dict(p: ExerciseProgress | None) -> dict[str, Any]:
    return {
        "solved": bool(p and p.solved),
        "revealed": bool(p and p.revealed),
        "attempts": p.attempts if p else 0,
        "hints_used": p.hints_used if p else 0,
        "solved_at": p.solved_at if p else None,
        "revealed_at": p.revealed_at if p else None,
        "solved_with_note": bool(p and p.solved and p.solved_with_note),
    }


def exercise_url(e: Exercise) -> str:
    return reverse("api:exercise-detail", kwargs={"slug": e.workbook.slug, "number": e.number})


def summary_dict(e: Exercise, p: ExerciseProgress | None) -> dict[str, Any]:
    return {
        "number": e.number,
        "title": e.title,
        "kind": e.kind,
        "format": e.format,
        "difficulty": e.difficulty,
        "chapter": e.chapter.number,
        "state": state_dict(p),
        "url": exercise_url(e),
    }


def detail_dict(e: Exercise, user: User) -> dict[str, Any]:
    version = e.current_version
    assert version is not None
    progress = progress_selectors.progress_get(user=user, exercise=e)
    prev, nxt = selectors.neighbours(exercise=e)
    visible = progress is not None and progress.answer_visible
    return {
        **summary_dict(e, progress),
        "workbook": e.workbook.slug,
        "chapter_info": {"number": e.chapter.number, "title": e.chapter.title},
        "version": version.version,
        "prompt_html": cache.rendered(version).prompt_html,
        "widget": presentation.widget(version, user.pk),
        "hints": presentation.hints(version, progress.hints_used if progress else 0),
        "solution": presentation.solution(version, answer_visible=visible),
        "plot": presentation.plot(version, user.pk, answer_visible=visible),
        "previous": prev,
        "next": nxt,
    }


def attempt_dict(a: Attempt) -> dict[str, Any]:
    return {
        "id": a.pk,
        "workbook": a.exercise.workbook.slug,
        "exercise": a.exercise.number,
        "version": a.version.version,
        "created_at": a.created_at,
        "submitted": a.raw,
        "part": a.part,
        "status": a.status,
        "verdict": a.verdict,
        "outcome": a.outcome,
        "correct": a.verdict == Verdict.CORRECT,
        "accepted_with_note": a.accepted_with_note,
        "counted": a.counted,
        "score": a.score,
        "feedback": a.feedback,
        "feedback_html": markdown_html(a.feedback) if a.feedback else "",
        "understood": a.parsed.get("understood") if isinstance(a.parsed, dict) else None,
        "details": a.details,
        "run": run_dict(a) if a.part == AttemptPart.CODE else None,
        "url": reverse("api:attempt-detail", kwargs={"attempt_id": a.pk}),
    }


def run_dict(a: Attempt) -> dict[str, Any]:
    """A code attempt's run: the limits its worker recorded on claiming it, and the time it took."""
    limits = a.details.get("limits") if isinstance(a.details, dict) else None
    limits = limits if isinstance(limits, dict) else {}
    elapsed = None
    if a.started_at is not None:
        end = a.finished_at if a.is_final and a.finished_at else timezone.now()
        elapsed = round(max(0.0, (end - a.started_at).total_seconds()), 1)
    return {
        "time_limit_s": limits.get("time_s"),
        "memory_mb": limits.get("memory_mb"),
        "started_at": a.started_at,
        "elapsed_s": elapsed,
    }


def _exercise(slug: str, number: str) -> Exercise:
    return selectors.exercise_get(workbook_slug=slug, number=number)


# ---- workbooks and chapters -------------------------------------------------------------------


class WorkbookListApi(APIView):
    @extend_schema(operation_id="workbooks_list", responses={200: WorkbookOut(many=True), 401: ERRORS[401]})
    def get(self, request: Request) -> Response:
        data = [_workbook_dict(w, c) for w, c in progress_selectors.workbook_list(user=request_user(request))]
        return Response(represent_many(WorkbookOut, data))


def _workbook_dict(w: Workbook, c: selectors.Counts) -> dict[str, Any]:
    return {
        "slug": w.slug,
        "title": w.title,
        "summary": w.summary,
        "prerequisites": w.prerequisites,
        "progress": selectors.counts_dict(c),
        "url": reverse("api:workbook-detail", kwargs={"slug": w.slug}),
    }


def _chapter_dict(w: Workbook, ch: Chapter, c: selectors.Counts) -> dict[str, Any]:
    return {
        "number": ch.number,
        "title": ch.title,
        "progress": selectors.counts_dict(c),
        "url": reverse("api:chapter-detail", kwargs={"slug": w.slug, "number": ch.number}),
    }


class WorkbookDetailApi(APIView):
    @extend_schema(
        operation_id="workbooks_retrieve", responses={200: WorkbookDetailOut, 401: ERRORS[401], 404: ERRORS[404]}
    )
    def get(self, request: Request, slug: str) -> Response:
        user = request_user(request)
        workbook = selectors.workbook_get(slug=slug)
        chapters = progress_selectors.chapter_list(workbook=workbook, user=user)
        total = selectors.Counts(sum(c.total for _, c in chapters), sum(c.solved for _, c in chapters))
        data = {**_workbook_dict(workbook, total), "chapters": [_chapter_dict(workbook, ch, c) for ch, c in chapters]}
        return Response(represent(WorkbookDetailOut, data))


class ChapterDetailApi(APIView):
    @extend_schema(
        operation_id="chapters_retrieve", responses={200: ChapterDetailOut, 401: ERRORS[401], 404: ERRORS[404]}
    )
    def get(self, request: Request, slug: str, number: int) -> Response:
        user = request_user(request)
        workbook = selectors.workbook_get(slug=slug)
        chapter = selectors.chapter_get(workbook=workbook, number=number)
        exercises = list(selectors.exercise_list(workbook=workbook, chapter=chapter))
        progress = progress_selectors.progress_map(user=user, exercises=exercises)
        solved = sum(1 for e in exercises if (p := progress.get(e.pk)) and p.solved)
        scope = chapter_scope(chapter)
        data = {
            **_chapter_dict(workbook, chapter, selectors.Counts(len(exercises), solved)),
            "intro_html": render(chapter.intro, scope),
            "exercises": [summary_dict(e, progress.get(e.pk)) for e in exercises],
        }
        return Response(represent(ChapterDetailOut, data))


# ---- exercises ----------------------------------------------------------------------------------


class ExerciseListApi(APIView):
    @extend_schema(
        operation_id="exercises_list",
        parameters=PAGE_PARAMETERS,
        responses={200: paginated(ExerciseSummaryOut), 400: ERRORS_PAGE[400], 401: ERRORS[401], 404: ERRORS[404]},
    )
    def get(self, request: Request, slug: str) -> Response:
        workbook = selectors.workbook_get(slug=slug)
        paginator = Pagination()
        page = paginator.paginate_queryset(selectors.exercise_list(workbook=workbook), request, view=self) or []
        progress = progress_selectors.progress_map(user=request_user(request), exercises=list(page))
        data = [summary_dict(e, progress.get(e.pk)) for e in page]
        return paginator.get_paginated_response(represent_many(ExerciseSummaryOut, data))


class ExerciseDetailApi(APIView):
    @extend_schema(
        operation_id="exercises_retrieve", responses={200: ExerciseDetailOut, 401: ERRORS[401], 404: ERRORS[404]}
    )
    def get(self, request: Request, slug: str, number: str) -> Response:
        data = detail_dict(_exercise(slug, number), request_user(request))
        return Response(represent(ExerciseDetailOut, data))


class ExerciseAttemptsApi(APIView):
    throttle_scope = "attempts"

    def get_throttles(self) -> list[Any]:
        # Only submissions are throttled; reading one's attempts is not.
        return [FixedWindowScopedThrottle()] if self.request.method == "POST" else []

    @extend_schema(
        operation_id="exercise_attempts_list",
        parameters=PAGE_PARAMETERS,
        responses={200: paginated(AttemptOut), 400: ERRORS_PAGE[400], 401: ERRORS[401], 404: ERRORS[404]},
    )
    def get(self, request: Request, slug: str, number: str) -> Response:
        exercise = _exercise(slug, number)
        paginator = Pagination()
        page = paginator.paginate_queryset(
            selectors.attempt_list(user=request_user(request), exercise=exercise), request, view=self
        )
        return paginator.get_paginated_response(represent_many(AttemptOut, [attempt_dict(a) for a in page or []]))

    @extend_schema(
        operation_id="exercise_attempts_create",
        request=AttemptRequest,
        description=(
            "Submit an answer. The body depends on the exercise's format: `answer` (numeric), `choices` "
            "(option ids), `order` (step ids), `lines` (line numbers), `cells` (table cell id → value), "
            "`code` (a Build; or a Debug's fix, sent instead of `lines`). Non-code answers are graded "
            "instantly (201). Code is queued for the sandbox (202): poll the attempt's `url` until its "
            "`status` is `graded` (per-test results in `details.tests`) or `not_graded` (a platform fault, "
            "not counted). An answer that cannot be read (unparseable, wrong dimension, a syntax error) "
            "gets a 400 that says what was understood and costs no attempt."
        ),
        responses={
            201: AttemptResultOut,
            202: OpenApiResponse(
                AttemptResultOut, description="Code queued for the sandbox: poll `url` until `status` is final."
            ),
            **ERRORS,
            429: OpenApiResponse(ErrorOut, description="Too many submissions; retry later."),
            503: OpenApiResponse(ErrorOut, description="Code grading unavailable (sandbox); nothing recorded."),
        },
    )
    def post(self, request: Request, slug: str, number: str) -> Response:
        user = request_user(request)
        exercise = _exercise(slug, number)
        body = formats.get(exercise.format).answer_in(data=request.data)
        body.is_valid(raise_exception=True)
        outcome = services.attempt_create(user=user, exercise=exercise, payload=dict(body.validated_data))
        attempt, progress = outcome.attempt, outcome.progress
        if outcome.pending:
            # Queued for the sandbox; a worker may have claimed it already: read back what is known now.
            attempt = selectors.attempt_get(user=user, attempt_id=attempt.pk)
            progress = progress_selectors.progress_get(user=user, exercise=exercise)
        solved = attempt.verdict == Verdict.CORRECT and progress is not None and progress.solved
        data = {
            **attempt_dict(attempt),
            "state": state_dict(progress),
            "solution": presentation.solution(attempt.version, answer_visible=True) if solved else None,
        }
        code = status.HTTP_202_ACCEPTED if outcome.pending else status.HTTP_201_CREATED
        return Response(represent(AttemptResultOut, data), status=code, headers={"Location": data["url"]})


class ExercisePreviewApi(APIView):
    throttle_scope = "preview"
    throttle_classes = [FixedWindowScopedThrottle]

    @extend_schema(
        operation_id="exercise_answer_preview",
        request=PreviewIn,
        description=(
            "How a number would be read, without grading or recording it: the same reading the grader "
            "takes. For a multi-part or table exercise, `field` names the part or cell."
        ),
        responses={200: PreviewOut, **ERRORS},
    )
    def post(self, request: Request, slug: str, number: str) -> Response:
        body = PreviewIn(data=request.data)
        body.is_valid(raise_exception=True)
        data = exercise_services.answer_preview(
            exercise=_exercise(slug, number),
            text=body.validated_data["answer"],
            field=body.validated_data.get("field") or None,
        )
        return Response(represent(PreviewOut, data))


class ExerciseRevealApi(APIView):
    @extend_schema(
        operation_id="exercise_reveal",
        request=None,
        description="Give up: show the answer and derivation. Solving afterwards completes the exercise but earns no points.",
        responses={200: RevealOut, 401: ERRORS[401], 404: ERRORS[404]},
    )
    def post(self, request: Request, slug: str, number: str) -> Response:
        exercise = _exercise(slug, number)
        progress = services.exercise_reveal(user=request_user(request), exercise=exercise)
        assert exercise.current_version is not None
        solution = presentation.solution(exercise.current_version, answer_visible=progress.answer_visible)
        data = {"state": state_dict(progress), "solution": solution}
        return Response(represent(RevealOut, data))


class ExerciseHintApi(APIView):
    @extend_schema(
        operation_id="exercise_hint_next",
        request=None,
        description="Reveal the next hint. Hints come one at a time and are recorded.",
        responses={
            200: HintRevealOut,
            401: ERRORS[401],
            404: ERRORS[404],
            409: OpenApiResponse(ErrorOut, description="No more hints."),
        },
    )
    def post(self, request: Request, slug: str, number: str) -> Response:
        exercise = _exercise(slug, number)
        progress = services.hint_reveal_next(user=request_user(request), exercise=exercise)
        assert exercise.current_version is not None
        data = {
            "hints": presentation.hints(exercise.current_version, progress.hints_used),
            "state": state_dict(progress),
        }
        return Response(represent(HintRevealOut, data))


# ---- attempts -----------------------------------------------------------------------------------


class AttemptListApi(APIView):
    @extend_schema(
        operation_id="attempts_list",
        parameters=[
            OpenApiParameter(
                "workbook",
                str,
                description="Only attempts in this workbook (slug); any other value matches none.",
                examples=[OpenApiExample("transformer-math", value="transformer-math")],
            ),
            *PAGE_PARAMETERS,
        ],
        responses={200: paginated(AttemptOut), 400: ERRORS_PAGE[400], 401: ERRORS[401], 404: ERRORS[404]},
    )
    def get(self, request: Request) -> Response:
        qs = selectors.attempt_list(
            user=request_user(request), workbook_slug=request.query_params.get("workbook") or None
        )
        paginator = Pagination()
        page = paginator.paginate_queryset(qs, request, view=self)
        return paginator.get_paginated_response(represent_many(AttemptOut, [attempt_dict(a) for a in page or []]))


class AttemptDetailApi(APIView):
    @extend_schema(operation_id="attempts_retrieve", responses={200: AttemptOut, 401: ERRORS[401], 404: ERRORS[404]})
    def get(self, request: Request, attempt_id: int) -> Response:
        attempt = selectors.attempt_get(user=request_user(request), attempt_id=attempt_id)
        return Response(represent(AttemptOut, attempt_dict(attempt)))


# ---- content export, for authors --------------------------------------------------------------


class WorkbookExportApi(APIView):
    @extend_schema(
        operation_id="workbooks_export",
        responses={
            200: WorkbookExportOut,
            401: ERRORS[401],
            403: OpenApiResponse(ErrorOut, description="Not an author."),
            404: ERRORS[404],
            409: OpenApiResponse(ErrorOut, description="The workbook's content files do not load (`problems`)."),
        },
        description="For authors: what `manage.py export_content --workbook <slug>` prints — every exercise of "
        "the content files with its evaluated answers, correct options, step order, buggy lines, cells, parts "
        "and skills. Learners and instructors get 403 whatever the slug.",
    )
    def get(self, request: Request, slug: str) -> Response:
        # The command's JSON as it is (ints stay ints): WorkbookExportOut documents its shape.
        return Response(selectors.workbook_export(user=request_user(request), slug=slug))
