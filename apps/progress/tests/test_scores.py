"""Points, leaderboards, mastery and workbook resets."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from apps.accounts.models import Role, User
from apps.exercises.models import Attempt, Workbook
from apps.learning import services as learning_services
from apps.progress import selectors, services
from apps.progress.models import ExerciseProgress, LearnerStats, Score, ScoreBucket, ScoreSlot
from apps.progress.services import GLOBAL_ALL
from apps.progress.tests.conftest import Clock, Solve, gradable

pytestmark = pytest.mark.django_db


def board(user: User, **kwargs: object) -> list[tuple[int, str, int]]:
    return [(e.rank, e.username, e.points) for e in selectors.leaderboard(user=user, **kwargs).entries]  # type: ignore[arg-type]


def points(user: User) -> int:
    return selectors.streak_get(user=user).points


def test_a_first_solve_earns_points_by_difficulty_once(make_user: Callable[..., User], solve: Solve) -> None:
    user = make_user()
    exercise = gradable()[0]
    assert solve(user, exercise, correct=False) is False
    assert points(user) == 0
    assert solve(user, exercise)
    assert points(user) == 10 * exercise.difficulty
    assert not solve(user, exercise)
    assert points(user) == 10 * exercise.difficulty
    assert ExerciseProgress.objects.get(user=user, exercise=exercise).points == 10 * exercise.difficulty


def test_revealing_first_completes_but_earns_no_points(make_user: Callable[..., User], solve: Solve) -> None:
    user = make_user()
    exercise = gradable()[1]
    learning_services.exercise_reveal(user=user, exercise=exercise)
    assert solve(user, exercise)
    stats = selectors.streak_get(user=user)
    assert (stats.solves, stats.points, stats.current) == (1, 0, 1)  # counts for mastery and the day
    (book,) = selectors.mastery(user=user, workbook=exercise.workbook)
    assert book.tally.solved == 1
    assert not Score.objects.filter(user=user).exists()
    assert board(user) == []


def test_reset_restarts_mastery_and_keeps_attempts_and_points(make_user: Callable[..., User], solve: Solve) -> None:
    user = make_user()
    first, second = gradable()[:2]
    workbook = first.workbook
    solve(user, first)
    solve(user, second, correct=False)
    learning_services.exercise_reveal(user=user, exercise=second)
    earned = points(user)
    attempts = Attempt.objects.filter(user=user).count()
    assert services.workbook_reset(user=user, workbook=workbook) == 2
    (book,) = selectors.mastery(user=user, workbook=workbook)
    assert book.tally.solved == 0
    progress = ExerciseProgress.objects.get(user=user, exercise=second)
    assert not progress.answer_visible  # answers are hidden again
    assert Attempt.objects.filter(user=user).count() == attempts
    # Solving again completes the exercise again, but pays nothing twice: not the first one,
    # nor the one revealed before the reset.
    assert solve(user, first)
    assert solve(user, second)
    assert points(user) == earned
    assert selectors.mastery(user=user, workbook=workbook)[0].tally.solved == 2
    assert ExerciseProgress.objects.get(user=user, exercise=first).attempts_to_solve == 1


def test_mastery_counts_per_workbook_chapter_and_kind(make_user: Callable[..., User], solve: Solve) -> None:
    user = make_user()
    exercises = gradable()[:3]
    for e in exercises:
        solve(user, e)
    books = {m.key: m for m in selectors.mastery(user=user)}
    book = books["transformer-math"]
    assert book.tally.solved == 3
    assert book.tally.total == Workbook.objects.get(slug="transformer-math").exercises.filter(is_active=True).count()
    assert sum(c.tally.total for c in book.chapters) == book.tally.total
    assert sum(t.solved for t in book.by_kind.values()) == 3
    for kind, tally in book.by_kind.items():
        assert tally.solved == sum(1 for e in exercises if e.kind == kind)
    chapter = next(c for c in book.chapters if c.key == str(exercises[0].chapter.number))
    assert chapter.tally.solved == sum(1 for e in exercises if e.chapter_id == exercises[0].chapter_id)


@pytest.fixture
def learners(make_user: Callable[..., User], clock: Clock, solve: Solve) -> dict[str, User]:
    """Five learners; ann 3 solves, bob and cy 2 each (bob first), dee 1, eve none."""
    users = {name: make_user(name) for name in ("ann", "bob", "cy", "dee", "eve")}
    plan = [("bob", 0), ("bob", 1), ("ann", 0), ("cy", 0), ("ann", 1), ("cy", 1), ("ann", 2), ("dee", 0)]
    exercises = gradable()
    for minute, (name, index) in enumerate(plan):
        clock.set(f"2026-06-03T10:{minute:02d}:00+00:00")
        assert solve(users[name], exercises[index])
    return users


def worth(*indices: int) -> int:
    exercises = gradable()
    return sum(10 * exercises[i].difficulty for i in indices)


def test_global_board_ranks_ties_by_who_got_there_first(learners: dict[str, User], clock: Clock) -> None:
    eve = learners["eve"]
    expected = sorted(
        [("ann", worth(0, 1, 2)), ("bob", worth(0, 1)), ("cy", worth(0, 1)), ("dee", worth(0))],
        key=lambda r: -r[1],
    )
    rows = board(eve)
    assert [(name, pts) for _, name, pts in rows] == expected
    assert [r[0] for r in rows] == [1, 2, 3, 4]
    assert [n for _, n, _ in rows].index("bob") < [n for _, n, _ in rows].index("cy")  # bob reached it first
    result = selectors.leaderboard(user=eve)
    assert result.me is None and result.ranked == 4  # no points yet: not ranked


def test_own_rank_is_shown_outside_the_top(learners: dict[str, User]) -> None:
    full = {name: rank for rank, name, _ in board(learners["eve"])}
    for name in ("bob", "cy", "dee"):
        result = selectors.leaderboard(user=learners[name], limit=1)
        assert len(result.entries) == 1
        assert result.me is not None and result.me.rank == full[name] and result.me.me


def test_hidden_learners_leave_the_global_board_but_not_their_cohort(
    learners: dict[str, User], make_user: Callable[..., User]
) -> None:
    ann, bob = learners["ann"], learners["bob"]
    teacher = make_user("teacher", role=Role.INSTRUCTOR)
    cohort = services.cohort_create(instructor=teacher, name="Class", time_zone="UTC")
    services.cohort_join(user=ann, code=cohort.join_code)
    services.cohort_join(user=bob, code=cohort.join_code)
    services.profile_update(user=ann, on_global_board=False)
    names = [n for _, n, _ in board(bob)]
    assert "ann" not in names and names[0] == "bob"
    mine = selectors.leaderboard(user=ann)
    assert mine.me is None and mine.me_hidden
    assert selectors.leaderboard(user=bob).me.rank == 1  # type: ignore[union-attr]
    assert [n for _, n, _ in board(bob, scope="cohort", cohort_id=cohort.pk)] == ["ann", "bob"]
    assert [n for _, n, _ in board(teacher, scope="cohort", cohort_id=cohort.pk)] == ["ann", "bob"]
    assert sum(ScoreBucket.objects.filter(board="all").values_list("learners", flat=True)) == 3
    services.profile_update(user=ann, on_global_board=True)
    assert board(bob)[0][1] == "ann"
    assert sum(ScoreBucket.objects.filter(board="all").values_list("learners", flat=True)) == 4


def test_week_boards_follow_the_sites_and_the_cohorts_time_zones(
    make_user: Callable[..., User], clock: Clock, solve: Solve
) -> None:
    teacher = make_user("teacher", role=Role.INSTRUCTOR)
    tokyo = services.cohort_create(instructor=teacher, name="Tokyo", time_zone="Asia/Tokyo")
    early, late = make_user("early"), make_user("late")
    for user in (early, late):
        services.cohort_join(user=user, code=tokyo.join_code)
    clock.set("2026-11-22T13:00:00+00:00")  # Sunday 22:00 in Tokyo: the week of Nov 16 there and in UTC
    solve(early, 0)
    clock.set("2026-11-22T16:00:00+00:00")  # Monday 01:00 in Tokyo (week of Nov 23); Sunday in UTC
    solve(late, 0)

    def names(user: User, at: str, **kwargs: object) -> list[str]:
        result = selectors.leaderboard(user=user, period="week", at=datetime.fromisoformat(at), **kwargs)  # type: ignore[arg-type]
        return [e.username for e in result.entries]

    # UTC: both solved in the week of Nov 16; from Monday Nov 23 that week is over.
    assert sorted(names(early, "2026-11-22T17:00:00+00:00")) == ["early", "late"]
    assert names(early, "2026-11-23T01:00:00+00:00") == []
    # Tokyo: "late" solved in the new week, "early" in the old one.
    assert names(early, "2026-11-22T17:00:00+00:00", scope="cohort", cohort_id=tokyo.pk) == ["late"]
    assert names(early, "2026-11-22T14:00:00+00:00", scope="cohort", cohort_id=tokyo.pk) == ["early"]
    result = selectors.leaderboard(
        user=early,
        scope="cohort",
        cohort_id=tokyo.pk,
        period="week",
        at=datetime.fromisoformat("2026-11-22T17:00:00+00:00"),
    )
    assert str(result.starts) == "2026-11-23" and result.me is None


def test_joining_brings_points_to_the_cohort_board_and_leaving_takes_them(
    make_user: Callable[..., User], clock: Clock, solve: Solve
) -> None:
    teacher = make_user("teacher", role=Role.INSTRUCTOR)
    cohort = services.cohort_create(instructor=teacher, name="Late joiners", time_zone="UTC")
    user = make_user("joiner")
    clock.set("2026-06-03T10:00:00+00:00")
    solve(user, 0)
    services.cohort_join(user=user, code=cohort.join_code.lower())
    week = selectors.leaderboard(user=user, scope="cohort", cohort_id=cohort.pk, period="week", at=clock.at)
    assert week.me is not None and week.me.points == worth(0)
    services.cohort_leave(user=user, cohort=cohort)
    assert not Score.objects.filter(user=user, board__startswith=f"cohort:{cohort.pk}:").exists()


Snapshot = tuple[
    set[tuple[str, int, int, bool]], set[tuple[str, int, int]], dict[int, int], set[tuple[str, int, int, datetime, int]]
]


def snapshot() -> Snapshot:
    scores = set(Score.objects.values_list("board", "user_id", "points", "hidden"))
    buckets = set(ScoreBucket.objects.filter(learners__gt=0).values_list("board", "points", "learners"))
    slots = set(ScoreSlot.objects.values_list("board", "points", "span", "start", "learners"))
    return scores, buckets, dict(LearnerStats.objects.values_list("user_id", "points")), slots


def test_the_incremental_boards_equal_a_rebuild_from_progress(
    learners: dict[str, User], make_user: Callable[..., User], clock: Clock, solve: Solve
) -> None:
    teacher = make_user("teacher", role=Role.INSTRUCTOR)
    cohort = services.cohort_create(instructor=teacher, name="Class", time_zone="America/New_York")
    for name in ("ann", "cy"):
        services.cohort_join(user=learners[name], code=cohort.join_code)
    services.profile_update(user=learners["cy"], on_global_board=False)
    clock.set("2026-06-10T03:00:00+00:00")  # another week (and a different one in New York)
    solve(learners["cy"], 3)
    solve(learners["eve"], 3)
    before = snapshot()
    assert len(before[0]) > 10
    services.scores_rebuild()
    assert snapshot() == before


def test_ranks_in_a_large_tie_are_counted_from_day_hour_and_minute_slots(make_user: Callable[..., User]) -> None:
    """Learners tied on one score reached it across day, hour and minute boundaries, some in the
    same second; some moved on, some left the global board and some came back. Every rank read
    from the slots equals a row-by-row ordering, and the slots equal a recount."""
    users = [make_user(f"tie{i:02d}") for i in range(36)]
    start = datetime(2026, 6, 1, 22, 58, 58, tzinfo=UTC)
    # Offsets in seconds: the same second twice, then across a minute, an hour and a day.
    offsets = [0, 0, 1, 2, 2, 3, 61, 62, 62, 3601, 3602, 3660, 3661, 3662, 7199, 7200, 7201, 7261]
    for i, user in enumerate(users):
        at = start + timedelta(seconds=offsets[i % len(offsets)] + 86400 * (i // len(offsets)))
        services.score_add(board=GLOBAL_ALL, user=user, points=30, at=at)
    for user in users[3::7]:  # these move on to a higher score, leaving their slots
        services.score_add(board=GLOBAL_ALL, user=user, points=5, at=start + timedelta(days=3))
    for user in users[4::5]:
        services.profile_update(user=user, on_global_board=False)
    for user in users[9::10]:
        services.profile_update(user=user, on_global_board=True)
    rows = Score.objects.filter(board=GLOBAL_ALL, hidden=False).order_by("-points", "reached_at", "user_id")
    expected = {row.user_id: rank for rank, row in enumerate(rows, start=1)}
    assert len({r.points for r in rows}) == 2 and len(expected) > 20
    for user in users:
        user.refresh_from_db()
        own = selectors.board_rank(board=GLOBAL_ALL, user=user)
        assert (own.entry.rank if own.entry else None) == expected.get(user.pk), user.username
        assert own.ranked == len(expected)
    assert ScoreSlot.objects.filter(learners=0).count() == 0  # emptied slots are deleted
    before = snapshot()
    services.slots_rebuild()
    assert snapshot() == before
