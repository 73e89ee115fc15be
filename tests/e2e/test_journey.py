"""A newcomer's first session, in a real browser against the live server.

Signs up, joins a cohort by code, solves a Derive typing a value with a unit (after a wrong-
dimension answer that costs nothing), misorders a Design and is told which step is wrong, fails
then passes a Build while the sandbox's result arrives on the page, reveals a derivation, and
finds mastery, a one-day streak and a leaderboard rank.
"""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from apps.accounts.models import Role, User
from apps.exercises import presentation
from apps.exercises.content.resolve import ResolvedExercise
from apps.exercises.models import Exercise
from apps.exercises.selectors import workbook_get
from apps.exercises.tests import content
from apps.exercises.tests.answers import resolved_for
from apps.progress import services as progress_services
from apps.progress.models import ExerciseProgress
from tests.e2e.conftest import PASSWORD, Site

WB = "transformer-math"


def exercise(number: str) -> Exercise:
    return Exercise.objects.select_related("current_version").get(workbook__slug=WB, number=number)


def resolved(number: str, learner: User | None = None) -> ResolvedExercise:
    """The exercise on ``learner``'s own numbers (the seed's without one)."""
    return resolved_for(exercise(number), learner)


def record_feedback(page: Page) -> None:
    """Keep every text the feedback region shows, to prove the sandbox's progress was visible."""
    page.evaluate(
        """() => {
          window.__seen = [];
          const box = document.getElementById('feedback');
          new MutationObserver(() => window.__seen.push(box.textContent.trim()))
            .observe(box, {childList: true, subtree: true, characterData: true});
          window.__sameDocument = true;
        }"""
    )


def feedback_history(page: Page) -> list[str]:
    seen: list[str] = page.evaluate("window.__seen")
    assert page.evaluate("window.__sameDocument") is True  # no reload happened
    return seen


def test_a_newcomers_first_session(site_with_sandbox: Site) -> None:
    site = site_with_sandbox
    teacher = site.user("teacher", Role.INSTRUCTOR)
    cohort = progress_services.cohort_create(
        instructor=teacher, name="Spring cohort", time_zone="Europe/Paris", workbooks=[(workbook_get(slug=WB), None)]
    )
    page = site.page()

    # Sign up: lands on the home page, logged in, with a place to start.
    page.goto("/signup/")
    username = f"{site.prefix}newbie"
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_label("Password confirmation").fill(PASSWORD)
    page.get_by_role("button", name="Create account").click()
    expect(page.get_by_role("link", name=username)).to_be_visible()
    expect(page.get_by_role("link", name=re.compile(r"^(Start|Continue)"))).to_be_visible()

    # Join the cohort with the code as an instructor would dictate it: lower case, with a dash.
    page.get_by_role("link", name="Cohorts").click()
    code = cohort.join_code.lower()
    page.get_by_label("Join code").fill(f"{code[:4]}-{code[4:]}")
    page.get_by_role("button", name="Join").click()
    expect(page.get_by_role("status")).to_contain_text("Spring cohort")
    expect(page.get_by_role("listitem").filter(has_text="Spring cohort")).to_contain_text(teacher.username)

    # A Derive: a wrong dimension is explained and costs nothing; the right value with a unit solves it.
    page.goto(f"/w/{WB}/0.1/")
    record_feedback(page)
    answer = page.get_by_label(re.compile("^Your answer"))
    answer.fill("124 GB")
    expect(page.locator("#understood-preview")).to_contain_text("bytes")
    page.get_by_role("button", name="Check answer").click()
    feedback = page.locator("#feedback")
    expect(feedback).to_contain_text("no attempt used")
    expect(page.locator("#attempt-count")).to_have_text("0")
    learner = User.objects.get(username=username)
    right = resolved("0.1", learner).answer_text  # this learner's own numbers
    assert right is not None
    answer.fill(right)
    expect(page.locator("#understood-preview")).to_contain_text("Reads as")
    page.get_by_role("button", name="Check answer").click()
    expect(feedback).to_contain_text("Correct")
    expect(page.locator("#attempt-count")).to_have_text("1")
    expect(page.locator("#solution")).to_contain_text("Answer")
    feedback_history(page)

    # A Design: put the last step first; the grader names the misplaced step and the list marks it.
    page.goto(f"/w/{WB}/2.5/")
    steps = page.locator("#steps > li")
    expect(steps).to_have_count(6)
    concat = steps.filter(has_text="Concatenate the heads")
    for _ in range(6):
        if steps.first.text_content() and "Concatenate the heads" in (steps.first.text_content() or ""):
            break
        concat.get_by_role("button", name=re.compile("up", re.I)).click()
    expect(steps.first).to_contain_text("Concatenate the heads")
    page.get_by_role("button", name="Check answer").click()
    expect(feedback).to_contain_text("Not yet")
    expect(feedback).to_contain_text("Concatenate the heads")
    expect(steps.first).to_contain_text(re.compile("first misplaced", re.I))
    assert ExerciseProgress.objects.get(user__username=username, exercise=exercise("2.5")).attempts == 1

    # A Build: the starter fails with per-test results, the reference passes; both arrive live.
    page.goto(f"/w/{WB}/0.5/")
    record_feedback(page)
    page.get_by_role("button", name="Run the tests").click()
    expect(feedback).to_contain_text("Not yet", timeout=90_000)
    expect(feedback.locator("table.tests tr.fail").first).to_be_visible()
    seen = feedback_history(page)
    assert any("Queued" in s or "Running" in s for s in seen), seen
    spec = resolved("0.5").spec
    assert spec.code is not None and spec.code.solution
    page.locator("textarea#code").fill(spec.code.solution)
    page.get_by_role("button", name="Run the tests").click()
    expect(feedback).to_contain_text("Correct", timeout=90_000)
    expect(feedback.locator("table.tests tr.pass").first).to_be_visible()
    expect(page.locator("#state-line")).to_contain_text("Solved")

    # Give up on another Derive: a confirmation first, then the derivation, without a reload.
    page.goto(f"/w/{WB}/0.7/")
    record_feedback(page)
    page.get_by_text("Give up and show the derivation").click()
    expect(page.locator("#solution")).to_contain_text("no points")
    page.get_by_role("button", name="Yes, show the derivation").click()
    expect(page.locator("#solution h2")).to_have_text("Derivation")
    expect(page.locator("#solution")).to_contain_text("Answer")
    feedback_history(page)

    # Mastery, the streak and the rank.
    page.get_by_role("link", name="Progress").click()
    expect(page.locator(".streak").first).to_contain_text("1 day")
    page.goto("/")
    card = page.locator(".card").filter(has_text="Transformer Math")
    expect(card).to_contain_text(f"2 / {content.exercise_count('transformer-math')}")
    page.get_by_role("link", name="Leaderboard").click()
    points = 10 * (exercise("0.1").difficulty + exercise("0.5").difficulty)
    me = page.locator("#board tr.me")
    expect(me).to_contain_text("(you)")
    expect(me.locator("td").first).to_have_text("1")
    expect(me).to_contain_text(str(points))
    page.goto(f"/leaderboard/?scope=cohort&cohort={cohort.pk}&period=week")
    expect(page.locator("#board tr.me")).to_contain_text(str(points))
    assert page.js_errors == []  # type: ignore[attr-defined]


