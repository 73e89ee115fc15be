"""Build and Debug end to end: the API, Celery on Redis, the real worker, real containers."""

from __future__ import annotations

import time
from functools import partial
from typing import Any

import docker
import pytest
from django.test import override_settings
from rest_framework.test import APIClient

from apps.exercises.choices import AttemptStatus, Verdict
from apps.exercises.content import cache as content_cache
from apps.exercises.models import Attempt, Exercise
from apps.learning import services, tasks
from apps.sandbox.runner import LABEL, LABEL_OWNER, LABEL_POOLED, DockerRunner
from apps.sandbox.tests.conftest import Sandbox, SolutionReader
from apps.sandbox.tests.worker import WORKER_NAME, WorkerProcess, spawn_worker, start_worker, worker_env

pytestmark = pytest.mark.slow

BUILDS = {
    "0.5": "0.5-param-count",
    "1.6": "1.6-scaled-dot-product",
    "5.2": "5.2-stable-softmax",
    "5.4": "5.4-rms-norm",
}


def _api(sandbox: Sandbox) -> APIClient:
    client = APIClient()
    client.force_authenticate(sandbox.user)
    return client


def _post(client: APIClient, number: str, body: dict[str, Any]) -> Any:
    return client.post(f"/api/v1/workbooks/transformer-math/exercises/{number}/attempts/", body, format="json")


def _poll(client: APIClient, url: str, timeout: float = 60.0) -> tuple[dict[str, Any], set[str]]:
    seen: set[str] = set()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        body = client.get(url).json()
        seen.add(body["status"])
        if body["status"] in (AttemptStatus.GRADED, AttemptStatus.NOT_GRADED):
            return body, seen
        time.sleep(0.05)
    raise AssertionError(f"{url} never finished")


def test_every_build_exercise_fails_then_passes_through_the_api(sandbox: Sandbox, reference: SolutionReader) -> None:
    client = _api(sandbox)
    for number, folder in BUILDS.items():
        widget = client.get(f"/api/v1/workbooks/transformer-math/exercises/{number}/").json()["widget"]
        assert widget["sandbox_available"] is True
        starter: str = widget["starter"]
        response = sandbox._committed(partial(_post, client, number, {"code": starter}))
        assert response.status_code == 202, response.json()
        assert response["Location"] == response.json()["url"]
        failed, seen = _poll(client, response.json()["url"])
        assert seen <= {"queued", "running", "graded"}
        assert (failed["verdict"], failed["outcome"]) == ("incorrect", "failed") or failed["outcome"] == "error"
        tests = failed["details"]["tests"]
        wrong = tests[0]  # failing first
        assert not wrong["passed"] and wrong["message"], wrong
        if wrong["example"]:  # shown in full
            assert wrong["call"].startswith(widget["entry"] + "(")
            assert (wrong["expected"] and wrong["got"]) or wrong["message"].startswith("Raised "), wrong
        else:  # hidden: which one, and why, and nothing else
            assert set(wrong) == {"label", "example", "passed", "category", "message"}, wrong
        solution = reference(f"{folder}/solution.py")
        passed, _ = _poll(client, sandbox._committed(partial(_post, client, number, {"code": solution})).json()["url"])
        assert (passed["verdict"], passed["outcome"], passed["correct"]) == ("correct", "passed", True), passed
        assert all(t["passed"] for t in passed["details"]["tests"])
        progress = sandbox.progress(number)
        assert progress is not None and progress.solved and progress.attempts == 2
    # The worker (a forked pool process) removed every container it ran a job in, without a
    # reaper: what is left are its pool's containers, started ahead and still waiting for a job.
    engine = docker.from_env()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and _used_containers(engine):
        time.sleep(0.1)
    assert _used_containers(engine) == []
    engine.close()


def _worker_containers(client: docker.DockerClient) -> list[str]:
    found = client.containers.list(all=True, filters={"label": LABEL}, ignore_removed=True)
    return [str(c.id) for c in found if c.labels.get(LABEL_OWNER, "").startswith(f"{WORKER_NAME}@")]


def _get_container(client: docker.DockerClient, container_id: str) -> Any:
    try:
        return client.containers.get(container_id)
    except docker.errors.NotFound:
        return None


