"""Least privilege for instructors (issue 29): a cohort's instructor reads a member's attempts,
statistics, history, exports and skill ticks only in the workbooks the cohort was assigned —
through the API, the admin pages and the CSV files alike. Superusers still read everything.

The cohort is assigned transformer-math (A); its member also works in lm-from-scratch (B), on
their own or for another course. B must not show up anywhere the instructor looks."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from django.test import Client
from rest_framework.test import APIClient

from apps.accounts.models import Role, User
from apps.exercises.models import Exercise, Skill, Workbook
from apps.exercises.tests.answers import correct_payload, wrong_payload
from apps.learning import services as learning_services
from apps.progress import services
from apps.progress.models import Cohort
from apps.progress.tests.conftest import Clock, gradable

pytestmark = pytest.mark.django_db

A, B = "transformer-math", "lm-from-scratch"


@dataclass(frozen=True)
class World:
    cohort: Cohort
    teacher: User
    admin: User
    learner: User
    in_a: Exercise
    in_b: Exercise
    revealed_b: Exercise


@pytest.fixture
def world(make_user: Callable[..., User], clock: Clock) -> World:
    teacher = make_user("teacher", role=Role.INSTRUCTOR)
    admin = make_user("root", role=Role.INSTRUCTOR)
    admin.is_superuser = admin.is_staff = True
    admin.save(update_fields=["is_superuser", "is_staff"])
    learner = make_user("ada")
    cohort = services.cohort_create(
        instructor=teacher, name="Evening", workbooks=[(Workbook.objects.get(slug=A), None)]
    )
    services.cohort_join(user=learner, code=cohort.join_code)
    in_a, (in_b, revealed_b) = gradable(A)[0], gradable(B)[:2]
    clock.set("2026-06-02T09:00:00+00:00")
    learning_services.attempt_create(user=learner, exercise=in_a, payload=wrong_payload(in_a, learner))
    learning_services.attempt_create(user=learner, exercise=in_a, payload=correct_payload(in_a, learner))
    clock.set("2026-06-05T18:00:00+00:00")  # later, and elsewhere: not the cohort's "last active"
    learning_services.attempt_create(user=learner, exercise=in_b, payload=wrong_payload(in_b, learner))
    learning_services.attempt_create(user=learner, exercise=in_b, payload=correct_payload(in_b, learner))
    learning_services.exercise_reveal(user=learner, exercise=revealed_b)  # a reveal alone is history too
    return World(cohort, teacher, admin, learner, in_a, in_b, revealed_b)


def api(user: User) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def page(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def csv_rows(content: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(content.decode())))


def attempts_url(w: World, suffix: str = "attempts/") -> str:
    return f"/api/v1/cohorts/{w.cohort.pk}/learners/{w.learner.pk}/{suffix}"


def test_the_attempts_api_and_its_csv_show_only_the_assigned_workbooks(world: World) -> None:
    w = world
    body = api(w.teacher).get(attempts_url(w)).json()
    assert body["count"] == 2
    assert {(a["workbook"], a["exercise"]) for a in body["results"]} == {(A, w.in_a.number)}

    everything = api(w.admin).get(attempts_url(w)).json()  # a superuser: every workbook
    assert everything["count"] == 4
    assert {a["workbook"] for a in everything["results"]} == {A, B}

    taught = api(w.teacher).get(attempts_url(w, "attempts.csv"))
    assert taught.status_code == 200
    assert [(r["workbook"], r["exercise"]) for r in csv_rows(taught.content)] == [(A, w.in_a.number)] * 2
    full = api(w.admin).get(attempts_url(w, "attempts.csv"))
    assert sorted({r["workbook"] for r in csv_rows(full.content)}) == sorted({A, B})


def test_statistics_of_a_workbook_the_cohort_was_not_assigned_are_a_404(world: World) -> None:
    w = world
    base = f"/api/v1/cohorts/{w.cohort.pk}"
    for url in (f"{base}/exercises/?workbook={B}", f"{base}/exercises.csv?workbook={B}"):
        refused = api(w.teacher).get(url)
        assert refused.status_code == 404, url
        assert refused.json() == {"error": {"code": "not_found", "message": "Not found.", "details": {}}}
        assert api(w.admin).get(url).status_code == 200, url
    stats = api(w.teacher).get(f"{base}/exercises/?workbook={A}").json()
    mine = next(s for s in stats if s["number"] == w.in_a.number)
    assert (mine["attempts"], mine["solved"]) == (2, 1)
    # The superuser's statistics of B do count the member's work there.
    theirs = next(s for s in api(w.admin).get(f"{base}/exercises/?workbook={B}").json() if s["number"] == w.in_b.number)
    assert (theirs["attempts"], theirs["solved"]) == (2, 1)


def test_the_progress_table_and_overview_take_last_activity_from_the_assigned_workbooks(world: World) -> None:
    w = world
    base = f"/api/v1/cohorts/{w.cohort.pk}"
    for user in (w.teacher, w.admin):  # the cohort's tables are about the cohort's work, for anyone
        [row] = api(user).get(f"{base}/progress/").json()["learners"]
        assert row["last_active"] == "2026-06-02T09:00:00Z"
        assert [c["workbook"] for c in row["workbooks"]] == [A]
        [line] = csv_rows(api(user).get(f"{base}/progress.csv").content)
        assert line["last active (UTC)"] == "2026-06-02T09:00:00+00:00"
        assert not any(B in key for key in line)
    stuck = csv_rows(api(w.teacher).get(f"{base}/stuck-points.csv").content)
    assert stuck and {r["workbook"] for r in stuck} == {A}


def test_the_admin_history_and_exercise_pages_keep_to_the_assigned_workbooks(world: World) -> None:
    w = world
    history = f"/admin/progress/cohort/{w.cohort.pk}/learners/{w.learner.pk}/"
    taught = page(w.teacher).get(history)
    assert taught.status_code == 200
    html = taught.content.decode()
    assert f"/w/{A}/{w.in_a.number}/" in html
    assert f"/w/{B}/" not in html and f"{B} " not in html  # neither B's attempts nor its reveal

    full = page(w.admin).get(history).content.decode()
    assert f"/w/{B}/{w.in_b.number}/" in full and f"/w/{B}/{w.revealed_b.number}/" in full

    exercises = f"/admin/progress/cohort/{w.cohort.pk}/exercises/"
    assert page(w.teacher).get(exercises, {"workbook": B}).status_code == 404
    assert page(w.teacher).get(exercises, {"workbook": B, "format": "csv"}).status_code == 404
    assert page(w.admin).get(exercises, {"workbook": B}).status_code == 200
    stats = csv_rows(page(w.teacher).get(exercises, {"workbook": A, "format": "csv"}).content)
    assert next(r for r in stats if r["exercise"] == w.in_a.number)["attempts"] == "2"


def test_skill_ticks_in_the_admin_keep_to_the_assigned_workbooks(world: World) -> None:
    w = world
    skill_a = Skill.objects.create(workbook=w.in_a.workbook, key="lp-a", text="Count parameters cold (A)")
    skill_b = Skill.objects.create(workbook=w.in_b.workbook, key="lp-b", text="Write a tokenizer cold (B)")
    for skill in (skill_a, skill_b):
        services.skill_mark(user=w.learner, skill=skill, action="tick")
    url = "/admin/progress/skillcheck/"
    taught = page(w.teacher).get(url)
    assert taught.status_code == 200
    assert skill_a.text in taught.content.decode() and skill_b.text not in taught.content.decode()
    full = page(w.admin).get(url).content.decode()
    assert skill_a.text in full and skill_b.text in full


def test_an_instructor_of_two_cohorts_reads_each_cohort_by_its_own_assignments(
    world: World, make_user: Callable[..., User]
) -> None:
    """B assigned to the teacher's other cohort does not open B through the first one."""
    w = world
    other = services.cohort_create(
        instructor=w.teacher, name="Morning", workbooks=[(Workbook.objects.get(slug=B), None)]
    )
    services.cohort_join(user=w.learner, code=other.join_code)
    first = api(w.teacher).get(attempts_url(w)).json()
    assert {a["workbook"] for a in first["results"]} == {A}
    second = api(w.teacher).get(f"/api/v1/cohorts/{other.pk}/learners/{w.learner.pk}/attempts/").json()
    assert {a["workbook"] for a in second["results"]} == {B} and second["count"] == 2
    assert api(w.teacher).get(f"/api/v1/cohorts/{w.cohort.pk}/exercises/?workbook={B}").status_code == 404
