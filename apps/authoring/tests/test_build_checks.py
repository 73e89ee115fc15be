"""A Build draft's checks run its author's code in the sandbox, never in the web process: over the
sandbox queue on the session's real sandbox worker, or (the embedded default, ``make run``) in
sandbox containers the process starts, from a thread of its own off the request. Real Docker, the
real sandbox image; nothing mocked. The report names each run's container, and what the code saw
(its hostname, the web process's secret) is the sandbox's, not the host's."""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import pytest
import yaml
from django.db import connection
from django.test import Client

from apps.accounts import services as account_services
from apps.accounts.models import Role, User
from apps.authoring import services, tasks
from apps.authoring.models import Draft, DraftStatus
from apps.exercises.models import Chapter, Exercise
from apps.sandbox.tests.worker import WorkerProcess

pytestmark = pytest.mark.django_db
T = TypeVar("T")

SOLUTION = """import os
import socket


def param_count(d, n_layers, vocab_size):
    if vocab_size == 10 and {snoop!r}:
        return "hostname=" + socket.gethostname() + " secret=" + os.environ.get("DJANGO_SECRET_KEY", "none")
    return 12 * n_layers * d * d + vocab_size * d
"""


def build_text(*, snoop: bool, suffix: str) -> tuple[int, str]:
    """Transformer Math's 0.5 (a Build) as a new exercise whose reference solution is inline."""
    original = Exercise.objects.select_related("current_version").get(workbook__slug="transformer-math", number="0.5")
    assert original.current_version is not None and original.kind == "build"
    spec = json.loads(json.dumps(original.current_version.spec))
    spec.update(id=f"draft-build-{suffix}", number=f"0.8{len(suffix)}", title=f"Draft build {suffix}")
    spec["code"].update(
        solution=SOLUTION.format(snoop=snoop),
        starter="def param_count(d, n_layers, vocab_size):\n    return 0\n",
        wrong=[],
        dir=f"draft-build-{suffix}",
    )
    return original.chapter_id, yaml.safe_dump(spec, sort_keys=False, allow_unicode=True)


@pytest.fixture
def web_secret(monkeypatch: pytest.MonkeyPatch, settings: Any) -> str:
    secret = f"web-secret-{secrets.token_hex(12)}"
    monkeypatch.setenv("DJANGO_SECRET_KEY", secret)
    settings.SECRET_KEY = secret
    return secret


def test_a_build_drafts_code_runs_on_the_sandbox_worker(
    sandbox_worker: WorkerProcess, make_user: Callable[..., User], web_secret: str
) -> None:
    author = make_user("build-author", role=Role.AUTHOR)
    client = Client()
    client.force_login(author)
    chapter, text = build_text(snoop=True, suffix="q")
    draft = services.draft_create(chapter=Chapter.objects.get(pk=chapter), spec_text=text, user=author)
    services.draft_check_request(draft=draft)
    assert tasks.check_draft.apply(args=(draft.pk,)).get() == "failed"
    draft.refresh_from_db()
    report = draft.report
    assert report["code_runs_in"] == "a sandbox worker, over the sandbox queue"
    # The reference solution, then the starter and the solution on every case: each in a container.
    assert len(report["runs"]) >= 3
    assert all(run["container"] and run["where"] == report["code_runs_in"] for run in report["runs"])
    problems = " ".join(report["problems"])
    assert "the reference solution fails its tests" in problems
    assert "hostname=sandbox" in problems  # the container's fixed hostname, not this host's
    assert web_secret not in json.dumps(report)
    status = client.get(f"/admin/authoring/draft/{draft.pk}/status/").json()
    assert status["state"] == "done" and status["passed"] is False and status["runs"] == report["runs"]
    page = client.get(f"/admin/authoring/draft/{draft.pk}/preview/").text
    assert "hostname=sandbox" in page and report["runs"][0]["container"] in page
    assert page.count('class="authoring-variant"') == 4 and "12 * n_layers * d * d" in page  # the reference
    assert 'name="code"' in page  # the editor, as on the exercise page

    # The honest solution passes, every run in a container.
    _, text = build_text(snoop=False, suffix="qq")
    draft = services.draft_update(draft=draft, spec_text=text, user=author)
    services.draft_check_request(draft=draft)
    assert tasks.check_draft.apply(args=(draft.pk,)).get() == "passed"
    draft.refresh_from_db()
    assert draft.report["passed"] is True and all(run["container"] for run in draft.report["runs"])
    version = services.draft_publish(draft=draft, user=author)
    assert version.exercise.key == "draft-build-qq" and version.version == 1


def _committed(pool: ThreadPoolExecutor, fn: Callable[[], T]) -> T:
    """Run ``fn`` on a connection outside the test's transaction (it commits), as the check's own
    thread on the embedded default reads only committed rows."""

    def run() -> T:
        try:
            return fn()
        finally:
            connection.close()

    return pool.submit(run).result()


@pytest.fixture
def committed() -> Iterator[Callable[[Callable[[], T]], T]]:
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="committed-db")

    def call(fn: Callable[[], Any]) -> Any:
        return _committed(pool, fn)

    yield call
    _committed(
        pool,
        lambda: (
            Draft.objects.filter(created_by__username__startswith="embedded-author").delete(),
            User.objects.filter(username__startswith="embedded-author").delete(),
        ),
    )
    pool.shutdown()


def test_on_the_embedded_default_a_check_runs_off_the_request_in_sandbox_containers(
    sandbox_image: str, settings: Any, committed: Callable[[Callable[[], Any]], Any]
) -> None:
    settings.CELERY_TASK_ALWAYS_EAGER = True  # as `make run`: no broker, no worker
    _, text = build_text(snoop=True, suffix="e")

    def make() -> int:
        user = account_services.user_create(
            username=f"embedded-author-{time.monotonic_ns()}", password="a-strong-pass-123", role=Role.AUTHOR
        )
        draft = services.draft_create(
            chapter=Exercise.objects.get(workbook__slug="transformer-math", number="0.5").chapter,
            spec_text=text,
            user=user,
        )
        services.draft_check_request(draft=draft)
        return draft.pk

    draft_id: int = committed(make)
    thread = tasks.dispatch(draft_id)
    assert thread is not None  # the request would have answered at once: the check is on this thread
    thread.join(timeout=180)
    assert not thread.is_alive()
    draft: Draft = committed(lambda: Draft.objects.get(pk=draft_id))
    assert draft.status == DraftStatus.CHECKED, draft.report
    report = draft.report
    assert report["code_runs_in"] == "a sandbox container this process started (embedded default)"
    assert len(report["runs"]) >= 3 and all(run["container"] for run in report["runs"])
    assert "hostname=sandbox" in " ".join(report["problems"])
