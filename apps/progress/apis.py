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

from apps.accounts.models import User
from apps.core import schema
from apps.core.pagination import PAGE_PARAMETERS, Pagination, paginated
from apps.core.request import request_user
from apps.core.serializers import ErrorOut, represent, represent_many
from apps.core.throttling import FixedWindowScopedThrottle
from apps.exercises import selectors as exercise_selectors
from apps.exercises.content.render import markdown_html
from apps.exercises.models import Attempt, Verdict
from apps.exercises.selectors import Counts, counts_dict
from apps.progress import exports, selectors, services
from apps.progress.models import Cohort, SkillCheck
from apps.progress.serializers import (
    BoardOut,
    BoardQueryIn,
    CohortIn,
    CohortOut,
    CohortProgressOut,
    ExerciseStatsOut,
    JoinIn,
    LearnerAttemptOut,
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


# ---- dict builders, shared with the web views ----------------------------------------------------


def _counts(m: selectors.Mastery) -> dict[str, Any]:
    by_kind = [{"kind": k, "solved": c.solved, "total": c.total} for k, c in m.by_kind.items()]
    return {**counts_dict(m.tally), "by_kind": by_kind, "solved_with_note": m.with_note}


def mastery_dict(m: selectors.Mastery) -> dict[str, Any]:
    return {
        "slug": m.key,
        "title": m.title,
        **_counts(m),
        "chapters": [{"number": int(c.key), "title": c.title, **_counts(c)} for c in m.chapters],
    }


def streak_dict(s: selectors.Streak) -> dict[str, Any]:
    return {
        "current": s.current,
        "best": s.best,
        "solved_today": s.solved_today,
        "last_day": s.last_day,
        "time_zone": s.time_zone,
        "solves": s.solves,
        "points": s.points,
    }


def _entry(e: selectors.Entry | None) -> dict[str, Any] | None:
    return None if e is None else {"rank": e.rank, "username": e.username, "points": e.points, "me": e.me}


def board_dict(b: selectors.Board) -> dict[str, Any]:
    return {
        "scope": b.scope,
        "period": b.period,
        "cohort": b.cohort_id,
        "week_starts": b.starts,
        "time_zone": b.time_zone,
        "ranked": b.ranked,
        "entries": [_entry(e) for e in b.entries],
        "me": _entry(b.me),
        "me_hidden": b.me_hidden,
    }


def cohort_dict(c: Cohort, user: User, due: dict[tuple[int, int], selectors.Due] | None = None) -> dict[str, Any]:
    """``due``: the caller's due dates (selectors.due_by_assignment), for ``overdue``."""
    teaches = c.instructor_id == user.pk or user.is_superuser
    due = due or {}
    return {
        "id": c.pk,
        "name": c.name,
        "time_zone": c.time_zone,
        "instructor": c.instructor.username,
        "role": "instructor" if teaches else "member",
        "join_code": c.join_code if teaches else None,
        "members": _member_count(c),
        "workbooks": [
            {
                "workbook": a.workbook.slug,
                "title": a.workbook.title,
                "due_on": a.due_on,
                "overdue": d.overdue if (d := due.get((c.pk, a.workbook_id))) else None,
            }
            for a in selectors.assignments(cohort=c)
        ],
    }


def _member_count(c: Cohort) -> int:
    annotated = getattr(c, "member_count", None)  # cohort_list() annotates it; one query fewer per cohort
    return int(annotated) if annotated is not None else c.memberships.count()


def profile_dict(user: User) -> dict[str, Any]:
    return {
        "time_zone": user.time_zone,
        "effective_time_zone": services.effective_time_zone(user),
        "on_global_board": user.on_global_board,
    }


# ---- the caller's progress ---------------------------------------------------------------------


class ProgressApi(APIView):
    @extend_schema(operation_id="progress_retrieve", responses={200: ProgressOut, 401: ERRORS[401]})
    def get(self, request: Request) -> Response:
        user = request_user(request)
        data = {
            "streak": streak_dict(selectors.streak_get(user=user)),
            "workbooks": [mastery_dict(m) for m in selectors.mastery(user=user)],
        }
        return Response(represent(ProgressOut, data))


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
        return Response(represent(WorkbookMasteryOut, mastery_dict(found)))


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
        return Response(represent(StreakOut, streak_dict(selectors.streak_get(user=request_user(request)))))


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
        return Response(represent(BoardOut, board_dict(board)))


class ProfileApi(APIView):
    @extend_schema(operation_id="profile_retrieve", responses={200: ProfileOut, 401: ERRORS[401]})
    def get(self, request: Request) -> Response:
        return Response(represent(ProfileOut, profile_dict(request_user(request))))

    @extend_schema(
        operation_id="profile_update",
        request=ProfileIn,
        responses={200: ProfileOut, 400: ERRORS[400], 401: ERRORS[401]},
    )
    def patch(self, request: Request) -> Response:
        body = ProfileIn(data=request.data)
        body.is_valid(raise_exception=True)
        user = services.profile_update(user=request_user(request), **body.validated_data)
        return Response(represent(ProfileOut, profile_dict(user)))


# ---- cohorts -----------------------------------------------------------------------------------


class CohortListApi(APIView):
    @extend_schema(operation_id="cohorts_list", responses={200: CohortOut(many=True), 401: ERRORS[401]})
    def get(self, request: Request) -> Response:
        user = request_user(request)
        cohorts = list(selectors.cohort_list(user=user))
        due = selectors.due_by_assignment(user=user, cohort_ids=[c.pk for c in cohorts])
        return Response(represent_many(CohortOut, [cohort_dict(c, user, due) for c in cohorts]))

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
            instructor=user, name=data["name"], time_zone=data["time_zone"], workbooks=workbooks
        )
        return Response(represent(CohortOut, cohort_dict(cohort, user)), status=status.HTTP_201_CREATED)


