"""The precheck through its API, run by the session's real sandbox worker (real Redis, real containers).

A precheck writes no database row, so these tests need nothing committed: the worker reads only the
content synced for the session and the precheck's record in Redis.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

import pytest
from django.core.cache import cache
from django.test import override_settings
from django.utils import timezone
from rest_framework.test import APIClient

from apps.accounts.models import User
from apps.core.throttling import FixedWindowScopedThrottle
from apps.exercises.choices import AnswerFormat, ExerciseKind
from apps.exercises.content import cache as content_cache
from apps.exercises.models import Attempt, Exercise
from apps.exercises.tests.factories import ExerciseFactory
from apps.precheck import services
from apps.precheck.records import NOTE, Precheck, active_key, record_key
from apps.progress.models import ExerciseProgress, ReviewCard
from apps.sandbox.runner import DockerRunner
from apps.sandbox.tests.worker import ROOT, WorkerProcess

pytestmark = pytest.mark.slow
WB = "transformer-math"
WRONG_0_5 = "def param_count(d, n_layers, vocab_size):\n    return 13\n"
FINAL = ("checked", "not_run")


def url(number: str) -> str:
    return f"/api/v1/workbooks/{WB}/exercises/{number}/precheck/"


def poll(client: APIClient, location: str, timeout: float = 90.0) -> tuple[dict[str, Any], set[str]]:
    seen: set[str] = set()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        response = client.get(location)
        assert response.status_code == 200, response.json()
        body = response.json()
        seen.add(body["status"])
        if body["status"] in FINAL:
            return body, seen
        time.sleep(0.05)
    raise AssertionError(f"{location} never finished")


def cases_of(number: str) -> list[Any]:
    version = Exercise.objects.get(workbook__slug=WB, number=number, is_active=True).current_version
    assert version is not None
    code = content_cache.resolved(version).spec.code
    assert code is not None
    return list(code.cases)


def error(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.content
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "details"}, body
    assert body["error"]["code"] == code, body
    return dict(body["error"])


def test_precheck_runs_the_examples_only_and_counts_nothing(
    api: APIClient, student: User, other_student: User, sandbox_worker: WorkerProcess
) -> None:
    cases = cases_of("0.5")
    examples = [c for c in cases if c.example]
    assert examples and len(examples) < len(cases)  # some hidden tests, which must not run
    # A learner's code that sleeps first: the precheck is still pending when a second is asked for.
    slow = "import time\ntime.sleep(1)\n" + WRONG_0_5
    response = api.post(url("0.5"), {"code": slow}, format="json")
    assert response.status_code == 202, response.json()
    started = response.json()
    assert response["Location"] == started["url"] == f"/api/v1/prechecks/{started['id']}/"
    assert started["status"] in ("queued", "running", "checked")
    assert (started["note"], started["graded"], started["tests_total"]) == (NOTE, False, len(examples))
    # One at a time per learner.
    busy = error(api.post(url("0.5"), {"code": WRONG_0_5}, format="json"), 409, "precheck_running")
    assert busy["details"] == {"id": started["id"]}

    done, seen = poll(api, started["url"])
    assert seen <= {"queued", "running", "checked"}
    failing = [c for c in examples if c.expected != 13]
    tests = [
        {
            "id": c.id,
            "kind": "example",
            "passed": c.expected == 13,
            "call": "param_count(" + ", ".join(json.dumps(a) for a in c.args) + ")",
            "expected": json.dumps(c.expected),
            "got": "13",
            "requirement": "",
            "message": "" if c.expected == 13 else "Wrong value.",
        }
        for c in examples
    ]
    assert done["tests"] == sorted(tests, key=lambda t: t["passed"])  # failing first
    noun = f"{len(examples)} example{'s' if len(examples) != 1 else ''}"
    assert done == {
        **started,
        "status": "checked",
        "outcome": "failed",
        "message": f"{len(failing)} of {len(examples)} failed ({noun}).",
        "tests": done["tests"],
        "time_limit_s": done["time_limit_s"],
        "started_at": done["started_at"],
        "elapsed_s": done["elapsed_s"],
    }
    assert done["time_limit_s"] > 0 and done["elapsed_s"] >= 1
    # Hidden tests neither ran nor show.
    hidden = {c.id for c in cases if not c.example and not c.precheck}
    assert not hidden & {t["id"] for t in done["tests"]}

    # Another learner's precheck is a 404, as is an id that never was.
    stranger = APIClient()
    stranger.force_authenticate(other_student)
    error(stranger.get(started["url"]), 404, "not_found")
    error(api.get(f"/api/v1/prechecks/{uuid.uuid4()}/"), 404, "not_found")

    # The right code passes the examples: still not graded, still nothing counted.
    solution = (ROOT / "fixtures/workbooks" / WB / "code/0.5-param-count/solution.py").read_text()
    passed, _ = poll(api, api.post(url("0.5"), {"code": solution}, format="json").json()["url"])
    assert (passed["status"], passed["outcome"], passed["graded"]) == ("checked", "passed", False)
    assert passed["message"].startswith(f"All {len(examples)} passed")
    assert all(t["passed"] for t in passed["tests"])

    assert not Attempt.objects.filter(user=student).exists()
    assert not ExerciseProgress.objects.filter(user=student).exists()
    assert not ReviewCard.objects.filter(user=student).exists()
    state = api.get(f"/api/v1/workbooks/{WB}/exercises/0.5/").json()["state"]
    assert (state["attempts"], state["solved"]) == (0, False)


def test_a_structural_check_shows_its_requirement(api: APIClient, sandbox_worker: WorkerProcess) -> None:
    cases = cases_of("1.6")
    check = next(c for c in cases if c.precheck and c.probe)
    solution = (ROOT / "fixtures/workbooks" / WB / "code/1.6-scaled-dot-product/solution.py").read_text()
    done, _ = poll(api, api.post(url("1.6"), {"code": "import numpy\n" + solution}, format="json").json()["url"])
    assert (done["status"], done["outcome"]) == ("checked", "failed"), done
    by_id = {t["id"]: t for t in done["tests"]}
    assert set(by_id) == {c.id for c in cases if c.example or c.precheck}
    assert all(t["passed"] for t in done["tests"] if t["kind"] == "example")
    assert by_id[check.id] == {
        "id": check.id,
        "kind": "check",
        "passed": False,
        "call": "",
        "expected": "",
        "got": "",
        "requirement": check.requirement,
        "message": "Found: it imports numpy.",
    }


def test_what_a_precheck_refuses(
    api: APIClient, anon_api: APIClient, student: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Rates per day, so that no window ends during the test: five prechecks, one submission.
    rates = {**FixedWindowScopedThrottle.THROTTLE_RATES, "precheck": "5/day", "attempts": "1/day"}
    monkeypatch.setattr(FixedWindowScopedThrottle, "THROTTLE_RATES", rates)
    error(anon_api.post(url("0.5"), {"code": WRONG_0_5}, format="json"), 401, "not_authenticated")
    error(anon_api.get(f"/api/v1/prechecks/{uuid.uuid4()}/"), 401, "not_authenticated")
    error(api.post(url("1.1"), {"code": WRONG_0_5}, format="json"), 400, "not_code")
    syntax = error(api.post(url("0.5"), {"code": "def f(:\n"}, format="json"), 400, "syntax_error")
    assert syntax["details"]["line"] == 1
    error(api.post(url("0.5"), {"code": 7}, format="json"), 400, "validation_error")
    # A code exercise with neither examples nor structural checks says so.
    exercise = _code_exercise_without_examples()
    bare = f"/api/v1/workbooks/{exercise.workbook.slug}/exercises/{exercise.number}/precheck/"
    error(api.post(bare, {"code": WRONG_0_5}, format="json"), 400, "nothing_to_precheck")
    assert not Attempt.objects.filter(user=student).exists()

    # A rate of its own: prechecks run out while submissions go on, and the other way round.
    # Four prechecks were asked for above (each counts, whatever came of it); five are allowed.
    assert api.post(url("0.5"), {"code": "("}, format="json").status_code == 400
    response = api.post(url("0.5"), {"code": WRONG_0_5}, format="json")
    throttled = error(response, 429, "throttled")
    assert throttled["details"]["retry_after_seconds"] == int(response["Retry-After"]) > 0
    answer = api.post(f"/api/v1/workbooks/{WB}/exercises/1.1/attempts/", {"answer": "1"}, format="json")
    assert answer.status_code == 201
    assert (
        api.post(f"/api/v1/workbooks/{WB}/exercises/1.1/attempts/", {"answer": "1"}, format="json").status_code == 429
    )


def test_no_sandbox_means_nothing_runs(api: APIClient, student: User, no_sandbox: None) -> None:
    error(api.post(url("0.5"), {"code": WRONG_0_5}, format="json"), 503, "sandbox_unavailable")


def test_a_sandbox_fault_or_a_lost_run_is_could_not_run(api: APIClient, student: User) -> None:
    def pending(deadline_s: float) -> Precheck:
        exercise = Exercise.objects.get(workbook__slug=WB, number="0.5", is_active=True)
        precheck = Precheck(
            id=str(uuid.uuid4()),
            user_id=student.pk,
            exercise_id=exercise.pk,
            version_id=exercise.current_version_id or 0,
            workbook=WB,
            number="0.5",
            code=WRONG_0_5,
            created_at=timezone.now(),
            deadline=time.time() + deadline_s,
        )
        cache.set(record_key(precheck.id), precheck.as_record())
        cache.set(active_key(student.pk), precheck.id)
        return precheck

    # The sandbox's image is gone: Docker refuses the run. Not a pass, and the learner is free again.
    faulted = pending(60)
    runner = DockerRunner("mlsys-sandbox:no-such-image-for-precheck", owner="precheck-test")
    assert services.precheck_run(precheck_id=faulted.id, runner=runner) == "not_run"
    assert services.precheck_run(precheck_id=faulted.id, runner=runner) == "skipped"  # claimed once
    body = api.get(f"/api/v1/prechecks/{faulted.id}/").json()
    assert (body["status"], body["outcome"], body["tests"]) == ("not_run", "", [])
    assert body["message"] == services.NOT_RUN_MESSAGE
    assert cache.get(active_key(student.pk)) is None
    # Pending past its deadline (its worker died): reported as not run, never left spinning.
    lost = pending(-1)
    body = api.get(f"/api/v1/prechecks/{lost.id}/").json()
    assert body["status"] == "not_run" and "could not run" in body["message"]


def _code_exercise_without_examples() -> Exercise:
    """A Build whose cases are all hidden: 0.5's spec with every example and precheck flag off."""
    real = Exercise.objects.get(workbook__slug=WB, number="0.5", is_active=True)
    assert real.current_version is not None
    spec = json.loads(json.dumps(real.current_version.spec))
    spec["code"]["cases"] = [{**c, "example": False, "precheck": False} for c in spec["code"]["cases"]]
    exercise = ExerciseFactory.create(kind=ExerciseKind.BUILD, format=AnswerFormat.CODE)
    version = exercise.current_version
    assert version is not None
    version.spec, version.content_hash = spec, content_cache.content_hash(spec)
    version.save(update_fields=["spec", "content_hash"])
    content_cache.bump_generation()
    return exercise


