"""Progress is written in the grading transaction; concurrent attempts cannot double-count."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from django.db import connections

from apps.accounts.models import User
from apps.exercises.models import Attempt, Exercise
from apps.exercises.tests.answers import on_seed_numbers
from apps.learning import services as learning_services
from apps.progress.models import ExerciseProgress


@pytest.mark.django_db(transaction=True)
def test_concurrent_correct_attempts_solve_once(make_user: Callable[..., User]) -> None:
    from django.core.management import call_command

    call_command("sync_content", "--workbook", "transformer-math", verbosity=0)  # transaction=True starts empty
    user = make_user("racer")
    exercise = Exercise.objects.select_related("workbook", "current_version").get(
        workbook__slug="transformer-math", number="4.4"
    )
    on_seed_numbers(user, exercise)  # "30" is the seed's answer
    barrier = threading.Barrier(8)
    first_solves: list[bool] = []
    solver: list[int] = []
    errors: list[BaseException] = []

    def submit() -> None:
        try:
            barrier.wait()
            outcome = learning_services.attempt_create(user=user, exercise=exercise, payload={"answer": "30"})
            first_solves.append(outcome.first_solve)
            if outcome.first_solve:
                solver.append(outcome.attempt.pk)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=submit) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert sorted(first_solves) == [False] * 7 + [True]
    progress = ExerciseProgress.objects.get(user=user, exercise=exercise)
    assert progress.attempts == 8
    assert Attempt.objects.filter(user=user).count() == 8
    assert [progress.first_solve_attempt_id] == solver


@pytest.mark.django_db(transaction=True)
def test_concurrent_solves_keep_boards_and_streaks_exact(make_user: Callable[..., User]) -> None:
    """Eight learners each solve three exercises at once: no deadlock, no lost update; the
    incremental boards equal a rebuild and each learner's stats count three solves."""
    from django.core.management import call_command

    from apps.exercises.tests.answers import correct_payload
    from apps.progress.models import LearnerStats, Score, ScoreBucket
    from apps.progress.services import scores_rebuild
    from apps.progress.tests.conftest import gradable

    call_command("sync_content", "--workbook", "transformer-math", verbosity=0)
    exercises = gradable()[:3]
    users = [make_user(f"racer{i}") for i in range(8)]
    barrier = threading.Barrier(len(users))
    errors: list[BaseException] = []

    def run(user: User) -> None:
        try:
            barrier.wait()
            for exercise in exercises:
                learning_services.attempt_create(user=user, exercise=exercise, payload=correct_payload(exercise, user))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(u,)) for u in users]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    worth = sum(10 * e.difficulty for e in exercises)
    assert set(LearnerStats.objects.values_list("solves", "points", "current_streak")) == {(3, worth, 1)}
    incremental = (
        set(Score.objects.values_list("board", "user_id", "points")),
        set(ScoreBucket.objects.filter(learners__gt=0).values_list("board", "points", "learners")),
    )
    assert ("all", worth, 8) in incremental[1]
    scores_rebuild()
    assert incremental == (
        set(Score.objects.values_list("board", "user_id", "points")),
        set(ScoreBucket.objects.filter(learners__gt=0).values_list("board", "points", "learners")),
    )
