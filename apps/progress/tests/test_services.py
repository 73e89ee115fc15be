"""Progress is written in the grading transaction; concurrent attempts cannot double-count."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from django.db import connections

from apps.accounts.models import User
from apps.exercises import services
from apps.exercises.models import Attempt, Exercise
from apps.progress.models import ExerciseProgress


@pytest.mark.django_db(transaction=True)
def test_concurrent_correct_attempts_solve_once(make_user: Callable[..., User]) -> None:
    from django.core.management import call_command

    call_command("sync_content", "--workbook", "transformer-math", verbosity=0)  # transaction=True starts empty
    user = make_user("racer")
    exercise = Exercise.objects.select_related("workbook", "current_version").get(number="4.4")
    barrier = threading.Barrier(8)
    first_solves: list[bool] = []
    solver: list[int] = []
    errors: list[BaseException] = []

    def submit() -> None:
        try:
            barrier.wait()
            outcome = services.attempt_create(user=user, exercise=exercise, payload={"answer": "30"})
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
