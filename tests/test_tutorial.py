"""The README's authoring tutorial ("Authoring: your first workbook in its own repository"),
followed literally, as an author would.

The section's fenced blocks are the tutorial: a block whose info string names a path
(```yaml title="$COURSE/first-steps/workbook.yaml"``) is a file to write there, a ``sh`` block
is commands to run, in the order they come, in one shell started in the platform's checkout, and a
``json`` block titled with a request (``title="POST /api/v1/cohorts/"``) is a body an instructor
sends. The test writes and runs them with the environment it provides: ``HOME`` in a temporary
folder (so the course's repository lands there, with no git identity: the tutorial sets one), and this session's test database
and sandbox image. It asserts what the tutorial promises: ``check_content`` passes, ``sync_content``
creates the three exercises, the workbook is assigned to a cohort through the API, an assessment
uses its numeric exercise and a learner gets it right on their own numbers, and the Build grades
its reference solution correct in the real sandbox.

The shell's ``sync_content`` commits to the session's database (it is another process): what it
wrote, and what the learner of the Build wrote, is deleted at the end, so the other tests see the
session's content as it was.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any, TypeVar

import pytest
from django.db import connection
from django.utils import timezone
from rest_framework.test import APIClient

from apps.accounts import services as account_services
from apps.accounts.models import Role, User
from apps.assessments.models import InstanceQuestion
from apps.assessments.services import variant_of
from apps.exercises.models import Exercise, Workbook
from apps.exercises.tests.answers import on_seed_numbers
from apps.progress import services as progress_services
from apps.sandbox.tests.worker import ROOT, WorkerProcess, worker_env

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

SECTION = "## Authoring: your first workbook in its own repository"
SLUG = "first-steps"
# A fenced block: its language, an optional title="…" (a file's path, or a request), its text.
FENCE = re.compile(r'^```(\w+)(?: title="([^"]+)")?\n(.*?)^```$', re.S | re.M)
T = TypeVar("T")


@dataclass(frozen=True)
class Block:
    lang: str
    title: str
    text: str

    @property
    def is_file(self) -> bool:
        return self.title.startswith("$COURSE/")

    @property
    def request(self) -> tuple[str, str] | None:
        method, _, path = self.title.partition(" ")
        return (method, path) if self.lang == "json" and method in ("POST", "PATCH") else None


def tutorial() -> list[Block]:
    """The fenced blocks of the tutorial's section (up to the next heading of its level or above;
    a subsection of its own, ### …, is another topic)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index(SECTION)
    end = re.compile(r"^#{2,3} ", re.M).search(text, start + len(SECTION))
    section = text[start : end.start() if end else None]
    return [Block(m[1], m[2] or "", m[3]) for m in FENCE.finditer(section)]


def shell_script(blocks: list[Block]) -> str:
    """One bash script: each command block as written, each file block as a quoted here-document
    (its text byte for byte) to the path it names."""
    parts = ["set -euo pipefail"]
    for block in blocks:
        if block.lang == "sh" and not block.title:
            parts.append(block.text)
        elif block.is_file:
            assert "TUTORIAL_EOF" not in block.text
            parts.append(f"cat > \"{block.title}\" <<'TUTORIAL_EOF'\n{block.text}TUTORIAL_EOF")
    return "\n".join(parts) + "\n"


def committed(thread: ThreadPoolExecutor, fn: Callable[[], T]) -> T:
    """Run ``fn`` on a thread of its own, whose connection is outside the test's rolled-back
    transaction: what it writes commits, so the sandbox worker (another process) sees it."""
    return thread.submit(fn).result()


def remove_what_it_wrote() -> None:
    User.objects.filter(username__startswith="tutorial-builder").delete()  # with their attempts, progress
    Exercise.objects.filter(workbook__slug=SLUG).update(current_version=None)  # versions are protected
    Workbook.objects.filter(slug=SLUG).delete()
    progress_services.scores_rebuild()