def _used_containers(client: docker.DockerClient) -> list[str]:
    """The session worker's containers, but for its pool's, which wait (running) for their job."""
    found = client.containers.list(all=True, filters={"label": LABEL}, ignore_removed=True)
    return [
        str(c.id)
        for c in found
        if c.labels.get(LABEL_OWNER, "").startswith(f"{WORKER_NAME}@")
        and not (LABEL_POOLED in c.labels and c.status == "running")
    ]


def test_debug_needs_the_lines_and_the_fix(sandbox: Sandbox, reference: SolutionReader) -> None:
    client = _api(sandbox)
    widget = client.get("/api/v1/workbooks/transformer-math/exercises/0.6/").json()["widget"]
    assert widget["format"] == "lines" and widget["fix"]["sandbox_available"] is True
    lines = sandbox._committed(lambda: _post(client, "0.6", {"lines": [8]}))
    assert lines.status_code == 201 and lines.json()["verdict"] == "correct"
    assert lines.json()["state"]["solved"] is False  # one part of two
    fix = reference("0.6-param-count-bug/solution.py")
    done, _ = _poll(client, sandbox._committed(lambda: _post(client, "0.6", {"code": fix})).json()["url"])
    assert done["outcome"] == "passed" and done["part"] == "code"
    progress = sandbox.progress("0.6")
    assert progress is not None and progress.solved and progress.parts_solved == 3 and progress.attempts == 2
    assert progress.first_solve_attempt_id == done["id"]
    both = sandbox._committed(
        lambda: client.post(
            "/api/v1/workbooks/transformer-math/exercises/0.6/attempts/", {"lines": [8], "code": fix}, format="json"
        )
    )
    assert both.status_code == 400


def test_bad_code_is_explained_and_costs_nothing(sandbox: Sandbox) -> None:
    client = _api(sandbox)
    for body, code in [
        ({"code": "def param_count(d, n_layers, vocab_size)\n    return 1\n"}, "syntax_error"),
        ({"code": "   "}, "bad_payload"),
        ({"code": "x = 1\x00"}, "validation_error"),
        ({"code": "x = 1\n" * 12_000}, "too_long"),
    ]:
        response = sandbox._committed(partial(_post, client, "0.5", body))
        assert response.status_code == 400, response.json()
        assert response.json()["error"]["code"] == code
    syntax = sandbox._committed(lambda: _post(client, "0.5", {"code": "def f(:\n  pass\n"}))
    assert syntax.json()["error"]["details"]["line"] == 1
    assert sandbox._committed(lambda: Attempt.objects.filter(user=sandbox.user).count()) == 0


def test_without_a_ready_worker_code_is_refused_plainly(sandbox: Sandbox, no_sandbox: None) -> None:
    client = _api(sandbox)
    assert (
        client.get("/api/v1/workbooks/transformer-math/exercises/0.5/").json()["widget"]["sandbox_available"] is False
    )
    response = sandbox._committed(
        lambda: _post(client, "0.5", {"code": "def param_count(d, n_layers, vocab_size):\n    return 0\n"})
    )
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "sandbox_unavailable"
    assert sandbox._committed(lambda: Attempt.objects.filter(user=sandbox.user).count()) == 0


