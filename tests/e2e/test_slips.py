"""Issue 30's small slips as a learner meets them in Chromium, at 1280 and 390 px: a Debug's line
verdict by its own button; a multi-part exercise that clears stale statuses and previews its
formula part; a table cell's preview; an uncounted check listed as such; "Reviews" in the
navigation with its count."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import Page, expect

from apps.exercises.grading.symbolic import SymbolicTarget
from apps.exercises.models import Exercise
from apps.exercises.tests.answers import correct_payload, on_seed_numbers, resolved_for
from apps.learning import services as learning_services
from apps.progress.models import ReviewCard
from tests.e2e.conftest import Site


def exercise(slug: str, number: str) -> Exercise:
    return Exercise.objects.select_related("current_version", "workbook", "chapter").get(
        workbook__slug=slug, number=number
    )


def in_view(page: Page, selector: str, width: int) -> None:
    box = page.locator(selector).bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width + 1, (selector, box)


@pytest.mark.parametrize("phone", [False, True], ids=["desktop", "phone"])
def test_verdicts_by_their_buttons_fresh_part_statuses_previews_and_the_reviews_link(site: Site, phone: bool) -> None:
    width = 390 if phone else 1280
    learner = site.user("slips")
    debug, parts, table, solved = (
        exercise("transformer-math", "0.6"),
        exercise("scaling-book", "5.4"),
        exercise("transformer-math", "8.5"),
        exercise("transformer-math", "0.1"),
    )
    on_seed_numbers(learner, parts)
    # One solve, its review card due: the navigation counts it.
    learning_services.attempt_create(user=learner, exercise=solved, payload=correct_payload(solved, learner))
    ReviewCard.objects.filter(user=learner).update(due_at=timezone.now() - timedelta(hours=1))
    page = site.login(site.page(phone=phone), learner)

    # i. "Reviews" in the navigation, with the count due today (behind the menu on a phone).
    if phone:
        page.get_by_role("button", name="Menu").click()
    reviews = page.get_by_role("navigation", name="Main").get_by_role("link", name="Reviews")
    expect(reviews).to_be_visible()
    expect(reviews).to_have_text("Reviews 1 due today")
    reviews.click()
    expect(page.get_by_role("heading", name="Reviews due today")).to_be_visible()

    # f. A Debug's line verdict appears by its own button, above the fix's editor.
    page.goto("/w/transformer-math/0.6/")
    for line in correct_payload(debug, learner)["lines"]:
        page.locator(f'input[name="lines"][value="{line}"]').check()
    button = page.locator("#answer-form button[type=submit]")
    button.click()
    verdict = page.locator("#lines-feedback .msg")
    expect(verdict).to_contain_text("✓ Correct")
    expect(page.locator("#feedback .msg")).to_have_count(0)
    below, fix = button.bounding_box(), page.locator("#fix-form").bounding_box()
    box = verdict.bounding_box()
    assert below and fix and box and below["y"] < box["y"] < fix["y"]  # between its button and the fix
    in_view(page, "#lines-feedback .msg", width)

    # g. Parts: a formula part previews its reading; a check clears every earlier status.
    page.goto("/w/scaling-book/5.4/")
    r = resolved_for(parts, learner)
    formula = next(k for k, t in r.parts.items() if isinstance(t, SymbolicTarget))
    number = next(k for k in r.parts if k != formula)
    right = correct_payload(parts, learner)["parts"]
    page.locator(f"#part-{formula}").fill("0.09*C^0.5")
    expect(page.locator(f"#part-{formula}-preview")).to_contain_text("Reads as")
    page.locator(f"#part-{formula}").fill("")
    page.locator(f"#part-{number}").fill(right[number])
    page.get_by_role("button", name="Check answer").click()
    expect(page.locator("#feedback .msg")).to_contain_text("did not count as an attempt")
    expect(page.locator(".part .cell-mark", has_text="not answered")).to_have_count(len(r.parts) - 1)
    page.locator(f"#part-{formula}").fill("2C^")  # does not parse
    page.get_by_role("button", name="Check answer").click()
    expect(page.locator("#feedback .msg")).to_contain_text("Not graded — no attempt used.")
    expect(page.locator(".part .cell-mark", has_text="not answered")).to_have_count(0)  # nothing stale
    expect(page.locator(f"#part-{formula} ~ .cell-mark")).to_contain_text("could not read this")
    in_view(page, f"#part-{formula}", width)
    # h. The uncounted check is listed as such among the attempts, not as a plain ✗.
    page.reload()
    history = page.get_by_role("region", name="Your recent attempts")
    expect(history).to_contain_text("check (not counted)")
    expect(history).not_to_contain_text("✗")
    # b. Labels are math, never raw TeX.
    expect(page.locator(f'label[for="part-{formula}"] math')).to_have_count(2)
    expect(page.locator(f'label[for="part-{formula}"]')).not_to_contain_text("$")

    # g. A table cell previews its reading as a numeric field does.
    page.goto("/w/transformer-math/8.5/")
    cell = next(iter(resolved_for(table, learner).cells))
    page.locator(f'input[name="cell:{cell}"]').fill("1.5")
    expect(page.locator(f'[id="cell-{cell}-preview"]')).to_contain_text("Reads as 1.5 B params")
    in_view(page, f'[id="cell-{cell}-preview"]', width)
    assert page.js_errors == []  # type: ignore[attr-defined]
