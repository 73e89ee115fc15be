"""The XSS corpus's world: payloads in everything a learner, instructor, LMS or author controls,
and a browser that watches every page for script that should not run.

The world is built once for the package (content, accounts, cohorts, attempts — code ones graded
by the session's real sandbox worker) and removed afterwards; the pages are then visited one test
each, so a failure names the page and, through each payload's tag, the payload and the field.
Each account has one browser context (and one page, navigated from view to view) for the whole
package: its findings are reset at the start of each test and asserted at its end.

Detection, per page: an init script in every frame defines ``window.__xss`` (each payload's call)
and records ``securitypolicyviolation`` events; dialogs (``alert``/``confirm``/``prompt``) are
recorded and dismissed; console messages starting "Refused to" are kept; the DOM is scanned for
event-handler attributes and ``javascript:``/``vbscript:``/``data:text/html`` URLs that carry a
payload (injected even where the event did not fire); every element of the document gets
``mouseover``/``focus``/``mouseenter``/``focusin`` dispatched (all of them: it costs milliseconds,
and a payload in the header or a title is as live as one in ``main``); the server's CSP reports (logger
``apps.core.csp``) are read from the log; and every HTML document the site serves must carry a
``Content-Security-Policy`` header.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.conf import settings
from django.db import connections
from django.test import Client
from playwright.sync_api import (
    Browser,
    BrowserContext,
    ConsoleMessage,
    Dialog,
    Frame,
    Page,
    Playwright,
    Response,
    sync_playwright,
)

from apps.accounts import services as account_services
from apps.accounts.models import Role, User
from apps.exercises import services as exercise_services
from apps.exercises.content.schema import WorkbookSpec
from apps.exercises.models import Attempt, Exercise, Workbook
from apps.learning import services as learning_services
from apps.progress import services as progress_services
from apps.progress.models import Cohort, ExerciseProgress
from apps.sandbox.tests.worker import WorkerProcess
from tests.e2e.conftest import DESKTOP, PASSWORD, _orm_beside_playwright, launch_chromium, live_url
from tests.xss import content
from tests.xss.payloads import STORABLE

__all__ = ["_orm_beside_playwright", "live_url"]


# Playwright's sync API keeps an event loop on this thread while it runs, and Django refuses ORM
# calls near one. The corpus is a long group that runs first on its pytest-xdist worker, so its
# Playwright must end with the package (unlike tests/e2e's, which lives for the session at the end
# of the run): the worker's next tests then run without a loop.
@pytest.fixture(scope="package")
def playwright() -> Iterator[Playwright]:
    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="package")
def browser(playwright: Playwright) -> Iterator[Browser]:
    browser = launch_chromium(playwright)
    yield browser
    browser.close()


PREFIX = "xss"  # every account this package makes starts with it
CSP_LOGGER = "apps.core.csp"

# Runs first in every frame (srcdoc iframes included).
INIT_SCRIPT = """
(() => {
  window.__fired = window.__fired || [];
  window.__csp = window.__csp || [];
  window.__xss = (id) => (window.__fired ||= []).push(String(id));
  document.addEventListener("securitypolicyviolation", (e) => window.__csp.push(
    `${e.violatedDirective} blocked=${e.blockedURI} at ${e.sourceFile}:${e.lineNumber} ${(e.sample || "").slice(0, 80)}`
  ));
})();
"""

# One round trip per frame: settle (every image loaded or failed, so onerror has run; two frames
# and a task, for toggle events and srcdoc frames), scan for markup a payload left live in the DOM
# (whether or not its event fired), poke every element with the events the corpus's inline
# handlers wait for, settle again, and drain what was recorded so far.
CHECK_SCRIPT = """
async () => {
  const settle = async () => {
    await Promise.all(Array.from(document.images).map((img) => img.complete ? null : new Promise((r) => {
      img.addEventListener("load", r, { once: true }); img.addEventListener("error", r, { once: true });
    })));
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    await new Promise((r) => setTimeout(r, 0));
  };
  await settle();
  const injected = [];
  const carries = /__xss|alert|confirm|prompt|k03/i;
  const script = /^[\\s\\u0000-\\u001f]*(j\\s*a\\s*v\\s*a\\s*s\\s*c\\s*r\\s*i\\s*p\\s*t|v\\s*b\\s*s\\s*c\\s*r\\s*i\\s*p\\s*t|data:text\\/html)/i;
  const urls = new Set(["href", "src", "action", "formaction", "xlink:href", "data", "srcdoc", "background", "poster"]);
  const all = document.querySelectorAll("*");
  for (const el of all) {
    for (const a of el.attributes) {
      const n = a.name.toLowerCase();
      if ((n.startsWith("on") && carries.test(a.value)) || (urls.has(n) && (script.test(a.value) || (n === "srcdoc" && carries.test(a.value))))) {
        injected.push(`<${el.tagName.toLowerCase()} ${n}="${a.value.slice(0, 90)}">`);
      }
    }
    // Inline script that carries a payload, except JSON data blocks (Django's json_script):
    // the browser never runs those, and a payload breaking out of one makes a script of its own.
    const data = /^application\\/(ld\\+)?json$/i.test((el.getAttribute("type") || "").trim());
    if (el.tagName.toLowerCase() === "script" && !data && carries.test(el.textContent || "") && !el.src) {
      injected.push(`<script>${(el.textContent || "").slice(0, 90)}</script>`);
    }
  }
  for (const el of all) {
    for (const type of ["mouseover", "mouseenter", "focus", "focusin"]) {
      try { el.dispatchEvent(new Event(type, { bubbles: type !== "mouseenter" && type !== "focus" })); } catch (e) {}
    }
  }
  await settle();
  return { injected, fired: (window.__fired || []).splice(0), csp: (window.__csp || []).splice(0) };
}
"""

# What ran since the last read (read again after every frame was poked: a handler in one frame
# may call into another).
DRAIN_SCRIPT = "() => ({ fired: (window.__fired || []).splice(0), csp: (window.__csp || []).splice(0) })"


@dataclass
class Findings:
    """What one page view (or a few, in one test) showed."""

    fired: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    csp: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    injected: list[str] = field(default_factory=list)
    no_csp_header: list[str] = field(default_factory=list)
    server_reports: list[str] = field(default_factory=list)
    views: list[str] = field(default_factory=list)

    def problems(self) -> dict[str, list[str]]:
        named = {
            "payloads that ran (__xss)": sorted(set(self.fired)),
            "dialogs": self.dialogs,
            "CSP violations (in the page)": self.csp,
            "console 'Refused to …'": self.refused,
            "live injected markup": sorted(set(self.injected)),
            "HTML documents without a Content-Security-Policy header": sorted(set(self.no_csp_header)),
            "CSP reports logged by the server": self.server_reports,
        }
        return {k: v for k, v in named.items() if v}

    def report(self) -> str:
        lines = [f"views: {', '.join(self.views)}"]
        for what, items in self.problems().items():
            lines.append(f"{what} ({len(items)}):")
            lines.extend(f"  {item}" for item in items)
        return "\n".join(lines)


class Watcher:
    """A browser context signed in as one account (or none), whose pages are all watched.

    ``findings`` is what the context's pages showed since the last ``reset``; ``open`` navigates
    the context's one page (new windows a page opens are watched too, and closed by ``reset``)."""

    def __init__(self, browser: Browser, url: str, user: User | None) -> None:
        self.url = url
        self.findings = Findings()
        self.context: BrowserContext = browser.new_context(base_url=url, viewport=DESKTOP, reduced_motion="reduce")
        self.context.set_default_timeout(20_000)
        self.context.add_init_script(INIT_SCRIPT)  # every frame of every page, before the page's scripts
        self.context.on("page", self._watch)
        self._main: Page | None = None
        if user is not None:
            client = Client()
            client.force_login(user)
            cookie = client.cookies[settings.SESSION_COOKIE_NAME]
            self.context.add_cookies([{"name": cookie.key, "value": cookie.value, "url": url}])

    def _watch(self, page: Page) -> None:
        page.on("dialog", self._dialog)
        page.on("console", self._console)
        page.on("response", self._response)

    def _dialog(self, dialog: Dialog) -> None:
        self.findings.dialogs.append(f"{dialog.type}({dialog.message!r}) on {dialog.page.url if dialog.page else '?'}")
        dialog.dismiss()

    def _console(self, msg: ConsoleMessage) -> None:
        if msg.text.startswith("Refused to"):
            self.findings.refused.append(msg.text[:300])

    def _response(self, response: Response) -> None:
        request = response.request
        if request.resource_type != "document" or not response.url.startswith(self.url):
            return
        if "text/html" not in (response.headers.get("content-type") or ""):
            return
        if "content-security-policy" not in response.headers:
            path = response.url.removeprefix(self.url)
            self.findings.no_csp_header.append(f"{path} ({response.status})")

    def page(self) -> Page:
        """The context's page (made on first use, and again if a test closed it)."""
        if self._main is None or self._main.is_closed():
            self._main = self.context.new_page()
        return self._main

    def reset(self) -> None:
        """A new test: no findings yet, and only the context's page left open."""
        for page in self.context.pages:
            if page is not self._main:
                page.close()
        self.findings = Findings()

    def open(self, path: str) -> Page:
        page = self.page()
        self.findings.views.append(path)
        response = page.goto(path)  # waits for "load": every subresource and frame
        assert response is not None and response.status < 500, f"{path}: {response and response.status}"
        self.check(page)
        return page

    def check(self, page: Page) -> None:
        """Settle, scan and poke the page's frames, then collect what ran."""
        frames = page.frames
        for frame in frames:
            self._check_frame(frame)
        if len(frames) > 1:  # the pokes may have run handlers in other frames: read them all again
            for frame in page.frames:
                self._collect(frame)

    def _check_frame(self, frame: Frame) -> None:
        try:
            state = frame.evaluate(CHECK_SCRIPT)
        except Exception as exc:  # noqa: BLE001 - a frame that navigated away (a payload's redirect) says so
            self.findings.injected.append(f"{frame.url}: frame changed while scanned: {exc}")
            return
        self.findings.injected.extend(f"{frame.url}: {m}" for m in state["injected"])
        self.findings.fired.extend(state["fired"])
        self.findings.csp.extend(state["csp"])

    def _collect(self, frame: Frame) -> None:
        try:
            state = frame.evaluate(DRAIN_SCRIPT)
        except Exception as exc:  # noqa: BLE001
            self.findings.injected.append(f"{frame.url}: frame changed while read: {exc}")
            return
        self.findings.fired.extend(state["fired"])
        self.findings.csp.extend(state["csp"])

    def collect(self) -> None:
        """What ran in any open page since the last check (a late handler, a timer)."""
        for page in self.context.pages:
            for frame in page.frames:
                self._collect(frame)

    def close(self) -> None:
        self.collect()
        self.context.close()


