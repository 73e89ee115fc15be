"""Deciding pass or fail from what a run reported — outside the container, in the worker.

The container is given inputs only. What comes back is values (and the driver's account of how
the run ended); nothing in it is trusted to say "passed". A pass means: the run completed within
its limits, every expected test id was reported exactly once, none raised, and each value equals
the expected one (numbers within tolerance, arrays element by element with equal shapes).
Missing, duplicated or unknown ids fail; exit codes are never verdicts. Every string that came
from the container is NUL-stripped and capped here, before it can reach the database.

A *probe* case (``Case.probe``) reports facts about the learner's function (``{"vmap": true,
...}``, from the exercise's ``checks.py``) rather than its value. It passes when every expected
fact is reported and equal; extra facts are ignored. When it fails, its message is the case's
``requirement`` in plain words, followed by the checker's own ``note`` on what it found.

What a learner sees is ``learner_view`` of the stored verdict: an *example* case (``Case.example``)
with its call, expected value and what came back; every other case is a *hidden test*, shown only
as "hidden test k of n" and the failure's category (``CaseResult.category``: a wrong value, a
wrong shape or type, an exception with the learner's own traceback, a probe's requirement). Its
call, inputs, expected value and result stay in the stored verdict, for instructors. Messages are
written so that none ever holds an expected value, a call or a result: the category's words, the
learner's own exception, or a probe's requirement.
"""

from __future__ import annotations

import base64
import io
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from apps.sandbox.runner import RunResult

Outcome = Literal["passed", "failed", "error", "timeout", "memory_limit", "crash", "output_limit"]
TEXT_CAP = 8_000
VALUE_CAP = 300


@dataclass(frozen=True)
class Case:
    id: str
    args: list[Any]
    kwargs: dict[str, Any]
    expected: Any
    rtol: float = 1e-6
    atol: float = 1e-9
    probe: str = ""  # a checker in checks.py: the case reports facts about the function, not its value
    requirement: str = ""  # a probe's failure message: what the prompt asks, in plain words
    example: bool = False  # shown to learners (call and expected value) and run by the precheck
    precheck: bool = False  # a structural probe the precheck runs too
    random: bool = False  # inputs drawn for this attempt; expected from the reference solution run on them

    def inputs(self) -> dict[str, Any]:
        """What of this case enters the container: its id, arguments and probe, never ``expected``."""
        if self.probe:
            return {"id": self.id, "args": self.args, "kwargs": self.kwargs, "probe": self.probe}
        return {"id": self.id, "args": self.args, "kwargs": self.kwargs}

    def call(self, entry: str) -> str:
        args, kwargs = _readable(self.args), _readable(self.kwargs)
        parts = [_short(a, 80) for a in args] + [f"{k}={_short(v, 80)}" for k, v in kwargs.items()]
        return clean(f"{entry}({', '.join(parts)})", VALUE_CAP)


# Why a case failed, in what a learner may read of a hidden test (``learner_view``).
Category = Literal["", "wrong_value", "wrong_shape", "raised", "unreadable", "probe", "missing"]


@dataclass(frozen=True)
class CaseResult:
    id: str
    passed: bool
    call: str
    message: str = ""  # never the expected value, the call or the result (see the module)
    expected: str = ""
    got: str = ""
    example: bool = False
    category: Category = ""


@dataclass(frozen=True)
class Verdict:
    outcome: Outcome
    cases: list[CaseResult] = field(default_factory=list)
    message: str = ""
    traceback: str = ""
    prints: str = ""

    @property
    def passed(self) -> bool:
        return self.outcome == "passed"

    def as_dict(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome,
            "message": self.message,
            "traceback": self.traceback,
            "prints": self.prints,
            "tests": [c.__dict__ for c in self.cases],
            "passed_count": sum(c.passed for c in self.cases),
            "total": len(self.cases),
        }


# What of a stored verdict only instructors read: the random inputs drawn for it, and their seed.
INSTRUCTOR_ONLY = ("draw",)


