import pytest

from apps.exercises.content.schema import ChoiceOption, OrderStep
from apps.exercises.grading.base import InvalidAnswer
from apps.exercises.grading.numeric import NumericTarget
from apps.exercises.grading.structured import grade_choice, grade_lines, grade_order, grade_table
from apps.exercises.grading.units import unit

OPTIONS = [
    ChoiceOption(text="A", correct=True, feedback="A is right because."),
    ChoiceOption(text="B", feedback="B confuses per-layer with total."),
    ChoiceOption(text="C", correct=True, feedback="C is right too."),
]


def test_single_choice() -> None:
    one = OPTIONS[:2]
    assert grade_choice(one, [0], multiple=False).correct
    wrong = grade_choice(one, [1], multiple=False)
    assert not wrong.correct
    assert wrong.feedback == "B confuses per-layer with total."
    with pytest.raises(InvalidAnswer, match="exactly one"):
        grade_choice(one, [0, 1], multiple=False)
    with pytest.raises(InvalidAnswer, match="Choose an option"):
        grade_choice(one, [], multiple=False)


def test_multiple_choice_needs_all_and_only_correct() -> None:
    assert grade_choice(OPTIONS, [0, 2], multiple=True).correct
    partial = grade_choice(OPTIONS, [0], multiple=True)
    assert not partial.correct
    assert "1 correct option not selected" in partial.feedback
    assert "right because" not in partial.feedback  # no answer leaked through feedback
    mixed = grade_choice(OPTIONS, [0, 1], multiple=True)
    assert "B confuses" in mixed.feedback


STEPS = [
    OrderStep(id=i, text=t)
    for i, t in [("q", "Project Q"), ("kv", "Project K,V"), ("rep", "Repeat K,V"), ("s", "Scores")]
]


def test_order_without_constraints_is_the_listed_order() -> None:
    assert grade_order(STEPS, None, ["q", "kv", "rep", "s"]).correct
    result = grade_order(STEPS, None, ["q", "rep", "kv", "s"])
    assert not result.correct
    assert result.feedback == "Step 2, “Repeat K,V”, is out of place: it needs “Project K,V” first."
    assert result.details == {"first_misplaced": 2}


def test_order_with_constraints_accepts_any_valid_order() -> None:
    constraints = [("kv", "rep"), ("rep", "s"), ("q", "s")]
    assert grade_order(STEPS, constraints, ["q", "kv", "rep", "s"]).correct
    assert grade_order(STEPS, constraints, ["kv", "q", "rep", "s"]).correct
    assert grade_order(STEPS, constraints, ["kv", "rep", "q", "s"]).correct
    assert not grade_order(STEPS, constraints, ["kv", "rep", "s", "q"]).correct
    with pytest.raises(InvalidAnswer, match="exactly once"):
        grade_order(STEPS, constraints, ["q", "q", "rep", "s"])


def test_lines_require_every_buggy_line_and_nothing_else() -> None:
    assert grade_lines([3, 7], [7, 3], line_count=9).correct
    half = grade_lines([3, 7], [3], line_count=9)
    assert not half.correct
    assert half.feedback == "You found 1 of 2 buggy lines."
    extra = grade_lines([3], [3, 4], line_count=9)
    assert not extra.correct
    assert "Line 4 is fine." in extra.feedback
    with pytest.raises(InvalidAnswer, match="lines 1–9"):
        grade_lines([3], [12], line_count=9)


def test_table_gives_per_cell_verdicts() -> None:
    targets = {
        "a.p": NumericTarget(1.555e9, unit("params").dim, unit("B params"), 0.005),
        "b.p": NumericTarget(174.6e9, unit("params").dim, unit("B params"), 0.005),
    }
    labels = {"a.p": "GPT-2 XL · Params", "b.p": "GPT-3 · Params"}
    result = grade_table(targets, labels, {"a.p": "1.555", "b.p": "175.6"})
    assert not result.correct
    assert result.score == 0.5
    assert result.details["cells"]["a.p"]["correct"] is True
    assert result.details["cells"]["b.p"]["correct"] is False
    assert grade_table(targets, labels, {"a.p": "1.555B", "b.p": "174.6"}).correct
    with pytest.raises(InvalidAnswer, match="missing: GPT-3 · Params"):
        grade_table(targets, labels, {"a.p": "1.555"})
    with pytest.raises(InvalidAnswer, match=r"GPT-3 · Params: .*memory"):
        grade_table(targets, labels, {"a.p": "1.555", "b.p": "3 GB"})
