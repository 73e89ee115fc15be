"""The instructor's cohort overview: who is at risk and why, where the cohort is stuck, sorting,
the API resource and CSV files, and a query count that does not grow with the cohort."""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Callable
from datetime import date
from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

from apps.accounts.models import Role, User
from apps.exercises.models import Exercise, Workbook
from apps.exercises.tests.answers import correct_payload
from apps.learning import services as learning_services
from apps.progress import selectors, services
from apps.progress.models import Cohort
from apps.progress.tests.conftest import Clock, Solve, gradable

pytestmark = pytest.mark.django_db


class World:
    def __init__(self, cohort: Cohort, users: dict[str, User], exercises: list[Exercise]) -> None:
        self.cohort, self.users, self.exercises = cohort, users, exercises

    def overview(self, **kwargs: Any) -> selectors.CohortOverview:
        return selectors.cohort_overview(cohort=self.cohort, **kwargs)

    def row(self, overview: selectors.CohortOverview, name: str) -> selectors.OverviewRow:
        return next(r for r in overview.rows if r.username == name)


@pytest.fixture
def world(make_user: Callable[..., User], clock: Clock, solve: Solve) -> World:
    """Due 2026-06-11 (UTC), everyone joined 2026-06-01. On 06-05: alice solves a quarter of the
    workbook and more (one after a miss, half an hour later), bob solves one and misses another,
    dave misses one twice and reveals it, carol does nothing."""
    clock.set("2026-06-01T09:00:00+00:00")
    teacher = make_user("teacher", role=Role.INSTRUCTOR)
    workbook = Workbook.objects.get(slug="transformer-math")
    cohort = services.cohort_create(
        instructor=teacher, name="Pace class", time_zone="UTC", workbooks=[(workbook, date(2026, 6, 11))]
    )
    users = {name: make_user(name) for name in ("alice", "bob", "carol", "dave")}
    for user in users.values():
        services.cohort_join(user=user, code=cohort.join_code)
    exercises = gradable()
    total = Exercise.objects.filter(workbook=workbook, is_active=True).count()
    clock.set("2026-06-05T10:00:00+00:00")
    solve(users["alice"], exercises[0], correct=False)
    clock.set("2026-06-05T10:30:00+00:00")
    solve(users["alice"], exercises[0])
    for exercise in exercises[1 : math.ceil(total * 0.25) + 1]:
        solve(users["alice"], exercise)
    solve(users["bob"], exercises[0])
    solve(users["bob"], exercises[1], correct=False)
    solve(users["dave"], exercises[2], correct=False)
    solve(users["dave"], exercises[2], correct=False)
    learning_services.exercise_reveal(user=users["dave"], exercise=exercises[2])
    return World(cohort, users, exercises)


def codes(row: selectors.OverviewRow) -> list[str]:
    return [r.code for r in row.risks]


def test_at_risk_says_why_behind_pace_idle_and_overdue(world: World, clock: Clock) -> None:
    # 06-06: five of eleven days gone (45%): under half that pace is behind.
    clock.set("2026-06-06T12:00:00+00:00")
    overview = world.overview()
    assert codes(world.row(overview, "alice")) == []
    assert codes(world.row(overview, "bob")) == ["behind"]
    assert "45% of the time gone" in world.row(overview, "bob").risks[0].detail
    assert codes(world.row(overview, "carol")) == ["behind"]  # joined 5 days ago: not idle at 7
    assert world.row(overview, "carol").days_since_solve is None
    assert world.row(overview, "bob").days_since_solve == 1
    # Idle after 3 days: carol (never solved since joining 5 days ago), not bob (solved yesterday).
    idle = world.overview(idle_days=3)
    assert codes(world.row(idle, "carol")) == ["idle", "behind"]
    assert world.row(idle, "carol").risks[0].detail == "no solve since joining 5 days ago"
    assert codes(world.row(idle, "bob")) == ["behind"]
    # The default order: most reasons first, then the least mastery; alice last.
    assert [r.username for r in idle.rows] == ["carol", "dave", "bob", "alice"]
    assert selectors.risk_counts(idle) == {
        "learners": 4, "at_risk": 3, "idle": 2, "behind": 3, "overdue": 0,
    }  # fmt: skip
    # 06-12: past the due day; everyone incomplete is overdue (not also behind); a week since a solve.
    clock.set("2026-06-12T08:00:00+00:00")
    late = world.overview()
    assert codes(world.row(late, "alice")) == ["idle", "overdue"]
    assert world.row(late, "alice").risks[0].detail == "no solve for 7 days"
    assert all("overdue" in codes(r) and "behind" not in codes(r) for r in late.rows)


