"""The main pages, for a learner with some history: accessibility (axe-core), phone width, screenshots.

axe-core comes from the axe-playwright-python package. Each page is checked in the light and the
dark theme against WCAG 2.1 A/AA; any serious or critical violation fails, with axe's report.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from axe_playwright_python.sync_playwright import Axe
from django.utils import timezone
from playwright.sync_api import Page, expect

from apps.accounts.models import Role, User
from apps.exercises.choices import AnswerFormat
from apps.exercises.selectors import exercise_get, workbook_get
from apps.exercises.tests.answers import correct_payload, wrong_payload
from apps.learning import services as learning_services
from apps.progress import selectors as progress_selectors
from apps.progress import services as progress_services
from apps.progress.tests.conftest import gradable
from tests.e2e.conftest import PHONE, Site

WB = "transformer-math"
AXE = Axe()
WCAG = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]}}
# Days ago on which the learner solved something: a four-day streak, and history before it.
SOLVE_DAYS = [27, 27, 26, 22, 19, 19, 19, 15, 12, 8, 3, 2, 1, 0, 0]

LEARNER_PAGES = {
    "home": "/",
    "workbook": f"/w/{WB}/",
    "derive-solved": f"/w/{WB}/0.1/",
    "choice": f"/w/{WB}/0.4/",
    "design": f"/w/{WB}/2.5/",
    "debug": f"/w/{WB}/0.6/",
    "table": f"/w/{WB}/8.5/",
    "build": f"/w/{WB}/0.5/",
    "parts": "/w/roofline/q1/",
    "parts-solved-plot": "/w/roofline/q3/",
    "skills": "/w/scaling-book/skills/",
    "progress": "/progress/",
    "leaderboard": "/leaderboard/",
    "cohorts": "/cohorts/",
    "profile": "/profile/",
}
VISITOR_PAGES = {"welcome": "/", "login": "/login/", "signup": "/signup/"}


@pytest.fixture
def learner(site: Site) -> User:
    """Ada: fifteen Derives solved over four weeks, a few wrong answers, in a cohort with a rival."""
    teacher = site.user("teacher", Role.INSTRUCTOR)
    cohort = progress_services.cohort_create(
        instructor=teacher, name="ML systems, autumn", time_zone="UTC", workbooks=[(workbook_get(slug=WB), None)]
    )
    ada, grace = site.user("ada"), site.user("grace")
    exercises = [e for e in gradable() if e.format == AnswerFormat.NUMERIC]  # the other formats stay to do
    real_now = timezone.now()
    with pytest.MonkeyPatch.context() as mp:
        for i, days_ago in enumerate(SOLVE_DAYS):
            at = real_now - timedelta(days=days_ago, hours=1)
            mp.setattr(timezone, "now", lambda at=at: at)
            exercise = exercises[i]
            if i % 4 == 0:
                learning_services.attempt_create(user=ada, exercise=exercise, payload=wrong_payload(exercise, ada))
            learning_services.attempt_create(user=ada, exercise=exercise, payload=correct_payload(exercise, ada))
        for exercise in exercises[:6]:
            learning_services.attempt_create(user=grace, exercise=exercise, payload=correct_payload(exercise, grace))
    for user in (ada, grace):
        progress_services.cohort_join(user=user, code=cohort.join_code)
    # A multi-part answer with its roofline drawn, and a skills checklist with one tick.
    q3 = exercise_get(workbook_slug="roofline", number="q3")
    learning_services.attempt_create(user=ada, exercise=q3, payload=correct_payload(q3, ada))
    book = workbook_get(slug="scaling-book")
    progress_services.skill_mark(
        user=ada, skill=progress_selectors.skill_get(workbook=book, key="matmul_intensity"), action="tick"
    )
    return ada


def visit(page: Page, url: str) -> None:
    response = page.goto(url)
    assert response is not None and response.status == 200, f"{url}: {response.status if response else None}"


def serious(page: Page) -> list[dict[str, Any]]:
    results = AXE.run(page, options=WCAG)
    return [v for v in results.response["violations"] if v["impact"] in ("serious", "critical")]


def report(found: dict[str, list[dict[str, Any]]]) -> str:
    return "\n".join(
        f"{name}: {v['id']} ({v['impact']}) {v['help']} — {[n['target'] for n in v['nodes']][:5]}"
        for name, violations in found.items()
        for v in violations
    )


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_no_serious_accessibility_violations(site: Site, learner: User, theme: str) -> None:
    dark = theme == "dark"
    found: dict[str, list[dict[str, Any]]] = {}
    visitor = site.page(dark=dark)
    for name, url in VISITOR_PAGES.items():
        visit(visitor, url)
        found[name] = serious(visitor)
    page = site.login(site.page(dark=dark), learner)
    for name, url in LEARNER_PAGES.items():
        visit(page, url)
        found[name] = serious(page)
    # The states a learner sees after acting: feedback, hints and a revealed derivation.
    page.goto(f"/w/{WB}/2.5/")
    page.get_by_role("button", name="Check answer").click()
    expect(page.locator("#feedback .msg")).to_be_visible()
    page.get_by_role("button", name="Stuck? Show a hint (1 of 2)").click()
    expect(page.locator("#hints .hint")).to_have_count(1)
    page.get_by_text("Give up and show the derivation").click()
    page.get_by_role("button", name="Yes, show the derivation").click()
    expect(page.locator("#solution h2")).to_have_text("Derivation")
    found["design-after"] = serious(page)
    found = {k: v for k, v in found.items() if v}
    assert not found, report(found)
    assert page.js_errors == []  # type: ignore[attr-defined]


def test_pages_fit_a_phone(site: Site, learner: User) -> None:
    """No page scrolls sideways at a phone's width (wide tables and code scroll inside their box)."""
    page = site.login(site.page(phone=True), learner)
    too_wide = {}
    for name, url in LEARNER_PAGES.items():
        visit(page, url)
        width = page.evaluate("document.documentElement.scrollWidth")
        if width > PHONE["width"]:
            too_wide[name] = width
    assert too_wide == {}


def test_screenshots(site: Site, learner: User) -> None:
    """Light and dark, desktop and phone, of the pages the README shows (var/screenshots/)."""
    written = []
    for dark in (False, True):
        for phone in (False, True):
            page = site.login(site.page(dark=dark, phone=phone), learner)
            suffix = f"{'dark' if dark else 'light'}-{'phone' if phone else 'desktop'}"
            for name in ("home", "workbook", "progress", "leaderboard", "design", "build"):
                visit(page, LEARNER_PAGES[name])
                if name == "design":
                    page.get_by_role("button", name="Check answer").click()
                    expect(page.locator("#feedback .msg")).to_be_visible()
                written.append(site.shot(page, f"{name}-{suffix}"))
            page.goto(LEARNER_PAGES["derive-solved"])
            page.get_by_label("Your answer", exact=False).fill("512 MiB")
            expect(page.locator("#understood-preview")).not_to_be_empty()
            written.append(site.shot(page, f"derive-{suffix}"))
    assert len(written) == 28
    assert all(path.stat().st_size > 10_000 for path in written)
