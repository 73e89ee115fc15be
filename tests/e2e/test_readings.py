"""One reading per input, as a learner sees it in Chromium: the live preview says how a number
will be read, the verdict says the same, and an answer in the other unit convention is accepted
with a visible note. At desktop and phone width."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from apps.exercises.content import cache
from apps.exercises.models import Exercise
from apps.exercises.tests.answers import on_seed_numbers
from tests.e2e.conftest import Site

WB = "transformer-math"


def answer(page: Page, number: str, text: str) -> str:
    """Type an answer, wait for the preview, submit it; return what the preview said."""
    page.goto(f"/w/{WB}/{number}/")
    page.get_by_label("Your answer").fill(text)
    preview = page.locator("#understood-preview")
    expect(preview).to_contain_text("Reads as")
    said = preview.inner_text().removeprefix("Reads as ").strip()
    page.get_by_role("button", name="Check answer").click()
    return said


def kv_cache() -> Exercise:
    return Exercise.objects.get(workbook__slug=WB, number="4.1")


@pytest.mark.parametrize("phone", [False, True], ids=["desktop", "phone"])
def test_the_preview_and_the_verdict_read_a_number_the_same_way(site: Site, phone: bool) -> None:
    reader = site.user("reader")
    on_seed_numbers(reader, kv_cache())  # its numbers are the seed's, quoted here
    page = site.login(site.page(phone=phone), reader)
    # The KV cache of 4.1 typed bare, in bytes, in a field that asks for GB.
    said = answer(page, "4.1", "2147483648")
    assert "bytes, not GB" in said  # the preview says why a bare number this large is bytes
    verdict = page.locator("#feedback .msg")
    expect(verdict).to_contain_text("✓ Correct")
    expect(verdict.locator(".understood")).to_have_text(f"We read: {said}")


@pytest.mark.parametrize("phone", [False, True], ids=["desktop", "phone"])
def test_the_gib_figure_labelled_gb_is_accepted_with_a_visible_note(site: Site, phone: bool) -> None:
    noted = site.user("noted")
    on_seed_numbers(noted, kv_cache())  # "2 GB" is the seed's GiB figure
    page = site.login(site.page(phone=phone), noted)
    answer(page, "4.1", "2 GB")
    verdict = page.locator("#feedback .msg")
    expect(verdict).to_contain_text("✓ Accepted, with a unit note")
    expect(verdict).to_contain_text("GiB")
    expect(page.locator("#state-line")).to_contain_text("Solved, with a unit note")
    # The clean answer clears the note.
    answer(page, "4.1", "2 GiB")
    expect(page.locator("#feedback .msg")).to_contain_text("✓ Correct")
    page.reload()
    expect(page.locator("#state-line")).to_contain_text("✓ Solved")
    expect(page.locator("#state-line")).not_to_contain_text("unit note")
    assert page.js_errors == []  # type: ignore[attr-defined]


def test_each_numeric_part_previews_its_own_reading(site: Site) -> None:
    exercise = Exercise.objects.select_related("current_version").get(workbook__slug="roofline", number="q1")
    assert exercise.current_version is not None
    parts = cache.resolved(exercise.current_version).spec.parts or []
    numeric = next(p for p in parts if p.answer is not None)
    page = site.login(site.page(), site.user("parts"))
    page.goto("/w/roofline/q1/")
    page.locator(f"#part-{numeric.key}").fill("5e9")
    expect(page.locator(f"#part-{numeric.key}-preview")).to_contain_text("Reads as 5e9")
    assert page.js_errors == []  # type: ignore[attr-defined]