@pytest.fixture(scope="module")
def course(
    tmp_path_factory: pytest.TempPathFactory, django_db_setup: None, django_db_blocker: Any
) -> Iterator[subprocess.CompletedProcess[str]]:
    """The tutorial's shell part, run once for the module. What its sync committed is removed
    after the module, when no test's transaction (whose rows point at it) is open any more."""
    home = tmp_path_factory.mktemp("home")
    env = {
        **worker_env(),  # this session's test database and settings, the sandbox image
        "HOME": str(home),  # no git identity there: the tutorial sets one as a fresh machine needs it
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    for name in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"):
        env.pop(name, None)
    env.pop("CONTENT_DIRS", None)  # the tutorial sets it on each command
    with django_db_blocker.unblock():
        remove_what_it_wrote()  # an interrupted run's, kept by --reuse-db
    try:
        yield subprocess.run(  # noqa: S603 - the README's own commands, in a temporary HOME
            ["/bin/bash", "-c", shell_script(tutorial())],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
    finally:
        with django_db_blocker.unblock():
            remove_what_it_wrote()


def test_the_tutorial_has_every_part_it_promises() -> None:
    blocks = tutorial()
    files = {b.title.removeprefix("$COURSE/") for b in blocks if b.is_file}
    assert files == {
        "first-steps/workbook.yaml",
        "first-steps/chapters/00-weights.yaml",
        *(f"first-steps/code/0.3-weight-gb/{name}.py" for name in ("starter", "solution", "tests")),
        *(
            f"first-steps/code/0.3-weight-gb/wrong/{name}.py"
            for name in ("bits_as_bytes", "gib_not_gb", "floor_division")
        ),
    }
    commands = "\n".join(b.text for b in blocks if b.lang == "sh")
    assert 'CONTENT_DIRS="$COURSE" .venv/bin/python manage.py check_content --workbook first-steps' in commands
    assert 'CONTENT_DIRS="$COURSE" .venv/bin/python manage.py sync_content --workbook first-steps' in commands
    assert [b.request for b in blocks if b.request] == [
        ("POST", "/api/v1/cohorts/"),
        ("POST", "/api/v1/cohorts/{id}/assessments/"),
    ]


def test_following_the_tutorial_gives_a_workbook_to_assign_assess_and_grade(
    course: subprocess.CompletedProcess[str],
    make_user: Callable[..., User],
    sandbox_worker: WorkerProcess,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = course.stdout + course.stderr
    assert course.returncode == 0, out
    # check_content passed (every check, the code runs in the sandbox) and sync_content created all three.
    assert "first-steps: 3 exercises, ok (" in course.stdout, out
    assert "3 wrong solutions must fail" in course.stdout, out
    assert "first-steps: 3 created, 0 new versions, 0 updated, 0 unchanged, 0 retired" in course.stdout, out
    exercises = {
        e.number: e for e in Exercise.objects.filter(workbook__slug=SLUG, is_active=True).select_related("workbook")
    }
    assert {n: (e.kind, e.format) for n, e in exercises.items()} == {
        "0.1": ("derive", "numeric"),
        "0.2": ("trace", "choice"),
        "0.3": ("build", "code"),
    }
    blocks = {b.request: json.loads(b.text) for b in tutorial() if b.request}
    body = blocks[("POST", "/api/v1/cohorts/{id}/assessments/")]
    now = datetime.fromisoformat(body["opens_at"]).replace(hour=12)  # inside the homework's window
    monkeypatch.setattr(timezone, "now", lambda: now)

    # An instructor creates a cohort with the workbook assigned, as the tutorial's first request does.
    prof = make_user("tutorial-prof", role=Role.INSTRUCTOR)
    instructor = APIClient()
    instructor.credentials(HTTP_AUTHORIZATION=f"Token {account_services.auth_token_issue(user=prof).key}")
    made = instructor.post("/api/v1/cohorts/", blocks[("POST", "/api/v1/cohorts/")], format="json")
    assert made.status_code == 201, made.content
    cohort = made.json()
    assert [a["workbook"] for a in cohort["workbooks"]] == [SLUG]

    # Then the homework on exercise 0.1, as the second request does.
    created = instructor.post(f"/api/v1/cohorts/{cohort['id']}/assessments/", body, format="json")
    assert created.status_code == 201, created.content
    assessment = created.json()
    assert [q["pool"] for q in assessment["questions"]] == [["first-steps/0.1"]]

    # A learner joins with the code, sees the workbook assigned, opens the homework and answers on
    # their own numbers: the weights' GB worked out here from the givens they drew.
    learner = make_user("tutorial-learner")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {account_services.auth_token_issue(user=learner).key}")
    joined = client.post("/api/v1/cohorts/join/", {"code": cohort["join_code"]}, format="json")
    assert joined.status_code == 201 and [a["workbook"] for a in joined.json()["workbooks"]] == [SLUG]
    base = f"/api/v1/assessments/{assessment['id']}"
    assert client.post(f"{base}/open/").status_code == 201
    item = InstanceQuestion.objects.get(instance__user=learner, position=1)
    assert item.exercise == exercises["0.1"]
    givens = {"params": 7e9, "bytes": 2, **dict(variant_of(item).values)}
    weights = givens["params"] * givens["bytes"]
    wrong = client.post(f"{base}/questions/1/answers/", {"answer": f"{weights * 8 / 1e9:.3g} GB"}, format="json")
    assert wrong.status_code == 201 and wrong.json()["correct"] is False, wrong.content  # bits, the known mistake
    right = client.post(f"{base}/questions/1/answers/", {"answer": f"{weights / 1e9:.3g} GB"}, format="json")
    assert right.status_code == 201 and right.json()["correct"] is True and right.json()["points"] == 2, right.content

    # What the tutorial says of round 0 (a 7B model in BF16: 14.0 GB), answered in practice on it.
    for answer, correct in (("14", True), ("14 GB", True), ("14e9 bytes", True), ("13.04 GiB", True), ("112", False)):
        reader = make_user()
        on_seed_numbers(reader, exercises["0.1"])
        practice = APIClient()
        practice.force_authenticate(reader)
        r = practice.post(f"/api/v1/workbooks/{SLUG}/exercises/0.1/attempts/", {"answer": answer}, format="json")
        assert r.status_code == 201 and r.json()["correct"] is correct, (answer, r.content)
        if not correct:
            assert "counts bits" in json.dumps(r.json()), r.content  # the known mistake's own feedback

    # The Build, practised through the API: the README's solution.py graded correct in the sandbox.
    (solution,) = [b.text for b in tutorial() if b.title.endswith("/0.3-weight-gb/solution.py")]
    (starter,) = [b.text for b in tutorial() if b.title.endswith("/0.3-weight-gb/starter.py")]
    thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tutorial-builder")
    try:
        builder = committed(
            thread,
            lambda: account_services.user_create(
                username=f"tutorial-builder{time.monotonic_ns()}", password="a-strong-pass-123"
            ),
        )
        coder = APIClient()
        coder.force_authenticate(builder)
        url = f"/api/v1/workbooks/{SLUG}/exercises/0.3/attempts/"
        for code, verdict in ((starter, "incorrect"), (solution, "correct")):
            response = committed(thread, partial(coder.post, url, {"code": code}, format="json"))
            assert response.status_code == 202, response.content
            graded = poll(coder, response.json()["url"], sandbox_worker)
            assert graded["verdict"] == verdict, graded
        assert graded["outcome"] == "passed" and all(t["passed"] for t in graded["details"]["tests"]), graded
    finally:
        committed(thread, lambda: connection.close())
        thread.shutdown()


def poll(client: APIClient, url: str, worker: WorkerProcess, timeout: float = 120.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        body: dict[str, Any] = client.get(url).json()
        if body["status"] in ("graded", "not_graded"):
            return body
        time.sleep(0.1)
    raise AssertionError(f"{url} not graded in {timeout}s:\n{worker.log_text()[-3000:]}")