def test_the_schema_documents_the_precheck(api: APIClient) -> None:
    schema = api.get("/api/schema/?format=json").json()
    post = schema["paths"]["/api/v1/workbooks/{slug}/exercises/{number}/precheck/"]["post"]
    assert set(post["responses"]) >= {"202", "400", "401", "404", "409", "429", "503"}
    assert "not graded" in post["description"]
    get = schema["paths"]["/api/v1/prechecks/{precheck_id}/"]["get"]
    assert set(get["responses"]["200"]["content"]["application/json"]["examples"]) == {
        "OneExampleWrong",
        "CouldNotRun",
    }
    assert schema["components"]["schemas"]["PrecheckOut"]["properties"]["graded"]["type"] == "boolean"


def test_the_embedded_default_prechecks_in_a_thread(api: APIClient, student: User, sandbox_image: str) -> None:
    """No broker (``make run``): a thread of this process runs the precheck in a real container."""
    with override_settings(CELERY_TASK_ALWAYS_EAGER=True):
        response = api.post(url("0.5"), {"code": WRONG_0_5}, format="json")
        assert response.status_code == 202, response.json()
        done, _ = poll(api, response.json()["url"])
    assert (done["status"], done["outcome"]) == ("checked", "failed"), done
    assert {t["kind"] for t in done["tests"]} == {"example"}
    assert not Attempt.objects.filter(user=student).exists()
