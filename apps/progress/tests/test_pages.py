"""The progress page's pictures (calendar heatmap, solves per week, chapter bars) and the home
page's "Continue where you left off"."""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from datetime import date, datetime, timedelta
from itertools import pairwise

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from apps.accounts.models import User
from apps.exercises.choices import AnswerFormat, AttemptStatus, Verdict
from apps.exercises.models import Attempt, Exercise, Workbook
from apps.exercises.tests.factories import ChapterFactory, ExerciseFactory, WorkbookFactory
from apps.progress import charts, selectors, services
from apps.progress.models import DailyActivity, ExerciseProgress
from apps.progress.tests.conftest import Clock, Solve

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _one_real_workbook() -> None:
    """These tests reason about Transformer Math plus the workbooks they make themselves: the
    other authored workbooks are unpublished for them (inside the test's rolled-back transaction)."""
    Workbook.objects.exclude(slug="transformer-math").update(is_published=False)


CELL = re.compile(r'<rect [^>]*class="l(\d)( today)?" data-day="([\d-]+)"><title>([^<]*)</title></rect>')


def learner(make_user: Callable[..., User], name: str, tz: str = "UTC") -> User:
    user = make_user(name)
    services.profile_update(user=user, time_zone=tz)
    return user


def page(user: User, path: str = "/progress/") -> str:
    client = Client()
    client.force_login(user)
    response = client.get(path)
    assert response.status_code == 200
    return response.content.decode()


def cells(text: str) -> dict[str, tuple[int, bool, str]]:
    """The heatmap's cells on a rendered page: day -> (level, is today, title)."""
    return {day: (int(lvl), bool(today), html.unescape(title)) for lvl, today, day, title in CELL.findall(text)}


def heatmap_label(text: str) -> str:
    found = re.search(r'<svg viewBox="[^"]*" width="\d+" height="\d+" role="img" aria-label="([^"]*)"', text)
    assert found, "no heatmap on the page"
    return html.unescape(found.group(1))


# ---------------------------------------------------------------------------------------------
# Calendar heatmap
# ---------------------------------------------------------------------------------------------


def test_heatmap_cells_land_on_the_learners_local_day(
    make_user: Callable[..., User], clock: Clock, solve: Solve
) -> None:
    tokyo = learner(make_user, "tokyo", "Asia/Tokyo")
    california = learner(make_user, "california", "America/Los_Angeles")
    # 14:30Z is 23:30 on 1 June in Tokyo and 07:30 on 1 June in California; 15:30Z is already
    # 2 June in Tokyo (00:30) but still 1 June in California (08:30).
    clock.set("2026-06-01T14:30:00+00:00")
    for user in (tokyo, california):
        assert solve(user, 0)
    clock.set("2026-06-01T15:30:00+00:00")
    for user in (tokyo, california):
        assert solve(user, 1)
        assert solve(user, 2)
    clock.set("2026-06-02T16:00:00+00:00")  # 3 June 01:00 in Tokyo, 2 June 09:00 in California

    seen = cells(page(tokyo))
    assert seen["2026-06-01"] == (1, False, "1 solve on Mon 1 Jun 2026")
    assert seen["2026-06-02"] == (2, False, "2 solves on Tue 2 Jun 2026")
    assert seen["2026-06-03"] == (0, True, "No solves on Wed 3 Jun 2026 (today)")
    assert [day for day, (lvl, _, _) in seen.items() if lvl] == ["2026-06-01", "2026-06-02"]

    seen = cells(page(california))
    assert seen["2026-06-01"] == (2, False, "3 solves on Mon 1 Jun 2026")
    assert seen["2026-06-02"] == (0, True, "No solves on Tue 2 Jun 2026 (today)")
    assert "2026-06-03" not in seen  # tomorrow, in California
    assert [day for day, (lvl, _, _) in seen.items() if lvl] == ["2026-06-01"]


