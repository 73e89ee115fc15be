"""One exercise of every answer format, completed with the keyboard alone.

Every control is reached with Tab from the top of the page (so it is in the focus order and
visible to the keyboard), operated with keys, and the answer submitted with Enter or Space.
No mouse click anywhere.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Locator, Page, expect

from apps.accounts.models import User
from apps.exercises import presentation
from apps.exercises.content.resolve import ResolvedExercise
from apps.exercises.models import Exercise
from apps.exercises.tests.answers import resolved_for
from tests.e2e.conftest import Site

WB = "transformer-math"


def version(number: str, learner: User | None = None) -> tuple[Exercise, ResolvedExercise]:
    """The exercise, on ``learner``'s own numbers (the seed's without one)."""
    ex = Exercise.objects.select_related("current_version").get(workbook__slug=WB, number=number)
    assert ex.current_version is not None
    return ex, resolved_for(ex, learner)


# A focus ring on the element, or on the frame around it (the code editor draws it there).
FOCUS_RING = """el => [el, el.parentElement, el.parentElement.parentElement].some(
    (node) => getComputedStyle(node).outlineStyle !== "none" && getComputedStyle(node).outlineWidth !== "0px"
)"""


def tab_to(page: Page, target: Locator, *, limit: int = 120) -> None:
    """Press Tab until ``target`` has the focus; fail if it never does (not keyboard-reachable)."""
    for _ in range(limit):
        if target.evaluate("el => el === document.activeElement"):
            assert target.evaluate(FOCUS_RING), f"no visible focus on {target}"
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"{target} is not reachable with Tab")


def type_code_and_run(page: Page, editor: str, source: str, button: str) -> None:
    tab_to(page, page.locator(editor))
    page.keyboard.press("Control+A")
    page.keyboard.insert_text(source)
    page.keyboard.press("Escape")  # then Tab leaves the editor instead of indenting
    page.keyboard.press("Tab")
    expect(page.get_by_role("button", name=button, exact=True)).to_be_focused()
    page.keyboard.press("Enter")


def start(site: Site, learner: User, number: str) -> Page:
    page = site.login(site.page(), learner)
    page.goto(f"/w/{WB}/{number}/")
    page.locator("body").focus()
    return page


def solved(page: Page) -> None:
    expect(page.locator("#feedback")).to_contain_text("Correct", timeout=90_000)
    expect(page.locator("#state-line")).to_contain_text("Solved")
    assert page.js_errors == []  # type: ignore[attr-defined]


@pytest.fixture
def learner(site: Site) -> User:
    return site.user("keys")


def test_numeric(site: Site, learner: User) -> None:
    page = start(site, learner, "0.1")
    _, r = version("0.1", learner)
    assert r.answer_text is not None
    tab_to(page, page.locator("#answer"))
    page.keyboard.type(r.answer_text)
    page.keyboard.press("Enter")
    solved(page)


def test_choice(site: Site, learner: User) -> None:
    page = start(site, learner, "0.3")
    ex, r = version("0.3", learner)
    assert ex.current_version is not None
    ids = presentation.option_ids(ex.current_version, len(r.spec.options or []))
    right = [ids[i] for i, o in enumerate(r.spec.options or []) if o.correct]
    for option_id in right:
        box = page.locator(f'input[name="choices"][value="{option_id}"]')
        if box.get_attribute("type") == "radio":
            # A radio group is one Tab stop; the arrow keys move within it and select.
            tab_to(page, page.locator('input[name="choices"]').first)
            for _ in range(len(ids)):
                if box.is_checked():
                    break
                page.keyboard.press("ArrowDown")
        else:
            tab_to(page, box)
            page.keyboard.press("Space")
        expect(box).to_be_checked()
    tab_to(page, page.get_by_role("button", name="Check answer"))
    page.keyboard.press("Enter")
    solved(page)


def test_order(site: Site, learner: User) -> None:
    page = start(site, learner, "2.5")
    ex, r = version("2.5")
    assert ex.current_version is not None
    opaque = presentation.step_ids(ex.current_version, r.spec)
    # Send each step, in the right order, to the end of the list with its handle's End key.
    for step in r.spec.steps or []:
        handle = page.locator(f'#steps > li[data-id="{opaque[step.id]}"] .step-handle')
        tab_to(page, handle)
        page.keyboard.press("End")
        expect(page.locator("#steps > li").last).to_have_attribute("data-id", opaque[step.id])
        expect(handle).to_be_focused()  # the focus travels with the step
        page.locator("body").focus()
    expect(page.locator("[aria-live]").filter(has_text="position")).to_contain_text("Moved to position")
    tab_to(page, page.get_by_role("button", name="Check answer"))
    page.keyboard.press("Enter")
    solved(page)


def test_table(site: Site, learner: User) -> None:
    page = start(site, learner, "8.5")
    _, r = version("8.5", learner)
    for cid, value in r.cells.items():
        tab_to(page, page.locator(f'input[name="cell:{cid}"]'))
        page.keyboard.type(value.text())
    tab_to(page, page.get_by_role("button", name="Check answer"))
    page.keyboard.press("Enter")
    solved(page)


def test_lines_then_the_fix(site: Site, learner: User, sandbox_worker: object) -> None:
    page = start(site, learner, "0.6")
    _, r = version("0.6")
    assert r.spec.code is not None and r.spec.code.solution
    for line in r.spec.buggy_lines or []:
        tab_to(page, page.locator(f'input[name="lines"][value="{line}"]'))
        page.keyboard.press("Space")
    tab_to(page, page.get_by_role("button", name="Check answer"))
    page.keyboard.press("Enter")
    expect(page.locator("#lines-feedback")).to_contain_text("Correct")  # by its own button, above the fix
    type_code_and_run(page, "#fix-code", r.spec.code.solution, "Run the tests on the fix")
    solved(page)


def test_code(site: Site, learner: User, sandbox_worker: object) -> None:
    page = start(site, learner, "0.5")
    _, r = version("0.5")
    assert r.spec.code is not None and r.spec.code.solution
    type_code_and_run(page, "#code", r.spec.code.solution, "Run the tests")
    solved(page)
