"""A learner takes homework and exams in Chromium: a time limit kept by the server (the countdown
reaches zero and the page closes; a late answer is refused and the earlier one kept), late credit,
an extension, a pool drawn the same on every reload, and verdicts held until the exam closes.

The live server runs on real time, so a test moves a deadline or a close in the database (a few
seconds ahead, or just past) instead of waiting for one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from axe_playwright_python.sync_playwright import Axe
from django.utils import timezone
from playwright.sync_api import Page, expect

from apps.accounts.models import Role, User
from apps.assessments import services
from apps.assessments.models import Assessment, Instance, InstanceQuestion, Question, Submission, Verdicts
from apps.assessments.tests.conftest import right, varying, wrong
from apps.exercises.models import Exercise
from apps.progress.services import cohorts as cohort_services
from tests.e2e.conftest import Site

AXE = Axe()
WCAG = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]}}


@dataclass
class Setup:
    teacher: User
    learner: User
    assessment: Assessment


def setup(site: Site, pools: list[list[Exercise]], choose: list[int] | None = None, **fields: Any) -> Setup:
    """An instructor's cohort with one learner, and one assessment on ``pools`` (10 points each)."""
    # Plain names: Site.user forgets every account with the test's prefix before making one.
    teacher = site.user("exam-prof", Role.INSTRUCTOR)
    learner = site.user("exam-learner")
    cohort = cohort_services.cohort_create(instructor=teacher, name="ML systems, exams")
    cohort_services.cohort_join(user=learner, code=cohort.join_code)
    now = timezone.now()
    values: dict[str, Any] = {
        "title": "Homework 1",
        "slug": "hw1",
        "opens_at": now - timedelta(hours=1),
        "due_at": now + timedelta(days=2),
        "closes_at": now + timedelta(days=7),
    }
    values.update(fields)
    assessment = Assessment.objects.create(cohort=cohort, created_by=teacher, **values)
    for i, pool in enumerate(pools):
        q = Question.objects.create(assessment=assessment, position=i + 1, points=10, choose=(choose or [1] * 9)[i])
        q.pool.set(pool)
    return Setup(teacher, learner, assessment)


def start(page: Page, s: Setup) -> list[InstanceQuestion]:
    page.goto("/assessments/")
    page.get_by_role("link", name=s.assessment.title).click()
    page.get_by_role("button", name="Start").click()
    expect(page.locator("#q1")).to_be_visible()
    return list(InstanceQuestion.objects.filter(instance__user=s.learner).order_by("position"))


def answer(page: Page, position: int, payload: dict[str, Any]) -> None:
    q = page.locator(f"#q{position}")
    q.locator('input[name="answer"]').fill(payload["answer"])
    q.locator("form.answer button[type=submit]").click()


def status(page: Page, position: int) -> str:
    return page.locator(f"#q{position}-status").inner_text()


def test_a_timed_exam_counts_down_closes_at_zero_and_refuses_a_late_answer(site: Site) -> None:
    s = setup(site, [varying(n=1), varying(n=2)[1:]], kind="exam", title="Timed exam", time_limit_minutes=30)
    page = site.login(site.page(), s.learner)
    page.goto(f"/assessments/{s.assessment.pk}/")
    expect(page.locator("main")).to_contain_text("This exam has a 30-minute limit that starts when you begin.")
    first, second = start(page, s)
    expect(page.locator("#timer .clock")).to_have_text(re.compile(r"^(29:5\d|30:00)$"))
    site.shot(page, "assessment-exam-timed")
    answer(page, 1, wrong(first))
    expect(page.locator("#q1-status")).to_contain_text("Wrong")

    # A second window without JavaScript: the learner types an answer, the time runs out meanwhile.
    plain = site.login(site.page(js=False), s.learner)
    plain.goto(f"/assessments/{s.assessment.pk}/")
    plain.locator('#q2 input[name="answer"]').fill(right(second)["answer"])
    Instance.objects.filter(user=s.learner).update(deadline=timezone.now() + timedelta(seconds=4))
    page.reload()  # the countdown, from the server's seconds, reaches zero and reloads the page
    expect(page.locator("#timer")).to_be_visible()
    expect(page.locator("#closed-line")).to_contain_text("Your time ran out", timeout=15_000)
    expect(page.locator("form.answer")).to_have_count(0)
    assert page.js_errors == []  # type: ignore[attr-defined]

    plain.locator("#q2 form.answer button[type=submit]").click()
    expect(plain.locator("#q2-error")).to_contain_text("Your time ran out at")
    expect(plain.locator("#q2-error")).to_contain_text("this answer was not recorded")
    expect(plain.locator('#q2 input[name="answer"]')).to_have_value(right(second)["answer"])
    assert list(Submission.objects.filter(item__instance__user=s.learner).values_list("item_id", flat=True)) == [
        first.pk
    ]  # the earlier answer kept, nothing after the time


