"""Assessments over REST: validate, call a service or selector, serialize.

Instructors (the cohort's, or a superuser) author assessments, grant overrides, read the gradebook
(JSON and CSV), set scores by hand and watch an exam live; anyone else gets the 404 the cohort APIs
give. Learners (members of the cohort) open their instance, answer, take hints and submit; what
the assessment hides (verdicts, points, the score) is ``null`` in their bodies until it may show."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from typing import Any

from django.db.models import Count, Prefetch, Q, QuerySet
from django.http import HttpResponse
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.accounts.models import User
from apps.assessments import exports, selectors, services
from apps.assessments.models import (
    Assessment,
    Instance,
    InstanceQuestion,
    Kind,
    Override,
    Question,
    ScoreOverride,
    Submission,
)
from apps.assessments.serializers import (
    AssessmentIn,
    AssessmentNestedIn,
    AssessmentOut,
    GradebookAssessmentOut,
    GradebookOut,
    InstanceOut,
    LiveOut,
    MyAssessmentOut,
    OverrideIn,
    OverrideOut,
    OverrideSummaryOut,
    ScoreIn,
    ScoreOut,
    SubmissionOut,
)
from apps.core import schema
from apps.core.exceptions import ApplicationError
from apps.core.request import request_user
from apps.core.serializers import ErrorOut, represent, represent_many
from apps.core.throttling import FixedWindowScopedThrottle
from apps.exercises import formats, presentation
from apps.exercises.content import cache
from apps.exercises.content.render import feedback_html
from apps.exercises.models import Exercise
from apps.exercises.serializers import AttemptRequest
from apps.learning.serializers import HintsOut
from apps.progress import selectors as progress_selectors
from apps.progress.apis import CsvApi
from apps.progress.exports import CSV_TYPE

ERRORS = {
    **schema.ERRORS,
    400: OpenApiResponse(ErrorOut, description="Invalid input (explained); nothing was stored."),
}


def _conflict(description: str) -> OpenApiResponse:
    return OpenApiResponse(ErrorOut, description=description)


def _refuse(message: str, code: str, status_code: int = 409) -> ApplicationError:
    return ApplicationError(message, code=code, status_code=status_code)


# ---- reads for the bodies ------------------------------------------------------------------------


def _authored(queryset: QuerySet[Assessment]) -> QuerySet[Assessment]:
    pools = Prefetch("pool", queryset=Exercise.objects.select_related("workbook").order_by("pk"))
    questions = Prefetch("questions", queryset=Question.objects.order_by("position").prefetch_related(pools))
    return queryset.prefetch_related(questions).annotate(instance_count=Count("instances")).order_by("opens_at", "id")


def _assessment_body(a: Assessment) -> dict[str, Any]:
    questions = list(a.questions.all())
    return {
        **{name: getattr(a, name) for name in services.TERMS},
        "id": a.pk,
        "cohort_id": a.cohort_id,
        "points": sum(q.points * q.choose for q in questions),
        "questions": [
            {
                "position": q.position,
                "zone": q.zone,
                "points": q.points,
                "choose": q.choose,
                "pool": [f"{e.workbook.slug}/{e.number}" for e in q.pool.all()],
                "verdicts": q.verdicts,
            }
            for q in questions
        ],
        "instances": getattr(a, "instance_count", 0),
        "created_at": a.created_at,
        "updated_at": a.updated_at,
    }


def _authored_one(pk: int) -> dict[str, Any]:
    return _assessment_body(_authored(Assessment.objects.filter(pk=pk)).get())


def _time_left(instance: Instance | None, terms: selectors.Window, now: datetime) -> int | None:
    if instance is None or instance.started_at is None or instance.submitted_at is not None:
        return None
    end = terms.closes_at if instance.deadline is None else min(instance.deadline, terms.closes_at)
    return max(0, int((end - now).total_seconds()))


def _state(instance: Instance | None, terms: selectors.Window, now: datetime) -> str:
    if instance is None or instance.started_at is None:
        return "closed" if now >= terms.closes_at else "not_started"
    if instance.submitted_at is not None:
        return "submitted"
    return "closed" if selectors.instance_closed(instance, at=now, terms=terms) else "open"


def _learner(cohort_id: int, user_id: int) -> User:
    found = User.objects.filter(pk=user_id, memberships__cohort_id=cohort_id).first()
    if found is None:
        raise _refuse("No such learner in this cohort.", "not_found", 404)
    return found


def _overrides(assessment: Assessment) -> QuerySet[Override]:
    return Override.objects.filter(assessment=assessment).select_related("user", "granted_by", "revoked_by")


def _override_body(o: Override) -> dict[str, Any]:
    return {
        "id": o.pk,
        "user_id": o.user_id,
        "user": o.user,
        "due_at": o.due_at,
        "closes_at": o.closes_at,
        "time_factor": o.time_factor,
        "extra_attempts": o.extra_attempts,
        "reason": o.reason,
        "granted_by": o.granted_by,
        "granted_at": o.granted_at,
        "revoked_at": o.revoked_at,
        "revoked_by": o.revoked_by,
        "in_force": o.revoked_at is None,
    }


def _gradebook_body(book: selectors.Gradebook) -> dict[str, Any]:
    """The gradebook's body, ready to render: its thousands of cells are plain values built here
    (their shape is ``GradebookCellOut``, which the schema documents) rather than walked through
    DRF's fields one by one; the few overrides go through their serializer."""
    summaries = {key: represent(OverrideSummaryOut, c.override) for key, c in book.cells.items() if c.override}
    learners = []
    for learner in book.learners:
        cells, total = [], 0.0
        for a in book.assessments:
            cell = book.cell(learner.pk, a.pk)
            i = cell.instance
            started = i is not None and i.started_at is not None
            shown = i is not None and exports.taken(i)
            if i is not None and shown:
                total += i.final_score
            cells.append(
                {
                    "assessment_id": a.pk,
                    "score": i.final_score if i is not None and shown else None,
                    "computed_score": i.score if i is not None and started else None,
                    "override_score": i.score_override if i is not None else None,
                    "max_score": i.max_score if i is not None and started else book.possible[a.pk],
                    "late": bool(i is not None and i.late),
                    "started_at": i.started_at if i is not None else None,
                    "submitted_at": i.submitted_at if i is not None else None,
                    "override": summaries.get((learner.pk, a.pk)),
                }
            )
        learners.append(
            {
                "user_id": learner.pk,
                "username": learner.username,
                "email": learner.email,
                "total": total,
                "cells": cells,
            }
        )
    assessments = [{**{n: getattr(a, n) for n in services.TERMS}, "id": a.pk, "points": book.possible[a.pk]}
                   for a in book.assessments]  # fmt: skip
    return {
        "cohort_id": book.cohort.pk,
        "points": sum(book.possible.values()),
        "assessments": represent_many(GradebookAssessmentOut, assessments),
        "learners": learners,
    }