class Pool:
    """One watched context per account for the whole package (and one for no account)."""

    def __init__(self, browser: Browser, url: str) -> None:
        self.browser, self.url = browser, url
        self.watchers: dict[int | None, Watcher] = {}

    def get(self, user: User | None) -> Watcher:
        key = user.pk if user is not None else None
        if key not in self.watchers:
            self.watchers[key] = Watcher(self.browser, self.url, user)
        w = self.watchers[key]
        w.reset()
        return w

    def close(self) -> None:
        for w in self.watchers.values():
            w.context.close()


@pytest.fixture(scope="package")
def pool(browser: Browser, live_url: str, world: World) -> Iterator[Pool]:
    p = Pool(browser, live_url)
    yield p
    p.close()


@pytest.fixture
def watch(pool: Pool, caplog: pytest.LogCaptureFixture) -> Callable[[User | None], Watcher]:
    """``watch(user)``: the account's watched context, its findings reset; the test ends by
    asserting ``assert_clean(caplog, *watchers)``."""
    caplog.set_level(logging.WARNING, logger=CSP_LOGGER)
    return pool.get


def server_reports(caplog: pytest.LogCaptureFixture, expected: bool) -> list[str]:
    """The CSP reports the server logged during the test. The browser posts a report a moment
    after the violation the page saw: when the page saw one, wait (bounded) for its report."""

    def reports() -> list[str]:
        return [r.getMessage()[:300] for r in caplog.records if r.name == CSP_LOGGER]

    deadline = time.monotonic() + 10
    while expected and not reports() and time.monotonic() < deadline:
        time.sleep(0.05)  # the live server's thread logs it: polled, for a condition
    return reports()


