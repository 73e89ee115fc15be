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

    def inputs(self) -> dict[str, Any]:
        """What of this case enters the container: its id, arguments and probe, never ``expected``."""
        if self.probe:
            return {"id": self.id, "args": self.args, "kwargs": self.kwargs, "probe": self.probe}
        return {"id": self.id, "args": self.args, "kwargs": self.kwargs}

    def call(self, entry: str) -> str:
        parts = [_short(a, 80) for a in self.args] + [f"{k}={_short(v, 80)}" for k, v in self.kwargs.items()]
        return clean(f"{entry}({', '.join(parts)})", VALUE_CAP)


@dataclass(frozen=True)
class CaseResult:
    id: str
    passed: bool
    call: str
    message: str = ""
    expected: str = ""
    got: str = ""


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
        if len(reported) != 1:
            why = "did not run" if not reported else "was reported more than once"
            out.append(CaseResult(case.id, False, call, f"This test {why}."))
            continue
        r = reported[0]
        if case.probe:
            out.append(_probe_result(case, call, r))
            continue
        if r.get("ok") is not True:
            out.append(CaseResult(case.id, False, call, clean(f"Raised {r.get('error', 'an error')}", 2000)))
            continue
        try:
            got = decode(r.get("value"))
        except (ValueError, TypeError) as exc:
            out.append(CaseResult(case.id, False, call, clean(f"The returned value could not be read: {exc}", 500)))
            continue
        expected, shown_got = _short(case.expected), _short(got)
        if equal(got, case.expected, case.rtol, case.atol):
            out.append(CaseResult(case.id, True, call, "", expected, shown_got))
        else:
            out.append(CaseResult(case.id, False, call, "Wrong value.", expected, shown_got))
    return out


def _probe_result(case: Case, call: str, reported: dict[str, Any]) -> CaseResult:
    """A probe's facts against the expected ones. Only the facts asked for are shown back."""
    expected = case.expected if isinstance(case.expected, dict) else {}
    shown_expected = _short(expected)
    if reported.get("ok") is not True:
        why = f"{case.requirement} The check could not run: {reported.get('error', 'an error')}"
        return CaseResult(case.id, False, call, clean(why, 2000), shown_expected)
    try:
        facts = decode(reported.get("value"))
    except (ValueError, TypeError):
        facts = None
    if not isinstance(facts, dict):
        why = f"{case.requirement} The check reported nothing."
        return CaseResult(case.id, False, call, clean(why, 2000), shown_expected)
    missing = object()
    got = {k: facts.get(k, missing) for k in expected}
    passed = bool(expected) and all(
        v is not missing and equal(v, expected[k], case.rtol, case.atol) for k, v in got.items()
    )
    shown_got = _short({k: v for k, v in got.items() if v is not missing})
    if passed:
        return CaseResult(case.id, True, call, "", shown_expected, shown_got)
    note = facts.get("note")
    message = case.requirement + (f" Found: {note}" if isinstance(note, str) and note else "")
    return CaseResult(case.id, False, call, clean(message, 2000), shown_expected, shown_got)


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


def _short(value: Any, cap: int = VALUE_CAP) -> str:
    if isinstance(value, np.ndarray):
        text = f"array(shape={list(value.shape)}, {np.array2string(value, threshold=20, precision=6)})"
    else:
        try:
            text = json.dumps(value, allow_nan=True)
        except (TypeError, ValueError):
            text = repr(value)
    return clean(text, cap)
