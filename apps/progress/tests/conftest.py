"""Helpers for progress tests: a settable clock, and solving exercises as a learner would."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import pytest
from django.utils import timezone

from apps.accounts.models import User
from apps.exercises.choices import AnswerFormat
from apps.exercises.models import Exercise
from apps.exercises.tests.answers import correct_payload, wrong_payload
from apps.learning import services as learning_services


class Clock:
    """The platform's "now" (django.utils.timezone.now), set by the test."""

    def __init__(self) -> None:
        self.at = datetime.fromisoformat("2026-06-01T12:00:00+00:00")

    def set(self, iso: str) -> datetime:
        self.at = datetime.fromisoformat(iso)
        assert self.at.tzinfo is not None
        return self.at


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    c = Clock()
    monkeypatch.setattr(timezone, "now", lambda: c.at)
    return c


def gradable(workbook: str = "transformer-math") -> list[Exercise]:
    """Exercises graded in the web process (no sandbox), in workbook order."""
    return list(
        Exercise.objects.filter(workbook__slug=workbook, is_active=True)
        .exclude(format=AnswerFormat.CODE)
        .exclude(format=AnswerFormat.LINES)
        .select_related("workbook", "current_version", "chapter")
        .order_by("chapter__number", "position")
    )


Solve = Callable[..., bool]


@pytest.fixture
def solve(db: None) -> Solve:
    """``solve(user, exercise_or_index, correct=True)``: one attempt through the grading service;
    returns whether it solved the exercise just now."""
    exercises = gradable()

    def run(user: User, which: int | Exercise, correct: bool = True) -> bool:
        exercise = exercises[which] if isinstance(which, int) else which
        payload = correct_payload(exercise, user) if correct else wrong_payload(exercise, user)
        return learning_services.attempt_create(user=user, exercise=exercise, payload=payload).first_solve

    return run
