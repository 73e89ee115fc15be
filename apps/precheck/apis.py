"""The precheck's API: start one (202), then poll it. One view per operation."""

from __future__ import annotations

from uuid import UUID

from drf_spectacular.utils import OpenApiExample, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core import schema
from apps.core.request import request_user
from apps.core.serializers import ErrorOut, represent
from apps.core.throttling import FixedWindowScopedThrottle
from apps.exercises import selectors as exercise_selectors
from apps.precheck import selectors, services
from apps.precheck.records import NOTE
from apps.precheck.serializers import PrecheckIn, PrecheckOut

_ID = "5f0c6c52-6a3e-4c55-9a53-0c9d7c8f1b2e"
_URL = f"/api/v1/prechecks/{_ID}/"
_BASE = {
    "id": _ID,
    "workbook": "transformer-math",
    "exercise": "0.5",
    "note": NOTE,
    "graded": False,
    "tests_total": 3,
    "traceback": "",
    "prints": "",
    "created_at": "2026-11-27T16:40:00.120000Z",
    "url": _URL,
}
QUEUED = OpenApiExample(
    "Queued",
    response_only=True,
    status_codes=["202"],
    value={
        **_BASE,
        "status": "queued",
        "outcome": "",
        "message": "",
        "tests": [],
        "time_limit_s": None,
        "started_at": None,
        "elapsed_s": None,
    },
)
CHECKED = OpenApiExample(
    "One example wrong",
    response_only=True,
    status_codes=["200"],
    value={
        **_BASE,
        "status": "checked",
        "outcome": "failed",
        "message": "1 of 3 failed (2 examples and 1 structural check).",
        "tests": [
            {
                "id": "gpt2_small",
                "kind": "example",
                "passed": False,
                "call": "param_count(768, 12, 50257)",
                "expected": "123532032",
                "got": "85054464",
                "requirement": "",
                "message": "Wrong value.",
            },
            {
                "id": "one_of_each",
                "kind": "example",
                "passed": True,
                "call": "param_count(1, 1, 1)",
                "expected": "13",
                "got": "13",
                "requirement": "",
                "message": "",
            },
            {
                "id": "plain_python",
                "kind": "check",
                "passed": True,
                "call": "",
                "expected": "",
                "got": "",
                "requirement": "param_count must use plain Python: no NumPy or JAX.",
                "message": "",
            },
        ],
        "time_limit_s": 10.0,
        "started_at": "2026-11-27T16:40:00.180000Z",
        "elapsed_s": 0.3,
    },
)
NOT_RUN = OpenApiExample(
    "Could not run",
    response_only=True,
    status_codes=["200"],
    value={
        **_BASE,
        "status": "not_run",
        "outcome": "",
        "message": "The precheck could not run: the sandbox is unavailable right now. Nothing was counted; try "
        "again in a moment.",
        "tests": [],
        "time_limit_s": 10.0,
        "started_at": "2026-11-27T16:40:00.180000Z",
        "elapsed_s": 0.1,
    },
)


class ExercisePrecheckApi(APIView):
    throttle_scope = services.THROTTLE_SCOPE
    throttle_classes = [FixedWindowScopedThrottle]

    @extend_schema(
        operation_id="exercise_precheck_create",
        request=PrecheckIn,
        description=(
            f"{NOTE}. Run your code on a Build or Debug exercise's *examples* (public: their call, expected "
            "value and what your code returned are shown) and its cheap structural checks (signature, shape, "
            "dtype, that it traces under `jax.jit` or uses `jax.vmap` where the prompt asks; shown by their "
            "requirement), in the sandbox. Hidden tests never run. It counts no attempt and changes no progress, "
            "points, streak or review. Queued (202): poll `url` until `status` is `checked` or `not_run`. One "
            "precheck at a time per learner (409 `precheck_running` while one is pending), and at most "
            "`THROTTLE_PRECHECK` (default 20 a minute) apart from submissions (429)."
        ),
        examples=[
            OpenApiExample(
                "A Build's code",
                request_only=True,
                value={
                    "code": "def param_count(d, n_layers, vocab_size):\n    return 12 * n_layers * d * d + vocab_size * d\n"
                },
            ),
            QUEUED,
        ],
        responses={
            202: OpenApiResponse(PrecheckOut, description="Queued for the sandbox: poll `url`."),
            400: OpenApiResponse(
                ErrorOut,
                description="Nothing ran: the code does not parse (`syntax_error`), is empty or too long, the exercise "
                "takes no code (`not_code`) or has no examples or checks (`nothing_to_precheck`).",
            ),
            **schema.ERRORS,
            409: OpenApiResponse(ErrorOut, description="A precheck of yours is still pending (`precheck_running`)."),
            429: OpenApiResponse(ErrorOut, description="Too many prechecks (`throttled`); retry after `Retry-After`."),
            503: OpenApiResponse(ErrorOut, description="No sandbox is running (`sandbox_unavailable`); nothing ran."),
        },
    )
    def post(self, request: Request, slug: str, number: str) -> Response:
        exercise = exercise_selectors.exercise_get(workbook_slug=slug, number=number)
        body = PrecheckIn(data=request.data)
        body.is_valid(raise_exception=True)
        precheck = services.precheck_start(
            user=request_user(request), exercise=exercise, payload=dict(body.validated_data)
        )
        data = represent(PrecheckOut, precheck)
        return Response(data, status=status.HTTP_202_ACCEPTED, headers={"Location": data["url"]})


class PrecheckDetailApi(APIView):
    @extend_schema(
        operation_id="prechecks_retrieve",
        description=f"{NOTE}. Your precheck, as far as it has gone; anyone else's is a 404, and so is one older "
        "than an hour.",
        examples=[CHECKED, NOT_RUN],
        responses={200: PrecheckOut, **schema.ERRORS},
    )
    def get(self, request: Request, precheck_id: UUID) -> Response:
        precheck = selectors.precheck_get(user=request_user(request), precheck_id=str(precheck_id))
        return Response(represent(PrecheckOut, precheck))
