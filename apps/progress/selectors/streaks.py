"""The learner's days: the day streak and the daily activity (the calendar heatmap and the weekly
chart), in the learner's time zone. Both read the rows that grading keeps current."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from django.conf import settings
from django.utils import timezone

from apps.accounts.models import User
from apps.progress.models import DailyActivity, LearnerStats
from apps.progress.services import effective_time_zone


@dataclass(frozen=True)
class Streak:
    current: int
    best: int
    solved_today: bool
    last_day: date | None
    time_zone: str
    solves: int
    points: int


def streak_get(*, user: User, at: datetime | None = None) -> Streak:
    """The learner's day streak: one primary-key lookup. A streak whose last day is before
    yesterday (in the learner's time zone) is broken and reads as 0."""
    row = LearnerStats.objects.filter(pk=user.pk).values_list(
        "current_streak", "best_streak", "last_day", "time_zone", "solves", "points"
    )
    found = row.first()
    if found is None:
        return Streak(0, 0, False, None, user.time_zone or settings.TIME_ZONE, 0, 0)
    current, best, last_day, tz_name, solves, points = found
    today = (at or timezone.now()).astimezone(ZoneInfo(tz_name)).date()
    return Streak(streak_alive(current, last_day, today), best, last_day == today, last_day, tz_name, solves, points)


def streak_alive(current: int, last_day: date | None, today: date) -> int:
    """A streak whose last day is before yesterday is broken: it reads as 0."""
    return current if last_day is not None and last_day >= today - timedelta(days=1) else 0


@dataclass(frozen=True)
class Day:
    solves: int
    points: int


@dataclass(frozen=True)
class Activity:
    """The learner's solves per local day from ``start`` (a Monday) to ``today`` inclusive."""

    time_zone: str
    today: date
    start: date
    days: dict[date, Day]


def activity_get(*, user: User, weeks: int = 53, at: datetime | None = None) -> Activity:
    """The learner's daily activity over the last ``weeks`` weeks (Monday-started, the last one
    holding today), days in the learner's time zone: one query (two for a learner without a time
    zone of their own: then their first cohort's counts)."""
    time_zone = effective_time_zone(user)
    today = (at or timezone.now()).astimezone(ZoneInfo(time_zone)).date()
    start = today - timedelta(days=today.weekday(), weeks=weeks - 1)
    rows = DailyActivity.objects.filter(user=user, day__gte=start, day__lte=today).values_list(
        "day", "solves", "points"
    )
    return Activity(time_zone, today, start, {day: Day(solves, points) for day, solves, points in rows if solves})
