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


@pytest.mark.parametrize("whose", ["cohort", "everyone"])
def test_the_portable_path_gives_what_postgresql_gives(
    item: Exercise,
    cohort: Cohort,
    instructor: User,
    author: User,
    class_of_five: dict[str, Learner],
    monkeypatch: pytest.MonkeyPatch,
    whose: str,
) -> None:
    """``make run``'s embedded default is SQLite, which has none of the SQL's aggregates (corr,
    percentile_cont, FILTER, jsonb): the same figures are computed in Python there. Both paths run
    here on the same learners, and must agree to the last field."""
    viewer, cohort_id = (instructor, cohort.pk) if whose == "cohort" else (author, None)
    on_postgresql = selectors.item_analysis(viewer=viewer, exercise=item, cohort_id=cohort_id)
    monkeypatch.setattr(connection, "vendor", "sqlite")
    with CaptureQueriesContext(connection) as queries:
        portable = selectors.item_analysis(viewer=viewer, exercise=item, cohort_id=cohort_id)
    assert not any("corr(" in q["sql"] or "jit" in q["sql"] for q in queries.captured_queries)  # it did run in Python
    assert portable == on_postgresql
    assert on_postgresql.variants and on_postgresql.mistakes  # the comparison covers a split and mistakes


def test_each_given_is_split_by_its_values_whatever_the_others_drew() -> None:
    """Four variants of two givens and a preset: each given's values pooled over the variants that drew them."""

    def variant(a: int, b: float, gpu: str, learners: int, first_try: int) -> selectors.VariantFigures:
        figures = Figures(
            learners=learners, solved=learners, first_try=first_try, attempts=2 * learners, correct=learners
        )
        return selectors.VariantFigures(givens={"a": a, "b": b}, labels={"gpu": gpu}, figures=figures)

    found = selectors._by_given(
        [
            variant(2, 0.5, "H100", learners=10, first_try=9),
            variant(2, 1.5, "A100", learners=10, first_try=7),
            variant(10, 0.5, "A100", learners=10, first_try=2),
            variant(10, 1.5, "H100", learners=10, first_try=2),
        ]
    )
    # a decides it (16 of 20 first try at 2, 4 of 20 at 10: 60 points); b and the gpu barely move it.
    assert [(g.name, g.spread) for g in found] == [("a", 0.6), ("b", 0.1), ("gpu", 0.1)]
    a = found[0]
    assert [(v.value, v.figures.learners, v.figures.first_try, v.figures.attempts) for v in a.values] == [
        ("2", 20, 16, 40),
        ("10", 20, 4, 40),  # numbers in numeric order, not as text
    ]
    assert [v.value for v in found[2].values] == ["A100", "H100"]
    # A given that never varies among the variants is no split.
    assert selectors._by_given([variant(2, 0.5, "H100", 1, 1), variant(2, 0.5, "H100", 3, 1)]) == []


def test_the_cohorts_analysis_splits_by_given(
    item: Exercise, cohort: Cohort, instructor: User, class_of_five: dict[str, Learner]
) -> None:
    found = selectors.item_analysis(viewer=instructor, exercise=item, cohort_id=cohort.pk)
    (split,) = found.by_given  # only a varies
    assert split.name == "a" and split.spread == 0.5  # a=2: 1 of 2 first try; a=3: 0 of 2
    assert [(v.value, v.figures.learners, v.figures.first_try) for v in split.values] == [("2", 2, 1), ("3", 2, 0)]
