"""A right answer built from numpy scalars passes, in real containers (issue 15).

Dict keys are reported as their ``str()``, and numpy 2 spells a scalar inside a tuple as
``np.int64(1)``: a correct ``count_pairs`` whose keys were tuples of numpy ints failed 6 of its 7
tests. The child now reports keys in their plain-Python form; the worker still compares every
key and value with expected values that never enter the container.
"""

from __future__ import annotations

import pytest

from apps.exercises.choices import AttemptStatus, Verdict
from apps.sandbox.runner import DockerRunner, Job, Limits
from apps.sandbox.tests.conftest import Sandbox
from apps.sandbox.verdict import Case, judge

pytestmark = pytest.mark.slow

# lm-from-scratch 0.6, solved the way a learner who keeps tokens in numpy arrays would.
COUNT_PAIRS_WITH_NUMPY = """
import numpy as np


def count_pairs(sequences):
    counts = {}
    for seq in sequences:
        ids = np.asarray(seq, dtype=np.int64)
        for pair in zip(ids[:-1], ids[1:]):  # tuples of np.int64
            counts[pair] = counts.get(pair, np.int64(0)) + 1
    return counts
"""


def test_a_correct_answer_keyed_by_numpy_ints_passes_and_a_wrong_one_still_fails(sandbox: Sandbox) -> None:
    right = sandbox.code("0.6", COUNT_PAIRS_WITH_NUMPY, workbook="lm-from-scratch")
    assert (right.status, right.verdict) == (AttemptStatus.GRADED, Verdict.CORRECT), right.details
    assert right.details["passed_count"] == right.details["total"] == 8

    # The same encoding, with pairs spanning two sequences: still wrong, and still caught.
    spanning = COUNT_PAIRS_WITH_NUMPY.replace("for seq in sequences:", "for seq in [sum(sequences, [])]:")
    wrong = sandbox.code("0.6", spanning, workbook="lm-from-scratch")
    assert (wrong.status, wrong.verdict) == (AttemptStatus.GRADED, Verdict.INCORRECT), wrong.details
    failed = {t["id"] for t in wrong.details["tests"] if not t["passed"]}
    assert "no_cross_boundary" in failed
    shown = next(t for t in wrong.details["tests"] if t["id"] == "no_cross_boundary")
    assert shown["got"] == '{"(5, 6)": 1, "(6, 7)": 1, "(7, 8)": 1}'  # plain ints, as the learner reads them


def test_numpy_scalars_in_keys_and_values_compare_as_the_python_values_they_equal(sandbox_image: str) -> None:
    source = """
import numpy as np


def f(kind):
    if kind == "tuple_keys":
        a = np.array([1, 2, 2, 1], dtype=np.int32)
        return {(a[0], a[1]): np.int64(3), (a[2], a[3]): np.uint8(4)}
    if kind == "scalar_keys":
        return {np.int64(7): [np.int16(1), np.float32(0.5)], np.str_("k"): np.bool_(True)}
    if kind == "float_keys":
        return {(np.float64(1.5), np.int64(2)): 1}
    return {(np.int64(1), np.int64(2)): np.int64(2)}
"""
    cases = [
        Case("tuple_keys", ["tuple_keys"], {}, {"(1, 2)": 3, "(2, 1)": 4}),
        Case("scalar_keys", ["scalar_keys"], {}, {"7": [1, 0.5], "k": True}),
        Case("float_keys", ["float_keys"], {}, {"(1.5, 2)": 1}),
        # A control: the right key with the wrong count fails, numpy or not.
        Case("wrong_count", ["wrong_count"], {}, {"(1, 2)": 1}),
    ]
    result = DockerRunner(sandbox_image).run(
        Job("f", [c.inputs() for c in cases], {"submission.py": source}), Limits(time_s=20.0)
    )
    verdict = judge(result, cases, "f")
    assert {c.id: c.passed for c in verdict.cases} == {
        "tuple_keys": True,
        "scalar_keys": True,
        "float_keys": True,
        "wrong_count": False,
    }, verdict
    assert verdict.outcome == "failed"
    wrong = next(c for c in verdict.cases if c.id == "wrong_count")
    assert (wrong.expected, wrong.got) == ('{"(1, 2)": 1}', '{"(1, 2)": 2}')