def _score_body(assessment: Assessment, learner: User, instance: Instance | None) -> dict[str, Any]:
    history: list[ScoreOverride] = list(selectors.score_history(instance=instance)) if instance is not None else []
    taken = exports.taken(instance)
    return {
        "user_id": learner.pk,
        "username": learner.username,
        "score": instance.final_score if instance is not None and taken else None,
        "computed_score": instance.score if instance is not None and instance.started_at is not None else None,
        "override_score": instance.score_override if instance is not None else None,
        "max_score": instance.max_score
        if instance is not None and instance.started_at is not None
        else selectors.assessment_points([assessment])[assessment.pk],
        "history": history,
    }


def _submission_body(s: Submission, item: InstanceQuestion, visible: bool, terms: selectors.Window) -> dict[str, Any]:
    return {
        "status": "graded" if visible else "saved",
        "at": s.created_at,
        "position": item.position,
        "attempts_used": item.attempts,
        "attempts_left": _attempts_left(item, terms),
        "correct": s.correct if visible else None,
        "points": s.points if visible else None,
        "credit": s.credit if visible else None,
        "late": s.late,
        "feedback_html": feedback_html(s.feedback, from_code=False) if visible else None,
    }


def _attempts_left(item: InstanceQuestion, terms: selectors.Window) -> int | None:
    return None if terms.max_attempts is None else max(0, terms.max_attempts - item.attempts)


