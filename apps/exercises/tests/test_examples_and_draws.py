"""Examples, hidden tests and random inputs: what content must say, what a learner reads back.

The end-to-end proof (a lookup of everything a learner sees passes no exercise) is
``apps/sandbox/tests/test_hidden_tests.py``; these check the parts without running code.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from pydantic import ValidationError

from apps.exercises import draws
from apps.exercises.content.schema import CodeCase, CodeSpec
from apps.exercises.jobs import code_cases, drawn_inputs, example_problems, examples, reference_job
from apps.sandbox.verdict import Case, Verdict, decide, instructor_rows, learner_view

SOFTMAX_LIKE = {
    "dims": {"n": {"int": [1, 5]}},
    "args": [{"list": {"float": [-3.0, 3.0], "digits": 2}, "len": "n"}, {"list": {"int": [0, 9]}, "len": "n"}],
    "kwargs": {"scale": {"choice": [0.5, 2.0]}, "mode": "fast"},
}


def spec(*cases: dict[str, Any]) -> CodeSpec:
    return CodeSpec(
        entry="f", dir="x", solution="def f(*a, **k):\n    return 0\n", cases=[CodeCase(**c) for c in cases]
    )


def test_a_random_case_draws_the_same_inputs_for_the_same_seed_and_others_for_another() -> None:
    first = draws.draw(SOFTMAX_LIKE, seed=7, case_id="r")
    assert first == draws.draw(SOFTMAX_LIKE, seed=7, case_id="r")
    args, kwargs = first
    assert len(args[0]) == len(args[1])  # one dim, drawn once, sizes both lists
    assert all(round(x, 2) == x and -3 <= x <= 3 for x in args[0]) and all(0 <= i <= 9 for i in args[1])
    assert kwargs["scale"] in (0.5, 2.0) and kwargs["mode"] == "fast"
    others = {repr(draws.draw(SOFTMAX_LIKE, seed=s, case_id="r")) for s in range(20)}
    assert len(others) > 15
    # Another case under the same seed has its own stream.
    assert draws.draw(SOFTMAX_LIKE, seed=7, case_id="r2") != first


def test_drawn_arrays_are_npy_markers_of_the_shape_and_dtype_asked() -> None:
    from apps.sandbox.verdict import decode

    args, _ = draws.draw(
        {"args": [{"array": {"normal": [0, 1]}, "shape": [3, 2], "dtype": "float32"}]}, seed=1, case_id="a"
    )
    array = decode(args[0])
    assert isinstance(array, np.ndarray) and array.shape == (3, 2) and array.dtype == np.float32


@pytest.mark.parametrize(
    ("description", "complaint"),
    [
        ({"args": [{"int": [5, 1]}]}, "lo <= hi"),
        ({"args": [{"list": {"int": [0, 1]}, "len": "m"}]}, "unknown dim 'm'"),
        ({"args": [{"int": [0, 1], "float": [0, 1]}]}, "exactly one"),
        ({"args": [{"list": {"float": [0, 1]}, "len": 30_000}]}, "more than 20000"),
        ({"args": [{"array": {"int": [0, 1]}, "shape": [2], "dtype": "object"}]}, "dtype"),
        ({"argz": []}, "unknown keys"),
    ],
)
def test_a_random_description_that_cannot_be_drawn_is_refused_saying_why(description: Any, complaint: str) -> None:
    found = draws.problems(description)
    assert found and complaint in found[0], found
    with pytest.raises(ValidationError, match="random"):
        CodeCase(id="r", random=description)


def test_a_random_case_is_a_hidden_test_with_nothing_fixed() -> None:
    for extra in ({"args": [1]}, {"expected": 3}, {"example": True}, {"probe": "p"}):
        with pytest.raises(ValidationError, match="random case"):
            CodeCase(id="r", random={"args": [{"int": [0, 1]}]}, **extra)


def test_examples_and_hidden_tests_are_required_and_must_differ() -> None:
    plain = {"id": "a", "args": [1], "expected": 1}
    assert "at least one example" in example_problems(spec(plain, {"id": "b", "args": [2], "expected": 2}))[0]
    same = spec({**plain, "example": True}, {"id": "b", "args": [1], "expected": 1})
    assert example_problems(same) == [
        "code exercises need a hidden test (not a probe) whose inputs differ from every example's"
    ]
    probe_only = spec({**plain, "example": True}, {"id": "p", "probe": "c", "args": [2], "expected": {"x": True}})
    assert "hidden test" in example_problems(probe_only)[0]
    assert example_problems(spec({**plain, "example": True}, {"id": "b", "args": [2], "expected": 2})) == []
    assert example_problems(spec({**plain, "example": True}, {"id": "r", "random": {"args": [{"int": [0, 9]}]}})) == []
    long = spec({"id": "a", "args": [list(range(400))], "expected": 1, "example": True}, {"id": "b", "expected": 2})
    assert "characters long" in example_problems(long)[0]


def test_what_the_prompt_shows_is_the_examples_and_only_they() -> None:
    code = spec(
        {"id": "a", "args": [1, [2, 3]], "kwargs": {"k": 4}, "expected": [5], "example": True},
        {"id": "b", "args": [9], "expected": 10},
    )
    assert examples(code) == [
        {"call": "f(1, [2, 3], k=4)", "returns_text": "[5]", "args": [1, [2, 3]], "kwargs": {"k": 4}, "returns": [5]}
    ]


def test_only_random_cases_go_to_the_reference_and_the_draw_is_kept() -> None:
    code = spec(
        {"id": "a", "args": [1], "expected": 1, "example": True},
        {"id": "r", "random": {"args": [{"int": [0, 9]}]}},
    )
    cases = code_cases(code, seed=3)
    job = reference_job(code, cases)
    assert job is not None and [c["id"] for c in job.cases] == ["r"] and "expected" not in job.cases[0]
    assert job.files == {"submission.py": code.solution}
    assert drawn_inputs(cases, 3) == {"seed": 3, "inputs": {"r": {"args": cases[1].args, "kwargs": {}}}}
    assert reference_job(code, code_cases(spec({"id": "a", "args": [1], "expected": 1}))) is None


CASES = [
    Case("shown", [1], {}, 2, example=True),
    Case("secret_one", [41], {}, 42),
    Case("secret_two", [[1, 2]], {}, [3, 4]),
    Case("secret_three", [5], {}, 6),
]


def test_a_learner_reads_examples_in_full_and_hidden_tests_only_as_why_they_failed() -> None:
    results = [
        {"id": "shown", "ok": True, "value": 3},
        {"id": "secret_one", "ok": True, "value": 42},
        {"id": "secret_two", "ok": True, "value": [3, 4, 5]},
        {"id": "secret_three", "ok": False, "error": "KeyError: 5", "traceback": "..."},
    ]
    checked = decide(results, CASES, "f")
    assert [c.category for c in checked] == ["wrong_value", "", "wrong_shape", "raised"]
    stored = Verdict("error", checked, message="3 of 4 tests failed.").as_dict() | {"draw": {"seed": 1}}
    shown = learner_view(stored)
    assert "draw" not in shown
    rows = shown["tests"]
    assert [r["label"] for r in rows] == ["Example 1", "Hidden test 2 of 3", "Hidden test 3 of 3", "Hidden test 1 of 3"]
    assert rows[0] | {} == {
        "label": "Example 1", "example": True, "passed": False, "category": "wrong_value",
        "message": "Wrong value.", "call": "f(1)", "expected": "2", "got": "3",
    }  # fmt: skip
    assert rows[1] == {"label": "Hidden test 2 of 3", "example": False, "passed": False,
                       "category": "wrong_shape", "message": "Wrong shape or type."}  # fmt: skip
    assert rows[2]["message"] == "Raised KeyError: 5" and rows[2]["category"] == "raised"
    assert rows[3] == {"label": "Hidden test 1 of 3", "example": False, "passed": True, "category": "", "message": ""}
    text = repr(rows)
    assert not any(s in text for s in ("secret", "42", "[3, 4]", "f(41)", "f([1, 2])"))
    # An instructor reads every test in full, labelled as the learner saw it.
    full = instructor_rows(stored["tests"])
    assert full[1]["label"] == "Hidden test 2 of 3 · secret_two" and full[1]["expected"] == "[3, 4]"
    assert full[-1]["call"] == "f(41)" and full[-1]["got"] == "42"


def test_a_verdict_stored_before_examples_existed_shows_every_test_as_hidden() -> None:
    old = {
        "tests": [
            {"id": "gpt3", "passed": False, "call": "f(1)", "message": "Wrong value.", "expected": "2", "got": "3"}
        ]
    }
    assert learner_view(old)["tests"] == [
        {
            "label": "Hidden test 1 of 1",
            "example": False,
            "passed": False,
            "category": "failed",
            "message": "Wrong value.",
        }
    ]