def test_late_credit_halves_the_points_and_an_extension_gives_full_credit(site: Site) -> None:
    now = timezone.now()
    s = setup(
        site,
        [varying(n=1)],
        title="Late homework",
        opens_at=now - timedelta(days=3),
        due_at=now - timedelta(hours=1),
        late_rules=[{"until": (now + timedelta(days=1)).isoformat(), "credit": 50}],
    )
    page = site.login(site.page(), s.learner)
    (item,) = start(page, s)
    expect(page.locator(".terms-box")).to_contain_text("50% credit")
    answer(page, 1, right(item))
    expect(page.locator("#q1-status")).to_contain_text("✓ Right 5 of 10 points")

    # The same homework, with a later due date granted to a second learner: full credit.
    other = site.user("exam-extended")
    cohort_services.cohort_join(user=other, code=s.assessment.cohort.join_code)
    services.override_grant(
        assessment=s.assessment, user=other, by=s.teacher, reason="Ill last week", due_at=now + timedelta(days=2)
    )
    page2 = site.login(site.page(), other)
    s2 = Setup(s.teacher, other, s.assessment)
    (theirs,) = start(page2, s2)
    expect(page2.locator(".terms-box")).to_contain_text("extended for you")
    answer(page2, 1, right(theirs))
    expect(page2.locator("#q1-status")).to_contain_text("✓ Right 10 of 10 points")
    assert Instance.objects.get(user=other).score == 10.0
    assert Instance.objects.get(user=s.learner).score == 5.0


def test_a_pool_is_drawn_once_the_same_questions_and_numbers_on_every_reload(site: Site) -> None:
    pool = varying(n=4)
    s = setup(site, [pool], choose=[2], title="Pool homework")
    page = site.login(site.page(), s.learner)
    items = start(page, s)
    assert len(items) == 2 and {i.exercise_id for i in items} <= {e.pk for e in pool}
    before = [page.locator(f"#q{n} .prompt").inner_text() for n in (1, 2)]
    page.reload()
    page.goto(f"/assessments/{s.assessment.pk}/")
    after = [page.locator(f"#q{n} .prompt").inner_text() for n in (1, 2)]
    assert before == after
    assert list(InstanceQuestion.objects.filter(instance__user=s.learner).order_by("position")) == items
    expect(page.locator(".question")).to_have_count(2)
    site.shot(page, "assessment-homework")

    # On a phone: the same two questions, nothing wider than the window.
    phone = site.login(site.page(phone=True), s.learner)
    phone.goto(f"/assessments/{s.assessment.pk}/")
    assert [phone.locator(f"#q{n} .prompt").inner_text() for n in (1, 2)] == before
    assert phone.evaluate("document.documentElement.scrollWidth") <= 390


def test_grades_are_hidden_until_the_exam_closes(site: Site) -> None:
    s = setup(site, [varying(n=1)], kind="exam", title="Closed-book exam", verdicts=Verdicts.AFTER_CLOSE)
    page = site.login(site.page(), s.learner)
    (item,) = start(page, s)
    answer(page, 1, right(item))
    expect(page.locator("#q1-status")).to_contain_text("Saved")
    assert "Right" not in status(page, 1) and "points" not in status(page, 1)
    violations = [
        v for v in AXE.run(page, options=WCAG).response["violations"] if v["impact"] in ("serious", "critical")
    ]
    assert violations == [], [(v["id"], [n["target"] for n in v["nodes"]][:3]) for v in violations]

    page.get_by_role("link", name="Submit and close…").click()
    expect(page.locator("main")).to_contain_text("You answered 1 of 1 question.")
    page.get_by_role("button", name="Yes, submit and close").click()
    expect(page.locator("#score")).to_contain_text("Grades are released when the exam closes at")
    assert "Right" not in status(page, 1)

    Assessment.objects.filter(pk=s.assessment.pk).update(closes_at=timezone.now() - timedelta(seconds=1))
    page.reload()
    expect(page.locator("#q1-status")).to_contain_text("✓ Right 10 of 10 points")
    expect(page.locator("#score")).to_contain_text("Score: 10 / 10")
    page.goto("/assessments/")
    expect(page.locator("table.assessments-list")).to_contain_text("10 / 10")
    phone = site.login(site.page(phone=True), s.learner)
    phone.goto("/assessments/")
    expect(phone.locator("table.assessments-list")).to_contain_text("Closed-book exam")
    site.shot(phone, "assessments-list-phone")
    assert phone.evaluate("document.documentElement.scrollWidth") <= 390
    for label in ("State", "Score"):  # every cell in view, none cut off at the right
        box = phone.locator(f'td[data-label="{label}"]').bounding_box()
        assert box is not None and box["x"] + box["width"] <= 390, (label, box)
