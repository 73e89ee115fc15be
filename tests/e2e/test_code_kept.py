"""The learner's code is never lost, at desktop and phone width: the page opens on their last
submission (rendered by the server: a reload, or a page without JavaScript, shows it); what they
type without submitting is kept in the browser and restored after a visit elsewhere; "Reset to
starter" asks first, then puts the starter back and drops the draft; and another learner signing
in on the same browser sees the starter — neither the first one's submission nor their draft."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import Site

WB = "transformer-math"
URL = f"/w/{WB}/0.5/"
DRAFTS = "Object.keys(localStorage).filter((k) => k.startsWith('mlsys.draft:'))"


def drafts(page: Page) -> list[str]:
    keys: list[str] = page.evaluate(DRAFTS)
    return keys


@pytest.mark.parametrize("phone", [False, True], ids=["desktop", "phone"])
def test_the_editor_keeps_the_learners_code(site_with_sandbox: Site, phone: bool) -> None:
    site = site_with_sandbox
    width = "phone" if phone else "desktop"
    first, second = site.user(f"kept_first_{width}"), site.user(f"kept_second_{width}")
    page = site.login(site.page(phone=phone), first)
    page.goto(URL)
    editor = page.locator("textarea#code")
    starter = editor.input_value()
    assert "Your code here" in starter
    expect(page.locator(".draft-note")).to_be_hidden()

    # Submitted code comes back on a reload; the draft the typing kept is gone once it is recorded.
    submitted = starter.replace("total = 0", "total = 1  # my first try")
    editor.fill(submitted)
    assert len(drafts(page)) == 1
    page.get_by_role("button", name="Run the tests").click()
    expect(page.locator("#feedback")).to_contain_text("Not yet", timeout=60_000)
    assert drafts(page) == []
    page.reload()
    expect(editor).to_have_value(submitted)
    expect(page.locator(".draft-note")).to_be_hidden()
    if not phone:  # the server renders it: without JavaScript too
        plain = site.login(site.page(js=False), first)
        plain.goto(URL)
        expect(plain.locator("textarea#code")).to_have_value(submitted)

    # Typed, not submitted: kept across a visit to the workbook page and back.
    draft = submitted.replace("# my first try", "# still working on it")
    editor.fill(draft)
    page.locator("nav.crumbs a", has_text="Transformer").click()
    page.get_by_role("link", name=re.compile(r"^0\.5 ")).click()
    expect(editor).to_have_value(draft)
    expect(page.locator(".draft-note")).to_contain_text("Restored your unsaved draft")

    # Reset asks first (Escape takes the question back), then restores the starter, by keyboard.
    reset = page.locator(".code-reset summary")
    reset.focus()
    page.keyboard.press("Enter")
    confirm = page.get_by_role("button", name="Yes, reset to the starter")
    expect(confirm).to_be_visible()
    expect(editor).to_have_value(draft)  # nothing discarded by asking
    site.shot(page, f"code-kept-{width}")
    page.keyboard.press("Escape")
    expect(confirm).to_be_hidden()
    expect(reset).to_be_focused()
    expect(editor).to_have_value(draft)
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    expect(confirm).to_be_focused()
    page.keyboard.press("Enter")
    expect(editor).to_have_value(starter)
    expect(editor).to_be_focused()
    page.keyboard.press("Control+z")  # the reset is an edit like any other: undone, the draft is back
    expect(editor).to_have_value(draft)
    reset.click()
    confirm.click()
    expect(editor).to_have_value(starter)
    assert drafts(page) == []
    page.reload()
    expect(editor).to_have_value(submitted)  # the draft went with the reset; the submission stays

    # Someone else on the same browser (its storage holds the first learner's new draft) starts
    # from the starter, and the first learner's code is nowhere in their page.
    editor.fill(draft)
    assert len(drafts(page)) == 1
    page.context.clear_cookies()
    site.login(page, second)
    page.goto(URL)
    expect(editor).to_have_value(starter)
    expect(page.locator(".draft-note")).to_be_hidden()
    assert "my first try" not in page.content() and "still working on it" not in page.content()
    assert page.js_errors == []  # type: ignore[attr-defined]
