"""A code run followed live: queued → running (with its time limit) → the per-test results.

The submission is the reference solution that sleeps 3 s first, so the run is long enough to be
watched. The page must answer at once and hold through the run, say that it is running and under
which limit before the verdict, show the verdict's summary once, and nothing stale after it — at
desktop and phone width, with the real Celery sandbox worker (``worker``) and on the embedded
default (``embedded``: no broker; the live server runs in this process, so the setting applies to
it, and a thread of this process runs the code in a real container).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import pytest
from django.conf import settings
from django.test import override_settings
from playwright.sync_api import Page, expect

from apps.exercises.models import Attempt
from apps.sandbox.tests.worker import ROOT, WORKER_TIME_LIMIT_S
from tests.e2e.conftest import Site
from tests.e2e.test_journey import feedback_history, record_feedback

WB = "transformer-math"
SLEEP_S = 3
SOURCE = (
    f"import time\ntime.sleep({SLEEP_S})\n\n"
    + (ROOT / "fixtures" / "workbooks" / WB / "code" / "0.5-param-count" / "solution.py").read_text()
)


@pytest.fixture(params=["worker", "embedded"])
def setup(request: pytest.FixtureRequest, site: Site) -> Iterator[tuple[Site, float]]:
    """The site and the time limit its runs get: the test worker's, or this process's setting."""
    if request.param == "worker":
        yield request.getfixturevalue("site_with_sandbox"), float(WORKER_TIME_LIMIT_S)
        return
    with override_settings(CELERY_TASK_ALWAYS_EAGER=True):
        yield site, float(settings.SANDBOX_TIME_LIMIT_S)


def running_text(limit: float) -> str:
    return f"Running your code against the tests — time limit {limit:g} s"


def open_build(site: Site, *, phone: bool = False, js: bool = True) -> Page:
    learner = site.user(f"{site.prefix}coder")
    page = site.login(site.page(phone=phone, js=js), learner)
    page.goto(f"/w/{WB}/0.5/")
    return page


@pytest.mark.parametrize("phone", [False, True], ids=["desktop", "phone"])
def test_the_page_follows_a_run_live(setup: tuple[Site, float], phone: bool) -> None:
    site, limit = setup
    page = open_build(site, phone=phone)
    record_feedback(page)
    page.locator("textarea#code").fill(SOURCE)
    feedback = page.locator("#feedback")

    clicked = time.monotonic()
    page.get_by_role("button", name="Run the tests").click()
    # Running, with the limit, while the run is still going: seen before the verdict, not after.
    expect(feedback).to_contain_text(running_text(limit), timeout=SLEEP_S * 1000)
    assert time.monotonic() - clicked < SLEEP_S
    attempt = Attempt.objects.filter(user__username=f"{site.prefix}coder").get()
    assert attempt.status == "running"
    expect(feedback.locator(".elapsed")).to_have_text(re.compile(r"^· \d+ s so far$"))
    expect(page.get_by_role("button", name="Run the tests")).to_be_disabled()  # no second submission meanwhile
    if phone:
        assert page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"]  # type: ignore[index]

    expect(feedback).to_contain_text("✓ Correct", timeout=60_000)
    attempt.refresh_from_db()
    assert (attempt.status, attempt.outcome) == ("graded", "passed")
    expect(feedback.locator("table.tests tr.pass")).to_have_count(len(attempt.details["tests"]))
    assert feedback.inner_text().count(attempt.feedback) == 1  # the summary, once
    expect(page.locator("#state-line")).to_contain_text("Solved")
    expect(page.get_by_role("button", name="Run the tests")).to_be_enabled()

    seen = feedback_history(page)
    verdict_at = next(i for i, text in enumerate(seen) if "Correct" in text)
    first_running = next(i for i, text in enumerate(seen) if running_text(limit) in text)
    assert first_running < verdict_at, seen
    assert not any("Queued" in text or "Running" in text for text in seen[verdict_at:]), seen  # nothing stale
    # The page's polling of this run has ended (it marks the region busy until then): no late poll
    # can land after this.
    expect(feedback).not_to_have_attribute("aria-busy", "true")
    assert "Running" not in feedback.inner_text() and feedback.inner_text().count(attempt.feedback) == 1
    assert page.js_errors == []  # type: ignore[attr-defined]


def test_without_javascript_the_pending_page_reloads_into_the_result(setup: tuple[Site, float]) -> None:
    """The plain form post answers with a page about the attempt; reloading it (a GET, so the code
    is not submitted again) shows the result once the run is done."""
    site, limit = setup
    page = open_build(site, js=False)
    page.locator("textarea#code").fill(SOURCE)
    page.get_by_role("button", name="Run the tests").click()
    expect(page).to_have_url(re.compile(r"\?attempt=\d+#feedback$"))
    attempt = Attempt.objects.filter(user__username=f"{site.prefix}coder").get()
    assert page.url.endswith(f"?attempt={attempt.pk}#feedback")
    feedback = page.locator("#feedback")
    expect(feedback).to_contain_text(re.compile(rf"Queued for the sandbox…|{re.escape(running_text(limit))}"))
    expect(feedback).to_contain_text("Reload this page in a moment")
    expect(page.locator("textarea#code")).to_have_value(SOURCE)

    deadline = time.monotonic() + 60
    while "Correct" not in feedback.inner_text() and time.monotonic() < deadline:
        time.sleep(1)
        page.reload()
    attempt.refresh_from_db()
    assert attempt.status == "graded"
    expect(feedback).to_contain_text("✓ Correct")
    assert feedback.inner_text().count(attempt.feedback) == 1
    expect(feedback.locator("table.tests tr.pass")).to_have_count(len(attempt.details["tests"]))
    assert Attempt.objects.filter(user__username=f"{site.prefix}coder").count() == 1  # reloads posted nothing