def _hints_offered(assessment: Assessment) -> bool:
    return assessment.kind != Kind.EXAM and assessment.hints


def _instance_body(instance: Instance, user: User) -> dict[str, Any]:
    """What the learner sees of their instance: never an answer, a solution or a hint not taken."""
    assessment = instance.assessment
    now = timezone.now()
    terms = selectors.window_for(assessment=assessment, user_id=user.pk)
    closed = selectors.instance_closed(instance, at=now, terms=terms)
    items = list(instance.questions.all())
    answers: dict[int, list[Submission]] = defaultdict(list)
    for s in Submission.objects.filter(item__instance=instance).order_by("created_at", "id"):
        answers[s.item_id].append(s)
    questions = []
    all_visible = True
    for item in items:
        visible = selectors.verdicts_visible(instance, item, at=now)
        all_visible = all_visible and visible
        variant = services.variant_of(item)
        hints = (
            presentation.hints(item.version, item.hints_used, variant)
            if _hints_offered(assessment)
            else {"total": 0, "shown": []}
        )
        questions.append(
            {
                "position": item.position,
                "zone": item.question.zone,
                "points": item.points,
                "title": item.exercise.title,
                "format": cache.resolved(item.version, variant).spec.format,
                "prompt_html": cache.rendered(item.version, variant).prompt_html,
                "widget": presentation.widget(item.version, user.pk, variant),
                "hints": hints,
                "attempts_used": item.attempts,
                "attempts_left": _attempts_left(item, terms),
                "verdicts_visible": visible,
                "best": item.best if visible else None,
                "answers": [_submission_body(s, item, visible, terms) for s in answers[item.pk]],
            }
        )
    return {
        "assessment_id": assessment.pk,
        "title": assessment.title,
        "kind": assessment.kind,
        "instructions": assessment.instructions,
        "state": _state(instance, terms, now),
        "started_at": instance.started_at,
        "deadline": instance.deadline,
        "due_at": terms.due_at,
        "closes_at": terms.closes_at,
        "submitted_at": instance.submitted_at,
        "closed": closed,
        "time_left_s": None if closed else _time_left(instance, terms, now),
        "score_visible": all_visible,
        "score": instance.final_score if all_visible else None,
        "max_score": instance.max_score,
        "questions": questions,
    }


# ---- instructors: authoring ----------------------------------------------------------------------


class CohortAssessmentsApi(APIView):
    @extend_schema(
        operation_id="cohort_assessments_list",
        responses={200: AssessmentOut(many=True), 401: ERRORS[401], 404: ERRORS[404]},
        description="For the cohort's instructor: its assessments with their terms and questions.",
    )
    def get(self, request: Request, cohort_id: int) -> Response:
        cohort = progress_selectors.cohort_taught(user=request_user(request), cohort_id=cohort_id)
        rows = _authored(Assessment.objects.filter(cohort=cohort))
        return Response([represent(AssessmentOut, _assessment_body(a)) for a in rows])

    @extend_schema(
        operation_id="cohort_assessments_create",
        request=AssessmentIn,
        responses={
            201: AssessmentOut,
            400: ERRORS[400],
            401: ERRORS[401],
            404: ERRORS[404],
            409: _conflict("The cohort already has an assessment with this slug (`slug_taken`)."),
        },
        description="Create an assessment with its questions in one go. Each question's pool names exercises as "
        '"<workbook-slug>/<exercise-number>"; exercises graded by running code are refused '
        "(`code_not_in_assessments`). The timeline is checked (`invalid_window`, `invalid_late_rules`).",
    )
    def post(self, request: Request, cohort_id: int) -> Response:
        user = request_user(request)
        cohort = progress_selectors.cohort_taught(user=user, cohort_id=cohort_id)
        body = AssessmentIn(data=request.data)
        body.is_valid(raise_exception=True)
        data = dict(body.validated_data)
        assessment = services.assessment_create(cohort=cohort, by=user, **data)
        return Response(represent(AssessmentOut, _authored_one(assessment.pk)), status=status.HTTP_201_CREATED)


