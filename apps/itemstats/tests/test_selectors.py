"""The figures on the hand-built cohort (conftest.class_of_five), worked out by hand here."""

from __future__ import annotations

import math

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.accounts.models import User
from apps.exercises.models import Exercise
from apps.itemstats import selectors
from apps.itemstats.selectors import Figures, MistakeCount
from apps.itemstats.tests.conftest import Builder, Learner
from apps.progress.models import Cohort

pytestmark = pytest.mark.django_db


def pearson(x: list[float], y: list[float]) -> float:
    mx, my = sum(x) / len(x), sum(y) / len(y)
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y, strict=True))
    return sxy / math.sqrt(sum((a - mx) ** 2 for a in x) * sum((b - my) ** 2 for b in y))


def test_cohort_figures_by_hand(
    item: Exercise, cohort: Cohort, instructor: User, class_of_five: dict[str, Learner]
) -> None:
    found = selectors.item_analysis(viewer=instructor, exercise=item, cohort_id=cohort.pk)
    # Engaged: ann, ben, cat, dan, eve (fay never touched it; gus is in no cohort).
    # Solved (not revealed first): ann (1 attempt), ben (2). Revealed first: cat, eve.
    # Solved (0/1) against the rest score (1.2 and 1.3 solved): ann 1|2, ben 1|1, cat 0|0, dan 0|1, eve 0|2.
    # r = 0.6 / sqrt(1.2 * 2.8) = 0.32733 (checked against the formula below).
    r = pearson([1, 1, 0, 0, 0], [2, 1, 0, 1, 2])
    assert round(r, 4) == 0.3273
    assert found.figures == Figures(
        learners=5,
        solved=2,
        first_try=1,
        revealed=2,
        mean_attempts_to_solve=1.5,
        median_attempts_to_solve=1.5,
        discrimination=0.3273,
        attempts=7,  # ann 1 (her uncounted one is not), ben 2, cat 3, dan 1
        correct=3,
    )
    assert (found.figures.first_try_rate, found.figures.solve_rate, found.figures.reveal_rate) == (0.2, 0.4, 0.4)
    assert found.figures.accuracy == round(3 / 7, 4)
    assert found.without_attempt == 1  # eve
    assert found.cohort == cohort
    assert found.varies is True


def test_variant_split_by_first_numbers(
    item: Exercise, cohort: Cohort, instructor: User, class_of_five: dict[str, Learner]
) -> None:
    found = selectors.item_analysis(viewer=instructor, exercise=item, cohort_id=cohort.pk)
    # Hardest first: a=3 (nobody solved it first try) before a=2 (one of two).
    assert [(v.givens, v.labels, v.label) for v in found.variants] == [
        ({"a": 3}, {}, "a = 3"),
        ({"a": 2}, {}, "a = 2"),  # ben's recorded implicit c is not part of his variant
    ]
    three, two = found.variants
    # a=3: cat (revealed) and dan (stuck) first met it; attempts: cat's 2, dan's 1, none right.
    assert three.figures == Figures(learners=2, solved=0, first_try=0, revealed=1, attempts=3, correct=0)
    # a=2: ann and ben; attempts: ann 1, ben 2 and cat's later round, 3 right. Solved (0/1) does not
    # vary: no discrimination.
    assert two.figures == Figures(
        learners=2, solved=2, first_try=1, revealed=0, mean_attempts_to_solve=1.5,
        median_attempts_to_solve=1.5, discrimination=None, attempts=4, correct=3,
    )  # fmt: skip
    # The variants' learners and attempts add up to the whole (eve is in none: no attempt).
    assert sum(v.figures.learners for v in found.variants) + found.without_attempt == found.figures.learners
    assert sum(v.figures.attempts for v in found.variants) == found.figures.attempts


def test_known_mistakes(item: Exercise, cohort: Cohort, instructor: User, class_of_five: dict[str, Learner]) -> None:
    found = selectors.item_analysis(viewer=instructor, exercise=item, cohort_id=cohort.pk)
    # Wrong counted attempts: ben #0, cat #0, cat (no match), dan #1: 4.
    added = MistakeCount(1, 0, "a + b", "Added instead of multiplied.", 2, 0.5)
    doubled = MistakeCount(1, 1, "2 * a * b", "Counted every weight twice.", 1, 0.25)
    assert found.mistakes == [added, doubled]
    three, two = found.variants
    # a=3: cat's #0 and dan's #1 of its 3 wrong attempts; a=2: ben's #0, its only wrong attempt.
    assert three.mistakes == [
        MistakeCount(1, 0, "a + b", "Added instead of multiplied.", 1, round(1 / 3, 4)),
        MistakeCount(1, 1, "2 * a * b", "Counted every weight twice.", 1, round(1 / 3, 4)),
    ]
    assert two.mistakes == [MistakeCount(1, 0, "a + b", "Added instead of multiplied.", 1, 1.0)]


def test_every_learner_for_authors(item: Exercise, author: User, class_of_five: dict[str, Learner]) -> None:
    found = selectors.item_analysis(viewer=author, exercise=item)
    # gus joins: right first time on a=3, rest score 0. Solved: ann, ben, gus.
    # Solved against rest score: ann 1|2, ben 1|1, cat 0|0, dan 0|1, eve 0|2, gus 1|0: r = 0.
    assert pearson([1, 1, 0, 0, 0, 1], [2, 1, 0, 1, 2, 0]) == 0
    assert found.cohort is None
    assert found.figures == Figures(
        learners=6, solved=3, first_try=2, revealed=2, mean_attempts_to_solve=1.333,
        median_attempts_to_solve=1.0, discrimination=0.0, attempts=8, correct=4,
    )  # fmt: skip
    three = next(v for v in found.variants if v.givens == {"a": 3})
    # cat 0|0, dan 0|1, gus 1|0: r = -0.5.
    assert pearson([0, 0, 1], [0, 1, 0]) == pytest.approx(-0.5)
    assert three.figures == Figures(
        learners=3, solved=1, first_try=1, revealed=1, mean_attempts_to_solve=1.0,
        median_attempts_to_solve=1.0, discrimination=-0.5, attempts=4, correct=1,
    )  # fmt: skip


def test_an_exercise_nobody_tried(item: Exercise, cohort: Cohort, instructor: User) -> None:
    found = selectors.item_analysis(viewer=instructor, exercise=item, cohort_id=cohort.pk)
    assert found.figures == Figures()
    assert (found.figures.first_try_rate, found.figures.accuracy) == (None, None)
    assert found.variants == [] and found.mistakes == [] and found.without_attempt == 0


def test_query_count_does_not_grow(
    item: Exercise, cohort: Cohort, instructor: User, build: Builder, class_of_five: dict[str, Learner]
) -> None:
    def count() -> int:
        with CaptureQueriesContext(connection) as captured:
            selectors.item_analysis(viewer=instructor, exercise=item, cohort_id=cohort.pk)
        return len(captured)

    # The cohort and its assignments, a savepoint (SET LOCAL jit = off), the two set-based reads,
    # and the versions naming the mistakes: the same with more learners, variants and mistakes.
    assert count() == 8
    for i in range(4):
        more = build.learner(f"more{i}", cohort)
        build.attempt(more, a=4 + i, correct=False, mistake=i % 2)
        build.progress(more, attempts=1)
    assert count() == 8
