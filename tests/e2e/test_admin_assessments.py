"""An instructor sets a midterm in the admin in a browser, under the site's strict CSP: the pool is
chosen with the exercise autocomplete, a bad late rule is explained on the form, the saved exam
links to its live view and the cohort's gradebook, whose CSV downloads; no script error and no
CSP violation on the way."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone
from playwright.sync_api import expect

from apps.accounts.models import Role
from apps.assessments import services
from apps.assessments.models import Assessment
from apps.assessments.tests.conftest import right, varying
from apps.progress import services as progress_services
from tests.e2e.conftest import Site


def test_an_instructor_sets_a_midterm_and_follows_it_live(site: Site) -> None:
    teacher = site.user("mt_teacher", Role.INSTRUCTOR)
    keen, late = site.user("mt_keen"), site.user("mt_late")
    cohort = progress_services.cohort_create(instructor=teacher, name="Midterm class")
    for learner in (keen, late):
        progress_services.cohort_join(user=learner, code=cohort.join_code)
    pool = varying(n=2)
    now = timezone.localtime(timezone.now())
    opens, closes = now - timedelta(hours=1), now + timedelta(days=1)

    page = site.login(site.page(), teacher)
    page.goto("/admin/assessments/assessment/add/")
    page.select_option("#id_cohort", label="Midterm class")
    page.locator("#id_title").press_sequentially("Midterm")
    expect(page.locator("#id_slug")).to_have_value("midterm")  # prepopulated from the title
    page.select_option("#id_kind", "exam")
    page.fill("#id_opens_at_0", opens.strftime("%Y-%m-%d"))
    page.fill("#id_opens_at_1", opens.strftime("%H:%M:%S"))
    page.fill("#id_closes_at_0", closes.strftime("%Y-%m-%d"))
    page.fill("#id_closes_at_1", closes.strftime("%H:%M:%S"))
    page.fill("#id_time_limit_minutes", "90")
    page.fill("#id_late_rules", '[{"until": "tomorrow", "credit": 50}]')  # no due date, and not a time
    page.fill("#id_questions-0-position", "1")
    page.fill("#id_questions-0-choose", "2")
    for exercise in pool:  # the pool, with the exercise autocomplete
        page.locator("#questions-0 .select2-selection").click()
        page.locator(".select2-search__field").fill(exercise.title[:15])
        page.locator(".select2-results__option", has_text=exercise.title).first.click()
    page.get_by_role("button", name="Save and continue editing").click()
    expect(page.locator(".errorlist").first).to_contain_text("Each late rule is")
    assert not Assessment.objects.filter(slug="midterm").exists()

    page.fill("#id_late_rules", "[]")
    page.get_by_role("button", name="Save and continue editing").click()
    expect(page.locator(".messagelist")).to_contain_text("was added successfully")
    exam = Assessment.objects.get(cohort=cohort, slug="midterm")
    assert set(exam.questions.get().pool.all()) == set(pool) and exam.created_by == teacher

    # A learner starts and answers; the other has not opened it.
    instance = services.instance_open(assessment=exam, user=keen)
    item = instance.questions.first()
    assert item is not None
    services.answer_submit(user=keen, item_id=item.pk, payload=right(item))

    page.get_by_role("link", name="Live view").click()
    expect(page.locator("#live-summary")).to_contain_text("2 learners · 1 started · 1 working now")
    expect(page.locator('#live-table tr[data-learner="mt_keen"]')).to_contain_text("working")
    expect(page.locator('#live-table tr[data-learner="mt_late"]')).to_contain_text("not started")
    site.shot(page, "admin-assessment-live")

    page.get_by_role("link", name="Gradebook").click()
    expect(page.locator('#gradebook tr[data-learner="mt_keen"]')).to_be_visible()
    site.shot(page, "admin-gradebook")
    with page.expect_download() as download:
        page.locator("#gradebook-csv").click()
    assert download.value.suggested_filename == f"cohort-{cohort.pk}-gradebook.csv"
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0
    assert page.js_errors == []  # type: ignore[attr-defined]
