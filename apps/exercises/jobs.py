"""From a code exercise's spec to what the runner needs: the job, the cases, the limits.

What enters the container is the source, each test's inputs and, when some tests are probes, the
exercise's ``checks.py`` (trusted content: the checkers the probes name); the expected values
stay in the ``Case`` list, which only ``verdict.judge`` (in the worker) sees.
"""

from __future__ import annotations

import ast
import os
import re

from django.conf import settings

from apps.exercises.content.schema import CodeSpec
from apps.sandbox.runner import Job, Limits
from apps.sandbox.verdict import Case

_DEFAULTS = Limits()
CHECKER_FILE = "checks.py"


def code_cases(code: CodeSpec) -> list[Case]:
    return [
        Case(c.id, c.args, c.kwargs, c.expected, c.rtol, c.atol, probe=c.probe or "", requirement=c.requirement)
        for c in code.cases
    ]


_IMPORTS = re.compile(r"^[ \t]*(?:import|from)[ \t]+(numpy|jax)\b", re.MULTILINE)


def warm_modules(*sources: str) -> tuple[str, ...]:
    """What a pooled container imports ahead for this code: numpy when it is used, JAX (and so
    numpy) when JAX is. Nothing for plain Python, whose container then costs the least to start."""
    used = {m for s in sources for m in _IMPORTS.findall(s)}
    if "jax" in used:
        return ("numpy", "jax")
    return ("numpy",) if "numpy" in used else ()


def code_job(code: CodeSpec, source: str) -> Job:
    cases = [case.inputs() for case in code_cases(code)]
    files = {"submission.py": source}
    if any(c.probe for c in code.cases):
        files[CHECKER_FILE] = code.checker
    warm = warm_modules(source, code.solution)
    if any(c.probe for c in code.cases):
        # A probe may ask what the submission imported (third-party modules loaded after the
        # checks): import ahead only what the checks import themselves, as a cold run would have.
        warm = tuple(m for m in warm if m in warm_modules(code.checker))
    return Job(code.entry, cases, files, env=dict(code.env), warm=warm)


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
