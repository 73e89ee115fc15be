"""Shared fixtures. Tests run on real PostgreSQL and Redis (scripts/services.sh starts them)."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.conf import settings
from django.core.cache import cache as django_cache
from django.core.management import call_command
from django.db import connection
from django.test.utils import setup_databases
from rest_framework.test import APIClient

from apps.accounts import services as account_services
from apps.accounts.models import Role, User
from apps.core import throttling
from apps.exercises import services as exercise_services
from apps.exercises.models import Workbook
from apps.exercises.tests import synthetic
from apps.progress import services as progress_services
from apps.sandbox import selectors
from apps.sandbox.runner import DockerRunner
from apps.sandbox.tests.worker import ROOT, WORKER_NAME, WorkerProcess, start_worker, worker_env

# The long tests, each group on one pytest-xdist worker (`--dist loadgroup`; `pytestmark` in their
# modules names the group) and handed out first, in this order, so that they overlap the rest of
# the suite instead of ending it: the compose stack (image builds), the fault drills (a private
# stack), the contract fuzzing, the generated client, the XSS corpus and the hidden-tests proof (a
# lookup submitted for every code exercise). `make test` passes --no-loadscope-reorder
# so that xdist keeps this order rather than putting the biggest groups first.
LONG_GROUPS = ("stack", "drills", "contract", "client", "xss", "hidden")
_STARTED = time.time()


def _group(item: pytest.Item) -> str | None:
    mark = item.get_closest_marker("xdist_group")
    return str(mark.args[0]) if mark is not None and mark.args else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(LONG_GROUPS)}
    items.sort(key=lambda item: rank.get(_group(item) or "", len(rank)))  # stable: the rest keep their order


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    """The fault drills' figures (recovery times, status codes seen), where the run's output shows them.

    The drills write them to var/drills.json in whichever process ran them (an xdist worker): the
    summary, printed by the main process, reads them from there when this run wrote them."""
    report = ROOT / "var" / "drills.json"
    if report.exists() and report.stat().st_mtime >= _STARTED:
        terminalreporter.write_sep("-", f"fault drills (also in {report.relative_to(ROOT)})")
        for key, value in sorted(json.loads(report.read_text()).items()):
            terminalreporter.write_line(f"{key}: {value}")


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup: Any, django_db_blocker: Any, request: pytest.FixtureRequest) -> None:
    """Load the real workbooks once per session; each test runs in a rolled-back transaction.

    pytest-django sets up only the databases that the session's tests ask for through ``db``. The
    browser tests ask for none (what they write must commit), so when they run alone the test
    database is set up here, kept as ``--reuse-db`` keeps it.
    """
    with django_db_blocker.unblock():
        if not str(connection.settings_dict["NAME"]).startswith("test_"):
            setup_databases(
                verbosity=0,
                interactive=False,
                keepdb=not request.config.getvalue("create_db"),
                aliases={"default": None},
            )
        call_command("sync_content", verbosity=0)
        # Committed rows that an interrupted run left (the sandbox and browser tests commit)
        # must not skew the leaderboards that tests read: recount every board from progress.
        progress_services.scores_rebuild()


@pytest.fixture(autouse=True)
def _clear_cache() -> None:
    """Throttle counters live in the (real Redis) cache: start each test from zero.

    A running sandbox worker's readiness survives: it is the worker's word, not test state.
    """
    names = django_cache.get(selectors.workers_key()) or []
    kept = django_cache.get_many([selectors.workers_key()] + [selectors.ready_key(n) for n in names])
    django_cache.clear()
    if kept:
        django_cache.set_many(kept, timeout=settings.SANDBOX_READY_TTL_S)
        django_cache.set(selectors.workers_key(), names, None)


class _WindowStartClock:
    """``time`` as a fixed-window limiter sees it in a test: the real clock moved forward to one
    second past the start of an hour, so no minute or hour window of a limit ends mid-test."""

    def __init__(self) -> None:
        now = time.time()
        self.offset = (int(now // 3600) + 1) * 3600 + 1 - now

    def time(self) -> float:
        return time.time() + self.offset

    def __getattr__(self, name: str) -> Any:
        return getattr(time, name)


@pytest.fixture(autouse=True)
def _limits_start_a_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """A test that counts requests against a limit (3 a minute, 4 an hour) must not see the count
    reset when the wall clock crosses a window's end: seen in CI, where six sign-ins straddled a
    minute and the fourth was let through. The limiters read this clock, consistently."""
    clock = _WindowStartClock()
    monkeypatch.setattr(throttling, "time", clock)
    monkeypatch.setattr(account_services, "time", clock)


@pytest.fixture
def no_sandbox(settings: Any) -> None:
    """As if no sandbox worker were ready (none started, or all failed their self-test): this
    process reads readiness where no worker writes it, while the session's worker goes on."""
    settings.SANDBOX_READY_NAMESPACE = "sandbox-none"


@pytest.fixture
def make_user(db: None) -> Callable[..., User]:
    counter = iter(range(10_000))

    def make(username: str | None = None, role: str = Role.STUDENT, password: str = "a-strong-pass-123") -> User:  # noqa: S107 - test accounts
        return account_services.user_create(
            username=username or f"learner{next(counter)}", password=password, role=role
        )

    return make


@pytest.fixture
def synthetic_workbook(db: None) -> Workbook:
    """A tiny workbook (two chapters, six numeric exercises: apps/exercises/tests/synthetic.py)
    synced through the real service, for behaviour tests that must not depend on the content files."""
    exercise_services.workbook_sync(spec=synthetic.small_workbook())
    return Workbook.objects.get(slug=synthetic.SLUG)


@pytest.fixture
def student(make_user: Callable[..., User]) -> User:
    return make_user("alice")


@pytest.fixture
def other_student(make_user: Callable[..., User]) -> User:
    return make_user("bob")


@pytest.fixture
def api(student: User) -> APIClient:
    """An API client authenticated with the student's token, as API clients do."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {account_services.auth_token_issue(user=student).key}")
    return client


@pytest.fixture
def anon_api() -> APIClient:
    return APIClient()


@pytest.fixture(scope="session")
def sandbox_image() -> str:
    """The image ``make test`` built. Missing is a failure, never a skip."""
    runner = DockerRunner(settings.SANDBOX_IMAGE)
    assert runner.image_present(), f"{settings.SANDBOX_IMAGE} is missing: run deploy/sandbox/build-sandbox-image.sh"
    return str(settings.SANDBOX_IMAGE)


@pytest.fixture(scope="session")
def sandbox_worker(
    django_db_setup: None, sandbox_image: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[WorkerProcess]:
    worker = start_worker(worker_env(), tmp_path_factory.mktemp("worker") / "worker.log", WORKER_NAME)
    yield worker
    worker.proc.terminate()
    try:
        worker.proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        worker.kill_hard()
