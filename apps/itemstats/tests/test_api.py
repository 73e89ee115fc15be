"""The item-analysis API on PostgreSQL: the whole body on the hand-built cohort, who may read
what (learners 403, another instructor's cohort 404, anonymous 401), and its schema entry."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from apps.accounts import services as account_services
from apps.accounts.models import Role, User
from apps.exercises.models import Exercise, Workbook
from apps.itemstats.tests.conftest import Learner
from apps.progress.models import Cohort
from apps.progress.services import cohorts as cohort_services

pytestmark = pytest.mark.django_db


def client_for(user: User) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {account_services.auth_token_issue(user=user).key}")
    return client


def url(exercise: Exercise, query: str = "") -> str:
    return f"/api/v1/workbooks/{exercise.workbook.slug}/exercises/{exercise.number}/analysis/{query}"


def figures(**values: Any) -> dict[str, Any]:
    body = {
        "learners": 0, "solved": 0, "first_try": 0, "revealed": 0, "solve_rate": None, "first_try_rate": None,
        "reveal_rate": None, "mean_attempts_to_solve": None, "median_attempts_to_solve": None,
        "discrimination": None, "attempts": 0, "correct": 0, "accuracy": None,
    }  # fmt: skip
    return body | values


ADDED = {"version": 1, "index": 0, "value": "a + b", "feedback": "Added instead of multiplied."}
DOUBLED = {"version": 1, "index": 1, "value": "2 * a * b", "feedback": "Counted every weight twice."}


def test_instructor_reads_the_whole_body(
    item: Exercise, cohort: Cohort, instructor: User, class_of_five: dict[str, Learner]
) -> None:
    response = client_for(instructor).get(url(item, f"?cohort={cohort.pk}"))
    assert response.status_code == 200
    assert response.json() == {
        "workbook": "itemstats-test",
        "number": "1.1",
        "title": "A varying item",
        "varies": True,
        "scope": {"cohort": cohort.pk, "cohort_name": "ML systems, fall"},
        "figures": figures(
            learners=5,
            solved=2,
            first_try=1,
            revealed=2,
            solve_rate=0.4,
            first_try_rate=0.2,
            reveal_rate=0.4,
            mean_attempts_to_solve=1.5,
            median_attempts_to_solve=1.5,
            discrimination=0.3273,
            attempts=7,
            correct=3,
            accuracy=0.4286,
        ),
        "without_attempt": 1,
        "variants": [
            {
                "numbers": "a = 3",
                "seed": False,
                "givens": {"a": 3},
                "labels": {},
                "figures": figures(
                    learners=2,
                    revealed=1,
                    first_try_rate=0.0,
                    solve_rate=0.0,
                    reveal_rate=0.5,
                    attempts=3,
                    accuracy=0.0,
                ),
                "mistakes": [
                    ADDED | {"count": 1, "share_of_wrong": 0.3333},
                    DOUBLED | {"count": 1, "share_of_wrong": 0.3333},
                ],
            },
            {
                "numbers": "a = 2",
                "seed": False,
                "givens": {"a": 2},
                "labels": {},
                "figures": figures(
                    learners=2,
                    solved=2,
                    first_try=1,
                    first_try_rate=0.5,
                    solve_rate=1.0,
                    reveal_rate=0.0,
                    mean_attempts_to_solve=1.5,
                    median_attempts_to_solve=1.5,
                    attempts=4,
                    correct=3,
                    accuracy=0.75,
                ),
                "mistakes": [ADDED | {"count": 1, "share_of_wrong": 1.0}],
            },
        ],
        "by_given": [
            {
                "name": "a",
                "spread": 0.5,
                "values": [
                    {
                        "value": "2",
                        "figures": figures(
                            learners=2,
                            solved=2,
                            first_try=1,
                            first_try_rate=0.5,
                            solve_rate=1.0,
                            reveal_rate=0.0,
                            attempts=4,
                            correct=3,
                            accuracy=0.75,
                        ),
                    },
                    {
                        "value": "3",
                        "figures": figures(
                            learners=2,
                            revealed=1,
                            first_try_rate=0.0,
                            solve_rate=0.0,
                            reveal_rate=0.5,
                            attempts=3,
                            accuracy=0.0,
                        ),
                    },
                ],
            }
        ],
        "mistakes": [ADDED | {"count": 2, "share_of_wrong": 0.5}, DOUBLED | {"count": 1, "share_of_wrong": 0.25}],
    }


def test_author_reads_every_learner(item: Exercise, author: User, class_of_five: dict[str, Learner]) -> None:
    body = client_for(author).get(url(item)).json()
    assert body["scope"] == {"cohort": None, "cohort_name": None}
    assert (body["figures"]["learners"], body["figures"]["first_try"], body["figures"]["discrimination"]) == (6, 2, 0.0)


def test_learners_are_refused_whatever_they_name(
    item: Exercise, cohort: Cohort, class_of_five: dict[str, Learner]
) -> None:
    learner = class_of_five["ann"].user
    for query in ("", f"?cohort={cohort.pk}", "?cohort=999999"):
        response = client_for(learner).get(url(item, query))
        assert response.status_code == 403
        assert response.json()["error"]["code"] == "permission_denied"
    # Even for an exercise that does not exist: the refusal comes first and says nothing.
    missing = client_for(learner).get("/api/v1/workbooks/itemstats-test/exercises/9.9/analysis/")
    assert missing.status_code == 403


def test_another_instructor_sees_nothing_of_this_cohort(
    item: Exercise,
    workbook: Workbook,
    cohort: Cohort,
    make_user: Callable[..., User],
    class_of_five: dict[str, Learner],
) -> None:
    other = make_user("other-prof", role=Role.INSTRUCTOR)
    theirs = cohort_services.cohort_create(instructor=other, name="Another class")
    client = client_for(other)
    # This cohort: a 404, as every cohort API gives.
    response = client.get(url(item, f"?cohort={cohort.pk}"))
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    # Their own cohort without the workbook assigned: a 404 too.
    assert client.get(url(item, f"?cohort={theirs.pk}")).status_code == 404
    # With it assigned: their own learners only, and they have none on it.
    cohort_services.cohort_assign(cohort=theirs, workbook=workbook)
    body = client.get(url(item, f"?cohort={theirs.pk}")).json()
    assert body["figures"] == figures()
    assert body["variants"] == [] and body["mistakes"] == []
    # No cohort: instructors must name one (only authors read every learner).
    response = client.get(url(item))
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "cohort_required"


def test_bad_input_and_anonymous(item: Exercise, instructor: User) -> None:
    response = client_for(instructor).get(url(item, "?cohort=abc"))
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "validation_error"
    assert APIClient().get(url(item)).status_code == 401


def test_schema_entry(tmp_path: Any) -> None:
    out = tmp_path / "schema.json"
    call_command("spectacular", "--validate", "--fail-on-warn", "--format", "openapi-json", "--file", str(out))
    import json

    schema = json.loads(out.read_text())
    operation = schema["paths"]["/api/v1/workbooks/{slug}/exercises/{number}/analysis/"]["get"]
    assert operation["operationId"] == "exercises_analysis"
    assert set(operation["responses"]) >= {"200", "400", "401", "403", "404"}
    assert [p["name"] for p in operation["parameters"] if p["in"] == "query"] == ["cohort"]
    body = schema["components"]["schemas"]["ItemAnalysisOut"]
    assert set(body["required"]) >= {"figures", "variants", "mistakes", "scope", "without_attempt"}
