"""Every reveal teaches, at 1280 and 390 px: giving up on a choice shows each option marked right or
wrong with its feedback, the learner's own choice and the explanation; a solve shows the same and a
reload keeps it; an order's reveal shows the correct order beside the learner's last one."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from apps.exercises import presentation
from apps.exercises.models import Exercise
from apps.exercises.tests.answers import resolved_for
from tests.e2e.conftest import Site

WB = "transformer-math"


def option_ids(number: str, learner: object) -> tuple[list[str], list[str]]:
    """The ids of (the correct, the wrong) options of an exercise, on ``learner``'s numbers."""
    ex = Exercise.objects.select_related("current_version").get(workbook__slug=WB, number=number)
    assert ex.current_version is not None
    options = resolved_for(ex, learner).spec.options or []
    ids = presentation.option_ids(ex.current_version, len(options))
    return [ids[i] for i, o in enumerate(options) if o.correct], [
        ids[i] for i, o in enumerate(options) if not o.correct
    ]


def answer(page: Page, option_id: str) -> None:
    page.locator(f'input[name="choices"][value="{option_id}"]').check()
    page.get_by_role("button", name="Check answer").click()


def fits(page: Page, width: int) -> None:
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    for box in page.locator("#solution .solution-option, #solution .order-beside > div").all():
        right = box.evaluate("el => el.getBoundingClientRect().right")
        assert right <= width, f"{box} ends at {right} px in a {width} px window"


@pytest.mark.parametrize("phone", [False, True], ids=["1280px", "390px"])
def test_a_reveal_and_a_solve_show_the_answer_beside_the_learners(site: Site, phone: bool) -> None:
    learner = site.user("revealer" + ("-phone" if phone else ""))
    page = site.login(site.page(phone=phone), learner)
    width = 390 if phone else 1280
    solution = page.locator("#solution")

    # Give up on a choice after one wrong answer: every option marked, with its feedback.
    right, wrong = option_ids("0.3", learner)
    page.goto(f"/w/{WB}/0.3/")
    expect(solution.locator(".solution-option")).to_have_count(0)  # nothing before giving up
    answer(page, wrong[0])
    expect(page.locator("#feedback")).to_contain_text("Not yet")
    solution.get_by_text("Give up and show the derivation").click()
    solution.get_by_role("button", name="Yes, show the derivation").click()
    correct = solution.locator(".solution-option.is-correct")
    expect(correct).to_have_count(len(right))
    expect(correct.first).to_contain_text("✓ Correct")
    expect(correct.first.locator(".option-feedback")).to_contain_text("Embedding plus head")
    mine = solution.locator(".solution-option.is-yours")
    expect(mine).to_have_count(1)
    expect(mine).to_contain_text("✗ Not correct")
    expect(mine).to_contain_text("your answer")
    expect(solution.locator(".solution-option.is-wrong")).to_have_count(len(wrong))
    expect(solution).to_contain_text("excellent estimate of the parameter count")  # the explanation
    fits(page, width)
    site.shot(page, f"reveal-choice-{width}")

    # Solve another: the page shows its answer at once, and a reload still does.
    right, _ = option_ids("5.1", learner)
    page.goto(f"/w/{WB}/5.1/")
    answer(page, right[0])
    expect(page.locator("#state-line")).to_contain_text("Solved")
    expect(solution.locator(".solution-option.is-correct.is-yours")).to_contain_text("your answer")
    page.reload()
    expect(solution.locator(".solution-option.is-correct.is-yours")).to_contain_text("your answer")
    expect(solution.locator(".solution-option.is-correct .option-feedback")).to_contain_text("NaN")
    expect(solution).to_contain_text("IEEE 754 defines as NaN")
    fits(page, width)

    # An order: check the shuffled order as it comes, give up, and see both arrangements.
    page.goto("/w/lm-from-scratch/2.5/")  # no constraints: only the listed order is right
    page.get_by_role("button", name="Check answer").click()
    expect(page.locator("#feedback")).to_contain_text("Not yet")
    solution.get_by_text("Give up and show the derivation").click()
    solution.get_by_role("button", name="Yes, show the derivation").click()
    expect(solution.get_by_role("heading", name="The correct order")).to_be_visible()
    expect(solution.get_by_role("heading", name="Your last order")).to_be_visible()
    steps = page.locator("#steps > li").count()
    expect(solution.locator("ol.solution-steps").first.locator("li")).to_have_count(steps)
    expect(solution.locator("ol.solution-steps.yours li")).to_have_count(steps)
    expect(solution.locator("ol.solution-steps.yours li.out-of-place").first).to_contain_text("✗ out of place")
    fits(page, width)
    site.shot(page, f"reveal-order-{width}")
    assert page.js_errors == []  # type: ignore[attr-defined]