def labels_of(tests: Sequence[dict[str, Any]]) -> list[str]:
    """Each test's label, "Example i" or "Hidden test k of n": k counts hidden tests in the exercise's
    order, so the same k is the same test on every attempt. A stored test without ``example`` (a
    verdict from before examples existed) is hidden."""
    hidden_total = sum(1 for t in tests if not t.get("example"))
    labels, examples, hidden = [], 0, 0
    for t in tests:
        if t.get("example"):
            examples += 1
            labels.append(f"Example {examples}")
        else:
            hidden += 1
            labels.append(f"Hidden test {hidden} of {hidden_total}")
    return labels


def learner_rows(tests: Sequence[Any]) -> list[dict[str, Any]]:
    """A run's tests as the learner may see them, failing first (otherwise in the tests' order).

    An example keeps its call, expected value and result. A hidden test is its label, whether it
    passed, its category and the category's message, which never holds a call, an input, an
    expected value or a result (see the module).
    """
    full = [t for t in tests if isinstance(t, dict)]
    rows: list[dict[str, Any]] = []
    for label, t in zip(labels_of(full), full, strict=True):
        passed = bool(t.get("passed"))
        row: dict[str, Any] = {"label": label, "example": bool(t.get("example")), "passed": passed}
        row["category"] = "" if passed else str(t.get("category") or "failed")
        row["message"] = "" if passed else clean(t.get("message", ""), 2000)
        if row["example"]:
            row |= {k: clean(t.get(k, ""), VALUE_CAP) for k in ("call", "expected", "got")}
        rows.append(row)
    return sorted(rows, key=lambda r: r["passed"])  # stable: failing first


def learner_view(details: dict[str, Any]) -> dict[str, Any]:
    """A code attempt's stored details as its learner may see them (``learner_rows``)."""
    shown = {k: v for k, v in details.items() if k not in INSTRUCTOR_ONLY}
    if isinstance(details.get("tests"), list):
        shown["tests"] = learner_rows(details["tests"])
    return shown


def instructor_rows(tests: Sequence[Any]) -> list[dict[str, Any]]:
    """Every test in full (id, call, expected, result), labelled as its learner saw it, failing first."""
    full = [t for t in tests if isinstance(t, dict)]
    rows = [{**t, "label": f"{label} · {t.get('id', '')}"} for label, t in zip(labels_of(full), full, strict=True)]
    return sorted(rows, key=lambda r: bool(r.get("passed")))


def clean(text: object, cap: int = TEXT_CAP) -> str:
    """Text from the container, safe to store: no NUL (PostgreSQL refuses it), bounded length."""
    s = str(text).replace("\x00", "")
    return s if len(s) <= cap else s[: cap - 1] + "…"


_LIMIT_MESSAGES: dict[str, str] = {
    "timeout": "Your code ran past the time limit. Look for an endless loop or a far slower method than needed.",
    "memory_limit": "Your code used more memory than the sandbox allows.",
    "output_limit": "Your code printed or returned more output than the sandbox allows.",
}


