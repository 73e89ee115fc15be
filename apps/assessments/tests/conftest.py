"""Fixtures for assessments: an instructor's cohort with learners, assessments built on the real
content (varying numeric exercises graded in the web process), and a settable clock."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.utils import timezone

from apps.accounts.models import Role, User
from apps.assessments.models import Assessment, InstanceQuestion, Question
from apps.assessments.services import variant_of
from apps.exercises.choices import AnswerFormat
from apps.exercises.models import Exercise
from apps.exercises.tests.answers import correct_payload, wrong_payload
from apps.progress.models import Cohort
from apps.progress.services import cohorts as cohort_services

NOW = datetime.fromisoformat("2026-11-02T09:00:00+00:00")


class Clock:
    """The platform's "now" (django.utils.timezone.now), moved by the test."""

    def __init__(self) -> None:
        self.at = NOW

    def set(self, at: datetime) -> datetime:
        assert at.tzinfo is not None
        self.at = at
        return at

    def advance(self, **delta: float) -> datetime:
        self.at = self.at + timedelta(**delta)
        return self.at


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    c = Clock()
    monkeypatch.setattr(timezone, "now", lambda: c.at)
    return c


@pytest.fixture
def instructor(make_user: Callable[..., User]) -> User:
    return make_user("prof", role=Role.INSTRUCTOR)


@pytest.fixture
def cohort(instructor: User, student: User, other_student: User) -> Cohort:
    cohort = cohort_services.cohort_create(instructor=instructor, name="ML systems, fall")
    for learner in (student, other_student):
        cohort_services.cohort_join(user=learner, code=cohort.join_code)
    return cohort


def varying(workbook: str = "transformer-math", n: int = 4) -> list[Exercise]:
    """Numeric exercises whose numbers vary per learner, graded in the web process."""
    found = []
    for exercise in (
        Exercise.objects.filter(workbook__slug=workbook, is_active=True, format=AnswerFormat.NUMERIC)
        .select_related("current_version", "chapter", "workbook")
        .order_by("chapter__number", "position")
    ):
        if exercise.current_version is not None and exercise.current_version.spec.get("vary"):
            found.append(exercise)
        if len(found) == n:
            break
    assert len(found) == n
    return found


MakeAssessment = Callable[..., Assessment]


@pytest.fixture
def make_assessment(cohort: Cohort, instructor: User, clock: Clock) -> MakeAssessment:
    """``make_assessment(kind=..., pools=[[ex, ...], ...], choose=[k, ...], **fields)``: opens now,
    due in 2 days, closes in 7 unless told."""

    def make(
        *, pools: list[list[Exercise]], choose: list[int] | None = None, points: float = 10.0, **fields: Any
    ) -> Assessment:
        values: dict[str, Any] = {
            "cohort": cohort,
            "slug": fields.pop("slug", f"a{Assessment.objects.count() + 1}"),
            "title": fields.pop("title", "Homework"),
            "opens_at": clock.at - timedelta(hours=1),
            "due_at": clock.at + timedelta(days=2),
            "closes_at": clock.at + timedelta(days=7),
            "created_by": instructor,
        }
        values.update(fields)
        assessment = Assessment.objects.create(**values)
        for i, pool in enumerate(pools):
            question = Question.objects.create(
                assessment=assessment, position=i + 1, points=points, choose=(choose or [1] * len(pools))[i]
            )
            question.pool.set(pool)
        return assessment

    return make


def right(item: InstanceQuestion) -> dict[str, Any]:
    return correct_payload(item.exercise, variant=variant_of(item))


def wrong(item: InstanceQuestion) -> dict[str, Any]:
    return wrong_payload(item.exercise, variant=variant_of(item))
