"""A failed JAX run's results, read at 1,280 and 390 px: failing tests first, every reason visible
without scrolling sideways, long calls cut short with the whole on demand, and hidden tests shown
only as "hidden test k of n" and why, never with an expected value.

The submission is a right-valued predict_batch written as a plain Python loop: every value test
passes, the hidden probe fails with its requirement ("…a Python loop…"). Each width submits once (the
result exercise.js builds) and reloads the attempt's page (the server's template of the same table).
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from apps.exercises.models import Attempt
from tests.e2e.conftest import Site

LOOP = """def predict_batch(params, xs):
    return [sum(w * x for w, x in zip(params["w"], row)) + params["b"] for row in xs]
"""
# Expected values of 9.8's hidden tests (tests.py): never on the page.
HIDDEN_VALUES = ("-2.2913", "-3.3587")


def check_results(page: Page) -> None:
    width = page.viewport_size["width"]  # type: ignore[index]
    table = page.locator("#feedback table.tests")
    expect(table).to_be_visible()
    rows = table.locator("tbody tr")
    assert rows.count() >= 4
    # Failing first: the probe, a hidden test, with its requirement in plain words.
    first = rows.first
    expect(first).to_have_class("fail")
    expect(first.locator("th")).to_have_text(re.compile(r"^Hidden test \d+ of \d+$"))
    reason = first.locator("td.result")
    expect(reason).to_contain_text("a Python loop")
    expect(first.locator("td.hidden-test")).to_be_visible()
    assert first.locator("td.value").count() == 0
    expect(rows.nth(1)).to_have_class("pass")
    # Every reason fits the window and the table fits its box: nothing off to the right.
    box = page.locator("#feedback .msg").bounding_box()
    t = table.bounding_box()
    assert box is not None and t is not None and t["x"] + t["width"] <= box["x"] + box["width"] + 1, (t, box)
    for i in range(rows.count()):
        cell = rows.nth(i).locator("td.result").bounding_box()
        assert cell is not None and cell["x"] >= 0 and cell["x"] + cell["width"] <= width, (i, cell)
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    # An example's long call is cut short; its whole text is one click away, still inside the box.
    example = table.locator("tr", has=page.locator("th", has_text="Example")).first
    long_call = example.locator("td.value").first.locator("details.long-value")
    expect(long_call.locator("summary")).to_contain_text("predict_batch(")
    long_call.locator("summary").click()
    expect(long_call).to_have_attribute("open", "")
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    # Hidden tests: no expected value anywhere on the page.
    text = page.locator("body").inner_text()
    assert not [v for v in HIDDEN_VALUES if v in text]
    assert "#}" not in text  # no template comment leaks into the page


@pytest.mark.parametrize("phone", [False, True], ids=["desktop", "phone"])
def test_a_failed_jax_run_reads_at_every_width_and_hides_its_hidden_tests(site_with_sandbox: Site, phone: bool) -> None:
    site = site_with_sandbox
    learner = site.user(f"{site.prefix}{'phone' if phone else 'desk'}coder")
    page = site.login(site.page(phone=phone), learner)
    page.goto("/w/scaling-book/9.8/")
    examples = page.locator("section.examples")
    expect(examples).to_contain_text("predict_batch(")
    assert not [v for v in HIDDEN_VALUES if v in page.locator("body").inner_text()]
    page.locator("textarea#code").fill(LOOP)
    page.get_by_role("button", name="Run the tests").click()
    expect(page.locator("#feedback")).to_contain_text("✗ Not yet", timeout=90_000)
    check_results(page)  # as exercise.js built it
    attempt = Attempt.objects.filter(user=learner).get()
    page.goto(f"/w/scaling-book/9.8/?attempt={attempt.pk}")
    check_results(page)  # as the server's template built it
    page.locator("#feedback").scroll_into_view_if_needed()
    site.shot(page, f"hidden-results-{'phone' if phone else 'desktop'}")
    assert page.js_errors == []  # type: ignore[attr-defined]
