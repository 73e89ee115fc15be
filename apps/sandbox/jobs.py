"""From a code exercise's spec to what the runner needs: the job, the cases, the limits.

What enters the container is the source and each test's inputs; the expected values stay in
the ``Case`` list, which only ``verdict.judge`` (in the worker) sees.
"""

from __future__ import annotations

import os

from django.conf import settings

from apps.exercises.content.schema import CodeSpec
from apps.sandbox.runner import Job, Limits
from apps.sandbox.verdict import Case

_DEFAULTS = Limits()


def code_cases(code: CodeSpec) -> list[Case]:
    return [Case(c.id, c.args, c.kwargs, c.expected, c.rtol, c.atol) for c in code.cases]


def code_job(code: CodeSpec, source: str) -> Job:
    cases = [case.inputs() for case in code_cases(code)]
    return Job(code.entry, cases, {"submission.py": source}, env=dict(code.env))


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
