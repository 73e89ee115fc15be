"""Browser tests: Playwright drives Debian's Chromium against a live server on the test database.

The server is Django's threaded live server, on real PostgreSQL and Redis, with the session's real
sandbox worker (``sandbox_worker``) grading code. Its requests run on threads of their own, so
everything they write is committed: a test here does not get the rolled-back transaction of
``db``. Each test works with its own accounts (those it signs up start with ``e2e``; those ``Site.user``
makes are named plainly, for the screenshots) and they are deleted afterwards with their cohorts
and everything they wrote, then the leaderboards are rebuilt, so the rest of the suite sees the
database as it was.

Screenshots go to ``var/screenshots/`` (``docs/screenshots/`` holds the README's copies).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.contrib.staticfiles.handlers import StaticFilesHandler
from django.core.management import call_command
from django.db import connections
from django.db.models import Q
from django.test.testcases import LiveServerThread
from playwright.sync_api import Browser, BrowserContext, Page, Playwright, ViewportSize, sync_playwright

from apps.accounts import services as account_services
from apps.accounts.models import Role, User
from apps.exercises.models import Attempt
from apps.progress import services as progress_services
from apps.progress.models import Cohort, ExerciseProgress
from apps.sandbox.tests.worker import ROOT, WorkerProcess

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
SHOTS = ROOT / "var" / "screenshots"
PASSWORD = "e2e-pass-Kq8v!x"  # test accounts only
DESKTOP = ViewportSize(width=1280, height=860)
PHONE = ViewportSize(width=390, height=844)


@pytest.fixture(autouse=True)
def _orm_beside_playwright(monkeypatch: pytest.MonkeyPatch) -> None:
    """Playwright's sync API runs an event loop on this thread; the ORM calls a test makes between
    browser steps are ordinary blocking calls, which Django would otherwise refuse near a loop.
    Only for these tests: the setting must not leak into others (`check --deploy` refuses it)."""
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


@pytest.fixture(scope="session")
def playwright() -> Iterator[Playwright]:
    with sync_playwright() as p:
        yield p


def launch_chromium(playwright: Playwright) -> Browser:
    """Debian's Chromium, headless. Missing is a failure, never a skip (scripts/services.sh installs it)."""
    assert Path(CHROMIUM).exists(), f"{CHROMIUM} is missing: run `bash scripts/services.sh browser`"
    return playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])


@pytest.fixture(scope="session")
def browser(playwright: Playwright) -> Iterator[Browser]:
    browser = launch_chromium(playwright)
    yield browser
    browser.close()


@pytest.fixture(scope="session")
def live_url(django_db_setup: None, django_db_blocker: Any) -> Iterator[str]:
    """A threaded live server on the test database, serving static files from the apps' folders."""
    server = LiveServerThread("127.0.0.1", StaticFilesHandler, port=0)
    server.daemon = True
    with django_db_blocker.unblock():
        server.start()
        server.is_ready.wait()
        if server.error:
            raise server.error
    yield f"http://127.0.0.1:{server.port}"
    server.terminate()


def _forget(prefix: str, names: tuple[str, ...] = ()) -> None:
    users = User.objects.filter(Q(username__startswith=prefix) | Q(username__in=names))
    if not users.exists():
        return  # nothing to delete, so no board to recount
    Cohort.objects.filter(instructor__in=users).delete()
    ExerciseProgress.objects.filter(user__in=users).delete()
    Attempt.objects.filter(user__in=users).delete()
    users.delete()
    progress_services.scores_rebuild()


@pytest.fixture
def e2e_db(django_db_blocker: Any, request: pytest.FixtureRequest) -> Iterator[str]:
    """Database access for this test and the live server's threads; cleaned up afterwards.

    Yields the username prefix this test's accounts must use.
    """
    prefix = "e2e" + re.sub(r"[^a-z0-9]", "", request.node.name.lower())[-20:]
    with django_db_blocker.unblock():
        _forget(prefix)  # what an interrupted earlier run left
        # pytest-django runs tests without `db` last, after the `transaction=True` ones, whose
        # flush empties every table: put the content back (an idempotent upsert).
        call_command("sync_content", verbosity=0)
        try:
            yield prefix
        finally:
            _forget(prefix)
            connections.close_all()


@dataclass
class Site:
    """The live site, a browser, and this test's accounts."""

    url: str
    browser: Browser
    prefix: str
    contexts: list[BrowserContext]
    names: list[str]

    def user(self, name: str, role: str = Role.STUDENT) -> User:
        """An account named plainly (it shows in screenshots), deleted with this test's others."""
        _forget(self.prefix, (name,))  # what an interrupted earlier run left
        self.names.append(name)
        return account_services.user_create(username=name, password=PASSWORD, role=role)

    def page(self, *, dark: bool = False, phone: bool = False, js: bool = True) -> Page:
        context = self.browser.new_context(
            base_url=self.url,
            viewport=PHONE if phone else DESKTOP,
            color_scheme="dark" if dark else "light",
            java_script_enabled=js,
            reduced_motion="reduce",
        )
        context.set_default_timeout(20_000)
        self.contexts.append(context)
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        # Console errors, less the browser's own note on each 4xx response (a 400 for an answer
        # that does not parse is the API working as designed).
        page.on(
            "console",
            lambda msg: (
                errors.append(msg.text)
                if msg.type == "error" and not msg.text.startswith("Failed to load resource")
                else None
            ),
        )
        page.js_errors = errors  # type: ignore[attr-defined]
        return page

    def login(self, page: Page, user: User) -> Page:
        page.goto("/login/")
        page.get_by_label("Username").fill(user.username)
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Log in").click()
        page.wait_for_url(re.compile(r".*/$"))
        return page

    def shot(self, page: Page, name: str) -> Path:
        SHOTS.mkdir(parents=True, exist_ok=True)
        path = SHOTS / f"{name}.png"
        page.screenshot(path=str(path))  # the viewport: what a visitor sees first
        return path


@pytest.fixture
def site(live_url: str, browser: Browser, e2e_db: str) -> Iterator[Site]:
    s = Site(live_url, browser, e2e_db, [], [])
    yield s
    for context in s.contexts:
        context.close()
    _forget(e2e_db, tuple(s.names))


@pytest.fixture
def site_with_sandbox(site: Site, sandbox_worker: WorkerProcess) -> Site:
    """The site, with the session's sandbox worker up to grade code."""
    assert sandbox_worker.alive()
    return site


KeyPress = Callable[[Page, str], None]
