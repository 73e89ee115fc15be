"""Item analysis over REST: one read for instructors (their cohort) and authors (every learner)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core import schema
from apps.core.exceptions import ApplicationError
from apps.core.request import request_user
from apps.core.serializers import ErrorOut, represent
from apps.exercises import selectors as exercise_selectors
from apps.itemstats import selectors
from apps.itemstats.serializers import AnalysisQueryIn, ItemAnalysisOut


def body(analysis: selectors.ItemAnalysis) -> dict[str, Any]:
    exercise, cohort = analysis.exercise, analysis.cohort
    return {
        "workbook": exercise.workbook.slug,
        "number": exercise.number,
        "title": exercise.title,
        "varies": analysis.varies,
        "scope": {"cohort": cohort.pk if cohort else None, "cohort_name": cohort.name if cohort else None},
        "figures": analysis.figures,
        "without_attempt": analysis.without_attempt,
        "variants": analysis.variants,
        "by_given": analysis.by_given,
        "mistakes": analysis.mistakes,
    }


def _cohort_id(request: Request) -> int | None:
    query = AnalysisQueryIn(data=request.query_params)
    query.is_valid(raise_exception=True)
    cohort: int | None = query.validated_data.get("cohort")
    return cohort


class ItemAnalysisApi(APIView):
    @extend_schema(
        operation_id="exercises_analysis",
        parameters=[
            OpenApiParameter(
                "cohort",
                int,
                required=False,
                description="A cohort you teach. Required for instructors; authors and superusers may leave it "
                "out to read every learner.",
            )
        ],
        responses={
            200: ItemAnalysisOut,
            400: OpenApiResponse(ErrorOut, description="`cohort` missing (instructors) or not a whole number."),
            401: schema.ERRORS[401],
            403: OpenApiResponse(ErrorOut, description="Not an instructor or author (`permission_denied`)."),
            404: schema.ERRORS[404],
        },
        description="Item analysis of one exercise: the share solved first try, attempts to solve, the reveal "
        "rate and the discrimination (point-biserial with the learner's other solves), whole and by variant "
        "(each learner on the numbers of their first attempt; hardest first) and by each varying given's values "
        "(variants pooled), with the known mistakes most often matched. Over a cohort's learners (its instructor; the exercise's workbook must be assigned to "
        "it) or every learner (authors). Learners get 403; another instructor's cohort is a 404.",
    )
    def get(self, request: Request, slug: str, number: str) -> Response:
        user = request_user(request)
        if not selectors.may_analyse(user):  # before any lookup: the refusal tells nothing
            raise ApplicationError(
                "Only instructors and authors see item analysis.", code="permission_denied", status_code=403
            )
        exercise = exercise_selectors.exercise_get(workbook_slug=slug, number=number)
        analysis = selectors.item_analysis(viewer=user, exercise=exercise, cohort_id=_cohort_id(request))
        return Response(represent(ItemAnalysisOut, body(analysis)))