class CohortDetailApi(APIView):
    @extend_schema(operation_id="cohorts_retrieve", responses={200: CohortOut, 401: ERRORS[401], 404: ERRORS[404]})
    def get(self, request: Request, cohort_id: int) -> Response:
        user = request_user(request)
        cohort = selectors.cohort_get(user=user, cohort_id=cohort_id)
        due = selectors.due_by_assignment(user=user, cohort_ids=[cohort.pk])
        return Response(represent(CohortOut, cohort_dict(cohort, user, due)))


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
            represent(
                CohortOut, cohort_dict(cohort, user, selectors.due_by_assignment(user=user, cohort_ids=[cohort.pk]))
            ),
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
        _, rows = selectors.cohort_progress(cohort=cohort)
        data = {"cohort": cohort.pk, "learners": [learner_row_dict(r) for r in rows]}
        return Response(represent(CohortProgressOut, data))


def learner_row_dict(r: selectors.LearnerRow) -> dict[str, Any]:
    return {
        "user_id": r.user_id,
        "username": r.username,
        "workbooks": [
            {"workbook": c.slug, **counts_dict(Counts(c.total, c.solved)), "due_on": c.due_on, "overdue": c.overdue}
            for c in r.cells
        ],
        "current_streak": r.current_streak,
        "best_streak": r.best_streak,
        "last_active": r.last_active,
        "overdue": r.overdue,
    }


def stats_dict(s: selectors.ExerciseStats) -> dict[str, Any]:
    return {
        "number": s.number,
        "title": s.title,
        "kind": s.kind,
        "attempts": s.attempts,
        "learners": s.learners,
        "solved": s.solved,
        "solve_rate": s.solve_rate,
        "median_attempts_to_solve": s.median_attempts,
        "reveal_share": s.reveal_share,
        "wrong_answers": [{"answer": a, "count": n} for a, n in s.wrong_answers],
        "solved_with_note": s.solved_with_note,
    }


class CohortExerciseStatsApi(APIView):
    @extend_schema(
        operation_id="cohorts_exercise_stats",
        parameters=[
            OpenApiParameter(
                "workbook", str, required=True, description="The workbook's slug.", examples=[SLUG_EXAMPLE]
            )
        ],
        responses={200: ExerciseStatsOut(many=True), 401: ERRORS[401], 404: ERRORS[404]},
        description="For the cohort's instructor: per-exercise attempts, solve rate, median attempts to solve, "
        "reveal share and the most common wrong answers.",
    )
    def get(self, request: Request, cohort_id: int) -> Response:
        cohort = selectors.cohort_taught(user=request_user(request), cohort_id=cohort_id)
        workbook = exercise_selectors.workbook_get(slug=request.query_params.get("workbook", ""))
        stats = selectors.exercise_stats(cohort=cohort, workbook=workbook)
        return Response(represent_many(ExerciseStatsOut, [stats_dict(s) for s in stats]))


