"""Author input through the admin's form: an author (staff, not a superuser) types an exercise's
YAML, with payloads in its prompt, options, option feedback, hints and explanation, into the
admin's add form in the browser: once refused (the form echoes what was typed), then saved. The
change page's preview and the learner's page (answered, so the options' feedback shows) are then
watched like every other page. The saved exercise (1.9) stays in the corpus's workbook for the
package's other pages."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
import yaml
from playwright.sync_api import Page

from apps.accounts.models import User
from apps.exercises.models import Exercise
from tests.xss import content
from tests.xss.conftest import Watcher, World, assert_clean
from tests.xss.payloads import BY_ID, CONTENT
from tests.xss.test_pages import _choice, assert_shows_corpus

pytestmark = [pytest.mark.xdist_group("xss")]


def test_an_exercise_saved_through_the_admin_form_runs_no_payload(
    world: World, watch: Callable[[User | None], Watcher], caplog: pytest.LogCaptureFixture
) -> None:
    author = watch(world.author)
    assert not world.author.is_superuser and world.author.is_staff
    page = author.open("/admin/exercises/exercise/add/")
    chapter = str(world.workbook.chapters.get().pk)

    # Every content payload, typed into a save the schema refuses (a kind that is a payload too):
    # the form is shown again with what was typed, and the error.
    typed = content.admin_exercise(CONTENT) | {"kind": BY_ID["b02"].render("admin-kind")}
    _save(page, chapter, typed)
    assert page.url.endswith("/add/") and page.locator(".errornote").count() == 1
    assert page.locator("#id_spec_text").input_value() == _yaml(typed)  # echoed, whole, as text
    author.findings.views.append("admin exercise add form, refused")
    author.check(page)

    spec = content.admin_exercise()
    _save(page, chapter, spec)
    errors = page.locator(".errornote, .errorlist").all_inner_texts()
    assert re.search(r"/admin/exercises/exercise/\d+/change/$", page.url), f"not saved: {errors}"
    author.findings.views.append("admin exercise change page, after saving")
    author.check(page)
    assert_shows_corpus(page, "admin change page")
    assert page.locator(".exercise-preview").count() == 1  # the preview, as learners see it
    exercise = Exercise.objects.select_related("current_version").get(workbook=world.workbook, key=spec["id"])
    assert exercise.current_version is not None and exercise.current_version.spec["prompt"] == spec["prompt"]

    learner = watch(world.fresh)
    page = learner.open(f"/w/{content.SLUG}/{content.ADMIN}/")
    assert_shows_corpus(page, "learner's page of the saved exercise")
    _choice(learner, page)  # every option's feedback, inserted by the page's script
    assert_clean(caplog, author, learner)


def _save(page: Page, chapter: str, spec: dict[str, Any]) -> None:
    """Fill the admin's form and "Save and continue editing" (to the change page once saved)."""
    page.locator("#id_chapter").select_option(chapter)
    # As pasted (Playwright's fill types 35 kB into the textarea in seconds): the value, then input.
    page.locator("#id_spec_text").evaluate(
        "(t, text) => { t.value = text; t.dispatchEvent(new Event('input', { bubbles: true })); }", _yaml(spec)
    )
    with page.expect_navigation():
        # Submitted by the form itself: what the page echoes must not change the control used.
        page.locator("input[name=_continue]").evaluate("(b) => b.form.requestSubmit(b)")


def _yaml(spec: dict[str, Any]) -> str:
    return yaml.safe_dump(spec, sort_keys=False, allow_unicode=True, width=100)
