"""A chain of exercises on one learner's numbers, in Chromium at 1280 and 390 px: systems-serving
8.5 bills the fleet 8.4 sizes. Before 8.4 is finished 8.5 says to do it first (and shows no count);
once 8.4 is revealed, 8.5 states that learner's own fleet; new numbers on 8.4 move the chapter's
unfinished exercises with it, and the page says which."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from apps.exercises.models import Exercise
from apps.exercises.tests.answers import resolved_for
from tests.e2e.conftest import Site

WB = "systems-serving"


@pytest.mark.parametrize("phone", [False, True], ids=["1280px", "390px"])
def test_a_later_exercise_shows_the_earlier_answer_only_once_it_is_finished(site: Site, phone: bool) -> None:
    learner = site.user("chain" + ("-phone" if phone else ""))
    page = site.login(site.page(phone=phone), learner)
    width = 390 if phone else 1280
    fleet = resolved_for(Exercise.objects.get(workbook__slug=WB, number="8.4"), learner).numeric
    assert fleet is not None
    gpus = f"{fleet.value:,.0f}"

    page.goto(f"/w/{WB}/8.5/")
    prompt = page.locator(".prompt")
    expect(prompt).to_contain_text("solve 8.4 first")
    expect(prompt).not_to_contain_text(f"has {gpus} H100s")
    expect(page.locator(".numbers-note")).to_contain_text("Same numbers as 8.1, 8.2, 8.3, 8.4, 8.6")

    page.goto(f"/w/{WB}/8.4/")
    solution = page.locator("#solution")
    solution.get_by_text("Give up and show the derivation").click()
    solution.get_by_role("button", name="Yes, show the derivation").click()
    expect(solution).to_contain_text(gpus)

    page.goto(f"/w/{WB}/8.5/")
    expect(prompt).to_contain_text(f"The fleet from 8.4 has {gpus} H100s")
    assert page.evaluate("document.documentElement.scrollWidth") <= width

    page.goto(f"/w/{WB}/8.4/")
    page.get_by_role("button", name="Try new numbers").click()
    page.wait_for_url(re.compile(r".*\?moved="))
    note = page.locator(".numbers-note[role=status]")
    expect(note).to_contain_text("with it, 8.1, 8.2, 8.3, 8.5, 8.6 (not finished yet)")
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    site.shot(page, f"scenario-moved-{width}")
    # 8.4 is unfinished again, on new numbers: 8.5 (moved with it) asks for it first again.
    page.goto(f"/w/{WB}/8.5/")
    expect(prompt).to_contain_text("solve 8.4 first")
    assert page.js_errors == []  # type: ignore[attr-defined]
