"""The Precheck button beside Submit, at 1280 and 390 px, with the real sandbox worker: the examples'
results appear in place (no reload) under the "not graded" label, and the attempt count stays."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from apps.exercises.models import Attempt
from apps.precheck.records import NOTE
from apps.sandbox.tests.worker import ROOT
from tests.e2e.conftest import Site

WB = "transformer-math"
WRONG = "def param_count(d, n_layers, vocab_size):\n    return 13\n"
SOLUTION = (ROOT / "fixtures" / "workbooks" / WB / "code" / "0.5-param-count" / "solution.py").read_text()


@pytest.mark.parametrize("phone", [False, True], ids=["desktop", "phone"])
def test_precheck_shows_the_examples_and_counts_nothing(site_with_sandbox: Site, phone: bool) -> None:
    site = site_with_sandbox
    learner = site.user(f"{site.prefix}checker")
    page = site.login(site.page(phone=phone), learner)
    page.goto(f"/w/{WB}/0.5/")
    count = page.locator("#attempt-count")
    expect(count).to_have_text("0")
    expect(page.locator("#precheck-note")).to_contain_text(NOTE)
    page.evaluate("window.stillThisPage = true")  # gone if the page reloads

    page.locator("textarea#code").fill(WRONG)
    page.get_by_role("button", name="Precheck").click()
    region = page.locator("#precheck-result")
    expect(region).to_contain_text("✗ Precheck: not yet", timeout=60_000)
    expect(region.locator(".precheck-label")).to_have_text(NOTE)
    wrong = region.locator("li.fail")
    expect(wrong).to_have_count(1)
    expect(wrong).to_contain_text("param_count(768, 12, 50257)")
    expect(wrong).to_contain_text("expected 123532032, got 13")
    expect(region.locator("li.pass")).to_contain_text("param_count(1, 1, 1)")
    assert page.evaluate("window.stillThisPage") is True
    expect(count).to_have_text("0")
    expect(page.locator("#feedback")).not_to_contain_text("Not yet")  # the answer's feedback is untouched
    if phone:
        assert page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"]  # type: ignore[index]
    region.scroll_into_view_if_needed()
    site.shot(page, f"precheck-{'phone' if phone else 'desktop'}")

    page.locator("textarea#code").fill(SOLUTION)
    page.get_by_role("button", name="Precheck").click()
    expect(region).to_contain_text("✓ Precheck passed", timeout=60_000)
    expect(region).to_contain_text("Not graded: submitting runs the hidden tests too.")
    expect(count).to_have_text("0")
    assert not Attempt.objects.filter(user=learner).exists()
    page.reload()
    expect(page.locator("#attempt-count")).to_have_text("0")
    assert page.js_errors == []  # type: ignore[attr-defined]
