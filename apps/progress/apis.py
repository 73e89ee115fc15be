"""Progress, streak, leaderboards, profile and cohorts over REST: validate, call, serialize."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.parsers import BaseParser
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core import schema
from apps.core.pagination import PAGE_PARAMETERS, Pagination, paginated
from apps.core.request import request_user
from apps.core.serializers import ErrorOut, represent, represent_many
from apps.core.throttling import FixedWindowScopedThrottle
from apps.exercises import selectors as exercise_selectors
from apps.progress import exports, selectors, services
from apps.progress.selectors import bundles
from apps.progress.serializers import (
    BoardOut,
    BoardQueryIn,
    CohortIn,
    CohortOut,
    CohortOverviewOut,
    CohortProgressOut,
    ExerciseStatsOut,
    JoinIn,
    LearnerAttemptOut,
    OverviewQueryIn,
    ProfileIn,
    ProfileOut,
    ProgressOut,
    ResetOut,
    SkillBoardOut,
    SkillMarkIn,
    SkillOut,
    StreakOut,
    WorkbookMasteryOut,
)

ERRORS = {
    **schema.ERRORS,
    400: OpenApiResponse(ErrorOut, description="Invalid input (explained)."),
    403: OpenApiResponse(ErrorOut, description="Not allowed for your role."),
}


SLUG_EXAMPLE = OpenApiExample("transformer-math", value="transformer-math")


# ---- the caller's progress ---------------------------------------------------------------------


class ProgressApi(APIView):
    @extend_schema(operation_id="progress_retrieve", responses={200: ProgressOut, 401: ERRORS[401]})
    def get(self, request: Request) -> Response:
        return Response(represent(ProgressOut, bundles.overview(user=request_user(request))))


class WorkbookProgressApi(APIView):
    @extend_schema(
        operation_id="progress_workbook_retrieve",
        responses={200: WorkbookMasteryOut, 401: ERRORS[401], 404: ERRORS[404]},
    )
    def get(self, request: Request, slug: str) -> Response:
        workbook = exercise_selectors.workbook_get(slug=slug)
        (found,) = selectors.mastery(user=request_user(request), workbook=workbook) or [
            selectors.Mastery(slug, workbook.title)
        ]
        return Response(represent(WorkbookMasteryOut, found))


class WorkbookResetApi(APIView):
    @extend_schema(
        operation_id="progress_workbook_reset",
        request=None,
        responses={200: ResetOut, 401: ERRORS[401], 404: ERRORS[404]},
        description="Start the workbook over: mastery restarts and answers are hidden again. Attempts, points "
        "and your streak are kept.",
    )
    def post(self, request: Request, slug: str) -> Response:
        workbook = exercise_selectors.workbook_get(slug=slug)
        cleared = services.workbook_reset(user=request_user(request), workbook=workbook)
        return Response(represent(ResetOut, {"cleared": cleared}))


class StreakApi(APIView):
    @extend_schema(operation_id="streak_retrieve", responses={200: StreakOut, 401: ERRORS[401]})
    def get(self, request: Request) -> Response:
        return Response(represent(StreakOut, selectors.streak_get(user=request_user(request))))


class LeaderboardApi(APIView):
    @extend_schema(
        operation_id="leaderboard_retrieve",
        parameters=[
            # Empty values mean the default (DRF reads an empty query value as absent).
            OpenApiParameter("scope", str, enum=["global", "cohort"], allow_blank=True, description="Default global."),
            OpenApiParameter(
                "period", str, enum=["all", "week"], allow_blank=True, description="Default all (all time)."
            ),
            OpenApiParameter(
                "cohort",
                {"type": "integer", "minimum": 1},
                allow_blank=True,
                description="The cohort's id, required for scope=cohort (a 400 without it).",
            ),
            OpenApiParameter(
                "limit",
                {"type": "integer", "minimum": 1, "maximum": 200},
                allow_blank=True,
                description="How many from the top (default 50).",
            ),
        ],
        responses={200: BoardOut, 400: ERRORS[400], 401: ERRORS[401], 404: ERRORS[404]},
    )
    def get(self, request: Request) -> Response:
        query = BoardQueryIn(data=request.query_params)
        query.is_valid(raise_exception=True)
        q = query.validated_data
        board = selectors.leaderboard(
            user=request_user(request),
            scope=q["scope"],
            period=q["period"],
            cohort_id=q.get("cohort"),
            limit=q["limit"],
        )
        return Response(represent(BoardOut, board))


class ProfileApi(APIView):
    @extend_schema(operation_id="profile_retrieve", responses={200: ProfileOut, 401: ERRORS[401]})
    def get(self, request: Request) -> Response:
        return Response(represent(ProfileOut, request_user(request)))

    @extend_schema(
        operation_id="profile_update",
        request=ProfileIn,
        responses={200: ProfileOut, 400: ERRORS[400], 401: ERRORS[401]},
    )
    def patch(self, request: Request) -> Response:
        body = ProfileIn(data=request.data)
        body.is_valid(raise_exception=True)
        user = services.profile_update(user=request_user(request), **body.validated_data)
        return Response(represent(ProfileOut, user))


# ---- cohorts -----------------------------------------------------------------------------------


class CohortListApi(APIView):
    @extend_schema(operation_id="cohorts_list", responses={200: CohortOut(many=True), 401: ERRORS[401]})
    def get(self, request: Request) -> Response:
        return Response(represent_many(CohortOut, bundles.cohort_views(user=request_user(request))))

    @extend_schema(
        operation_id="cohorts_create",
        request=CohortIn,
        responses={
            201: CohortOut,
            400: ERRORS[400],
            401: ERRORS[401],
            403: ERRORS[403],
            404: OpenApiResponse(ErrorOut, description="An assigned workbook does not exist."),
            503: OpenApiResponse(ErrorOut, description="No join code could be allocated (`try_again`)."),
        },
    )
    def post(self, request: Request) -> Response:
        user = request_user(request)
        body = CohortIn(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        workbooks = [(exercise_selectors.workbook_get(slug=a["workbook"]), a.get("due_on")) for a in data["workbooks"]]
        cohort = services.cohort_create(
            instructor=user,
            name=data["name"],
            time_zone=data["time_zone"],
            workbooks=workbooks,
            numbers=data["numbers"],
        )
        view = bundles.cohort_view(user=user, cohort=cohort, with_due=False)
        return Response(represent(CohortOut, view), status=status.HTTP_201_CREATED)


class CohortDetailApi(APIView):
    @extend_schema(operation_id="cohorts_retrieve", responses={200: CohortOut, 401: ERRORS[401], 404: ERRORS[404]})
    def get(self, request: Request, cohort_id: int) -> Response:
        user = request_user(request)
        cohort = selectors.cohort_get(user=user, cohort_id=cohort_id)
        return Response(represent(CohortOut, bundles.cohort_view(user=user, cohort=cohort)))


class CohortJoinApi(APIView):
    throttle_scope = "join"
    throttle_classes = [FixedWindowScopedThrottle]

    @extend_schema(
        operation_id="cohorts_join",
        request=JoinIn,
        responses={
            200: CohortOut,
            201: CohortOut,
            400: OpenApiResponse(
                ErrorOut, description="No cohort has that code (`bad_join_code`), or it is your own (`own_cohort`)."
            ),
            401: ERRORS[401],
            429: OpenApiResponse(ErrorOut, description="Too many join attempts; retry after `Retry-After` seconds."),
        },
        description="201 when you joined, 200 when you were already a member.",
    )
    def post(self, request: Request) -> Response:
        user = request_user(request)
        body = JoinIn(data=request.data)
        body.is_valid(raise_exception=True)
        cohort, joined = services.cohort_join(user=user, code=body.validated_data["code"])
        return Response(
            represent(CohortOut, bundles.cohort_view(user=user, cohort=cohort)),
            status=status.HTTP_201_CREATED if joined else 200,
        )


class CohortMembershipApi(APIView):
    @extend_schema(
        operation_id="cohorts_leave",
        request=None,
        responses={
            204: None,
            400: OpenApiResponse(ErrorOut, description="You teach this cohort (`own_cohort`)."),
            401: ERRORS[401],
            404: ERRORS[404],
        },
    )
    def delete(self, request: Request, cohort_id: int) -> Response:
        user = request_user(request)
        cohort = selectors.cohort_get(user=user, cohort_id=cohort_id)
        services.cohort_leave(user=user, cohort=cohort)
        return Response(status=status.HTTP_204_NO_CONTENT)


class CohortProgressApi(APIView):
    @extend_schema(
        operation_id="cohorts_progress",
        responses={200: CohortProgressOut, 401: ERRORS[401], 404: ERRORS[404]},
        description="For the cohort's instructor: learner × assigned workbook mastery, streaks, overdue work.",
    )
    def get(self, request: Request, cohort_id: int) -> Response:
        cohort = selectors.cohort_taught(user=request_user(request), cohort_id=cohort_id)
        return Response(represent(CohortProgressOut, bundles.cohort_progress_view(cohort=cohort)))


OVERVIEW_PARAMETERS = [
    OpenApiParameter(
        "idle_days",
        {"type": "integer", "minimum": 1, "maximum": 365},
        description="At risk when no solve for this many days (default 7).",
    ),
    OpenApiParameter(
        "sort",
        {"type": "string", "pattern": "^(" + "|".join(selectors.LEARNER_SORTS) + "|workbook:[a-z0-9-]+)$"},
        description="Learners' order: " + ", ".join(selectors.LEARNER_SORTS) + " or workbook:<slug> (its "
        "mastery). Default risk: the most reasons first, then the least mastery.",
    ),
    OpenApiParameter("desc", bool, description="Reverse the order."),
    OpenApiParameter(
        "stuck_sort",
        str,
        enum=list(selectors.STUCK_SORTS),
        description="Stuck points' order (default stuck: learners who revealed or are stuck, then the median "
        "attempts to solve).",
    ),
    OpenApiParameter(
        "stuck_limit",
        {"type": "integer", "minimum": 1, "maximum": 500},
        description="How many stuck points (default 10).",
    ),
]


def _overview(request: Request, cohort_id: int, *, stuck_limit: int | None = None) -> selectors.CohortOverview:
    cohort = selectors.cohort_taught(user=request_user(request), cohort_id=cohort_id)
    query = OverviewQueryIn(data=request.query_params)
    query.is_valid(raise_exception=True)
    q = query.validated_data
    return selectors.cohort_overview(
        cohort=cohort,
        idle_days=q["idle_days"],
        sort=q["sort"],
        descending=q["desc"],
        stuck_sort=q["stuck_sort"],
        stuck_limit=stuck_limit or q["stuck_limit"],
    )


class CohortOverviewApi(APIView):
    @extend_schema(
        operation_id="cohorts_overview",
        parameters=OVERVIEW_PARAMETERS,
        responses={200: CohortOverviewOut, 400: ERRORS[400], 401: ERRORS[401], 404: ERRORS[404]},
        description="For the cohort's instructor: every learner on every assigned workbook with the reasons "
        "they are at risk (idle, behind the due date's pace, overdue), and the exercises the cohort is stuck "
        "on, with the per-exercise figures the exercise statistics give too (solved, revealed before solving, "
        "stuck, median attempts to solve, median minutes to solve).",
    )
    def get(self, request: Request, cohort_id: int) -> Response:
        return Response(represent(CohortOverviewOut, _overview(request, cohort_id)))


class CohortExerciseStatsApi(APIView):
    @extend_schema(
        operation_id="cohorts_exercise_stats",
        parameters=[
            OpenApiParameter(
                "workbook", str, required=True, description="The workbook's slug.", examples=[SLUG_EXAMPLE]
            )
        ],
        responses={200: ExerciseStatsOut(many=True), 401: ERRORS[401], 404: ERRORS[404]},
        description="For the cohort's instructor: per exercise, the figures the overview's stuck points give too "
        "(solved, revealed before solving, stuck, median attempts to solve, median minutes to solve) and the most "
        "common wrong answers. 404 for a workbook the cohort was not assigned "
        "(superusers: any workbook).",
    )
    def get(self, request: Request, cohort_id: int) -> Response:
        user = request_user(request)
        cohort = selectors.cohort_taught(user=user, cohort_id=cohort_id)
        workbook = exercise_selectors.workbook_get(slug=request.query_params.get("workbook", ""))
        stats = selectors.exercise_stats(viewer=user, cohort=cohort, workbook=workbook)
        return Response(represent_many(ExerciseStatsOut, stats))


class SkillBoardApi(APIView):
    @extend_schema(
        operation_id="skills_list",
        responses={200: SkillBoardOut, 401: ERRORS[401], 404: ERRORS[404]},
        description="The workbook's skills checklist with your ticks and the reviews due (spaced retrieval).",
    )
    def get(self, request: Request, slug: str) -> Response:
        workbook = exercise_selectors.workbook_get(slug=slug)
        board = selectors.skill_board(user=request_user(request), workbook=workbook)
        return Response(represent(SkillBoardOut, board))


class SkillMarkApi(APIView):
    @extend_schema(
        operation_id="skills_mark",
        request=SkillMarkIn,
        responses={200: SkillOut, 400: ERRORS[400], 401: ERRORS[401], 404: ERRORS[404]},
        description="Tick a skill, record a review (remembered / forgot), or untick it.",
    )
    def post(self, request: Request, slug: str, key: str) -> Response:
        workbook = exercise_selectors.workbook_get(slug=slug)
        skill = selectors.skill_get(workbook=workbook, key=key)
        body = SkillMarkIn(data=request.data)
        body.is_valid(raise_exception=True)
        user = request_user(request)
        check = services.skill_mark(user=user, skill=skill, action=body.validated_data["action"])
        return Response(represent(SkillOut, selectors.skill_row(skill, check)))


# ---- a learner's attempts and the CSV files, for the cohort's instructor ------------------------


class CohortLearnerAttemptsApi(APIView):
    @extend_schema(
        operation_id="cohorts_learner_attempts",
        parameters=PAGE_PARAMETERS,
        responses={
            200: paginated(LearnerAttemptOut),
            400: schema.ERRORS_PAGE[400],
            401: ERRORS[401],
            404: ERRORS[404],
        },
        description="For the cohort's instructor: one learner's attempts, newest first, each answer as the "
        "learner saw it (option and step texts, values with their units, code), in the workbooks the cohort "
        "was assigned (superusers: all of them). 404 for a cohort you do not teach and for anyone who is not "
        "its member.",
    )
    def get(self, request: Request, cohort_id: int, user_id: int) -> Response:
        viewer = request_user(request)
        cohort = selectors.cohort_taught(user=viewer, cohort_id=cohort_id)
        _, attempts = selectors.learner_attempts(viewer=viewer, cohort=cohort, user_id=user_id, limit=None)
        paginator = Pagination()
        page = paginator.paginate_queryset(attempts, request, view=self) or []
        return paginator.get_paginated_response(represent_many(LearnerAttemptOut, list(page)))


class _CsvNegotiation(BaseContentNegotiation):
    """A CSV resource answers its file whatever the client accepts, and its errors in the JSON
    error shape: ``Accept: text/csv`` must not turn a download into a 406."""

    def select_parser(self, request: Request, parsers: Iterable[BaseParser]) -> BaseParser | None:
        return next(iter(parsers), None)

    def select_renderer(
        self, request: Request, renderers: Iterable[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        renderer = next(iter(renderers))  # JSON (DEFAULT_RENDERER_CLASSES): errors only
        return renderer, str(renderer.media_type)


def _csv_ok(what: str) -> dict[Any, Any]:
    return {
        (200, "text/csv"): OpenApiResponse(
            OpenApiTypes.STR, description=f"{what}, as a CSV file (UTF-8, a header row; an attachment)."
        ),
        401: ERRORS[401],
        404: ERRORS[404],
    }


class CsvApi(APIView):
    content_negotiation_class = _CsvNegotiation


class CohortProgressCsvApi(CsvApi):
    @extend_schema(
        operation_id="cohorts_progress_csv",
        responses=_csv_ok("The cohort's progress table (cohorts_progress)"),
        description="For the cohort's instructor: the progress table the admin downloads.",
    )
    def get(self, request: Request, cohort_id: int) -> HttpResponse:
        cohort = selectors.cohort_taught(user=request_user(request), cohort_id=cohort_id)
        assigned, rows = selectors.cohort_progress(cohort=cohort)
        return exports.csv_response(exports.progress_table(cohort, assigned, rows))


class CohortOverviewCsvApi(CsvApi):
    @extend_schema(
        operation_id="cohorts_overview_csv",
        parameters=OVERVIEW_PARAMETERS[:3],
        responses={**_csv_ok("The overview's learners, with their risks (cohorts_overview)"), 400: ERRORS[400]},
        description="For the cohort's instructor: the overview's learner table the admin downloads.",
    )
    def get(self, request: Request, cohort_id: int) -> HttpResponse:
        return exports.csv_response(exports.overview_table(_overview(request, cohort_id)))


class CohortStuckPointsCsvApi(CsvApi):
    @extend_schema(
        operation_id="cohorts_stuck_points_csv",
        parameters=OVERVIEW_PARAMETERS[3:4],
        responses={
            **_csv_ok("Every exercise the cohort engaged with, stuckest first (cohorts_overview)"),
            400: ERRORS[400],
        },
        description="For the cohort's instructor: the stuck points, all of them, as the admin downloads them.",
    )
    def get(self, request: Request, cohort_id: int) -> HttpResponse:
        return exports.csv_response(exports.stuck_table(_overview(request, cohort_id, stuck_limit=10**6)))


class CohortExerciseStatsCsvApi(CsvApi):
    @extend_schema(
        operation_id="cohorts_exercise_stats_csv",
        parameters=[
            OpenApiParameter(
                "workbook", str, required=True, description="The workbook's slug.", examples=[SLUG_EXAMPLE]
            )
        ],
        responses=_csv_ok("Per-exercise statistics of one workbook (cohorts_exercise_stats)"),
        description="For the cohort's instructor: the exercise statistics the admin downloads.",
    )
    def get(self, request: Request, cohort_id: int) -> HttpResponse:
        user = request_user(request)
        cohort = selectors.cohort_taught(user=user, cohort_id=cohort_id)
        workbook = exercise_selectors.workbook_get(slug=request.query_params.get("workbook", ""))
        stats = selectors.exercise_stats(viewer=user, cohort=cohort, workbook=workbook)
        return exports.csv_response(exports.exercises_table(cohort, workbook.slug, stats))


class CohortLearnerAttemptsCsvApi(CsvApi):
    @extend_schema(
        operation_id="cohorts_learner_attempts_csv",
        responses=_csv_ok("One learner's attempts, newest first (cohorts_learner_attempts)"),
        description="For the cohort's instructor: the learner's whole attempt history, answers as they saw them.",
    )
    def get(self, request: Request, cohort_id: int, user_id: int) -> HttpResponse:
        viewer = request_user(request)
        cohort = selectors.cohort_taught(user=viewer, cohort_id=cohort_id)
        learner, attempts = selectors.learner_attempts(viewer=viewer, cohort=cohort, user_id=user_id, limit=None)
        return exports.csv_response(exports.attempts_table(cohort, learner, attempts.iterator(chunk_size=500)))