def judge(result: RunResult, cases: Sequence[Case], entry: str) -> Verdict:
    """The verdict on one run. Only the comparison with ``cases`` can produce "passed"."""
    report = result.report if isinstance(result.report, dict) else {}
    prints = clean(report.get("prints", ""))
    if result.status in ("timeout", "output_limit"):
        return Verdict(result.status, message=_LIMIT_MESSAGES[result.status], prints=prints)
    limit = report.get("limit")
    if result.oom_killed or limit == "memory_limit":
        return Verdict("memory_limit", message=_LIMIT_MESSAGES["memory_limit"], prints=prints)
    if limit in ("timeout", "output_limit"):
        return Verdict(limit, message=_LIMIT_MESSAGES[limit], prints=prints)
    if result.report is None or ("fatal" in report and "results" not in report):
        return Verdict("crash", message="The run ended without reporting its results.", prints=prints)
    results = report.get("results")
    if not isinstance(results, list):
        return Verdict("crash", message="The run ended without reporting its results.", prints=prints)
    fatal = next((r for r in results if isinstance(r, dict) and "fatal" in r), None)
    if fatal is not None:
        return Verdict(
            "error",
            message=clean(fatal.get("fatal", "")),
            traceback=clean(fatal.get("traceback", "")),
            prints=prints,
        )
    checked = decide(results, cases, entry)
    signal_name = report.get("signal")
    if signal_name:
        why = "crashed" if signal_name != "SIGKILL" else "was killed"
        return Verdict(
            "crash", checked, message=clean(f"Your code {why} ({signal_name}) before finishing.", 200), prints=prints
        )
    if all(c.passed for c in checked) and checked:
        return Verdict("passed", checked, message=f"All {len(checked)} tests passed.", prints=prints)
    raised = next((r for r in results if isinstance(r, dict) and r.get("ok") is False and r.get("traceback")), None)
    n_failed = sum(not c.passed for c in checked)
    message = f"{n_failed} of {len(checked)} tests failed."
    if raised is not None:
        error = str(raised.get("error", ""))
        return Verdict(
            "error",
            checked,
            message=clean(f"{message} {error[:1].upper()}{error[1:]}"),
            traceback=clean(raised["traceback"]),
            prints=prints,
        )
    return Verdict("failed", checked, message=message, prints=prints)


def decide(results: list[Any], cases: Sequence[Case], entry: str) -> list[CaseResult]:
    """Each expected case against what was reported for it, exactly once."""
    by_id: dict[str, list[dict[str, Any]]] = {}
    for r in results:
        if isinstance(r, dict) and isinstance(r.get("id"), str):
            by_id.setdefault(r["id"], []).append(r)
    out: list[CaseResult] = []
    for case in cases:
        reported = by_id.get(case.id, [])
        call = case.call(entry)
        ex = case.example
        if len(reported) != 1:
            why = "did not run" if not reported else "was reported more than once"
            out.append(CaseResult(case.id, False, call, f"This test {why}.", example=ex, category="missing"))
            continue
        r = reported[0]
        if case.probe:
            out.append(_probe_result(case, call, r))
            continue
        if r.get("ok") is not True:
            raised = clean(f"Raised {r.get('error', 'an error')}", 2000)
            out.append(CaseResult(case.id, False, call, raised, example=ex, category="raised"))
            continue
        try:
            got = decode(r.get("value"))
        except (ValueError, TypeError) as exc:
            unreadable = clean(f"The returned value could not be read: {exc}", 500)
            out.append(CaseResult(case.id, False, call, unreadable, example=ex, category="unreadable"))
            continue
        expected, shown_got = _short(case.expected), _short(got)
        if equal(got, case.expected, case.rtol, case.atol):
            out.append(CaseResult(case.id, True, call, "", expected, shown_got, example=ex))
        elif shape_of(got) == shape_of(case.expected):
            out.append(CaseResult(case.id, False, call, "Wrong value.", expected, shown_got, ex, "wrong_value"))
        else:
            message = "Wrong shape or type."
            out.append(CaseResult(case.id, False, call, message, expected, shown_got, ex, "wrong_shape"))
    return out


def shape_of(value: Any) -> Any:
    """A value's structure without its numbers: what "wrong shape or type" compares.

    Numbers (of any precision) are one kind, numeric arrays and nested lists of numbers are their
    shape, dicts their keys' structures (a dict whose keys differ is a wrong value: keys are data,
    as in a count of pairs), other values their type.
    """
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, (list, np.ndarray)):
        if _is_numeric_array(value):
            return ("array", tuple(np.asarray(value).shape))
        if isinstance(value, np.ndarray):
            return ("array", str(value.dtype))
        return ("list", tuple(shape_of(v) for v in value))
    if isinstance(value, dict):
        return "dict"
    return type(value).__name__