def skill_dict(row: selectors.SkillRow) -> dict[str, Any]:
    check = row.check
    return {
        "key": row.skill.key,
        "text": row.skill.text,
        "chapter": row.skill.chapter.number if row.skill.chapter else None,
        "exercises": row.skill.exercises,
        "state": row.state,
        "check": None
        if check is None
        else {
            "stage": check.stage,
            "checked_at": check.checked_at,
            "reviewed_at": check.reviewed_at,
            "due_at": check.due_at,
            "reviews": check.reviews,
            "lapses": check.lapses,
        },
    }


def skill_board_dict(board: selectors.SkillBoard) -> dict[str, Any]:
    return {
        "workbook": board.workbook.slug,
        "protocol_html": markdown_html(board.workbook.skills_protocol) if board.workbook.skills_protocol else "",
        "review_days": list(SkillCheck.REVIEW_DAYS),
        "total": board.total,
        "mastered": board.mastered,
        "due": board.due,
        "skills": [skill_dict(r) for r in board.rows],
    }


class SkillBoardApi(APIView):
    @extend_schema(
        operation_id="skills_list",
        responses={200: SkillBoardOut, 401: ERRORS[401], 404: ERRORS[404]},
        description="The workbook's skills checklist with your ticks and the reviews due (spaced retrieval).",
    )
    def get(self, request: Request, slug: str) -> Response:
        workbook = exercise_selectors.workbook_get(slug=slug)
        return Response(
            represent(
                SkillBoardOut, skill_board_dict(selectors.skill_board(user=request_user(request), workbook=workbook))
            )
        )


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
        return Response(represent(SkillOut, skill_dict(selectors.skill_row(skill, check))))


# ---- a learner's attempts and the CSV files, for the cohort's instructor ------------------------


def learner_attempt_dict(a: Attempt) -> dict[str, Any]:
    shown = selectors.answer_shown(a)
    return {
        "id": a.pk,
        "workbook": a.exercise.workbook.slug,
        "exercise": a.exercise.number,
        "title": a.exercise.title,
        "format": a.exercise.format,
        "version": a.version.version,
        "created_at": a.created_at,
        "part": a.part,
        "status": a.status,
        "verdict": a.verdict,
        "outcome": a.outcome,
        "correct": a.verdict == Verdict.CORRECT,
        "accepted_with_note": a.accepted_with_note,
        "counted": a.counted,
        "score": a.score,
        "answer": {
            "text": shown.text,
            "items": [{"label": label, "value": value} for label, value in shown.items],
            "code": shown.code,
        },
        "understood": a.parsed.get("understood") if isinstance(a.parsed, dict) else None,
        "feedback": a.feedback,
    }


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
        "learner saw it (option and step texts, values with their units, code). 404 for a cohort you do not "
        "teach and for anyone who is not its member.",
    )
    def get(self, request: Request, cohort_id: int, user_id: int) -> Response:
        cohort = selectors.cohort_taught(user=request_user(request), cohort_id=cohort_id)
        _, attempts = selectors.learner_attempts(cohort=cohort, user_id=user_id, limit=None)
        paginator = Pagination()
        page = paginator.paginate_queryset(attempts, request, view=self) or []
        return paginator.get_paginated_response(
            represent_many(LearnerAttemptOut, [learner_attempt_dict(a) for a in page])
        )


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
        cohort = selectors.cohort_taught(user=request_user(request), cohort_id=cohort_id)
        workbook = exercise_selectors.workbook_get(slug=request.query_params.get("workbook", ""))
        stats = selectors.exercise_stats(cohort=cohort, workbook=workbook)
        return exports.csv_response(exports.exercises_table(cohort, workbook.slug, stats))


class CohortLearnerAttemptsCsvApi(CsvApi):
    @extend_schema(
        operation_id="cohorts_learner_attempts_csv",
        responses=_csv_ok("One learner's attempts, newest first (cohorts_learner_attempts)"),
        description="For the cohort's instructor: the learner's whole attempt history, answers as they saw them.",
    )
    def get(self, request: Request, cohort_id: int, user_id: int) -> HttpResponse:
        cohort = selectors.cohort_taught(user=request_user(request), cohort_id=cohort_id)
        learner, attempts = selectors.learner_attempts(cohort=cohort, user_id=user_id, limit=None)
        return exports.csv_response(exports.attempts_table(cohort, learner, attempts.iterator(chunk_size=500)))
