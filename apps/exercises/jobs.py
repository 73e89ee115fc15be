"""From a code exercise's spec to what the runner needs: the job, the cases, the limits.

What enters the container is the source, each test's inputs and, when some tests are probes, the
exercise's ``checks.py`` (trusted content: the checkers the probes name); the expected values
stay in the ``Case`` list, which only ``verdict.judge`` (in the worker) sees.

A random case (``draws``) has its inputs drawn per attempt; its expected value is what the
reference solution returns on them, in a job of its own run first (``reference_job``,
``with_reference``): the learner's code never shares a container with the reference.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import os
import re
import secrets
from typing import Any

from django.conf import settings

from apps.exercises import draws
from apps.exercises.content.schema import CodeSpec
from apps.sandbox.runner import Job, Limits, RunResult
from apps.sandbox.verdict import Case, decode, plain

_DEFAULTS = Limits()
CHECKER_FILE = "checks.py"


def code_cases(code: CodeSpec, *, seed: int | None = None) -> list[Case]:
    """The exercise's cases. With ``seed``, a random case's inputs are drawn for it (``draws``), its
    expected value still unknown (None) until ``with_reference`` fills it in; without, a random
    case has no inputs (what is only counted or profiled needs none)."""
    cases = []
    for c in code.cases:
        args, kwargs = c.args, c.kwargs
        if c.random is not None and seed is not None:
            args, kwargs = draws.draw(c.random, seed=seed, case_id=c.id)
        cases.append(
            Case(
                c.id,
                args,
                kwargs,
                c.expected,
                c.rtol,
                c.atol,
                probe=c.probe or "",
                requirement=c.requirement,
                example=c.example,
                precheck=c.precheck,
                random=c.random is not None,
            )
        )
    return cases


def fixed_only(code: CodeSpec) -> CodeSpec:
    """The exercise with its fixed cases only: for runs that draw nothing (the sandbox's own tests)."""
    return code.model_copy(update={"cases": [c for c in code.cases if c.random is None]})


def new_seed() -> int:
    """A seed for one attempt's random cases: unpredictable, and kept with the attempt."""
    return secrets.randbits(63)


def drawn_inputs(cases: list[Case], seed: int) -> dict[str, Any]:
    """What an instructor needs to see (and draw again) an attempt's random inputs."""
    return {"seed": seed, "inputs": {c.id: {"args": c.args, "kwargs": c.kwargs} for c in cases if c.random}}


class ReferenceFailed(Exception):
    """The reference solution could not compute a random case's expected value: the exercise's (or
    the sandbox's) fault, never the learner's. The attempt is not graded on it."""


def reference_job(code: CodeSpec, cases: list[Case]) -> Job | None:
    """The reference solution on the drawn inputs of the random cases (None: there are none)."""
    drawn = [c.inputs() for c in cases if c.random]
    if not drawn:
        return None
    files = {"submission.py": code.solution}
    return Job(code.entry, drawn, files, env=dict(code.env), warm=warm_modules(code.solution))


def with_reference(cases: list[Case], result: RunResult) -> list[Case]:
    """The cases with each random one's expected value: what the reference returned on its inputs."""
    report = result.report if isinstance(result.report, dict) else {}
    results = report.get("results")
    items: list[Any] = results if isinstance(results, list) else []
    by_id = {r.get("id"): r for r in items if isinstance(r, dict)}
    if result.status != "completed" or report.get("limit") or result.oom_killed:
        raise ReferenceFailed(f"the reference solution's run ended: {result.status} {report.get('limit') or ''}")
    out = []
    for case in cases:
        if case.random:
            r = by_id.get(case.id)
            if not r or r.get("ok") is not True:
                fatal = next((i.get("fatal") for i in items if isinstance(i, dict) and "fatal" in i), "no result")
                why = (r or {}).get("error") or fatal
                raise ReferenceFailed(f"the reference solution failed on {case.id}: {why}")
            try:
                expected = plain(decode(r.get("value")))
            except (ValueError, TypeError) as exc:
                raise ReferenceFailed(f"the reference solution's value on {case.id} could not be read: {exc}") from None
            case = dataclasses.replace(case, expected=expected)
        out.append(case)
    return out


def example_problems(code: CodeSpec, *, values_known: bool = True) -> list[str]:
    """Examples are shown with the prompt; hidden tests must still test something else.

    ``values_known``: the cases' expected values have been computed from the reference solution
    (not so when ``check_content --code skip`` runs no code: an example's value is then unknown).
    """
    problems: list[str] = []
    shown = [c for c in code.cases if c.example]
    if not shown:
        problems.append('code exercises need at least one example case ("example": True), shown with the prompt')
    for c in shown:
        if c.probe or c.random is not None:
            problems.append(f"example case {c.id} must be a plain call with a value, not a probe or a random case")
        elif c.expected is None:
            if values_known:
                problems.append(f"example case {c.id} has no expected value")
        else:
            size = len(example_call(code.entry, c.args, c.kwargs)) + len(_text(c.expected))
            if size > EXAMPLE_CHARS:
                problems.append(f"example case {c.id} is {size} characters long as text (at most {EXAMPLE_CHARS})")
    seen = [_text([c.args, c.kwargs]) for c in shown]
    hidden = [c for c in code.cases if not c.example and not c.probe]
    if shown and not any(c.random is not None or _text([c.args, c.kwargs]) not in seen for c in hidden):
        problems.append("code exercises need a hidden test (not a probe) whose inputs differ from every example's")
    return problems


# How long an example may be, as its call and expected value in text: a problem statement's
# example is read, not scrolled (check_content refuses a longer one).
EXAMPLE_CHARS = 1_000


def _text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def example_call(entry: str, args: list[Any], kwargs: dict[str, Any]) -> str:
    """``f(1, [2, 3], k=4)``: an example's call in full, its values as JSON."""
    parts = [_text(a) for a in args] + [f"{k}={_text(v)}" for k, v in kwargs.items()]
    return f"{entry}({', '.join(parts)})"


def examples(code: CodeSpec) -> list[dict[str, Any]]:
    """The cases shown to learners with the prompt: each call and its expected value, in text and as
    data. Every other case is a hidden test, whose inputs and expected value stay in the worker."""
    return [
        {
            "call": example_call(code.entry, c.args, c.kwargs),
            "returns_text": _text(c.expected),
            "args": c.args,
            "kwargs": c.kwargs,
            "returns": c.expected,
        }
        for c in code.cases
        if c.example
    ]


_IMPORTS = re.compile(r"^[ \t]*(?:import|from)[ \t]+(numpy|jax)\b", re.MULTILINE)


def warm_modules(*sources: str) -> tuple[str, ...]:
    """What a pooled container imports ahead for this code: numpy when it is used, JAX (and so
    numpy) when JAX is. Nothing for plain Python, whose container then costs the least to start."""
    used = {m for s in sources for m in _IMPORTS.findall(s)}
    if "jax" in used:
        return ("numpy", "jax")
    return ("numpy",) if "numpy" in used else ()


def code_job(code: CodeSpec, source: str, cases: list[Case] | None = None) -> Job:
    """``source`` on the exercise's cases (or on ``cases``, with a random case's inputs drawn): inputs only."""
    inputs = [case.inputs() for case in (code_cases(code) if cases is None else cases)]
    files = {"submission.py": source}
    if any(c.probe for c in code.cases):
        files[CHECKER_FILE] = code.checker
    warm = warm_modules(source, code.solution)
    if any(c.probe for c in code.cases):
        # A probe may ask what the submission imported (third-party modules loaded after the
        # checks): import ahead only what the checks import themselves, as a cold run would have.
        warm = tuple(m for m in warm if m in warm_modules(code.checker))
    return Job(code.entry, inputs, files, env=dict(code.env), warm=warm)


def checker_names(checker: str) -> set[str]:
    """The checkers a checks.py defines (top-level functions), read without running it."""
    tree = ast.parse(checker, filename=CHECKER_FILE)
    return {n.name for n in tree.body if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")}


def probe_problems(code: CodeSpec) -> list[str]:
    """What is wrong with an exercise's probe cases, before anything runs."""
    probes = [c for c in code.cases if c.probe]
    if not probes:
        return []
    try:
        defined = checker_names(code.checker)
    except SyntaxError as exc:
        return [f"{CHECKER_FILE} does not parse: {exc}"]
    problems = [] if code.checker.strip() else [f"probe cases need a {CHECKER_FILE} beside tests.py"]
    for case in probes:
        if code.checker.strip() and case.probe not in defined:
            problems.append(f"probe case {case.id} names an unknown checker {case.probe!r} (not in {CHECKER_FILE})")
        if not isinstance(case.expected, dict) or not case.expected:
            problems.append(f"probe case {case.id} needs its expected facts written out, as a non-empty dict")
        if not case.requirement.strip():
            problems.append(f"probe case {case.id} needs a requirement: the failure message, in plain words")
    return problems


def _setting(name: str, default: float) -> float:
    return float(getattr(settings, name, default)) if settings.configured else default


def limits_for(code: CodeSpec, *, slot: int = 0) -> Limits:
    """The exercise's limits (else the site defaults), on one CPU chosen by the worker's slot."""
    time_s = _setting("SANDBOX_TIME_LIMIT_S", _DEFAULTS.time_s)
    memory_mb = int(_setting("SANDBOX_MEMORY_MB", _DEFAULTS.memory_mb))
    if code.limits is not None:
        time_s = min(code.limits.time_s or time_s, _setting("SANDBOX_MAX_TIME_LIMIT_S", 120.0))
        memory_mb = min(code.limits.memory_mb or memory_mb, int(_setting("SANDBOX_MAX_MEMORY_MB", 4096)))
    return Limits(time_s=time_s, memory_mb=memory_mb, cpus=1.0, cpuset=str(slot % (os.cpu_count() or 1)))
