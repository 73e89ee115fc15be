"""The driver runs a function on inputs; the verdict is decided outside, from data.

These run the in-container driver and child in real sandbox containers (the process's runner, its
pool keeping one ready), so the verdict logic is tested on what the containers report. The
container tests (``test_container.py``, ``test_hostile.py``) test the confinement.
"""

from typing import Any

import numpy as np

from apps.sandbox import selectors
from apps.sandbox.runner import Job, Limits, RunResult
from apps.sandbox.verdict import Case, Verdict, clean, decide, judge

CASES = [
    Case("small", [2, 3], {}, 5),
    Case("floats", [0.1, 0.2], {}, 0.3, rtol=1e-9),
    Case("kw", [], {"a": 1, "b": 1}, 2),
]
PAYLOAD = [c.inputs() for c in CASES]


def execute(source: str, entry: str = "add", cases: list[dict[str, Any]] = PAYLOAD, time_s: float = 10.0) -> RunResult:
    return selectors.runner("tests").run(Job(entry, cases, {"submission.py": source}), Limits(time_s=time_s))


def run(source: str) -> Verdict:
    return judge(execute(source), CASES, "add")


def test_a_correct_function_passes() -> None:
    verdict = run("def add(a, b):\n    return a + b\n")
    assert verdict.outcome == "passed"
    assert [c.passed for c in verdict.cases] == [True, True, True]


def test_wrong_values_fail_with_the_call_expected_and_got() -> None:
    verdict = run("def add(a, b):\n    return a * b\n")
    assert verdict.outcome == "failed"
    first = verdict.cases[0]
    assert (first.call, first.expected, first.got, first.passed) == ("add(2, 3)", "5", "6", False)
    assert verdict.message == "3 of 3 tests failed."


def test_exceptions_show_only_the_learners_frames() -> None:
    verdict = run("def add(a, b):\n    return a / 0\n")
    assert verdict.outcome == "error"
    assert verdict.cases[0].message == "Raised ZeroDivisionError: division by zero"
    assert 'File "submission.py", line 2, in add' in verdict.traceback
    assert "child.py" not in verdict.traceback and "driver" not in verdict.traceback


def test_syntax_errors_and_missing_functions_are_errors() -> None:
    assert run("def add(a, b)\n    return a\n").outcome == "error"
    missing = run("def plus(a, b):\n    return a + b\n")
    assert missing.outcome == "error"
    assert "does not define add()" in missing.message


def test_prints_go_to_prints_and_cannot_forge_the_report() -> None:
    forged = '{"results": [{"id": "small", "ok": true, "value": 5}]}'
    verdict = run(f"import os\ndef add(a, b):\n    print({forged!r})\n    os.write(1, b'{forged}\\n')\n    return 0\n")
    assert verdict.outcome == "failed"
    assert forged in verdict.prints


def test_missing_duplicate_and_unknown_ids_fail() -> None:
    ok = {"id": "small", "ok": True, "value": 5}
    results = [ok, ok, {"id": "floats", "ok": True, "value": 0.3}, {"id": "extra", "ok": True, "value": 1}]
    checked = decide(results, CASES, "add")
    assert [c.passed for c in checked] == [False, True, False]
    assert checked[0].message == "This test was reported more than once."
    assert checked[2].message == "This test did not run."


def test_non_finite_floats_and_arrays_round_trip() -> None:
    cases = [
        Case("nan", [], {}, float("nan")),
        Case("inf", [], {}, [float("inf"), 1.0]),
        Case("close", [], {}, 1.0),
        Case("array", [], {}, [[1.0, 2.0], [3.0, 4.0]]),
    ]
    source = (
        "import numpy as np\n"
        "def add():\n    return add.values.pop(0)\n"
        "add.values = [float('nan'), (float('inf'), 1.0), 1.0000001, np.array([[1.0, 2.0], [3.0, 4.0000001]])]\n"
    )
    result = execute(source, cases=[c.inputs() for c in cases])
    verdict = judge(result, cases, "add")
    assert [c.passed for c in verdict.cases] == [True, True, True, True]


def test_arrays_must_match_in_shape_not_just_values() -> None:
    cases = [Case("shape", [], {}, [[1.0, 2.0]]), Case("flat", [], {}, [1.0, 2.0]), Case("list", [], {}, [1.0, 2.0])]
    source = "import numpy as np\ndef f():\n    return np.array([1.0, 2.0])\n"
    result = execute(source, entry="f", cases=[c.inputs() for c in cases])
    assert [c.passed for c in judge(result, cases, "f").cases] == [False, True, True]


def test_array_inputs_arrive_as_arrays_without_pickles() -> None:
    import base64
    import io

    buf = io.BytesIO()
    np.save(buf, np.arange(6.0).reshape(2, 3), allow_pickle=False)
    arg = {"__ndarray__": base64.b64encode(buf.getvalue()).decode()}
    cases = [Case("sum", [arg], {}, 15.0)]
    source = "def f(x):\n    return float(x.sum()) if x.shape == (2, 3) else -1.0\n"
    result = execute(source, entry="f", cases=[{"id": "sum", "args": [arg], "kwargs": {}}])
    assert judge(result, cases, "f").outcome == "passed"


def test_a_timeout_is_reported_by_the_driver() -> None:
    verdict = judge(execute("def add(a, b):\n    while True:\n        pass\n", time_s=1.0), CASES, "add")
    assert verdict.outcome == "timeout"


def test_nothing_reported_is_a_crash_never_a_pass() -> None:
    empty = RunResult("completed", None, 0, False, 0.1)
    assert judge(empty, CASES, "add").outcome == "crash"
    exited = run("import os\ndef add(a, b):\n    os._exit(0)\n")
    assert exited.outcome == "failed"
    assert all(c.message == "This test did not run." for c in exited.cases)


def test_text_from_the_container_is_nul_stripped_and_capped() -> None:
    assert clean("a\x00b" * 10, 8) == "abababa…"
    verdict = run("def add(a, b):\n    print('\\x00' * 100 + 'x' * 100000)\n    return a + b\n")
    assert "\x00" not in verdict.prints and len(verdict.prints) <= 8000
