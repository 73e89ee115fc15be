"""REST API: one view per operation — validate, call a service or selector, serialize."""

from __future__ import annotations

import dataclasses
from typing import Any

from django.utils import timezone
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core import schema
from apps.core.pagination import PAGE_PARAMETERS, Pagination, paginated
from apps.core.request import request_user
from apps.core.serializers import ErrorOut, represent, represent_many
from apps.core.throttling import FixedWindowScopedThrottle
from apps.core.validation import validated
from apps.exercises import formats, selectors
from apps.exercises import services as exercise_services
from apps.exercises.models import Exercise
from apps.exercises.serializers import AttemptRequest, PreviewIn, PreviewOut, WorkbookExportOut
from apps.learning import gates, services
from apps.learning import selectors as learning_selectors
from apps.learning.selectors import AttemptResult, state_of
from apps.learning.serializers import (
    AttemptOut,
    AttemptResultOut,
    ChapterDetailOut,
    ExerciseDetailOut,
    ExerciseSummaryOut,
    HintRevealOut,
    RevealOut,
    ReviewQueueOut,
    WorkbookDetailOut,
    WorkbookOut,
)
from apps.progress import selectors as progress_selectors
from apps.progress import services as progress_services

ERRORS = {
    400: OpenApiResponse(ErrorOut, description="The answer could not be graded (explained; costs no attempt)."),
    **schema.ERRORS,
}
ERRORS_PAGE = schema.ERRORS_PAGE


def _exercise(slug: str, number: str) -> Exercise:
    return selectors.exercise_get(workbook_slug=slug, number=number)


# ---- workbooks and chapters -------------------------------------------------------------------


class WorkbookListApi(APIView):
    @extend_schema(operation_id="workbooks_list", responses={200: WorkbookOut(many=True), 401: ERRORS[401]})
    def get(self, request: Request) -> Response:
        rows = learning_selectors.workbook_rows(user=request_user(request))
        return Response(represent_many(WorkbookOut, rows))


class WorkbookDetailApi(APIView):
    @extend_schema(
        operation_id="workbooks_retrieve", responses={200: WorkbookDetailOut, 401: ERRORS[401], 404: ERRORS[404]}
    )
    def get(self, request: Request, slug: str) -> Response:
        workbook = selectors.workbook_get(slug=slug)
        page = learning_selectors.workbook_page(user=request_user(request), workbook=workbook)
        return Response(represent(WorkbookDetailOut, page))


class ChapterDetailApi(APIView):
    @extend_schema(
        operation_id="chapters_retrieve", responses={200: ChapterDetailOut, 401: ERRORS[401], 404: ERRORS[404]}
    )
    def get(self, request: Request, slug: str, number: int) -> Response:
        workbook = selectors.workbook_get(slug=slug)
        chapter = selectors.chapter_get(workbook=workbook, number=number)
        page = learning_selectors.chapter_page(user=request_user(request), workbook=workbook, chapter=chapter)
        return Response(represent(ChapterDetailOut, page))


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
        rows = learning_selectors.exercise_rows(user=request_user(request), exercises=list(page))
        return paginator.get_paginated_response(represent_many(ExerciseSummaryOut, rows))


class ExerciseDetailApi(APIView):
    @extend_schema(
        operation_id="exercises_retrieve", responses={200: ExerciseDetailOut, 401: ERRORS[401], 404: ERRORS[404]}
    )
    def get(self, request: Request, slug: str, number: str) -> Response:
        user, exercise = request_user(request), _exercise(slug, number)
        gates.practice_check(user=user, exercise_id=exercise.pk)
        page = learning_selectors.exercise_page(user=user, exercise=exercise)
        return Response(represent(ExerciseDetailOut, page))


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
        return paginator.get_paginated_response(represent_many(AttemptOut, list(page or [])))

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
        payload = validated(formats.get(exercise.format).answer_in, request.data)
        outcome = services.attempt_create(user=user, exercise=exercise, payload=payload)
        attempt, progress = outcome.attempt, outcome.progress
        if outcome.pending:
            # Queued for the sandbox; a worker may have claimed it already: read back what is known now.
            attempt = selectors.attempt_get(user=user, attempt_id=attempt.pk)
            progress = progress_selectors.progress_get(user=user, exercise=exercise)
        result = AttemptResult(attempt, state_of(progress), learning_selectors.attempt_variant(attempt))
        data = represent(AttemptResultOut, result)
        code = status.HTTP_202_ACCEPTED if outcome.pending else status.HTTP_201_CREATED
        return Response(data, status=code, headers={"Location": data["url"]})


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
        return Response(represent(RevealOut, learning_selectors.progress_on_version(exercise, progress)))


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
        return Response(represent(HintRevealOut, learning_selectors.progress_on_version(exercise, progress)))


class ExerciseNewNumbersApi(APIView):
    @extend_schema(
        operation_id="exercise_new_numbers",
        request=None,
        description=(
            "After solving or revealing a varying exercise: the same question on the next round of numbers. "
            "It starts over (answer hidden again); solving it earns no points but counts toward mastery."
        ),
        responses={
            200: ExerciseDetailOut,
            401: ERRORS[401],
            404: ERRORS[404],
            409: OpenApiResponse(ErrorOut, description="Fixed numbers, or not yet solved or revealed."),
        },
    )
    def post(self, request: Request, slug: str, number: str) -> Response:
        user, exercise = request_user(request), _exercise(slug, number)
        moved = services.exercise_new_numbers(user=user, exercise=exercise)
        page = learning_selectors.exercise_page(user=user, exercise=exercise)
        page = dataclasses.replace(page, moved=tuple(m.number for m in moved))
        return Response(represent(ExerciseDetailOut, page))


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
        return paginator.get_paginated_response(represent_many(AttemptOut, list(page or [])))


class AttemptDetailApi(APIView):
    @extend_schema(operation_id="attempts_retrieve", responses={200: AttemptOut, 401: ERRORS[401], 404: ERRORS[404]})
    def get(self, request: Request, attempt_id: int) -> Response:
        attempt = selectors.attempt_get(user=request_user(request), attempt_id=attempt_id)
        return Response(represent(AttemptOut, attempt))


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


# ---- spaced review ------------------------------------------------------------------------------


class ReviewListApi(APIView):
    @extend_schema(
        operation_id="reviews_due",
        description=(
            "Reviews due today (before the end of your day in your time zone), across workbooks: solved "
            "exercises to prove again on fresh numbers, and ticked skills. Scheduled by FSRS."
        ),
        responses={200: ReviewQueueOut, 401: ERRORS[401]},
    )
    def get(self, request: Request) -> Response:
        at = timezone.now()
        page = learning_selectors.review_page(user=request_user(request), at=at)
        return Response(ReviewQueueOut(page, context={"at": at}).data)


class ReviewStartApi(APIView):
    @extend_schema(
        operation_id="review_start",
        request=None,
        description=(
            "Start a due review: the exercise starts over on its next round of numbers. Answer it through "
            "its attempts URL; the first wrong answer (or revealing) rates the review Again, a solve rates "
            "it Good (Hard with hints), and FSRS schedules the next one. Starting again is harmless."
        ),
        responses={
            200: ExerciseDetailOut,
            401: ERRORS[401],
            404: ERRORS[404],
            409: OpenApiResponse(ErrorOut, description="Not due yet."),
        },
    )
    def post(self, request: Request, card_id: int) -> Response:
        user = request_user(request)
        card = progress_services.review_start(user=user, card_id=card_id, at=timezone.now())
        page = learning_selectors.exercise_page(user=user, exercise=card.exercise)
        return Response(represent(ExerciseDetailOut, page))
