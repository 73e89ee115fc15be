"""A hand-built cohort for item analysis: a workbook of three numeric exercises, the first varying
(``a`` is 2 or 3) with two known mistakes, and learners whose attempts and progress rows are
written directly, so every figure can be worked out by hand (test_selectors.py does)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import pytest

from apps.accounts.models import Role, User
from apps.exercises import services as exercise_services
from apps.exercises.choices import AttemptStatus, Verdict
from apps.exercises.content.schema import ExerciseSpec
from apps.exercises.models import Attempt, Exercise, Workbook
from apps.exercises.tests import synthetic
from apps.progress.models import Cohort, ExerciseProgress
from apps.progress.services import cohorts as cohort_services

SLUG = "itemstats-test"
T0 = datetime.fromisoformat("2026-11-02T09:00:00+00:00")


def varying_item() -> ExerciseSpec:
    return ExerciseSpec.model_validate(
        {
            "id": "item",
            "number": "1.1",
            "title": "A varying item",
            "kind": "derive",
            "format": "numeric",
            "prompt": "A layer has {{a}} rows of {{b}} weights. How many parameters does it hold?",
            "explanation": "Rows times weights per row: {{a}} × {{b}} = {{answer}}.",
            "givens": {"a": 2, "b": 7, "c": 1},
            # `c` is known, not shown: a recorded value of it is not part of the variant.
            "implicit": ["c"],
            "derived": {"answer": "a * b * c"},
            "hints": ["Multiply."],
            "answer": {
                "value": "answer",
                "unit": "params",
                "mistakes": [
                    {"value": "a + b", "feedback": "Added instead of multiplied."},
                    {"value": "2 * a * b", "feedback": "Counted every weight twice."},
                ],
            },
            "vary": {"givens": {"a": {"values": [2, 3]}}},
        }
    )


@pytest.fixture
def workbook(db: None) -> Workbook:
    spec = synthetic.workbook(
        [synthetic.chapter(1, [varying_item(), synthetic.numeric("other", "1.2"), synthetic.numeric("third", "1.3")])],
        slug=SLUG,
    )
    exercise_services.workbook_sync(spec=spec)
    return Workbook.objects.get(slug=SLUG)


@pytest.fixture
def item(workbook: Workbook) -> Exercise:
    return Exercise.objects.select_related("workbook", "current_version").get(workbook=workbook, key="item")


@pytest.fixture
def instructor(make_user: Callable[..., User]) -> User:
    return make_user("prof", role=Role.INSTRUCTOR)


@pytest.fixture
def author(make_user: Callable[..., User]) -> User:
    return make_user("writer", role=Role.AUTHOR)


@pytest.fixture
def cohort(instructor: User, workbook: Workbook) -> Cohort:
    cohort = cohort_services.cohort_create(instructor=instructor, name="ML systems, fall")
    cohort_services.cohort_assign(cohort=cohort, workbook=workbook)
    return cohort


@dataclass
class Learner:
    user: User
    clock: datetime

    def tick(self) -> datetime:
        self.clock += timedelta(minutes=1)
        return self.clock


class Builder:
    """Writes attempts and progress rows as the grading path leaves them."""

    def __init__(self, make_user: Callable[..., User], item: Exercise) -> None:
        self.make_user = make_user
        self.item = item

    def learner(self, name: str, cohort: Cohort | None = None) -> Learner:
        user = self.make_user(name)
        if cohort is not None:
            cohort_services.cohort_join(user=user, code=cohort.join_code)
        return Learner(user, T0)

    def attempt(
        self,
        who: Learner,
        *,
        a: int,
        correct: bool,
        mistake: int | None = None,
        round: int = 1,  # noqa: A002 - the field's name
        counted: bool = True,
        extra_givens: dict[str, Any] | None = None,
    ) -> Attempt:
        details: dict[str, Any] = {
            "variant": {"round": round, "givens": {"a": a, **(extra_givens or {})}, "labels": {}}
        }
        if mistake is not None:
            details |= {"mistake": True, "mistake_index": mistake}
        version = self.item.current_version
        assert version is not None
        return Attempt.objects.create(
            user=who.user,
            exercise=self.item,
            version=version,
            status=AttemptStatus.GRADED,
            raw={"answer": "?"},
            parsed={},
            verdict=Verdict.CORRECT if correct else Verdict.INCORRECT,
            score=1.0 if correct else 0.0,
            counted=counted,
            round=round,
            details=details,
            created_at=who.tick(),
        )

    def progress(
        self,
        who: Learner,
        exercise: Exercise | None = None,
        *,
        attempts: int = 1,
        attempts_to_solve: int | None = None,
        solved: bool = False,
        forfeited: bool = False,
        revealed: bool = False,
    ) -> ExerciseProgress:
        exercise = exercise or self.item
        at = who.tick()
        return ExerciseProgress.objects.create(
            user=who.user,
            exercise=exercise,
            workbook_id=exercise.workbook_id,
            attempts=attempts,
            attempts_to_solve=attempts_to_solve,
            solved_at=at if solved else None,
            first_solved_at=at if solved else None,
            revealed_at=at if (revealed or forfeited) else None,
            forfeited=forfeited,
            last_attempt_at=at if attempts else None,
        )

    def solved_elsewhere(self, who: Learner, *keys: str) -> None:
        for key in keys:
            other = Exercise.objects.get(workbook=self.item.workbook, key=key)
            self.progress(who, other, attempts=1, attempts_to_solve=1, solved=True)


@pytest.fixture
def build(make_user: Callable[..., User], item: Exercise) -> Builder:
    return Builder(make_user, item)


@pytest.fixture
def class_of_five(build: Builder, cohort: Cohort) -> dict[str, Learner]:
    """The hand-built cohort (the expected figures are worked out in test_selectors.py):

    - ann: a=2, right first time; solved 1.2 and 1.3 as well (rest score 2). One uncounted
      attempt (a multi-part check that leaves parts empty) changes nothing.
    - ben: a=2 (with the implicit c recorded: still a=2), known mistake #0, then right (2 attempts);
      rest score 1.
    - cat: a=3, mistake #0, a wrong answer matching nothing, revealed; then on new numbers (a=2,
      round 2) right: solved after revealing, so not solved; rest score 0.
    - dan: a=3, mistake #1, stuck; rest score 1.
    - eve: revealed without answering; rest score 2.
    - fay: in the cohort, never touched the item: not engaged.
    - gus: in no cohort, right first time on a=3: only in "every learner".
    """
    ann, ben, cat, dan = (build.learner(n, cohort) for n in ("ann", "ben", "cat", "dan"))
    eve, fay, gus = build.learner("eve", cohort), build.learner("fay", cohort), build.learner("gus")

    build.attempt(ann, a=2, correct=False, counted=False)
    build.attempt(ann, a=2, correct=True)
    build.progress(ann, attempts=1, attempts_to_solve=1, solved=True)
    build.solved_elsewhere(ann, "other", "third")

    build.attempt(ben, a=2, correct=False, mistake=0, extra_givens={"c": 5})
    build.attempt(ben, a=2, correct=True, extra_givens={"c": 5})
    build.progress(ben, attempts=2, attempts_to_solve=2, solved=True)
    build.solved_elsewhere(ben, "other")

    build.attempt(cat, a=3, correct=False, mistake=0)
    build.attempt(cat, a=3, correct=False)
    build.attempt(cat, a=2, correct=True, round=2)
    build.progress(cat, attempts=3, attempts_to_solve=3, solved=True, forfeited=True)

    build.attempt(dan, a=3, correct=False, mistake=1)
    build.progress(dan, attempts=1)
    build.solved_elsewhere(dan, "third")

    build.progress(eve, attempts=0, forfeited=True)
    build.solved_elsewhere(eve, "other", "third")

    build.solved_elsewhere(fay, "other")

    build.attempt(gus, a=3, correct=True)
    build.progress(gus, attempts=1, attempts_to_solve=1, solved=True)
    return {"ann": ann, "ben": ben, "cat": cat, "dan": dan, "eve": eve, "fay": fay, "gus": gus}
