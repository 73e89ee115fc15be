"""Deciding pass or fail from what the harness reported, outside the learner's process.

A pass means every expected test id was reported exactly once, ran without error, and returned
a value equal to the expected one (numbers within tolerance, element by element for arrays).
Missing, duplicated or unknown ids fail; exit codes are never verdicts.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Case:
    id: str
    args: list[Any]
    kwargs: dict[str, Any]
    expected: Any
    rtol: float = 1e-6
    atol: float = 1e-9


@dataclass(frozen=True)
class CaseResult:
    id: str
    passed: bool
    message: str = ""
    got: Any = None


@dataclass(frozen=True)
class Verdict:
    passed: bool
    outcome: str  # passed | failed | error
    cases: list[CaseResult] = field(default_factory=list)
    message: str = ""


def decode(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"__float__"}:
            return float(value["__float__"])
        return {k: decode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [decode(v) for v in value]
    return value


def equal(got: Any, expected: Any, rtol: float, atol: float) -> bool:
    if isinstance(expected, bool) or isinstance(got, bool):
        return got is expected or (isinstance(got, bool) and isinstance(expected, bool) and got == expected)
    if isinstance(expected, (int, float)) and isinstance(got, (int, float)):
        if math.isnan(expected):
            return math.isnan(got)
        if math.isinf(expected) or math.isinf(got):
            return got == expected
        return abs(got - expected) <= atol + rtol * abs(expected)
    if isinstance(expected, list) and isinstance(got, list):
        return len(got) == len(expected) and all(equal(g, e, rtol, atol) for g, e in zip(got, expected, strict=True))
    if isinstance(expected, dict) and isinstance(got, dict):
        return got.keys() == expected.keys() and all(equal(got[k], expected[k], rtol, atol) for k in expected)
    return bool(type(got) is type(expected) and got == expected)


def _call(case: Case, entry: str) -> str:
    parts = [json.dumps(a) for a in case.args] + [f"{k}={json.dumps(v)}" for k, v in case.kwargs.items()]
    text = f"{entry}({', '.join(parts)})"
    return text if len(text) <= 200 else text[:197] + "..."


def _short(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 200 else text[:197] + "..."


def decide(report: dict[str, Any], cases: Sequence[Case], entry: str) -> Verdict:
    if "fatal" in report:
        return Verdict(False, "error", message=str(report["fatal"]) + "\n" + str(report.get("traceback", "")))
    results = report.get("results")
    if not isinstance(results, list):
        return Verdict(False, "error", message="the test run reported nothing")
    by_id: dict[str, list[dict[str, Any]]] = {}
    for r in results:
        if isinstance(r, dict) and isinstance(r.get("id"), str):
            by_id.setdefault(r["id"], []).append(r)
    out: list[CaseResult] = []
    for case in cases:
        reported = by_id.get(case.id, [])
        call = _call(case, entry)
        if len(reported) != 1:
            why = "did not run" if not reported else "was reported more than once"
            out.append(CaseResult(case.id, False, f"{call} {why}"))
            continue
        r = reported[0]
        if not r.get("ok"):
            out.append(CaseResult(case.id, False, f"{call} raised {r.get('error', 'an error')}"))
            continue
        got = decode(r.get("value"))
        if equal(got, case.expected, case.rtol, case.atol):
            out.append(CaseResult(case.id, True, call, got))
        else:
            out.append(CaseResult(case.id, False, f"{call}: expected {_short(case.expected)}, got {_short(got)}", got))
    passed = bool(out) and all(c.passed for c in out)
    return Verdict(passed, "passed" if passed else "failed", out)