class AssessmentDetailApi(APIView):
    @extend_schema(
        operation_id="assessments_retrieve",
        responses={200: AssessmentOut, 401: ERRORS[401], 404: ERRORS[404]},
        description="For the cohort's instructor.",
    )
    def get(self, request: Request, assessment_id: int) -> Response:
        found = selectors.assessment_for_instructor(user=request_user(request), assessment_id=assessment_id)
        return Response(represent(AssessmentOut, _authored_one(found.pk)))

    @extend_schema(
        operation_id="assessments_update",
        request=AssessmentIn,
        responses={
            200: AssessmentOut,
            400: ERRORS[400],
            401: ERRORS[401],
            404: ERRORS[404],
            409: _conflict(
                "Questions cannot change once a learner has an instance (`questions_locked`); the slug is taken "
                "(`slug_taken`)."
            ),
        },
        description="Change any of the terms; `questions` (all of them) only while no learner has an instance.",
    )
    def patch(self, request: Request, assessment_id: int) -> Response:
        found = selectors.assessment_for_instructor(user=request_user(request), assessment_id=assessment_id)
        body = AssessmentIn(data=request.data, partial=True)
        body.is_valid(raise_exception=True)
        changes = dict(body.validated_data)
        given = request.data if isinstance(request.data, dict) else {}
        nested = AssessmentNestedIn(data={k: v for k, v in given.items() if k in ("late_rules", "questions")})
        nested.is_valid(raise_exception=True)
        changes.update(nested.validated_data)
        services.assessment_update(assessment=found, **changes)
        return Response(represent(AssessmentOut, _authored_one(found.pk)))

    @extend_schema(
        operation_id="assessments_destroy",
        responses={
            204: None,
            401: ERRORS[401],
            404: ERRORS[404],
            409: _conflict("Learners have instances of it (`has_instances`)."),
        },
    )
    def delete(self, request: Request, assessment_id: int) -> Response:
        found = selectors.assessment_for_instructor(user=request_user(request), assessment_id=assessment_id)
        services.assessment_delete(assessment=found)
        return Response(status=status.HTTP_204_NO_CONTENT)


# ---- instructors: overrides ----------------------------------------------------------------------


class OverridesApi(APIView):
    @extend_schema(
        operation_id="assessment_overrides_list",
        responses={200: OverrideOut(many=True), 401: ERRORS[401], 404: ERRORS[404]},
        description="Every override of the assessment, newest first, revoked ones included (`in_force`).",
    )
    def get(self, request: Request, assessment_id: int) -> Response:
        found = selectors.assessment_for_instructor(user=request_user(request), assessment_id=assessment_id)
        return Response(represent_many(OverrideOut, [_override_body(o) for o in _overrides(found)]))

    @extend_schema(
        operation_id="assessment_overrides_create",
        request=OverrideIn,
        responses={201: OverrideOut, 400: ERRORS[400], 401: ERRORS[401], 404: ERRORS[404]},
        description="Give one learner (by `user_id` or `username`) a later due date or close, more time or more "
        "attempts, with the reason. The override in force before it is revoked and kept.",
    )
    def post(self, request: Request, assessment_id: int) -> Response:
        by = request_user(request)
        found = selectors.assessment_for_instructor(user=by, assessment_id=assessment_id)
        body = OverrideIn(data=request.data)
        body.is_valid(raise_exception=True)
        data = dict(body.validated_data)
        who = Q(pk=data.pop("user_id")) if "user_id" in data else Q(username=data.pop("username"))
        learner = User.objects.filter(who, memberships__cohort_id=found.cohort_id).first()
        if learner is None:
            raise _refuse("No such learner in this cohort.", "not_found", 404)
        override = services.override_grant(assessment=found, user=learner, by=by, **data)
        body_out = _override_body(_overrides(found).get(pk=override.pk))
        return Response(represent(OverrideOut, body_out), status=status.HTTP_201_CREATED)


