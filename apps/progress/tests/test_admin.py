"""Instructor monitoring in the admin: the progress table, exercise statistics, CSV exports."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from datetime import date

import pytest
from django.test import Client

from apps.accounts.models import Role, User
from apps.exercises.models import Workbook
from apps.progress import services
from apps.progress.models import Cohort
from apps.progress.tests.conftest import Clock, Solve, gradable

pytestmark = pytest.mark.django_db


@pytest.fixture
def cohort(make_user: Callable[..., User], clock: Clock, solve: Solve) -> Cohort:
    teacher = make_user("teacher", role=Role.INSTRUCTOR)
    workbook = Workbook.objects.get(slug="transformer-math")
    cohort = services.cohort_create(
        instructor=teacher, name="Evening class", time_zone="Europe/Berlin", workbooks=[(workbook, date(2026, 6, 1))]
    )
    # "-2+3" would run as a formula in a spreadsheet: the export must defuse it.
    for name in ("alice", "-2+3", "idle"):
        services.cohort_join(user=make_user(name), code=cohort.join_code)
    alice, formula = User.objects.get(username="alice"), User.objects.get(username="-2+3")
    clock.set("2026-06-03T10:00:00+00:00")
    for exercise in gradable()[:3]:
        solve(alice, exercise)
    solve(formula, 0, correct=False)
    solve(formula, 0, correct=False)
    return cohort


def instructor_client(cohort: Cohort) -> Client:
    client = Client()
    client.force_login(cohort.instructor)
    return client


def rows(content: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(content.decode())))


def test_progress_table_and_its_csv(cohort: Cohort) -> None:
    client = instructor_client(cohort)
    page = client.get(f"/admin/progress/cohort/{cohort.pk}/progress/").content.decode()
    assert "Evening class" in page and "alice" in page and "3 / " in page and "overdue" in page
    response = client.get(f"/admin/progress/cohort/{cohort.pk}/progress/?format=csv")
    assert response["Content-Type"].startswith("text/csv")
    assert f"cohort-{cohort.pk}-progress.csv" in response["Content-Disposition"]
    table = rows(response.content)
    assert table[0] == [
        "learner", "transformer-math solved", "transformer-math total", "current streak", "best streak",
        "last active (UTC)", "overdue",
    ]  # fmt: skip
    by_name = {r[0]: r for r in table[1:]}
    assert set(by_name) == {"alice", "'-2+3", "idle"}
    total = str(Workbook.objects.get(slug="transformer-math").exercises.filter(is_active=True).count())
    assert by_name["alice"][1:3] == ["3", total]
    assert by_name["alice"][5].startswith("2026-06-03T10:00:00")
    assert by_name["idle"][1:] == ["0", total, "0", "0", "", "transformer-math"]


def test_exercise_statistics_and_their_csv(cohort: Cohort) -> None:
    client = instructor_client(cohort)
    first = gradable()[0]
    page = client.get(f"/admin/progress/cohort/{cohort.pk}/exercises/?workbook=transformer-math").content.decode()
    assert "Median attempts to solve" in page and first.title in page
    table = rows(
        client.get(f"/admin/progress/cohort/{cohort.pk}/exercises/?workbook=transformer-math&format=csv").content
    )
    assert table[0][:4] == ["exercise", "title", "kind", "learners"]
    row = next(r for r in table[1:] if r[0] == first.number)
    # learners, solved, revealed, stuck, solve rate, revealed share, attempts, median attempts and minutes
    assert row[3:12] == ["2", "1", "0", "1", "0.500", "0.000", "3", "1", "0"]
    assert row[12].endswith("×2")  # the same wrong answer, twice


def test_a_learners_attempt_history(cohort: Cohort) -> None:
    client = instructor_client(cohort)
    alice = User.objects.get(username="alice")
    page = client.get(f"/admin/progress/cohort/{cohort.pk}/learners/{alice.pk}/").content.decode()
    table = page.split('id="attempts-table"')[1].split("</table>")[0]
    assert table.count("<tr>") == 1 + 3  # header and three attempts
    assert "Correct" in page


def test_an_instructor_creates_a_cohort_in_the_admin(make_user: Callable[..., User]) -> None:
    teacher = make_user("creator", role=Role.INSTRUCTOR)
    client = Client()
    client.force_login(teacher)
    response = client.post(
        "/admin/progress/cohort/add/",
        {
            "name": "Admin made",
            "time_zone": "Asia/Tokyo",
            "assignments-TOTAL_FORMS": "1",
            "assignments-INITIAL_FORMS": "0",
            "assignments-0-workbook": Workbook.objects.get(slug="transformer-math").pk,
            "assignments-0-due_on": "2027-01-15",
            "memberships-TOTAL_FORMS": "0",
            "memberships-INITIAL_FORMS": "0",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    cohort = Cohort.objects.get(name="Admin made")
    assert cohort.instructor == teacher and cohort.time_zone == "Asia/Tokyo" and len(cohort.join_code) == 8
    assert list(cohort.assignments.values_list("due_on", flat=True)) == [date(2027, 1, 15)]


def test_editing_a_cohort_in_the_admin_moves_its_members_streak_day(cohort: Cohort) -> None:
    from apps.progress.models import LearnerStats

    alice = User.objects.get(username="alice")
    assert LearnerStats.objects.get(pk=alice.pk).time_zone == "Europe/Berlin"
    assignment = cohort.assignments.get()
    response = instructor_client(cohort).post(
        f"/admin/progress/cohort/{cohort.pk}/change/",
        {
            "name": "  Late class ",
            "time_zone": "Asia/Tokyo",
            "assignments-TOTAL_FORMS": "1",
            "assignments-INITIAL_FORMS": "1",
            "assignments-0-id": assignment.pk,
            "assignments-0-cohort": cohort.pk,
            "assignments-0-workbook": assignment.workbook_id,
            "assignments-0-due_on": "2026-06-01",
            "memberships-TOTAL_FORMS": "3",
            "memberships-INITIAL_FORMS": "3",
            **{f"memberships-{i}-id": m.pk for i, m in enumerate(cohort.memberships.order_by("pk"))},
            **{f"memberships-{i}-cohort": cohort.pk for i in range(3)},
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    cohort.refresh_from_db()
    assert (cohort.name, cohort.time_zone, cohort.instructor.username) == ("Late class", "Asia/Tokyo", "teacher")
    assert LearnerStats.objects.get(pk=alice.pk).time_zone == "Asia/Tokyo"


def test_deleting_a_cohort_takes_its_boards_and_keeps_progress(cohort: Cohort) -> None:
    from apps.progress.models import ExerciseProgress, Membership, Score

    alice = User.objects.get(username="alice")
    assert Score.objects.filter(board__startswith=f"cohort:{cohort.pk}:").exists()
    solved = ExerciseProgress.objects.filter(user=alice, solved_at__isnull=False).count()
    response = instructor_client(cohort).post(f"/admin/progress/cohort/{cohort.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert not Cohort.objects.filter(pk=cohort.pk).exists() and not Membership.objects.exists()
    assert not Score.objects.filter(board__startswith=f"cohort:{cohort.pk}:").exists()
    assert Score.objects.filter(user=alice, board="all").exists()
    assert ExerciseProgress.objects.filter(user=alice, solved_at__isnull=False).count() == solved == 3


def test_the_assignments_inline_assigns_moves_and_removes_workbooks(cohort: Cohort) -> None:
    math, roofline, scaling = (Workbook.objects.get(slug=s) for s in ("transformer-math", "roofline", "scaling-book"))
    assignment = cohort.assignments.get()
    client = instructor_client(cohort)
    memberships = {
        "memberships-TOTAL_FORMS": "3",
        "memberships-INITIAL_FORMS": "3",
        **{f"memberships-{i}-id": m.pk for i, m in enumerate(cohort.memberships.order_by("pk"))},
        **{f"memberships-{i}-cohort": cohort.pk for i in range(3)},
    }

    def post(assignments: dict[str, object], initial: int) -> None:
        total = sum(1 for key in assignments if key.endswith("-workbook"))
        response = client.post(
            f"/admin/progress/cohort/{cohort.pk}/change/",
            {
                "name": cohort.name,
                "time_zone": cohort.time_zone,
                "assignments-TOTAL_FORMS": str(total),
                "assignments-INITIAL_FORMS": str(initial),
                **assignments,
                **memberships,
            },
        )
        assert response.status_code == 302, response.content.decode()[:2000]

    # The existing row moves to another workbook (the old one is no longer assigned); a row is added.
    post(
        {
            "assignments-0-id": assignment.pk,
            "assignments-0-cohort": cohort.pk,
            "assignments-0-workbook": roofline.pk,
            "assignments-0-due_on": "2026-07-01",
            "assignments-1-workbook": scaling.pk,
            "assignments-1-due_on": "",
        },
        initial=1,
    )
    assigned = dict(cohort.assignments.values_list("workbook__slug", "due_on"))
    assert assigned == {"roofline": date(2026, 7, 1), "scaling-book": None}
    # One row removed, the other's due date changed.
    rows = {a.workbook_id: a for a in cohort.assignments.all()}
    post(
        {
            **{f"assignments-{i}-id": rows[w.pk].pk for i, w in enumerate((roofline, scaling))},
            **{f"assignments-{i}-cohort": cohort.pk for i in range(2)},
            **{f"assignments-{i}-workbook": w.pk for i, w in enumerate((roofline, scaling))},
            "assignments-0-due_on": "",
            "assignments-0-DELETE": "on",
            "assignments-1-due_on": "2026-08-01",
        },
        initial=2,
    )
    assert dict(cohort.assignments.values_list("workbook__slug", "due_on")) == {"scaling-book": date(2026, 8, 1)}
    assert not cohort.assignments.filter(workbook=math).exists()
