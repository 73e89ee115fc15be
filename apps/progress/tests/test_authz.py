"""Who gets what: every progress/cohort endpoint, page and admin view × every kind of caller.

Callers: anonymous, a learner of cohort A, a learner of cohort B, A's instructor, B's instructor,
an author (content staff, no learner data) and a superuser. Each row says the status each gets;
object-level refusals are 404s (the object's existence is not confirmed), role refusals 403s.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

from apps.accounts import services as account_services
from apps.accounts.models import Role, User
from apps.exercises.models import Exercise, Workbook
from apps.exercises.tests.answers import correct_payload, wrong_payload
from apps.progress import services
from apps.progress.models import Cohort, Membership

pytestmark = pytest.mark.django_db

ACTORS = ("anon", "learner", "outsider", "instructor", "other_instructor", "author", "staff")


@dataclass
class World:
    users: dict[str, User]
    a: Cohort
    b: Cohort
    exercise: Exercise

    def api(self, actor: str) -> APIClient:
        client = APIClient()
        if actor != "anon":
            token = account_services.auth_token_issue(user=self.users[actor]).key
            client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
        return client

    def web(self, actor: str) -> Client:
        client = Client()
        if actor != "anon":
            client.force_login(self.users[actor])
        return client

    def fill(self, path: str) -> str:
        return path.format(
            a=self.a.pk,
            b=self.b.pk,
            learner=self.users["learner"].pk,
            outsider=self.users["outsider"].pk,
            code_a=self.a.join_code,
            exercise=self.exercise.pk,
        )


@pytest.fixture
def world(make_user: Callable[..., User]) -> World:
    users = {
        "learner": make_user("learner"),
        "outsider": make_user("outsider"),
        "instructor": make_user("instructor", role=Role.INSTRUCTOR),
        "other_instructor": make_user("other_instructor", role=Role.INSTRUCTOR),
        "author": make_user("author", role=Role.AUTHOR),
        "staff": make_user("staff"),
    }
    users["staff"].is_superuser = users["staff"].is_staff = True
    users["staff"].save()
    workbook = Workbook.objects.get(slug="transformer-math")
    a = services.cohort_create(instructor=users["instructor"], name="Cohort A", workbooks=[(workbook, None)])
    b = services.cohort_create(instructor=users["other_instructor"], name="Cohort B", workbooks=[(workbook, None)])
    services.cohort_join(user=users["learner"], code=a.join_code)
    services.cohort_join(user=users["outsider"], code=b.join_code)
    from apps.learning import services as learning_services

    exercise = Exercise.objects.select_related("workbook", "current_version").get(workbook=workbook, number="0.1")
    for name in ("learner", "outsider"):
        learning_services.attempt_create(
            user=users[name], exercise=exercise, payload=wrong_payload(exercise, users[name])
        )
        learning_services.attempt_create(
            user=users[name], exercise=exercise, payload=correct_payload(exercise, users[name])
        )
    return World(users, a, b, exercise)


def row(statuses: str, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
    """``statuses``: one per actor, in ACTORS order."""
    codes = tuple(int(s) for s in statuses.split())
    assert len(codes) == len(ACTORS)
    return pytest.param(method, path, body, codes, id=f"{method} {path}")


# fmt: off
# Columns:    anon learner outsider instructor other_instr author staff
ALL       =  "401  200     200      200        200         200    200"
A_MEMBERS =  "401  200     404      200        404         404    200"  # A's members, A's instructor, superusers
A_TEACHER =  "401  404     404      200        404         404    200"  # A's learners' data

API = [
    row(ALL, "get", "/api/v1/progress/"),
    row(ALL, "get", "/api/v1/progress/transformer-math/"),
    row(ALL, "post", "/api/v1/progress/transformer-math/reset/"),
    row(ALL, "get", "/api/v1/streak/"),
    row(ALL, "get", "/api/v1/leaderboard/"),
    row(A_MEMBERS, "get", "/api/v1/leaderboard/?scope=cohort&cohort={a}"),
    row(A_MEMBERS, "get", "/api/v1/leaderboard/?scope=cohort&cohort={a}&period=week"),
    row(ALL, "get", "/api/v1/profile/"),
    row(ALL, "patch", "/api/v1/profile/", {"time_zone": "Asia/Tokyo"}),
    row(ALL, "get", "/api/v1/cohorts/"),
    row("401  403     403      201        201         403    201", "post", "/api/v1/cohorts/", {"name": "New"}),
    row(A_MEMBERS, "get", "/api/v1/cohorts/{a}/"),
    # Already a member: 200; joining: 201; an instructor cannot join their own cohort: 400.
    row("401  200     201      400        201         201    201", "post", "/api/v1/cohorts/join/", {"code": "{code_a}"}),
    row("401  204     404      400        404         404    204", "delete", "/api/v1/cohorts/{a}/membership/"),
    row(A_TEACHER, "get", "/api/v1/cohorts/{a}/progress/"),
    row(A_TEACHER, "get", "/api/v1/cohorts/{a}/exercises/?workbook=transformer-math"),
    row(A_TEACHER, "get", "/api/v1/cohorts/{a}/learners/{learner}/attempts/"),
    row(A_TEACHER, "get", "/api/v1/cohorts/{a}/progress.csv"),
    row(A_TEACHER, "get", "/api/v1/cohorts/{a}/overview/"),
    row(A_TEACHER, "get", "/api/v1/cohorts/{a}/overview.csv"),
    row(A_TEACHER, "get", "/api/v1/cohorts/{a}/stuck-points.csv"),
    row(A_TEACHER, "get", "/api/v1/cohorts/{a}/exercises.csv?workbook=transformer-math"),
    row(A_TEACHER, "get", "/api/v1/cohorts/{a}/learners/{learner}/attempts.csv"),
    # A learner of another cohort, through A: nobody sees them there (as in the admin).
    row("401  404     404      404        404         404    404", "get", "/api/v1/cohorts/{a}/learners/{outsider}/attempts/"),
    row("401  404     404      404        404         404    404", "get", "/api/v1/cohorts/{a}/learners/{outsider}/attempts.csv"),
    # Content export: authors (and superusers) only; a role refusal is a 403.
    row("401  403     403      403        403         200    200", "get", "/api/v1/workbooks/transformer-math/export/"),
]
# fmt: on


@pytest.mark.parametrize(("method", "path", "body", "statuses"), API)
def test_api(world: World, method: str, path: str, body: dict[str, Any] | None, statuses: tuple[int, ...]) -> None:
    got = {}
    for actor in ACTORS:
        data = {k: world.fill(v) if isinstance(v, str) else v for k, v in (body or {}).items()}
        response = getattr(world.api(actor), method)(world.fill(path), data, format="json")
        got[actor] = response.status_code
        if response.status_code >= 400:
            assert set(response.json()) == {"error"}, response.content  # one error shape
    assert got == dict(zip(ACTORS, statuses, strict=True))


# fmt: off
# Pages send anonymous callers to log in (302); the admin sends non-staff there too, and refuses
# staff without access with 403 (a list) or 404 (an object).
# Columns:    anon learner outsider instructor other_instr author staff
PAGES     =  "302  200     200      200        200         200    200"
ADMIN     =  "302  302     302      200        200         403    200"
ADMIN_A   =  "302  302     302      200        404         404    200"

WEB = [
    row(PAGES, "get", "/progress/"),
    row(PAGES, "get", "/leaderboard/"),
    row("302  200     404      200        404         404    200", "get", "/leaderboard/?scope=cohort&cohort={a}"),
    row(PAGES, "get", "/cohorts/"),
    row(PAGES, "get", "/profile/"),
    row(ADMIN, "get", "/admin/progress/cohort/"),
    row(ADMIN_A, "get", "/admin/progress/cohort/{a}/change/"),
    row(ADMIN_A, "get", "/admin/progress/cohort/{a}/delete/"),
    row(ADMIN_A, "get", "/admin/progress/cohort/{a}/progress/"),
    row(ADMIN_A, "get", "/admin/progress/cohort/{a}/progress/?format=csv"),
    row(ADMIN_A, "get", "/admin/progress/cohort/{a}/progress/?format=overview-csv"),
    row(ADMIN_A, "get", "/admin/progress/cohort/{a}/progress/?format=stuck-csv&stuck_sort=revealed"),
    row(ADMIN_A, "get", "/admin/progress/cohort/{a}/exercises/"),
    row(ADMIN_A, "get", "/admin/progress/cohort/{a}/exercises/?format=csv"),
    row(ADMIN_A, "get", "/admin/progress/cohort/{a}/learners/{learner}/"),
    # A learner of another cohort, through A's page: nobody sees them there.
    row("302  302     302      404        404         404    404", "get", "/admin/progress/cohort/{a}/learners/{outsider}/"),
    # Raw attempts stay with superusers.
    row("302  302     302      403        403         403    200", "get", "/admin/exercises/attempt/"),
]
# fmt: on


@pytest.mark.parametrize(("method", "path", "body", "statuses"), WEB)
def test_pages_and_admin(
    world: World, method: str, path: str, body: dict[str, Any] | None, statuses: tuple[int, ...]
) -> None:
    got = {actor: getattr(world.web(actor), method)(world.fill(path)).status_code for actor in ACTORS}
    assert got == dict(zip(ACTORS, statuses, strict=True))


def test_instructors_list_only_their_own_cohorts(world: World) -> None:
    page = world.web("instructor").get("/admin/progress/cohort/").content.decode()
    assert "Cohort A" in page and "Cohort B" not in page
    assert world.a.join_code in page and world.b.join_code not in page
    staff = world.web("staff").get("/admin/progress/cohort/").content.decode()
    assert "Cohort A" in staff and "Cohort B" in staff


def test_instructors_cannot_edit_content_or_another_instructors_cohort(world: World) -> None:
    instructor = world.web("instructor")
    exercise_url = f"/admin/exercises/exercise/{world.exercise.pk}/change/"
    assert instructor.get(exercise_url).status_code == 200  # read-only view
    assert instructor.post(exercise_url, {"chapter": world.exercise.chapter_id}).status_code == 403
    other = f"/admin/progress/cohort/{world.b.pk}/change/"
    assert instructor.post(other, {"name": "Taken over", "time_zone": "UTC"}).status_code == 404
    world.b.refresh_from_db()
    assert world.b.name == "Cohort B"


def test_the_cohorts_page_refuses_an_instructor_leaving_their_own_cohort(world: World) -> None:
    """The rule lives in the service, so the page enforces it as the API does (`own_cohort`)."""
    members = set(Membership.objects.filter(cohort=world.a).values_list("user_id", flat=True))
    response = world.web("instructor").post("/cohorts/", {"action": "leave", "cohort": world.a.pk})
    assert response.status_code == 400
    page = response.content.decode()
    assert "You teach this cohort; delete it in the admin instead." in page
    assert "You left" not in page
    assert set(Membership.objects.filter(cohort=world.a).values_list("user_id", flat=True)) == members
    assert Cohort.objects.filter(pk=world.a.pk, instructor=world.users["instructor"]).exists()
    # A learner of the same cohort still leaves from the page.
    left = world.web("learner").post("/cohorts/", {"action": "leave", "cohort": world.a.pk})
    assert left.status_code == 302
    assert not Membership.objects.filter(cohort=world.a, user=world.users["learner"]).exists()


def test_the_join_code_is_shown_only_to_the_cohorts_instructor(world: World) -> None:
    learner = world.api("learner").get(f"/api/v1/cohorts/{world.a.pk}/").json()
    teacher = world.api("instructor").get(f"/api/v1/cohorts/{world.a.pk}/").json()
    assert learner["join_code"] is None and learner["role"] == "member"
    assert teacher["join_code"] == world.a.join_code and teacher["role"] == "instructor"


def test_learners_see_only_their_own_attempts(world: World) -> None:
    mine = world.api("learner").get("/api/v1/attempts/").json()
    users = {a["id"] for a in mine["results"]}
    from apps.exercises.models import Attempt

    assert users == set(Attempt.objects.filter(user=world.users["learner"]).values_list("pk", flat=True))
    theirs = Attempt.objects.filter(user=world.users["outsider"]).first()
    assert theirs is not None
    assert world.api("learner").get(f"/api/v1/attempts/{theirs.pk}/").status_code == 404