class OverrideRevokeApi(APIView):
    @extend_schema(
        operation_id="assessment_overrides_revoke",
        request=None,
        responses={200: OverrideOut, 401: ERRORS[401], 404: ERRORS[404]},
        description="Revoke an override (kept, with who revoked it); revoking again changes nothing.",
    )
    def post(self, request: Request, assessment_id: int, override_id: int) -> Response:
        by = request_user(request)
        found = selectors.assessment_for_instructor(user=by, assessment_id=assessment_id)
        override = _overrides(found).filter(pk=override_id).first()
        if override is None:
            raise _refuse("No such override of this assessment.", "not_found", 404)
        services.override_revoke(override=override, by=by)
        return Response(represent(OverrideOut, _override_body(_overrides(found).get(pk=override.pk))))


# ---- instructors: gradebook, scores, live --------------------------------------------------------


class GradebookApi(APIView):
    @extend_schema(
        operation_id="cohort_gradebook",
        responses={200: GradebookOut, 401: ERRORS[401], 404: ERRORS[404]},
        description="For the cohort's instructor: learners × assessments, each cell with the final score (null: "
        "not taken), the computed score, the override score, lateness and the override in force.",
    )
    def get(self, request: Request, cohort_id: int) -> Response:
        cohort = progress_selectors.cohort_taught(user=request_user(request), cohort_id=cohort_id)
        return Response(_gradebook_body(selectors.gradebook(cohort=cohort)))


class GradebookCsvApi(CsvApi):
    @extend_schema(
        operation_id="cohort_gradebook_csv",
        responses={
            (200, "text/csv"): OpenApiResponse(
                OpenApiTypes.STR,
                description="The gradebook as a CSV file (UTF-8, a header row; an attachment): username, email, "
                'one column per assessment "Title [N pts]" (blank: not taken), Total.',
            ),
            401: ERRORS[401],
            404: ERRORS[404],
        },
        description="For the cohort's instructor: the gradebook as spreadsheets and LMS gradebooks import it.",
    )
    def get(self, request: Request, cohort_id: int) -> HttpResponse:
        cohort = progress_selectors.cohort_taught(user=request_user(request), cohort_id=cohort_id)
        book = selectors.gradebook(cohort=cohort)
        response = HttpResponse(exports.gradebook_csv(book), content_type=CSV_TYPE)
        response["Content-Disposition"] = f'attachment; filename="{exports.gradebook_filename(book)}"'
        return response


class ScoreApi(APIView):
    @extend_schema(
        operation_id="assessment_score_retrieve",
        responses={200: ScoreOut, 401: ERRORS[401], 404: ERRORS[404]},
        description="A learner's score on the assessment and every manual change of it, newest first.",
    )
    def get(self, request: Request, assessment_id: int, user_id: int) -> Response:
        found = selectors.assessment_for_instructor(user=request_user(request), assessment_id=assessment_id)
        learner = _learner(found.cohort_id, user_id)
        instance = Instance.objects.filter(assessment=found, user=learner).first()
        return Response(represent(ScoreOut, _score_body(found, learner, instance)))

    @extend_schema(
        operation_id="assessment_score_set",
        request=ScoreIn,
        responses={200: ScoreOut, 400: ERRORS[400], 401: ERRORS[401], 404: ERRORS[404]},
        description="Set a learner's score by hand (null: remove the override) with a reason, kept in the history. "
        "Works for a learner who never opened the assessment.",
    )
    def post(self, request: Request, assessment_id: int, user_id: int) -> Response:
        by = request_user(request)
        found = selectors.assessment_for_instructor(user=by, assessment_id=assessment_id)
        learner = _learner(found.cohort_id, user_id)
        body = ScoreIn(data=request.data)
        body.is_valid(raise_exception=True)
        instance = services.instance_for_grading(assessment=found, user=learner)
        instance = services.score_override_set(
            instance=instance, score=body.validated_data["score"], reason=body.validated_data["reason"], by=by
        )
        return Response(represent(ScoreOut, _score_body(found, learner, instance)))


