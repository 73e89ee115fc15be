"""The instructor's cohort overview in a browser: who is at risk and why, sorting by a heading,
showing only those at risk, the stuck points, and the CSV download."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone
from playwright.sync_api import expect

from apps.accounts.models import Role
from apps.exercises.models import Workbook
from apps.exercises.tests.answers import correct_payload, wrong_payload
from apps.learning import services as learning_services
from apps.progress import services as progress_services
from apps.progress.models import Membership
from apps.progress.tests.conftest import gradable
from tests.e2e.conftest import Site


def test_an_instructor_sees_who_is_at_risk_and_where_the_class_is_stuck(site: Site) -> None:
    teacher = site.user("ov_teacher", Role.INSTRUCTOR)
    keen, quiet, stuck = site.user("ov_keen"), site.user("ov_quiet"), site.user("ov_stuck")
    workbook = Workbook.objects.get(slug="transformer-math")
    today = timezone.localdate()
    cohort = progress_services.cohort_create(
        instructor=teacher, name="Overview class", workbooks=[(workbook, today + timedelta(days=10))]
    )
    for learner in (keen, quiet, stuck):
        progress_services.cohort_join(user=learner, code=cohort.join_code)
    # Everyone joined ten days ago: half the time to the due day has gone.
    Membership.objects.filter(cohort=cohort).update(joined_at=timezone.now() - timedelta(days=10))
    exercises = gradable()
    for exercise in exercises[: len(exercises) // 2 + 1]:
        learning_services.attempt_create(user=keen, exercise=exercise, payload=correct_payload(exercise, keen))
    hard = exercises[3]
    for _ in range(2):
        learning_services.attempt_create(user=stuck, exercise=hard, payload=wrong_payload(hard, stuck))
    learning_services.exercise_reveal(user=stuck, exercise=hard)

    page = site.login(site.page(), teacher)
    page.goto(f"/admin/progress/cohort/{cohort.pk}/progress/")
    summary = page.locator("#risk-summary")
    expect(summary).to_contain_text("3 learners")
    expect(summary).to_contain_text("2 at risk")
    quiet_row = page.locator('#progress-table tr[data-learner="ov_quiet"]')
    expect(quiet_row).to_contain_text("no solve since joining 10 days ago")
    expect(quiet_row).to_contain_text("% of the time gone")
    expect(page.locator('#progress-table tr[data-learner="ov_keen"]')).not_to_have_class("at-risk")
    # The stuck points: the revealed exercise leads.
    first_stuck = page.locator("#stuck-table tbody tr").first
    expect(first_stuck).to_contain_text(hard.title)

    page.locator("#progress-table th a", has_text="Learner").click()
    expect(page.locator("#progress-table tbody tr").first).to_have_attribute("data-learner", "ov_keen")
    page.locator("#progress-table th a", has_text="Learner").click()  # again: the other way round
    expect(page.locator("#progress-table tbody tr").first).to_have_attribute("data-learner", "ov_stuck")

    page.get_by_role("link", name="show only those at risk").click()
    expect(page.locator("#progress-table tbody tr")).to_have_count(2)
    expect(page.locator('#progress-table tr[data-learner="ov_keen"]')).to_have_count(0)

    page.fill("#idle-days", "30")
    page.get_by_role("button", name="Apply").click()
    expect(summary).to_contain_text("no solve for 30+ days: 0")

    with page.expect_download() as download:
        page.get_by_role("link", name="Overview CSV (with risks)").click()
    assert download.value.suggested_filename == f"cohort-{cohort.pk}-overview.csv"
    site.shot(page, "admin-cohort-overview")