def test_stuck_points_count_reveals_stuck_learners_attempts_and_time(world: World, clock: Clock) -> None:
    clock.set("2026-06-06T12:00:00+00:00")
    points = {p.number: p for p in world.overview(stuck_limit=None).stuck_points}
    first, second, third = (points[e.number] for e in world.exercises[:3])
    # alice: a miss then a solve half an hour later; bob: solved first time.
    assert (first.learners, first.solved, first.attempts, first.median_attempts_to_solve) == (2, 2, 3, 1.5)
    assert first.median_minutes_to_solve == 15.0  # 30 min (alice) and 0 (bob)
    # bob missed it and stopped: stuck; alice solved it.
    assert (second.solved, second.stuck, second.revealed) == (1, 1, 0)
    # dave missed twice and revealed: revealed, not stuck, and not in the attempts to solve (alice's 1).
    assert (third.learners, third.solved, third.revealed, third.stuck, third.median_attempts_to_solve) == (
        2, 1, 1, 0, 1.0,
    )  # fmt: skip
    by_revealed = world.overview(stuck_sort="revealed").stuck_points
    assert by_revealed[0].number == third.number
    by_attempts = world.overview(stuck_sort="attempts_to_solve").stuck_points
    assert by_attempts[0].number == first.number  # 1.5; every other exercise 1
    by_time = world.overview(stuck_sort="time_to_solve").stuck_points
    assert by_time[0].number == first.number and by_time[0].time_to_solve == "15 min"
    assert len(world.overview(stuck_limit=2).stuck_points) == 2


def test_sorting(world: World, clock: Clock) -> None:
    clock.set("2026-06-06T12:00:00+00:00")
    assert [r.username for r in world.overview(sort="learner").rows] == ["alice", "bob", "carol", "dave"]
    assert [r.username for r in world.overview(sort="learner", descending=True).rows] == [
        "dave", "carol", "bob", "alice",
    ]  # fmt: skip
    by_mastery = [r.username for r in world.overview(sort="mastery", descending=True).rows]
    assert by_mastery[:2] == ["alice", "bob"]
    assert world.overview(sort="workbook:transformer-math", descending=True).rows[0].username == "alice"
    # Longest without a solve first, never solved before all.
    assert [r.username for r in world.overview(sort="last_solve").rows][-2:] in (["alice", "bob"], ["bob", "alice"])


def test_the_api_resource_and_csv_files(world: World, clock: Clock) -> None:
    clock.set("2026-06-06T12:00:00+00:00")
    api = APIClient()
    api.force_authenticate(world.cohort.instructor)
    body = api.get(f"/api/v1/cohorts/{world.cohort.pk}/overview/?idle_days=3&stuck_limit=3").json()
    assert body["summary"] == {"learners": 4, "at_risk": 3, "idle": 2, "behind": 3, "overdue": 0}
    carol = next(r for r in body["learners"] if r["username"] == "carol")
    assert carol["at_risk"] is True and [r["code"] for r in carol["risks"]] == ["idle", "behind"]
    assert carol["risks"][1]["workbook"] == "transformer-math" and carol["days_since_solve"] is None
    alice = next(r for r in body["learners"] if r["username"] == "alice")
    assert alice["mastery"] == pytest.approx(alice["solved"] / alice["total"]) and alice["risks"] == []
    assert alice["workbooks"][0]["workbook"] == "transformer-math" and alice["last_solve_day"] == "2026-06-05"
    assert len(body["stuck_points"]) == 3 and set(body["stuck_points"][0]) >= {
        "revealed", "stuck", "median_attempts_to_solve", "median_minutes_to_solve",
    }  # fmt: skip
    ordered = api.get(f"/api/v1/cohorts/{world.cohort.pk}/overview/?sort=learner&desc=true").json()
    assert [r["username"] for r in ordered["learners"]] == ["dave", "carol", "bob", "alice"]
    bad = api.get(f"/api/v1/cohorts/{world.cohort.pk}/overview/?sort=bogus&idle_days=0")
    assert bad.status_code == 400 and set(bad.json()) == {"error"}
    blank = api.get(f"/api/v1/cohorts/{world.cohort.pk}/overview.csv?sort=mastery&idle_days=")
    assert blank.status_code == 400 and "idle_days" in blank.content.decode()  # an integer, as the schema says

    learners_csv = api.get(f"/api/v1/cohorts/{world.cohort.pk}/overview.csv?idle_days=3")
    assert learners_csv["Content-Type"].startswith("text/csv")
    table = list(csv.reader(io.StringIO(learners_csv.content.decode())))
    assert table[0][-2:] == ["at risk", "risks"]
    by_name = {r[0]: r for r in table[1:]}
    assert by_name["carol"][-2] == "yes" and "no solve since joining 5 days ago" in by_name["carol"][-1]
    assert by_name["alice"][-2:] == ["no", ""]
    stuck_csv = api.get(f"/api/v1/cohorts/{world.cohort.pk}/stuck-points.csv?stuck_sort=revealed")
    stuck = list(csv.reader(io.StringIO(stuck_csv.content.decode())))
    engaged = len(world.overview(stuck_limit=None).stuck_points)  # alice's solves, more than the page's 10
    assert stuck[0][:3] == ["workbook", "exercise", "title"] and len(stuck) == 1 + engaged > 11
    assert stuck[1][1] == world.exercises[2].number and stuck[1][6] == "1"