class LiveApi(APIView):
    @extend_schema(
        operation_id="assessment_live",
        responses={200: LiveOut, 401: ERRORS[401], 404: ERRORS[404]},
        description="For the cohort's instructor, during an exam: each learner, whether they started, the time "
        "they have left (server time), whether they submitted, and their points so far.",
    )
    def get(self, request: Request, assessment_id: int) -> Response:
        found = selectors.assessment_for_instructor(user=request_user(request), assessment_id=assessment_id)
        now = timezone.now()
        learners = User.objects.filter(memberships__cohort_id=found.cohort_id).order_by("username")
        overrides = {o.user_id: o for o in Override.objects.filter(assessment=found, revoked_at__isnull=True)}
        instances = {
            i.user_id: i
            for i in Instance.objects.filter(assessment=found).annotate(
                answered=Count("questions", filter=Q(questions__attempts__gt=0)), total=Count("questions")
            )
        }
        possible = selectors.assessment_points([found])[found.pk]
        rows = []
        for learner in learners.only("id", "username"):
            i = instances.get(learner.pk)
            terms = selectors.window(assessment=found, override=overrides.get(learner.pk))
            started = i is not None and i.started_at is not None
            if i is not None:
                i.assessment = found
            closed = selectors.instance_closed(i, at=now, terms=terms) if i is not None and started else False
            rows.append(
                {
                    "user_id": learner.pk,
                    "username": learner.username,
                    "started_at": i.started_at if i is not None else None,
                    "deadline": i.deadline if i is not None else None,
                    "time_left_s": None if closed or not started else _time_left(i, terms, now),
                    "submitted_at": i.submitted_at if i is not None else None,
                    "closed": closed,
                    "answered": getattr(i, "answered", 0),
                    "questions": getattr(i, "total", 0),
                    "score": i.score if i is not None and started else None,
                    "max_score": i.max_score if i is not None and started else possible,
                }
            )
        return Response(represent(LiveOut, {"assessment_id": found.pk, "now": now, "learners": rows}))


# ---- learners ------------------------------------------------------------------------------------


class MyAssessmentsApi(APIView):
    @extend_schema(
        operation_id="my_assessments_list",
        responses={200: MyAssessmentOut(many=True), 401: ERRORS[401]},
        description="The opened assessments of your cohorts, with your terms (any extension included), your "
        "state, the time you have left and your score once it may be shown.",
    )
    def get(self, request: Request) -> Response:
        user = request_user(request)
        now = timezone.now()
        assessments = list(selectors.assessments_for_learner(user=user).prefetch_related("questions"))
        items = InstanceQuestion.objects.select_related("question")
        instances = {
            i.assessment_id: i
            for i in Instance.objects.filter(user=user, assessment__in=assessments).prefetch_related(
                Prefetch("questions", queryset=items)
            )
        }
        overrides = {
            o.assessment_id: o
            for o in Override.objects.filter(user=user, assessment__in=assessments, revoked_at__isnull=True)
        }
        possible = selectors.assessment_points(assessments)
        rows = []
        for a in assessments:
            i = instances.get(a.pk)
            terms = selectors.window(assessment=a, override=overrides.get(a.pk))
            started = i is not None and i.started_at is not None
            if i is not None:
                i.assessment = a
            visible = i is not None and started and selectors.score_visible(i, at=now)
            state = _state(i, terms, now)
            rows.append(
                {
                    "id": a.pk,
                    "cohort_id": a.cohort_id,
                    "title": a.title,
                    "kind": a.kind,
                    "opens_at": a.opens_at,
                    "due_at": terms.due_at,
                    "closes_at": terms.closes_at,
                    "time_limit_minutes": terms.time_limit.total_seconds() / 60 if terms.time_limit else None,
                    "state": state,
                    "time_left_s": _time_left(i, terms, now) if state == "open" else None,
                    "score": i.final_score if i is not None and visible else None,
                    "max_score": i.max_score if i is not None and started else possible[a.pk],
                }
            )
        return Response(represent_many(MyAssessmentOut, rows))


def _mine(request: Request, assessment_id: int) -> tuple[User, Instance]:
    user = request_user(request)
    assessment = selectors.assessment_for_learner(user=user, assessment_id=assessment_id)
    instance = selectors.instance_of(assessment=assessment, user_id=user.pk)
    if instance is None or instance.started_at is None:
        raise _refuse("You have not opened this assessment yet.", "not_started", 404)
    return user, instance


def _item(instance: Instance, position: int) -> InstanceQuestion:
    for item in instance.questions.all():
        if item.position == position:
            return item
    raise _refuse("No such question in your assessment.", "not_found", 404)


