"""The hostile suite once more, under the other ways the sandbox can run: gVisor (``runsc``) with
the pool, and plain runc with the pool off (a cold container per run).

``test_hostile.py`` sends each submission through the session's worker (runc, pooled), with the
attempts and the progress they leave. Here the same submissions go straight to a runner of each
kind (the worker adds nothing that depends on the runtime), two at a time, with the limits the
worker would give them; each must end exactly as it does there (or as its ``gvisor`` entry says
where gVisor's kernel answers otherwise), and the honest references still pass afterwards.
``make test`` registers gVisor first (scripts/gvisor.sh): a machine without it fails here.
"""

from __future__ import annotations

import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import pytest

from apps.exercises.content import cache
from apps.exercises.content.schema import CodeSpec
from apps.exercises.jobs import code_cases, code_job, fixed_only, limits_for
from apps.exercises.models import Exercise
from apps.sandbox import health
from apps.sandbox.pool import PooledRunner
from apps.sandbox.runner import DockerRunner, Runner
from apps.sandbox.tests.conftest import SolutionReader
from apps.sandbox.tests.test_hostile import HOSTILE, JAX, PLAIN, Hostile, Target
from apps.sandbox.tests.worker import ROOT, WORKER_TIME_LIMIT_S
from apps.sandbox.verdict import Verdict, judge

pytestmark = pytest.mark.slow


def _gvisor_registered() -> bool:
    done = subprocess.run(["bash", str(ROOT / "scripts" / "gvisor.sh"), "--check"], capture_output=True, check=False)  # noqa: S603, S607
    return done.returncode == 0


def _code(target: Target) -> CodeSpec:
    exercise = Exercise.objects.select_related("current_version").get(
        workbook__slug=target.workbook, number=target.number, is_active=True
    )
    assert exercise.current_version is not None
    code = cache.resolved(exercise.current_version).spec.code
    assert code is not None
    return code


# A submission that must end some other way than at the time limit (a crash, an error, a refused
# write) gets this much time to get there: on a slow or busy machine, walking the file system under
# gVisor or building a million nested lists in a cold container can outlast the 5 s that hostile
# loops are given, and "timeout" would then hide whether it was contained the way it should be.
PATIENT_TIME_LIMIT_S = 60.0


def _run(runner: Runner, code: CodeSpec, source: str, slot: int, *, patient: bool = False) -> Verdict:
    code = fixed_only(code)  # what is tested here is containment, not draws
    limits = limits_for(code, slot=slot)
    if code.limits is None:  # the session worker's default limit, as test_hostile.py meets it
        limits = replace(limits, time_s=float(WORKER_TIME_LIMIT_S))
    if patient:
        limits = replace(limits, time_s=max(limits.time_s, PATIENT_TIME_LIMIT_S))
    return judge(runner.run(code_job(code, source), limits), code_cases(code), code.entry)


@pytest.mark.parametrize(("runtime", "pooled"), [("runsc", True), ("runc", False)], ids=["gvisor-pooled", "runc-cold"])
def test_hostile_submissions_are_contained_under_each_runtime(
    runtime: str, pooled: bool, sandbox_image: str, db: None, reference: SolutionReader
) -> None:
    if runtime == "runsc":
        assert _gvisor_registered(), "gVisor is not registered with Docker: run scripts/gvisor.sh (make test does)"
    cold = DockerRunner(sandbox_image, owner=f"runtimes-{runtime}-{time.monotonic_ns()}", runtime=runtime)
    runner: Runner = PooledRunner(cold, size=1, idle_s=120) if pooled else cold
    specs = {target: _code(target) for target in (PLAIN, JAX)}  # read here: the threads need no database
    try:
        assert health.self_test(runner) == []  # the canary and the probe, this runtime's way

        def attempt(item: tuple[int, Hostile]) -> str:
            index, hostile = item
            outcome, says = (
                (hostile.gvisor or (hostile.outcome, hostile.says))
                if runtime == "runsc"
                else (hostile.outcome, hostile.says)
            )
            patient = "timeout" not in outcome.split("|")
            verdict = _run(runner, specs[hostile.target], hostile.source, slot=index % 2, patient=patient)
            shown = " ".join([verdict.message, verdict.traceback] + [c.message for c in verdict.cases])
            if verdict.passed:
                return f"{hostile.name}: PASSED — a breach"
            if verdict.outcome not in outcome.split("|") or says not in shown:
                return f"{hostile.name}: {verdict.outcome} ({shown[:300]!r}), expected {outcome} with {says!r}"
            return ""

        with ThreadPoolExecutor(max_workers=2) as threads:
            wrong = [w for w in threads.map(attempt, enumerate(HOSTILE)) if w]
        assert wrong == [], "\n".join(wrong)
        for target in (PLAIN, JAX):
            honest = _run(
                runner, specs[target], reference(target.reference, workbook=target.workbook), slot=0, patient=True
            )
            assert honest.passed, (target, honest.message)
    finally:
        if isinstance(runner, PooledRunner):
            runner.stop()
