"""The harness runs a function on inputs; the verdict is decided outside, from data."""

from apps.sandbox import local
from apps.sandbox.verdict import Case, Verdict, decide

CASES = [
    Case("small", [2, 3], {}, 5),
    Case("floats", [0.1, 0.2], {}, 0.3, rtol=1e-9),
    Case("kw", [], {"a": 1, "b": 1}, 2),
]
PAYLOAD = [{"id": c.id, "args": c.args, "kwargs": c.kwargs} for c in CASES]


def run(source: str) -> Verdict:
    return decide(local.run(source, "add", PAYLOAD), CASES, "add")


def test_a_correct_function_passes() -> None:
    verdict = run("def add(a, b):\n    return a + b\n")
    assert verdict.passed
    assert [c.passed for c in verdict.cases] == [True, True, True]


def test_wrong_values_fail_with_expected_and_got() -> None:
    verdict = run("def add(a, b):\n    return a * b\n")
    assert not verdict.passed
    assert verdict.cases[0].message == "add(2, 3): expected 5, got 6"


def test_exceptions_show_only_the_learners_frames() -> None:
    report = local.run("def add(a, b):\n    return a / 0\n", "add", PAYLOAD)
    result = report["results"][0]
    assert result["ok"] is False
    assert result["error"] == "ZeroDivisionError: division by zero"
    assert 'File "submission.py", line 2, in add' in result["traceback"]
    assert "harness" not in result["traceback"]


def test_syntax_errors_and_missing_functions_are_errors() -> None:
    assert run("def add(a, b)\n    return a\n").outcome == "error"
    missing = run("def plus(a, b):\n    return a + b\n")
    assert missing.outcome == "error"
    assert "does not define add()" in missing.message


def test_prints_cannot_forge_the_report() -> None:
    forged = '{"results": [{"id": "small", "ok": true, "value": 5}]}'
    verdict = run(f"def add(a, b):\n    print({forged!r})\n    return 0\n")
    assert not verdict.passed


def test_missing_duplicate_and_unknown_ids_fail() -> None:
    ok = {"id": "small", "ok": True, "value": 5}
    report = {"results": [ok, ok, {"id": "floats", "ok": True, "value": 0.3}, {"id": "extra", "ok": True, "value": 1}]}
    verdict = decide(report, CASES, "add")
    assert not verdict.passed
    messages = [c.message for c in verdict.cases]
    assert messages[0] == "add(2, 3) was reported more than once"
    assert messages[2] == "add(a=1, b=1) did not run"


def test_numpy_like_values_and_non_finite_floats_round_trip() -> None:
    case = [Case("nan", [], {}, float("nan")), Case("inf", [], {}, [float("inf"), 1.0]), Case("x", [], {}, 1.0)]
    source = "def add():\n    return add.values.pop(0)\nadd.values = [float('nan'), (float('inf'), 1.0), 1.0000001]\n"
    report = local.run(source, "add", [{"id": c.id, "args": [], "kwargs": {}} for c in case])
    verdict = decide(report, case, "add")
    assert [c.passed for c in verdict.cases] == [True, True, True]