def assert_clean(caplog: pytest.LogCaptureFixture, *watchers: Watcher) -> None:
    """Collect the watchers' last state, add the server's CSP reports, assert."""
    total = Findings()
    for w in watchers:
        w.collect()
        f = w.findings
        for name in ("fired", "dialogs", "csp", "refused", "injected", "no_csp_header", "views"):
            getattr(total, name).extend(getattr(f, name))
    total.server_reports = server_reports(caplog, expected=bool(total.csp or total.refused))
    RESULTS.append(total)
    assert not total.problems(), total.report()


RESULTS: list[Findings] = []


# ---------------------------------------------------------------------------------------------
# The world
# ---------------------------------------------------------------------------------------------


@dataclass
class World:
    workbook: Workbook
    exercises: dict[str, Exercise]  # by number
    fresh: User  # no history: pages before submitting, and submissions through the page
    veteran: User  # attempts of every kind (code with payloads), hints, reveals, in every cohort
    instructor: User
    author: User
    cohorts: list[Cohort]
    code_attempts: dict[str, Attempt]  # by what they carry


def _forget() -> None:
    users = User.objects.filter(username__startswith=PREFIX)
    Cohort.objects.filter(instructor__in=users).delete()
    ExerciseProgress.objects.filter(user__in=users).delete()
    Attempt.objects.filter(user__in=users).delete()
    users.delete()
    # Attempts by anyone else on the corpus's exercises (none are expected), then the content.
    Attempt.objects.filter(exercise__workbook__slug=content.SLUG).delete()
    Exercise.objects.filter(workbook__slug=content.SLUG).update(current_version=None)  # PROTECTed
    Workbook.objects.filter(slug=content.SLUG).delete()
    progress_services.scores_rebuild()