class OpenApi(APIView):
    @extend_schema(
        operation_id="assessment_open",
        request=None,
        responses={
            200: InstanceOut,
            201: InstanceOut,
            401: ERRORS[401],
            404: ERRORS[404],
            409: _conflict("Not open yet (`not_open`), or closed (`closed`)."),
        },
        description="Your first open draws your questions and numbers and starts any time limit (201); "
        "opening again returns the same instance (200).",
    )
    def post(self, request: Request, assessment_id: int) -> Response:
        user = request_user(request)
        assessment = selectors.assessment_for_learner(user=user, assessment_id=assessment_id)
        before = selectors.instance_of(assessment=assessment, user_id=user.pk)
        started = before is not None and before.started_at is not None
        instance = services.instance_open(assessment=assessment, user=user)
        code = status.HTTP_200_OK if started else status.HTTP_201_CREATED
        return Response(represent(InstanceOut, _instance_body(instance, user)), status=code)


class InstanceApi(APIView):
    @extend_schema(
        operation_id="assessment_instance",
        responses={200: InstanceOut, 401: ERRORS[401], 404: ERRORS[404]},
        description="Your questions on your numbers, your answers, the time left; verdicts, points and the score "
        "are null while the assessment hides them. 404 (`not_started`) before your first open.",
    )
    def get(self, request: Request, assessment_id: int) -> Response:
        user, instance = _mine(request, assessment_id)
        return Response(represent(InstanceOut, _instance_body(instance, user)))


class AnswerApi(APIView):
    throttle_scope = "attempts"
    throttle_classes = [FixedWindowScopedThrottle]

    @extend_schema(
        operation_id="assessment_answer",
        request=AttemptRequest,
        responses={
            201: SubmissionOut,
            400: OpenApiResponse(ErrorOut, description="The answer could not be read (explained; nothing stored)."),
            401: ERRORS[401],
            404: ERRORS[404],
            409: _conflict(
                "No more answers: time is up (`time_up`), the assessment closed (`closed`), you submitted "
                "(`submitted`), or no attempts are left (`no_attempts_left`). Earlier answers are kept."
            ),
            429: OpenApiResponse(ErrorOut, description="Too many submissions; retry later."),
        },
        description="Answer a question (the body as for a practice attempt of its format). With verdicts shown "
        'live: the verdict, points and feedback; otherwise `{"status": "saved"}` with them null.',
    )
    def post(self, request: Request, assessment_id: int, position: int) -> Response:
        user = request_user(request)
        item_id, answer_format = selectors.question_of(user=user, assessment_id=assessment_id, position=position)
        body = formats.get(answer_format).answer_in(data=request.data)
        body.is_valid(raise_exception=True)
        submission, terms = services.answer_grade(user=user, item_id=item_id, payload=dict(body.validated_data))
        item = submission.item
        instance = item.instance
        visible = selectors.verdicts_visible(instance, item)
        return Response(
            represent(SubmissionOut, _submission_body(submission, item, visible, terms)),
            status=status.HTTP_201_CREATED,
        )


class HintApi(APIView):
    @extend_schema(
        operation_id="assessment_hint_next",
        request=None,
        responses={
            200: HintsOut,
            401: ERRORS[401],
            404: ERRORS[404],
            409: _conflict("No hints here (`no_hints`: exams never offer them), none left, or no more answers."),
        },
        description="Homework only: reveal the question's next hint.",
    )
    def post(self, request: Request, assessment_id: int, position: int) -> Response:
        user, instance = _mine(request, assessment_id)
        item = services.hint_next(user=user, item_id=_item(instance, position).pk)
        return Response(
            represent(HintsOut, presentation.hints(item.version, item.hints_used, services.variant_of(item)))
        )


class SubmitApi(APIView):
    @extend_schema(
        operation_id="assessment_submit",
        request=None,
        responses={200: InstanceOut, 401: ERRORS[401], 404: ERRORS[404]},
        description="Submit and close: no more answers; your score is posted. Submitting again changes nothing.",
    )
    def post(self, request: Request, assessment_id: int) -> Response:
        user, instance = _mine(request, assessment_id)
        done = services.instance_submit(user=user, instance=instance)
        return Response(represent(InstanceOut, _instance_body(done, user)))