def test_levels_are_fixed_buckets_named_by_the_legend() -> None:
    assert [charts.level(n) for n in (0, 1, 2, 3, 4, 6, 7, 40)] == [0, 1, 2, 2, 3, 3, 4, 4]
    assert charts.LEVEL_NAMES == ("No solves", "1 solve", "2–3 solves", "4–6 solves", "7 or more solves")


@pytest.mark.parametrize(
    ("now", "today", "weekday"),
    [
        ("2026-06-03T12:00:00+00:00", date(2026, 6, 3), 2),  # a Wednesday: a partial last week
        ("2026-06-07T12:00:00+00:00", date(2026, 6, 7), 6),  # a Sunday: the last week is full
        ("2026-06-08T00:30:00+00:00", date(2026, 6, 8), 0),  # a Monday just after midnight
    ],
)
def test_weeks_are_columns_from_monday_and_today_is_in_the_last(
    make_user: Callable[..., User], clock: Clock, now: str, today: date, weekday: int
) -> None:
    user = learner(make_user, "weeks")
    clock.set(now)
    activity = selectors.activity_get(user=user)
    assert activity.today == today
    heat = charts.heatmap(activity, current_streak=0, best_streak=0)

    assert heat.weeks == 53
    first, last = heat.cells[0], heat.cells[-1]
    assert first.day.weekday() == 0 and first.day == today - timedelta(weeks=52, days=weekday)
    assert last.day == today and last.today and sum(c.today for c in heat.cells) == 1
    assert len(heat.cells) == 52 * 7 + weekday + 1  # no future days drawn
    by_column: dict[int, list[date]] = {}
    for c in heat.cells:
        by_column.setdefault(c.x, []).append(c.day)
        assert c.y == charts.TOP + c.day.weekday() * charts.STEP  # Monday on top
    columns = sorted(by_column)
    assert len(columns) == 53 and last.x == columns[-1]
    for x in columns:
        days = by_column[x]
        assert days[0].weekday() == 0 and days == [days[0] + timedelta(n) for n in range(len(days))]
    assert [w.text for w in heat.weekdays] == ["Mon", "Wed", "Fri"]
    assert heat.width == charts.LEFT + 53 * charts.STEP - 2 + charts.RIGHT
    # Month names sit over the first week whose Monday falls in the month, in calendar order.
    for label in heat.months:
        monday = first.day + timedelta(weeks=(label.x - charts.LEFT) // charts.STEP)
        assert label.text == charts.MONTHS[monday.month - 1]
        assert monday.day <= 7 or label is heat.months[0]
    months = [charts.MONTHS.index(m.text) for m in heat.months]
    assert 12 <= len(months) <= 13 and all((b - a) % 12 == 1 for a, b in pairwise(months))

    # The page draws the same: the first cell a Monday 52 weeks back, the last today's, outlined.
    drawn = list(cells(page(user)).items())
    assert len(drawn) == len(heat.cells)
    assert drawn[0][0] == first.day.isoformat()
    assert drawn[-1][0] == today.isoformat() and drawn[-1][1][1] is True


def test_summary_counts_solves_days_and_streak(make_user: Callable[..., User], clock: Clock, solve: Solve) -> None:
    user = learner(make_user, "counted", "Europe/Paris")
    assert heatmap_label(page(user)) == "No solves in the last year; current streak 0 days, best 0"

    clock.set("2025-05-20T10:00:00+00:00")  # more than 53 weeks before: not on the calendar
    solve(user, 0)
    clock.set("2026-06-01T10:00:00+00:00")
    solve(user, 1)
    solve(user, 2)
    clock.set("2026-06-03T10:00:00+00:00")
    solve(user, 3)
    clock.set("2026-06-04T21:30:00+00:00")  # 23:30 in Paris
    solve(user, 4)
    text = page(user)
    assert heatmap_label(text) == "4 solves on 3 days in the last year; current streak 2 days, best 2"
    table = re.search(r"Active days as a table \((\d+)\)</summary>(.*?)</table>", text, re.S)
    assert table is not None and table.group(1) == "3"
    days = re.findall(r'<time datetime="([\d-]+)">([^<]+)</time></th><td>(\d+)</td>', table.group(2))
    assert days == [
        ("2026-06-04", "Thu 4 Jun 2026", "1"),
        ("2026-06-03", "Wed 3 Jun 2026", "1"),
        ("2026-06-01", "Mon 1 Jun 2026", "2"),
    ]
    assert "current streak 2 days" in heatmap_label(text)
    assert re.search(
        r'<strong><svg class="flame" aria-hidden="true"[^>]*>.*?</svg> 2 days</strong> current streak', text
    )


def test_weekly_chart_sums_monday_to_sunday_weeks(make_user: Callable[..., User], clock: Clock) -> None:
    user = learner(make_user, "weekly")
    today = date(2026, 6, 3)  # a Wednesday
    DailyActivity.objects.bulk_create(
        [
            DailyActivity(user=user, day=day, solves=n, points=10 * n)
            for day, n in (
                (date(2026, 6, 1), 2),  # this week
                (date(2026, 5, 31), 3),  # a Sunday: last week
                (date(2026, 5, 25), 1),  # a Monday: last week
                (date(2026, 3, 16), 4),  # a Monday 11 weeks back: the first column
                (date(2026, 3, 15), 9),  # the Sunday before: off the chart
            )
        ]
    )
    clock.set("2026-06-03T12:00:00+00:00")
    chart = charts.weekly(selectors.activity_get(user=user))
    assert chart.columns[0].monday == date(2026, 3, 16) == today - timedelta(weeks=11, days=2)
    assert [c.solves for c in chart.columns] == [4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 2]
    assert [c.current for c in chart.columns] == [False] * 11 + [True]
    assert chart.summary == (
        "Solves per week over the last 12 weeks: 10 in all; the most, 4, in the week of 25 May; "
        "2 solves so far this week"
    )
    tallest, zero = chart.columns[0], chart.columns[1]
    assert tallest.height == charts.PLOT_HEIGHT and zero.height == 1.0  # a zero week is a stub, not a gap
    text = page(user)
    assert f'aria-label="{chart.summary}"' in text
    assert re.findall(r'<text class="value"[^>]*>(\d+)</text>', text) == ["4"] + ["0"] * 9 + ["4", "2"]


# ---------------------------------------------------------------------------------------------
# The page as a whole: workbooks, chapter bars, and a constant number of queries
# ---------------------------------------------------------------------------------------------


def second_workbook() -> list[Exercise]:
    """A small published workbook after transformer-math: 2 chapters of 3 exercises."""
    book = WorkbookFactory.create(slug="second-book", title="Second <Book>", position=99)
    return [
        ExerciseFactory.create(chapter=chapter, number=f"{chapter.number}.{position}", position=position)
        for chapter in (ChapterFactory.create(workbook=book, number=n, title=f"Part {n}") for n in (1, 2))
        for position in (1, 2, 3)
    ]


def progress_rows(user: User, exercises: list[Exercise], at: datetime) -> None:
    ExerciseProgress.objects.bulk_create(
        [
            ExerciseProgress(user=user, exercise=e, workbook_id=e.workbook_id, attempts=1, solved_at=at)
            for e in exercises
        ]
    )


def test_progress_page_draws_every_workbook_with_a_constant_number_of_queries(
    make_user: Callable[..., User], clock: Clock, solve: Solve
) -> None:
    def measured(user: User) -> tuple[int, str]:
        client = Client()
        client.force_login(user)
        with CaptureQueriesContext(connection) as queries:
            response = client.get("/progress/")
        assert response.status_code == 200
        return len(queries), response.content.decode()

    idle = learner(make_user, "idle", "Asia/Tokyo")
    one_workbook, _ = measured(idle)
    extra = second_workbook()
    busy = learner(make_user, "busy", "Asia/Tokyo")
    for i, day in enumerate(("2026-05-01", "2026-05-02", "2026-05-20", "2026-06-01")):
        clock.set(f"{day}T03:00:00+00:00")
        solve(busy, 2 * i)
        solve(busy, 2 * i + 1)
    progress_rows(busy, extra[:4], clock.at)  # chapter 1 complete, chapter 2 a third done
    DailyActivity.objects.bulk_create(
        [
            DailyActivity(user=busy, day=date(2025, 7, 1) + timedelta(days=3 * n), solves=n % 9, points=n)
            for n in range(90)
        ]
    )

    idle_queries, idle_page = measured(idle)
    busy_queries, busy_page = measured(busy)
    # Neither more content nor more activity costs a query (6 today: session, user, streak,
    # activity, and mastery's two).
    assert busy_queries == idle_queries == one_workbook <= 8
    for text in (idle_page, busy_page):
        assert text.count('role="img"') == 2  # the heatmap and the weekly chart
        assert "Transformer Math" in text and "Second &lt;Book&gt;" in text
        assert "Second <Book>" not in text
    # Bars carry their numbers as text.
    rows = re.findall(
        r'<span class="bar-label">(\d\. Part \d)</span>.*?<span class="bar-value">(\d+) / (\d+)', busy_page, re.S
    )
    assert rows == [("1. Part 1", "3", "3"), ("2. Part 2", "1", "3")]
    assert re.search(r'<li class="complete">\s*<span class="bar-label">1\. Part 1', busy_page)
    # The workbook reset form and the kinds stay.
    assert busy_page.count("Start this workbook over") == 2
    assert "By kind: derive 4/6" in busy_page


# ---------------------------------------------------------------------------------------------
# continue_point
# ---------------------------------------------------------------------------------------------


def ordered(slug: str = "transformer-math") -> list[Exercise]:
    """Exercises in the order the workbook page lists them."""
    return list(Exercise.objects.filter(workbook__slug=slug, is_active=True).order_by("chapter__number", "position"))


def attempt(user: User, exercise: Exercise, *, correct: bool, status: str = AttemptStatus.GRADED) -> Attempt:
    """An attempt as grading would leave it (rows written directly: any exercise, code ones too)."""
    graded = status == AttemptStatus.GRADED
    verdict = (Verdict.CORRECT if correct else Verdict.INCORRECT) if graded else ""
    assert exercise.current_version is not None
    made = Attempt.objects.create(
        user=user, exercise=exercise, version=exercise.current_version, status=status, raw={}, verdict=verdict
    )
    if graded and correct:
        ExerciseProgress.objects.update_or_create(
            user=user, exercise=exercise, defaults={"workbook_id": exercise.workbook_id, "solved_at": made.created_at}
        )
    return made


def later(clock: Clock, minutes: int = 1) -> None:
    clock.at += timedelta(minutes=minutes)


def point(user: User, queries: int = 3) -> Exercise | None:
    """continue_point, in at most ``queries`` queries."""
    with CaptureQueriesContext(connection) as captured:
        found = selectors.continue_point(user=user)
    assert len(captured) <= queries
    return found


def test_a_learner_without_attempts_starts_at_the_first_exercise_of_the_first_workbook(
    make_user: Callable[..., User],
) -> None:
    second_workbook()
    user = learner(make_user, "fresh")
    found = point(user, queries=2)
    assert found == ordered()[0]
    assert found is not None and found.workbook.slug == "transformer-math" and found.resumed is False  # type: ignore[attr-defined]


def test_an_unsolved_latest_exercise_is_where_to_continue(make_user: Callable[..., User], clock: Clock) -> None:
    user = learner(make_user, "trying")
    exercises = ordered()
    attempt(user, exercises[0], correct=True)
    later(clock)
    attempt(user, exercises[7], correct=False)
    later(clock)
    attempt(user, exercises[3], correct=True, status=AttemptStatus.QUEUED)  # not graded yet: ignored
    found = point(user)
    assert found == exercises[7] and found is not None and found.resumed is True  # type: ignore[attr-defined]


def test_after_a_solve_the_next_unsolved_in_the_same_workbook(make_user: Callable[..., User], clock: Clock) -> None:
    second_workbook()
    user = learner(make_user, "onward")
    exercises = ordered()
    for i in (6, 5, 8, 9, 4):  # the latest solve is exercises[4]; 5 and 6 are already solved
        attempt(user, exercises[i], correct=True)
        later(clock)
    assert point(user) == exercises[7]
    # Also across a chapter boundary, in chapter-then-position order.
    boundary = next(i for i in range(len(exercises) - 1) if exercises[i].chapter_id != exercises[i + 1].chapter_id)
    attempt(user, exercises[boundary], correct=True)
    expected = next(
        e for e in exercises[boundary + 1 :] if not ExerciseProgress.objects.filter(user=user, exercise=e).exists()
    )
    assert point(user) == expected
    assert expected.chapter.number > exercises[boundary].chapter.number


def test_at_the_end_of_a_workbook_the_first_unsolved_of_any(make_user: Callable[..., User], clock: Clock) -> None:
    extra = second_workbook()
    user = learner(make_user, "ender")
    exercises = ordered()
    attempt(user, exercises[0], correct=True)
    later(clock)
    attempt(user, exercises[-1], correct=True)  # the last of transformer-math: wrap to its first unsolved
    assert point(user) == exercises[1]

    progress_rows(
        user, [e for e in exercises if not ExerciseProgress.objects.filter(user=user, exercise=e).exists()], clock.at
    )
    later(clock)
    attempt(user, extra[-1], correct=True)  # the last of the second workbook; transformer-math done
    assert point(user) == extra[0]


def test_a_retired_latest_exercise_still_marks_the_place(make_user: Callable[..., User], clock: Clock) -> None:
    user = learner(make_user, "retired")
    exercises = ordered()
    attempt(user, exercises[10], correct=False)
    Exercise.objects.filter(pk=exercises[10].pk).update(is_active=False)
    assert point(user) == exercises[11]


def test_nothing_to_continue_once_everything_is_solved(make_user: Callable[..., User], clock: Clock) -> None:
    extra = second_workbook()
    ExerciseFactory.create(chapter__workbook=WorkbookFactory.create(is_published=False), title="Unpublished")
    user = learner(make_user, "finisher")
    progress_rows(user, [*ordered(), *extra], clock.at)
    later(clock)
    attempt(user, extra[2], correct=True)
    assert point(user) is None
    assert "You have solved every exercise" in page(user, "/")


# ---------------------------------------------------------------------------------------------
# Home page
# ---------------------------------------------------------------------------------------------


def test_home_page_shows_where_to_continue(make_user: Callable[..., User], clock: Clock, solve: Solve) -> None:
    user = learner(make_user, "homer")
    exercises = ordered()
    text = page(user, "/")
    first = exercises[0]
    link = reverse("web:exercise", args=["transformer-math", first.number])
    assert f'<a class="button primary" href="{link}">Start here: {first.number} {html.escape(first.title)}' in text

    target = next(e for e in exercises if e.format == AnswerFormat.NUMERIC and e.chapter.number == 3)
    solve(user, target, correct=False)
    text = page(user, "/")
    link = reverse("web:exercise", args=["transformer-math", target.number])
    expected = f'Continue: {target.number} {html.escape(target.title)} <span class="where">(Transformer Math)</span>'
    assert f'<a class="button primary" href="{link}">{expected}</a>' in text
    # Above the workbook cards, which keep their mastery bars.
    assert text.index("Continue where you left off") < text.index('<ul class="cards">')
    assert re.search(r'<progress max="\d+" value="0" aria-label="Solved"></progress>', text)


def test_anonymous_home_page_has_workbooks_and_no_continue_card() -> None:
    response = Client().get("/")
    assert response.status_code == 200
    text = response.content.decode()
    assert "Transformer Math" in text and "Mastery 0 / " in text
    assert 'class="continue' not in text and "Start here" not in text