def test_a_platform_fault_is_retried_then_not_graded_and_not_counted(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real fault: the image is missing. The run gives its claim back (queued, claim count as
    before), the task retries through Celery, and after the last retry the attempt is closed as
    not graded; no attempt is spent."""

    def make() -> int:
        return Attempt.objects.create(
            user=sandbox.user, exercise_id=_exercise_id("0.5"), version_id=_version_id("0.5"), part="code",
            status=AttemptStatus.QUEUED, raw={"code": "def param_count(d, n_layers, vocab_size):\n    return 0\n"},
        ).pk  # fmt: skip

    pk = sandbox._committed(make)
    missing = DockerRunner("mlsys-sandbox:missing")
    with pytest.raises(services.SandboxFault, match="missing"):
        sandbox._committed(lambda: services.attempt_grade(attempt_id=pk, runner=missing))
    given_back = sandbox._committed(lambda: Attempt.objects.get(pk=pk))
    assert (given_back.status, given_back.claims) == (AttemptStatus.QUEUED, 0)
    assert given_back.lease_expires_at is not None  # recovery publishes it again if the retry is lost

    # apply(): the task runs here, and Celery runs each retry it asks for (countdown aside) —
    # provided a retry is a result, not an exception to propagate.
    conf = tasks.grade_code_attempt.app.conf
    propagates, conf.task_eager_propagates = conf.task_eager_propagates, False
    try:
        with override_settings(SANDBOX_IMAGE="mlsys-sandbox:missing", SANDBOX_RETRIES=2):
            outcome = sandbox._committed(lambda: tasks.grade_code_attempt.apply(args=(pk,)).get())
    finally:
        conf.task_eager_propagates = propagates
    assert outcome == "not graded"
    attempt = sandbox._committed(lambda: Attempt.objects.get(pk=pk))
    assert (attempt.status, attempt.verdict, attempt.outcome) == (AttemptStatus.NOT_GRADED, "", "not_graded")
    assert "did not count" in attempt.feedback and "missing" in attempt.details["reason"]
    assert sandbox.progress("0.5") is None


def test_a_redelivered_task_never_overwrites_a_final_verdict(sandbox: Sandbox, reference: SolutionReader) -> None:
    done = sandbox.code("0.5", reference("0.5-param-count/solution.py"))
    assert done.verdict == Verdict.CORRECT

    def again() -> Attempt | None:
        return services.attempt_grade(attempt_id=done.pk, runner=DockerRunner("mlsys-sandbox:missing"))

    assert sandbox._committed(again) is None
    after = sandbox.wait(done.pk)
    assert (after.status, after.verdict, after.details) == (done.status, done.verdict, done.details)
    assert sandbox._committed(lambda: services.attempt_not_graded(attempt_id=done.pk, reason="late sweep")) is None
    progress = sandbox.progress("0.5")
    assert progress is not None and progress.attempts == 1


def test_stuck_attempts_are_failed_as_not_graded(sandbox: Sandbox) -> None:
    def make() -> int:
        attempt = Attempt.objects.create(
            user=sandbox.user, exercise_id=_exercise_id("0.5"), version_id=_version_id("0.5"), part="code",
            status=AttemptStatus.RUNNING, raw={"code": "x = 1\n"},
        )  # fmt: skip
        return attempt.pk

    attempt_id = sandbox._committed(make)
    assert sandbox._committed(lambda: services.attempts_fail_stuck(older_than_s=3600)) == 0
    assert sandbox._committed(lambda: services.attempts_fail_stuck(older_than_s=0)) >= 1
    assert sandbox.wait(attempt_id).status == AttemptStatus.NOT_GRADED


def test_a_worker_whose_self_test_fails_refuses_work(sandbox_worker: WorkerProcess, tmp_path: Any) -> None:
    log = tmp_path / "broken.log"
    broken = spawn_worker(worker_env(SANDBOX_IMAGE="mlsys-sandbox:missing"), log, "broken")
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and "Canceling queue sandbox" not in broken.log_text():
            time.sleep(0.2)
        text = broken.log_text()
        assert "self-test failed; this worker refuses sandbox work" in text, text[-3000:]
        assert "is missing" in text
        assert "Canceling queue sandbox" in text
    finally:
        broken.proc.kill()
        broken.proc.wait()
    assert sandbox_worker.alive()


def test_a_worker_killed_mid_run_leaves_nothing_behind(sandbox: Sandbox, tmp_path: Any) -> None:
    """SIGKILL the worker during a run: the container kills itself, the restarted worker reaps it,
    and the attempt is closed as not graded (not counted) by the stuck-attempt sweep."""
    engine = docker.from_env()
    source = "import time\n\ndef param_count(d, n_layers, vocab_size):\n    time.sleep(600)\n"

    def submit() -> int:
        exercise = Exercise.objects.get(workbook__slug="transformer-math", number="0.5")
        return services.attempt_create(user=sandbox.user, exercise=exercise, payload={"code": source}).attempt.pk

    attempt_id = sandbox._committed(submit)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and sandbox._committed(
        lambda: Attempt.objects.get(pk=attempt_id).status != AttemptStatus.RUNNING
    ):
        time.sleep(0.05)
    assert sandbox._committed(lambda: Attempt.objects.get(pk=attempt_id).status) == AttemptStatus.RUNNING
    # 0.5 draws hidden inputs: its reference runs first, in a container removed as soon as it is
    # done, so one listed here may be gone by the time it is read (the kill lands in either run).
    containers = [c for c in (_get_container(engine, i) for i in _worker_containers(engine)) if c is not None]
    sandbox.worker.kill_hard()
    assert any(c.status == "running" for c in containers)  # orphaned: nobody will kill them from outside
    # They end by themselves: the running one at the driver's own deadline (5 s in tests), else
    # `timeout -s KILL` 5 s later; pooled ones waiting for a job as soon as their worker's end
    # closes their stdin (and at their idle lifetime at the latest).
    for container in containers:
        container.wait(timeout=30)
        container.reload()
        assert container.status == "exited"
    restarted = start_worker(worker_env(), tmp_path / "restarted.log", WORKER_NAME)
    sandbox.worker.proc, sandbox.worker.log = restarted.proc, restarted.log
    # Reaped at start (same worker name, same owner label): only the new pool's are there.
    assert not set(_worker_containers(engine)) & {c.id for c in containers}
    assert sandbox._committed(lambda: services.attempts_fail_stuck(older_than_s=0)) == 1
    closed = sandbox.wait(attempt_id)
    assert (closed.status, closed.outcome) == (AttemptStatus.NOT_GRADED, "not_graded")
    assert sandbox.progress("0.5") is None  # not counted
    engine.close()


def _exercise_id(number: str) -> int:
    from apps.exercises.models import Exercise

    return Exercise.objects.get(workbook__slug="transformer-math", number=number).pk


def _version_id(number: str) -> int:
    from apps.exercises.models import Exercise

    version_id = Exercise.objects.get(workbook__slug="transformer-math", number=number).current_version_id
    assert version_id is not None
    return version_id


@pytest.mark.parametrize("slug", ["transformer-math", "lm-from-scratch", "systems-serving", "scaling-book"])
def test_every_code_exercise_is_solvable_in_the_sandbox(sandbox: Sandbox, slug: str) -> None:
    """Each Build, and each Debug's fix, passes with its reference through the real worker."""
    coded = [
        (ex.number, spec.code)
        for ex in Exercise.objects.filter(workbook__slug=slug, is_active=True).select_related("current_version")
        if ex.current_version is not None and (spec := content_cache.resolved(ex.current_version).spec).code is not None
    ]
    assert coded, slug
    for number, code in coded:
        attempt = sandbox.submit(number, {"code": code.solution}, workbook=slug)
        assert (attempt.status, attempt.verdict) == (AttemptStatus.GRADED, Verdict.CORRECT), (number, attempt.feedback)


def test_a_running_attempt_shows_each_tests_result_as_it_completes(sandbox: Sandbox) -> None:
    """The API a page polls: while the run goes on, ``run.tests`` grows one judged test at a time."""
    client = _api(sandbox)
    # Right answers, one every 0.4 s: the run takes about 3 s over its eight tests.
    source = "import time\n\ndef param_count(d, n_layers, vocab_size):\n    time.sleep(0.4)\n    return 12 * n_layers * d * d + vocab_size * d\n"
    url = sandbox._committed(partial(_post, client, "0.5", {"code": source})).json()["url"]
    counts: list[int] = []
    totals: set[int] = set()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        body = client.get(url).json()
        if body["status"] == AttemptStatus.GRADED:
            break
        if body["status"] == AttemptStatus.RUNNING:
            run = body["run"]
            totals.add(run["tests_total"])
            assert all(t["passed"] and t["message"] == "" for t in run["tests"])
            counts.append(len(run["tests"]))
        time.sleep(0.05)
    assert body["status"] == AttemptStatus.GRADED and body["correct"], body
    total = body["details"]["total"]
    assert totals == {total} and body["run"]["tests_total"] == total
    assert body["run"]["tests"] == []  # final: details.tests has them all
    seen = sorted(set(counts))
    assert len([c for c in seen if 0 < c < total]) >= 2, counts  # partial results, growing
    assert counts == sorted(counts)