def _probe_result(case: Case, call: str, reported: dict[str, Any]) -> CaseResult:
    """A probe's facts against the expected ones. Only the facts asked for are shown back."""
    expected = case.expected if isinstance(case.expected, dict) else {}
    shown_expected = _short(expected)
    ex = case.example
    if reported.get("ok") is not True:
        why = f"{case.requirement} The check could not run: {reported.get('error', 'an error')}"
        return CaseResult(case.id, False, call, clean(why, 2000), shown_expected, example=ex, category="probe")
    try:
        facts = decode(reported.get("value"))
    except (ValueError, TypeError):
        facts = None
    if not isinstance(facts, dict):
        why = f"{case.requirement} The check reported nothing."
        return CaseResult(case.id, False, call, clean(why, 2000), shown_expected, example=ex, category="probe")
    missing = object()
    got = {k: facts.get(k, missing) for k in expected}
    passed = bool(expected) and all(
        v is not missing and equal(v, expected[k], case.rtol, case.atol) for k, v in got.items()
    )
    shown_got = _short({k: v for k, v in got.items() if v is not missing})
    if passed:
        return CaseResult(case.id, True, call, "", shown_expected, shown_got, example=ex)
    note = facts.get("note")
    message = case.requirement + (f" Found: {note}" if isinstance(note, str) and note else "")
    return CaseResult(case.id, False, call, clean(message, 2000), shown_expected, shown_got, ex, "probe")


def decode(value: Any) -> Any:
    """A reported value back to Python: ``__float__`` markers and ``.npy`` arrays (no pickles)."""
    if isinstance(value, dict):
        if set(value) == {"__float__"}:
            return float(value["__float__"])
        if set(value) == {"__ndarray__"}:
            raw = base64.b64decode(str(value["__ndarray__"]), validate=True)
            array = np.load(io.BytesIO(raw), allow_pickle=False)
            if array.dtype.kind not in "biuf":
                raise ValueError(f"arrays of {array.dtype} are not graded")
            return array
        return {k: decode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [decode(v) for v in value]
    return value


def plain(value: Any) -> Any:
    """A decoded value as plain JSON (arrays as nested lists), for storing expected values."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def _is_numeric_array(value: Any) -> bool:
    if isinstance(value, np.ndarray):
        return True
    try:
        array = np.asarray(value)
    except (ValueError, TypeError):
        return False
    return array.dtype.kind in "biuf" and array.ndim > 0


def equal(got: Any, expected: Any, rtol: float, atol: float) -> bool:
    if isinstance(got, np.ndarray) or isinstance(expected, np.ndarray):
        if not (_is_numeric_array(got) and _is_numeric_array(expected)):
            return False
        g, e = np.asarray(got, dtype=float), np.asarray(expected, dtype=float)
        return g.shape == e.shape and bool(np.allclose(g, e, rtol=rtol, atol=atol, equal_nan=True))
    if isinstance(expected, bool) or isinstance(got, bool):
        return isinstance(got, bool) and isinstance(expected, bool) and got == expected
    if isinstance(expected, (int, float)) and isinstance(got, (int, float)):
        if math.isnan(expected) or math.isnan(got):
            return math.isnan(expected) and math.isnan(got)
        if math.isinf(expected) or math.isinf(got):
            return got == expected
        return abs(got - expected) <= atol + rtol * abs(expected)
    if isinstance(expected, list) and isinstance(got, list):
        return len(got) == len(expected) and all(equal(g, e, rtol, atol) for g, e in zip(got, expected, strict=True))
    if isinstance(expected, dict) and isinstance(got, dict):
        return got.keys() == expected.keys() and all(equal(got[k], expected[k], rtol, atol) for k in expected)
    return bool(type(got) is type(expected) and got == expected)


def _readable(value: Any) -> Any:
    """Inputs with their ``.npy`` arrays loaded, to be shown (a drawn array is not base64 to a reader)."""
    try:
        return decode(value)
    except (ValueError, TypeError):
        return value


def _short(value: Any, cap: int = VALUE_CAP) -> str:
    if isinstance(value, np.ndarray):
        text = f"array(shape={list(value.shape)}, {np.array2string(value, threshold=20, precision=6)})"
    else:
        try:
            text = json.dumps(value, allow_nan=True)
        except (TypeError, ValueError):
            text = repr(value)
    return clean(text, cap)
