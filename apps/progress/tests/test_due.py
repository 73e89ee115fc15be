"""A learner's due dates: the cohort's day boundary, "overdue" exactly as the instructor's table
says it, the home, workbook and cohort pages at a constant number of queries, and the API."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from apps.accounts.models import Role, User
from apps.exercises.models import Exercise, Workbook
from apps.progress import selectors, services
from apps.progress.models import Cohort
from apps.progress.tests.conftest import Clock, Solve

pytestmark = pytest.mark.django_db

DUE = date(2026, 6, 1)


def book(slug: str = "transformer-math") -> Workbook:
    return Workbook.objects.get(slug=slug)


def cohort_with(
    teacher: User, learners: list[User], assigned: list[tuple[str, date | None]], tz: str = "UTC", name: str = "Class"
) -> Cohort:
    cohort = services.cohort_create(
        instructor=teacher, name=name, time_zone=tz, workbooks=[(book(s), d) for s, d in assigned]
    )
    for user in learners:
        services.cohort_join(user=user, code=cohort.join_code)
    return cohort


@pytest.fixture
def teacher(make_user: Callable[..., User]) -> User:
    return make_user("teacher", role=Role.INSTRUCTOR)


def instructor_says(cohort: Cohort, user: User, at: datetime) -> dict[str, bool]:
    _, rows = selectors.cohort_progress(cohort=cohort, at=at)
    row = next(r for r in rows if r.user_id == user.pk)
    return {c.slug: c.overdue for c in row.cells if c.due_on is not None}


def learner_sees(user: User, at: datetime) -> dict[str, bool]:
    return {d.slug: d.overdue for d in selectors.learner_due(user=user, at=at)}


def test_overdue_begins_when_the_due_day_ends_in_the_cohorts_time_zone(
    student: User, teacher: User, solve: Solve
) -> None:
    cohort = cohort_with(teacher, [student], [("transformer-math", DUE)], tz="America/Los_Angeles")
    solve(student, 0)
    last_minute = datetime.fromisoformat("2026-06-02T06:59:00+00:00")  # 23:59 on June 1 in Los Angeles
    next_minute = datetime.fromisoformat("2026-06-02T07:01:00+00:00")  # 00:01 on June 2 there (UTC: June 2 all along)
    (due,) = selectors.learner_due(user=student, at=last_minute)
    assert (due.slug, due.due_on, due.today, due.days_left, due.overdue) == ("transformer-math", DUE, DUE, 0, False)
    assert (due.cell.solved, due.cell.total) == (1, Exercise.objects.filter(workbook=book(), is_active=True).count())
    assert (due.cohort_name, due.time_zone) == ("Class", "America/Los_Angeles")
    assert (
        learner_sees(student, last_minute)
        == instructor_says(cohort, student, last_minute)
        == {"transformer-math": False}
    )
    assert (
        learner_sees(student, next_minute)
        == instructor_says(cohort, student, next_minute)
        == {"transformer-math": True}
    )


def test_a_completed_workbook_is_never_overdue_and_the_counts_are_the_instructors(
    student: User, other_student: User, teacher: User, solve: Solve
) -> None:
    roofline = list(
        Exercise.objects.filter(workbook__slug="roofline", is_active=True).select_related("current_version")
    )
    cohort = cohort_with(teacher, [student, other_student], [("roofline", DUE), ("transformer-math", DUE)])
    from apps.exercises.tests.answers import correct_payload
    from apps.learning import services as learning_services

    for exercise in roofline:
        learning_services.attempt_create(user=student, exercise=exercise, payload=correct_payload(exercise, student))
    learning_services.attempt_create(
        user=other_student, exercise=roofline[0], payload=correct_payload(roofline[0], other_student)
    )
    later = datetime.fromisoformat("2026-07-01T12:00:00+00:00")
    for user in (student, other_student):
        assert learner_sees(user, later) == instructor_says(cohort, user, later)
        _, rows = selectors.cohort_progress(cohort=cohort, at=later)
        cells = {c.slug: (c.solved, c.total) for c in next(r for r in rows if r.user_id == user.pk).cells}
        assert {d.slug: (d.cell.solved, d.cell.total) for d in selectors.learner_due(user=user, at=later)} == cells
    (done,) = [d for d in selectors.learner_due(user=student, at=later) if d.slug == "roofline"]
    assert done.complete and not done.overdue and done.days_left == -30
    assert learner_sees(student, later) == {"roofline": False, "transformer-math": True}
    assert learner_sees(other_student, later) == {"roofline": True, "transformer-math": True}


def test_only_dated_assignments_of_the_learners_own_cohorts(
    student: User, other_student: User, teacher: User, make_user: Callable[..., User]
) -> None:
    cohort_with(teacher, [student], [("transformer-math", DUE), ("roofline", None)], name="Mine")
    cohort_with(teacher, [other_student], [("scaling-book", DUE)], name="Theirs")
    at = datetime.fromisoformat("2026-05-30T12:00:00+00:00")
    assert [(d.slug, d.cohort_name) for d in selectors.learner_due(user=student, at=at)] == [
        ("transformer-math", "Mine")
    ]
    assert selectors.learner_due(user=teacher, at=at) == []  # teaching is not being assigned
    assert selectors.learner_due(user=make_user(), at=at) == []
    # The same workbook due in two cohorts: both dates, soonest first.
    cohort_with(teacher, [student], [("transformer-math", date(2026, 5, 20))], name="Also mine")
    assert [(d.cohort_name, d.overdue) for d in selectors.learner_due(user=student, at=at)] == [
        ("Also mine", True),
        ("Mine", False),
    ]


def get(user: User, path: str) -> str:
    client = Client()
    client.force_login(user)
    response = client.get(path)
    assert response.status_code == 200
    return response.content.decode()


def test_home_workbook_and_cohort_pages_say_due_and_overdue(
    student: User, teacher: User, clock: Clock, solve: Solve
) -> None:
    clock.set("2026-06-03T09:00:00+00:00")
    cohort_with(teacher, [student], [("transformer-math", DUE), ("scaling-book", date(2026, 6, 4)), ("roofline", None)])
    home = get(student, "/")
    assert '<h2 id="due-h">Due dates</h2>' in home
    assert (
        '<strong class="badge overdue">Overdue</strong> was due\n<time datetime="2026-06-01">Mon 1 Jun 2026</time>'
        in home
    )
    assert 'Due\n<time datetime="2026-06-04">Thu 4 Jun 2026</time> (tomorrow)' in home
    assert home.count("end of day UTC") == 2
    workbook = get(student, "/w/transformer-math/")
    assert '<ul class="due-list" aria-label="Due dates">' in workbook and "Overdue" in workbook
    assert "assigned in Class" in workbook
    assert "Overdue" not in get(student, "/w/scaling-book/")
    assert "due-list" not in get(student, "/w/roofline/")
    cohorts = get(student, "/cohorts/")
    assert cohorts.count("Overdue</strong>") == 1 and "(tomorrow)" in cohorts
    # The instructor's own cohort page shows the dates, not a standing of their own.
    teaching = get(teacher, "/cohorts/")
    assert "due Mon 1 Jun 2026" in teaching and "Overdue" not in teaching
    assert "due-h" not in get(teacher, "/")


@pytest.mark.parametrize("path", ["/", "/w/transformer-math/", "/cohorts/"])
def test_due_dates_cost_the_same_queries_for_one_cohort_or_many(
    path: str, teacher: User, make_user: Callable[..., User], clock: Clock, solve: Solve
) -> None:
    clock.set("2026-06-03T09:00:00+00:00")
    few, many = make_user(), make_user()
    cohort_with(teacher, [few], [("transformer-math", DUE)], name="One")
    slugs = ["transformer-math", "roofline", "scaling-book", "lm-from-scratch"]
    for i in range(3):
        cohort_with(teacher, [many], [(s, date(2026, 6, 1 + i + k)) for k, s in enumerate(slugs)], name=f"C{i}")
    for i in range(4):
        solve(many, i)

    def count(user: User) -> tuple[int, str]:
        client = Client()
        client.force_login(user)
        client.get(path)  # warm the per-process caches
        with CaptureQueriesContext(connection) as queries:
            page = client.get(path).content.decode()
        return len(queries), page

    n_few, _ = count(few)
    n_many, page = count(many)
    assert n_many == n_few
    # The many are really on the page: four workbooks due in each of three cohorts.
    assert page.count('class="due-state') == (3 if path.startswith("/w/") else 12)


def test_the_cohort_api_says_overdue_to_members_only(
    student: User, api: APIClient, teacher: User, clock: Clock, solve: Solve
) -> None:
    clock.set("2026-06-03T09:00:00+00:00")
    cohort = cohort_with(
        teacher, [student], [("transformer-math", DUE), ("scaling-book", date(2026, 6, 9)), ("roofline", None)]
    )
    workbooks = api.get(f"/api/v1/cohorts/{cohort.pk}/").json()["workbooks"]
    assert [(w["workbook"], w["due_on"], w["overdue"]) for w in workbooks] == [  # in workbook order
        ("transformer-math", "2026-06-01", True),
        ("scaling-book", "2026-06-09", False),
        ("roofline", None, None),
    ]
    assert api.get("/api/v1/cohorts/").json()[0]["workbooks"] == workbooks
    teacher_api = APIClient()
    teacher_api.force_authenticate(teacher)
    assert [w["overdue"] for w in teacher_api.get(f"/api/v1/cohorts/{cohort.pk}/").json()["workbooks"]] == [None] * 3
    schema = api.get("/api/schema/?format=json").json()["components"]["schemas"]["AssignmentOut"]
    assert schema["properties"]["overdue"]["type"] == "boolean" and schema["properties"]["overdue"]["nullable"]
    assert "overdue" in schema["required"]