def test_without_javascript_every_answer_still_posts_and_grades(site: Site) -> None:
    """Progressive enhancement: with scripts off, the plain forms submit and the page shows the result."""
    learner = site.user("plain")
    page = site.login(site.page(js=False), learner)
    page.goto(f"/w/{WB}/0.1/")
    page.get_by_label(re.compile("^Your answer")).fill("3 hours")
    page.get_by_role("button", name="Check answer").click()
    expect(page.locator("#feedback")).to_contain_text("no attempt used")
    right = resolved("0.1", learner).answer_text
    assert right is not None
    page.get_by_label(re.compile("^Your answer")).fill(right)
    page.get_by_role("button", name="Check answer").click()
    expect(page.locator("#feedback")).to_contain_text("Correct")
    expect(page.locator("#solution h2")).to_have_text("Derivation")

    # A Design with position selects: give every step its position by the author's order.
    page.goto(f"/w/{WB}/2.5/")
    version = exercise("2.5").current_version
    assert version is not None
    opaque = presentation.step_ids(version, resolved("2.5").spec)
    for position, step in enumerate(resolved("2.5").spec.steps or [], start=1):
        page.locator(f'#steps > li[data-id="{opaque[step.id]}"]').get_by_label("Position").select_option(str(position))
    page.get_by_role("button", name="Check answer").click()
    expect(page.locator("#feedback")).to_contain_text("Correct")

    # Hints and giving up are forms too.
    page.goto(f"/w/{WB}/0.2/")
    page.get_by_role("button", name=re.compile("Show a hint")).click()
    expect(page.locator("#hints .hint")).to_have_count(1)
    page.get_by_text("Give up and show the derivation").click()
    page.get_by_role("button", name="Yes, show the derivation").click()
    expect(page.locator("#solution h2")).to_have_text("Derivation")
    progress = ExerciseProgress.objects.get(user=learner, exercise=exercise("0.2"))
    assert (progress.revealed, progress.hints_used) == (True, 1)
