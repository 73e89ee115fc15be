"""The progress, leaderboard and cohort API: whole bodies, database state, errors that change nothing."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date

import pytest
from rest_framework.test import APIClient

from apps.accounts import services as account_services
from apps.accounts.models import Role, User
from apps.progress import services
from apps.progress.models import Cohort, CohortWorkbook, Membership
from apps.progress.tests.conftest import Clock, Solve, gradable

pytestmark = pytest.mark.django_db


def client_for(user: User) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {account_services.auth_token_issue(user=user).key}")
    return client


def test_progress_streak_and_board_after_two_days(
    student: User, api: APIClient, make_user: Callable[..., User], clock: Clock, solve: Solve
) -> None:
    services.profile_update(user=student, time_zone="Asia/Tokyo")
    first, second = gradable()[:2]
    clock.set("2026-06-01T03:00:00+00:00")
    solve(student, first)
    clock.set("2026-06-02T03:00:00+00:00")
    solve(student, second)
    clock.set("2026-06-02T04:00:00+00:00")
    streak = api.get("/api/v1/streak/").json()
    earned = 10 * (first.difficulty + second.difficulty)
    assert streak == {
        "current": 2,
        "best": 2,
        "solved_today": True,
        "last_day": "2026-06-02",
        "time_zone": "Asia/Tokyo",
        "solves": 2,
        "points": earned,
    }
    body = api.get("/api/v1/progress/").json()
    assert body["streak"] == streak
    book = next(w for w in body["workbooks"] if w["slug"] == "transformer-math")
    assert book["solved"] == 2 and book["total"] >= 50
    assert book["percent"] == round(200 / book["total"])
    assert sum(c["solved"] for c in book["chapters"]) == 2
    assert {k["kind"] for k in book["by_kind"]} >= {first.kind, second.kind}
    assert api.get("/api/v1/progress/transformer-math/").json() == book

    board = api.get("/api/v1/leaderboard/").json()
    assert board == {
        "scope": "global",
        "period": "all",
        "cohort": None,
        "week_starts": None,
        "time_zone": "UTC",
        "ranked": 1,
        "entries": [{"rank": 1, "username": "alice", "points": earned, "me": True}],
        "me": {"rank": 1, "username": "alice", "points": earned, "me": True},
        "me_hidden": False,
    }
    week = api.get("/api/v1/leaderboard/?period=week").json()
    assert week["week_starts"] == "2026-06-01" and week["me"]["points"] == earned


def test_bad_queries_are_explained(api: APIClient) -> None:
    response = api.get("/api/v1/leaderboard/?scope=cohort")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "validation_error"
    assert response.json()["error"]["details"] == {"fields": {"cohort": ["A cohort board needs `cohort=<id>`."]}}
    assert api.get("/api/v1/leaderboard/?period=month").status_code == 400
    assert api.get("/api/v1/leaderboard/?scope=cohort&cohort=999999").status_code == 404


def test_profile_updates_and_refuses_bad_zones(student: User, api: APIClient) -> None:
    assert api.get("/api/v1/profile/").json() == {
        "time_zone": "",
        "effective_time_zone": "UTC",
        "on_global_board": True,
    }
    response = api.patch("/api/v1/profile/", {"time_zone": "Mars/Olympus"}, format="json")
    assert response.status_code == 400 and response.json()["error"]["code"] == "bad_time_zone"
    student.refresh_from_db()
    assert student.time_zone == ""
    response = api.patch("/api/v1/profile/", {"time_zone": "Europe/Paris", "on_global_board": False}, format="json")
    assert response.json() == {
        "time_zone": "Europe/Paris",
        "effective_time_zone": "Europe/Paris",
        "on_global_board": False,
    }


def test_an_instructor_creates_a_cohort_and_learners_join_list_and_leave(
    student: User, api: APIClient, make_user: Callable[..., User]
) -> None:
    teacher = client_for(make_user("teacher", role=Role.INSTRUCTOR))
    response = teacher.post(
        "/api/v1/cohorts/",
        {
            "name": "Spring 2027",
            "time_zone": "America/New_York",
            "workbooks": [{"workbook": "transformer-math", "due_on": "2027-03-01"}],
        },
        format="json",
    )
    assert response.status_code == 201, response.content
    created = response.json()
    cohort = Cohort.objects.get(pk=created["id"])
    assert created == {
        "id": cohort.pk,
        "name": "Spring 2027",
        "time_zone": "America/New_York",
        "numbers": "per_learner",
        "instructor": "teacher",
        "role": "instructor",
        "join_code": cohort.join_code,
        "members": 0,
        "workbooks": [
            {"workbook": "transformer-math", "title": "Transformer Math", "due_on": "2027-03-01", "overdue": None}
        ],
    }
    assert len(cohort.join_code) == 8 and not set(cohort.join_code) & set("01OIL")
    # Codes are forgiving about case and separators; joining twice is harmless.
    code = f"{cohort.join_code[:4].lower()}-{cohort.join_code[4:]}"
    response = api.post("/api/v1/cohorts/join/", {"code": code}, format="json")
    assert response.status_code == 201
    assert response.json()["role"] == "member" and response.json()["join_code"] is None
    assert api.post("/api/v1/cohorts/join/", {"code": cohort.join_code}, format="json").status_code == 200
    assert Membership.objects.filter(cohort=cohort, user=student).count() == 1
    listed = api.get("/api/v1/cohorts/").json()
    assert [c["name"] for c in listed] == ["Spring 2027"] and listed[0]["members"] == 1
    # A wrong code is explained and writes nothing.
    response = api.post("/api/v1/cohorts/join/", {"code": "NOPE-NOPE"}, format="json")
    assert response.status_code == 400 and response.json()["error"]["code"] == "bad_join_code"
    assert Membership.objects.filter(user=student).count() == 1
    assert api.delete(f"/api/v1/cohorts/{cohort.pk}/membership/").status_code == 204
    assert not Membership.objects.filter(user=student).exists()
    assert api.get(f"/api/v1/cohorts/{cohort.pk}/").status_code == 404


def test_listing_cohorts_costs_the_same_queries_for_one_or_many(
    student: User, api: APIClient, make_user: Callable[..., User]
) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from apps.exercises.models import Workbook

    teacher = make_user("teacher", role=Role.INSTRUCTOR)
    workbook = Workbook.objects.get(slug="transformer-math")

    def listing_queries() -> int:
        with CaptureQueriesContext(connection) as queries:
            assert api.get("/api/v1/cohorts/").status_code == 200
        return len(queries)

    services.cohort_join(
        user=student,
        code=services.cohort_create(instructor=teacher, name="One", workbooks=[(workbook, None)]).join_code,
    )
    one = listing_queries()
    for name in ("Two", "Three"):
        services.cohort_join(
            user=student,
            code=services.cohort_create(instructor=teacher, name=name, workbooks=[(workbook, None)]).join_code,
        )
    assert listing_queries() == one
    assert [len(c["workbooks"]) for c in api.get("/api/v1/cohorts/").json()] == [1, 1, 1]


def test_a_bad_cohort_is_refused_whole(make_user: Callable[..., User]) -> None:
    teacher = client_for(make_user("teacher", role=Role.INSTRUCTOR))
    for body in (
        {"name": "Zoned out", "time_zone": "Nowhere/Land"},
        {"name": "Unknown book", "workbooks": [{"workbook": "no-such-book"}]},
        {"name": ""},
    ):
        response = teacher.post("/api/v1/cohorts/", body, format="json")
        assert response.status_code in (400, 404), response.content
        assert set(response.json()) == {"error"}
    assert not Cohort.objects.exists() and not CohortWorkbook.objects.exists()


def test_join_attempts_are_throttled(api: APIClient) -> None:
    codes = [api.post("/api/v1/cohorts/join/", {"code": f"WRONG{i:03d}"}, format="json").status_code for i in range(12)]
    assert codes[:10] == [400] * 10
    assert codes[10:] == [429, 429]


def test_instructor_sees_progress_and_statistics(
    student: User, other_student: User, make_user: Callable[..., User], clock: Clock, solve: Solve
) -> None:
    from apps.exercises.models import Workbook

    teacher_user = make_user("teacher", role=Role.INSTRUCTOR)
    workbook = Workbook.objects.get(slug="transformer-math")
    cohort = services.cohort_create(
        instructor=teacher_user, name="Class", time_zone="UTC", workbooks=[(workbook, date(2026, 6, 1))]
    )
    for user in (student, other_student):
        services.cohort_join(user=user, code=cohort.join_code)
    exercise = gradable()[0]
    clock.set("2026-06-03T10:00:00+00:00")
    solve(student, exercise, correct=False)
    solve(student, exercise, correct=False)
    solve(student, exercise)
    solve(other_student, exercise, correct=False)
    from apps.learning import services as learning_services

    learning_services.exercise_reveal(user=other_student, exercise=exercise)
    teacher = client_for(teacher_user)
    body = teacher.get(f"/api/v1/cohorts/{cohort.pk}/progress/").json()
    assert body["cohort"] == cohort.pk
    alice = next(r for r in body["learners"] if r["username"] == "alice")
    cell = alice["workbooks"][0]
    assert (cell["workbook"], cell["solved"], cell["due_on"], cell["overdue"]) == (
        "transformer-math",
        1,
        "2026-06-01",
        True,
    )
    assert alice["overdue"] == ["transformer-math"] and alice["current_streak"] == 1
    assert alice["last_active"] == "2026-06-03T10:00:00Z"
    stats = teacher.get(f"/api/v1/cohorts/{cohort.pk}/exercises/?workbook=transformer-math").json()
    first = next(s for s in stats if s["number"] == exercise.number)
    assert first["attempts"] == 4 and first["learners"] == 2 and first["solved"] == 1
    assert first["solve_rate"] == 0.5 and first["median_attempts_to_solve"] == 3 and first["reveal_share"] == 0.5
    assert sum(w["count"] for w in first["wrong_answers"]) == 3


def test_the_openapi_schema_types_every_progress_and_cohort_operation(api: APIClient) -> None:
    schema = api.get("/api/schema/?format=json").json()
    expected = {
        ("/api/v1/progress/", "get"): "Progress",
        ("/api/v1/progress/{slug}/", "get"): "WorkbookMastery",
        ("/api/v1/progress/{slug}/reset/", "post"): "Reset",
        ("/api/v1/streak/", "get"): "Streak",
        ("/api/v1/leaderboard/", "get"): "Board",
        ("/api/v1/profile/", "get"): "Profile",
        ("/api/v1/profile/", "patch"): "Profile",
        ("/api/v1/cohorts/", "post"): "Cohort",
        ("/api/v1/cohorts/join/", "post"): "Cohort",
        ("/api/v1/cohorts/{cohort_id}/", "get"): "Cohort",
        ("/api/v1/cohorts/{cohort_id}/progress/", "get"): "CohortProgress",
        ("/api/v1/cohorts/{cohort_id}/overview/", "get"): "CohortOverview",
    }
    for (path, method), component in expected.items():
        responses = schema["paths"][path][method]["responses"]
        ok = responses.get("200") or responses.get("201")
        assert ok["content"]["application/json"]["schema"]["$ref"].endswith(f"/{component}Out"), (path, method)
    stats = schema["paths"]["/api/v1/cohorts/{cohort_id}/exercises/"]["get"]["responses"]["200"]
    assert stats["content"]["application/json"]["schema"]["items"]["$ref"].endswith("/ExerciseStatsOut")
    for path, component in (("/api/v1/cohorts/", "CohortIn"), ("/api/v1/cohorts/join/", "JoinIn")):
        body = schema["paths"][path]["post"]["requestBody"]["content"]["application/json"]["schema"]
        assert body["$ref"].rsplit("/", 1)[1].startswith(component), body