def test_the_admin_page_sorts_filters_and_downloads(world: World, clock: Clock) -> None:
    clock.set("2026-06-06T12:00:00+00:00")
    client = Client()
    client.force_login(world.cohort.instructor)
    url = f"/admin/progress/cohort/{world.cohort.pk}/progress/"
    page = client.get(url + "?idle_days=3").content.decode()
    assert 'id="risk-summary"' in page and "3 at risk" in page and "no solve since joining 5 days ago" in page
    assert 'id="stuck-table"' in page and world.exercises[2].title in page
    assert "sort=mastery" in page and "stuck_sort=revealed" in page  # sortable headings
    only = client.get(url + "?idle_days=3&at_risk=1").content.decode()
    assert 'data-learner="carol"' in only and 'data-learner="alice"' not in only
    # A hand-edited bad value shows the defaults, not an error.
    assert client.get(url + "?sort=%3Cscript%3E&idle_days=-4").status_code == 200
    overview_csv = client.get(url + "?format=overview-csv&sort=learner")
    assert [r[0] for r in csv.reader(io.StringIO(overview_csv.content.decode()))][1:] == [
        "alice", "bob", "carol", "dave",
    ]  # fmt: skip
    assert client.get(url + "?format=stuck-csv")["Content-Disposition"].endswith('stuck-points.csv"')


def test_the_query_count_does_not_grow_with_the_cohort(
    world: World, clock: Clock, make_user: Callable[..., User], solve: Solve, django_assert_max_num_queries: Any
) -> None:
    client = Client()
    client.force_login(world.cohort.instructor)
    url = f"/admin/progress/cohort/{world.cohort.pk}/progress/"
    api = APIClient()
    api.force_authenticate(world.cohort.instructor)
    for i in range(12):
        user = make_user(f"extra{i:02d}")
        services.cohort_join(user=user, code=world.cohort.join_code)
        clock.set("2026-06-05T10:00:00+00:00")
        solve(user, world.exercises[i % 5], correct=bool(i % 2))
    clock.set("2026-06-06T12:00:00+00:00")
    with django_assert_max_num_queries(20):
        assert client.get(url).status_code == 200
    with django_assert_max_num_queries(20):
        assert api.get(f"/api/v1/cohorts/{world.cohort.pk}/overview/").status_code == 200


def test_days_since_a_solve_are_counted_in_the_learners_own_days(world: World, clock: Clock) -> None:
    # alice, now in Tokyo, solves at 20:00 there on 06-05; at 20:00 UTC on 06-11 it is already
    # 05:00 on 06-12 in Tokyo: seven of her days without a solve (six in UTC).
    alice = world.users["alice"]
    alice.time_zone = "Asia/Tokyo"
    alice.save(update_fields=["time_zone"])
    clock.set("2026-06-05T11:00:00+00:00")
    last = gradable()[-1]
    learning_services.attempt_create(user=alice, exercise=last, payload=correct_payload(last, alice))
    clock.set("2026-06-11T20:00:00+00:00")
    row = world.row(world.overview(), "alice")
    assert row.learner.last_solve_day == date(2026, 6, 5)
    assert row.days_since_solve == 7 and codes(row)[0] == "idle"
