"""Day streaks: a day counts when the learner solves something, in the learner's time zone."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime

import pytest

from apps.accounts.models import Role, User
from apps.progress import selectors, services
from apps.progress.models import DailyActivity, LearnerStats
from apps.progress.tests.conftest import Clock, Solve

pytestmark = pytest.mark.django_db


def streak(user: User, at: str) -> tuple[int, int]:
    s = selectors.streak_get(user=user, at=datetime.fromisoformat(at))
    return s.current, s.best


def learner(make_user: Callable[..., User], name: str, tz: str = "") -> User:
    user = make_user(name)
    if tz:
        services.profile_update(user=user, time_zone=tz)
    return user


def test_consecutive_days_build_a_streak_and_a_gap_breaks_it(
    make_user: Callable[..., User], clock: Clock, solve: Solve
) -> None:
    user = learner(make_user, "daily", "Europe/Paris")
    clock.set("2026-06-01T08:00:00+00:00")
    assert solve(user, 0)
    clock.set("2026-06-01T20:00:00+00:00")
    assert solve(user, 1)  # the same day: still 1
    assert streak(user, "2026-06-01T21:00:00+00:00") == (1, 1)
    clock.set("2026-06-02T09:00:00+00:00")
    solve(user, 2)
    clock.set("2026-06-03T09:00:00+00:00")
    solve(user, 3)
    assert streak(user, "2026-06-03T10:00:00+00:00") == (3, 3)
    # Tomorrow the streak is still alive (today not done yet); the day after, it is broken.
    assert streak(user, "2026-06-04T21:00:00+00:00") == (3, 3)
    assert streak(user, "2026-06-05T00:30:00+00:00") == (0, 3)
    clock.set("2026-06-06T09:00:00+00:00")
    solve(user, 4)
    assert streak(user, "2026-06-06T10:00:00+00:00") == (1, 3)
    activity = dict(DailyActivity.objects.filter(user=user).values_list("day", "solves"))
    assert activity == {date(2026, 6, 1): 2, date(2026, 6, 2): 1, date(2026, 6, 3): 1, date(2026, 6, 6): 1}


def test_wrong_answers_and_repeat_solves_do_not_count_a_day(
    make_user: Callable[..., User], clock: Clock, solve: Solve
) -> None:
    user = learner(make_user, "tries", "UTC")
    clock.set("2026-06-01T10:00:00+00:00")
    solve(user, 0)
    clock.set("2026-06-02T10:00:00+00:00")
    assert not solve(user, 1, correct=False)
    assert not solve(user, 0)  # already solved: correct again, but not a new solve
    assert streak(user, "2026-06-02T11:00:00+00:00") == (1, 1)
    assert not selectors.streak_get(user=user, at=clock.at).solved_today
    assert LearnerStats.objects.get(pk=user.pk).solves == 1


def test_tokyo_and_california_each_get_their_own_midnight(
    make_user: Callable[..., User], clock: Clock, solve: Solve
) -> None:
    tokyo = learner(make_user, "tokyo", "Asia/Tokyo")
    california = learner(make_user, "california", "America/Los_Angeles")
    # 14:30Z is 23:30 in Tokyo (June 1) and 07:30 in California (June 1);
    # 15:30Z is 00:30 in Tokyo (June 2) and 08:30 in California (still June 1).
    for at, index in (("2026-06-01T14:30:00+00:00", 0), ("2026-06-01T15:30:00+00:00", 1)):
        clock.set(at)
        solve(tokyo, index)
        solve(california, index)
    assert streak(tokyo, "2026-06-01T16:00:00+00:00") == (2, 2)
    assert streak(california, "2026-06-01T16:00:00+00:00") == (1, 1)
    assert LearnerStats.objects.get(pk=tokyo.pk).last_day == date(2026, 6, 2)
    assert LearnerStats.objects.get(pk=california.pk).last_day == date(2026, 6, 1)


def test_spring_forward_23_hour_day(make_user: Callable[..., User], clock: Clock, solve: Solve) -> None:
    """US clocks skip 02:00-03:00 on 2026-03-08: that local day has 23 hours."""
    user = learner(make_user, "spring", "America/Los_Angeles")
    clock.set("2026-03-08T07:30:00+00:00")  # 23:30 PST, March 7
    solve(user, 0)
    clock.set("2026-03-09T06:30:00+00:00")  # 23:30 PDT, March 8: 23 hours later, the next local day
    solve(user, 1)
    assert streak(user, "2026-03-09T06:45:00+00:00") == (2, 2)
    clock.set("2026-03-09T07:10:00+00:00")  # 00:10 PDT, March 9
    solve(user, 2)
    assert streak(user, "2026-03-09T08:00:00+00:00") == (3, 3)


def test_fall_back_25_hour_day(make_user: Callable[..., User], clock: Clock, solve: Solve) -> None:
    """US clocks repeat 01:00-02:00 on 2026-11-01: that local day has 25 hours."""
    user = learner(make_user, "fall", "America/Los_Angeles")
    clock.set("2026-11-01T07:10:00+00:00")  # 00:10 PDT, November 1
    solve(user, 0)
    clock.set("2026-11-02T07:50:00+00:00")  # 23:50 PST, November 1: 25h40m later, the same local day
    solve(user, 1)
    assert streak(user, "2026-11-02T07:55:00+00:00") == (1, 1)
    clock.set("2026-11-02T08:10:00+00:00")  # 00:10 PST, November 2
    solve(user, 2)
    assert streak(user, "2026-11-02T08:15:00+00:00") == (2, 2)
    assert list(DailyActivity.objects.filter(user=user).order_by("day").values_list("day", "solves")) == [
        (date(2026, 11, 1), 2),
        (date(2026, 11, 2), 1),
    ]


def test_moving_west_neither_breaks_nor_double_counts(
    make_user: Callable[..., User], clock: Clock, solve: Solve
) -> None:
    user = learner(make_user, "traveller", "Asia/Tokyo")
    clock.set("2026-06-01T23:00:00+00:00")  # 08:00 June 2 in Tokyo
    solve(user, 0)
    services.profile_update(user=user, time_zone="America/Los_Angeles")
    assert LearnerStats.objects.get(pk=user.pk).time_zone == "America/Los_Angeles"
    clock.set("2026-06-02T00:00:00+00:00")  # 17:00 June 1 in California: an earlier date than the last solve
    solve(user, 1)
    assert streak(user, "2026-06-02T01:00:00+00:00") == (1, 1)
    assert LearnerStats.objects.get(pk=user.pk).last_day == date(2026, 6, 2)
    clock.set("2026-06-03T16:00:00+00:00")  # 09:00 June 3 in California: the day after June 2
    solve(user, 2)
    assert streak(user, "2026-06-03T17:00:00+00:00") == (2, 2)


def test_moving_east_keeps_a_streak_alive(make_user: Callable[..., User], clock: Clock, solve: Solve) -> None:
    user = learner(make_user, "eastward", "America/Los_Angeles")
    clock.set("2026-06-01T18:00:00+00:00")  # 11:00 June 1 in California
    solve(user, 0)
    services.profile_update(user=user, time_zone="Asia/Tokyo")
    clock.set("2026-06-01T20:00:00+00:00")  # 05:00 June 2 in Tokyo: the next day there
    solve(user, 1)
    assert streak(user, "2026-06-01T21:00:00+00:00") == (2, 2)


def test_days_default_to_the_first_cohorts_zone_then_the_sites(
    make_user: Callable[..., User], clock: Clock, solve: Solve
) -> None:
    teacher = make_user("teacher", role=Role.INSTRUCTOR)
    tokyo = services.cohort_create(instructor=teacher, name="Tokyo", time_zone="Asia/Tokyo")
    paris = services.cohort_create(instructor=teacher, name="Paris", time_zone="Europe/Paris")
    user = make_user("nozone")
    assert services.effective_time_zone(user) == "UTC"
    services.cohort_join(user=user, code=tokyo.join_code)
    services.cohort_join(user=user, code=paris.join_code)
    assert services.effective_time_zone(user) == "Asia/Tokyo"
    clock.set("2026-06-01T14:30:00+00:00")  # 23:30 in Tokyo
    solve(user, 0)
    clock.set("2026-06-01T15:30:00+00:00")  # 00:30 in Tokyo, the next day
    solve(user, 1)
    assert streak(user, "2026-06-01T16:00:00+00:00") == (2, 2)
    services.profile_update(user=user, time_zone="Europe/Paris")
    assert selectors.streak_get(user=user, at=clock.at).time_zone == "Europe/Paris"
    services.profile_update(user=user, time_zone="")
    assert selectors.streak_get(user=user, at=clock.at).time_zone == "Asia/Tokyo"


def test_a_streak_read_is_one_primary_key_lookup(make_user: Callable[..., User], clock: Clock, solve: Solve) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    user = learner(make_user, "reader", "UTC")
    solve(user, 0)
    with CaptureQueriesContext(connection) as queries:
        selectors.streak_get(user=user)
    assert len(queries) == 1
    assert '"progress_learnerstats"."user_id" = ' in queries[0]["sql"]


def test_a_bad_time_zone_is_refused_and_changes_nothing(make_user: Callable[..., User]) -> None:
    from apps.core.exceptions import ApplicationError

    user = learner(make_user, "typo", "Asia/Tokyo")
    with pytest.raises(ApplicationError) as info:
        services.profile_update(user=user, time_zone="Asia/Tokio")
    assert info.value.code == "bad_time_zone"
    user.refresh_from_db()
    assert user.time_zone == "Asia/Tokyo"