def _wait_graded(attempts: list[Attempt], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    for attempt in attempts:
        while True:
            attempt.refresh_from_db()
            if attempt.is_final:
                break
            assert time.monotonic() < deadline, f"attempt {attempt.pk} still {attempt.status}"
            time.sleep(0.2)  # polling the database for the sandbox's verdict


@pytest.fixture(scope="package")
def world(django_db_setup: None, django_db_blocker: Any, sandbox_worker: WorkerProcess) -> Iterator[World]:
    assert sandbox_worker.alive()
    with pytest.MonkeyPatch.context() as mp, django_db_blocker.unblock():
        mp.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # the ORM between Playwright's steps
        _forget()  # what an interrupted run left
        try:
            yield _build()
        finally:
            _forget()
            connections.close_all()


def _user(name: str, role: str = Role.STUDENT) -> User:
    return account_services.user_create(username=f"{PREFIX}{name}", password=PASSWORD, role=role)


def _build() -> World:
    spec = WorkbookSpec.model_validate(content.workbook_spec())
    exercise_services.workbook_sync(spec=spec)
    workbook = Workbook.objects.get(slug=content.SLUG)
    exercises = {e.number: e for e in Exercise.objects.filter(workbook=workbook).select_related("current_version")}
    fresh, veteran = _user("fresh"), _user("veteran")
    instructor, author = _user("teacher", Role.INSTRUCTOR), _user("author", Role.AUTHOR)

    # Instructor input: one cohort per payload that fits a cohort's name (120 characters).
    cohorts = []
    for p in STORABLE:
        name = p.render("cohort")
        if len(name) > 120:
            continue
        cohort = progress_services.cohort_create(instructor=instructor, name=name, workbooks=[(workbook, None)])
        progress_services.cohort_join(user=veteran, code=cohort.join_code)
        cohorts.append(cohort)

    # The veteran's history: wrong answers, a solve, hints, reveals (graded here, as the API does).
    from apps.exercises.tests.answers import correct_payload, wrong_payload

    for number, exercise in exercises.items():
        if exercise.format == "code" or number == content.DEBUG:
            continue
        wrong = {"answer": "41"} if exercise.format == "integer" else wrong_payload(exercise, veteran)
        learning_services.attempt_create(user=veteran, exercise=exercise, payload=wrong)
        for _ in range(len(exercise.current_version.spec.get("hints") or [])):  # type: ignore[union-attr]
            learning_services.hint_reveal_next(user=veteran, exercise=exercise)
        if number == content.CHOICE:
            learning_services.attempt_create(
                user=veteran, exercise=exercise, payload=correct_payload(exercise, veteran)
            )
        else:
            learning_services.exercise_reveal(user=veteran, exercise=exercise)

    # Learner code through the sandbox: payloads in stdout, stderr, return values, exceptions.
    code_attempts = {}
    build, debug = exercises[content.BUILD], exercises[content.DEBUG]
    for what, source in content.learner_code().items():
        outcome = learning_services.attempt_create(user=veteran, exercise=build, payload={"code": source})
        code_attempts[what] = outcome.attempt
    debug_lines = learning_services.attempt_create(user=veteran, exercise=debug, payload={"lines": [1]})
    code_attempts["debug-lines"] = debug_lines.attempt
    fix = learning_services.attempt_create(
        user=veteran, exercise=debug, payload={"code": content.learner_code()["raises"]}
    )
    code_attempts["debug-fix"] = fix.attempt
    _wait_graded(list(code_attempts.values()))
    assert code_attempts["raises"].feedback, "the exception's message reached the feedback"
    return World(workbook, exercises, fresh, veteran, instructor, author, cohorts, code_attempts)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    """Which payloads ran, page by page: the list the issue's closing note quotes."""
    fired = [f for f in RESULTS if f.problems()]
    if not RESULTS:
        return
    terminalreporter.write_sep("-", "xss corpus")
    for f in fired:
        terminalreporter.write_line(f.report())
    if not fired:
        terminalreporter.write_line(f"{len(RESULTS)} views clean")
