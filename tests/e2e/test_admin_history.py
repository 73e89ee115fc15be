"""The instructor's view of a learner's history in a browser: code highlighted, options by their text."""

from __future__ import annotations

from django.utils import timezone
from playwright.sync_api import expect

from apps.accounts.models import Role
from apps.exercises.choices import AttemptPart, AttemptStatus, CodeOutcome, Verdict
from apps.exercises.content import cache
from apps.exercises.formats.base import learner_order
from apps.exercises.formats.choice import option_ids
from apps.exercises.models import Attempt, Exercise, Workbook
from apps.exercises.tests.answers import wrong_payload
from apps.learning import services as learning_services
from apps.progress import services as progress_services
from tests.e2e.conftest import Site


def _first(fmt: str) -> Exercise:
    found = (
        Exercise.objects.filter(workbook__slug="transformer-math", format=fmt, is_active=True)
        .select_related("workbook", "current_version")
        .order_by("chapter__number", "position")
        .first()
    )
    assert found is not None and found.current_version is not None
    return found


def test_an_instructor_reads_a_learners_code_and_chosen_option(site: Site) -> None:
    teacher = site.user("hist_teacher", Role.INSTRUCTOR)
    learner = site.user("hist_learner")
    cohort = progress_services.cohort_create(
        instructor=teacher, name="History class", workbooks=[(Workbook.objects.get(slug="transformer-math"), None)]
    )
    progress_services.cohort_join(user=learner, code=cohort.join_code)
    choice, code = _first("choice"), _first("code")
    assert choice.current_version is not None and code.current_version is not None
    payload = wrong_payload(choice, learner)
    learning_services.attempt_create(user=learner, exercise=choice, payload=payload)
    options = cache.resolved(choice.current_version).spec.options or []
    ids = option_ids(choice.current_version, len(options))
    [picked] = [ids.index(p) for p in payload["choices"]]
    position = learner_order(learner.pk, choice.current_version, len(options)).index(picked) + 1
    spec_code = cache.resolved(code.current_version).spec.code
    assert spec_code is not None
    test_id = spec_code.cases[0].id
    now = timezone.now()
    Attempt.objects.create(
        user=learner, exercise=code, version=code.current_version, part=AttemptPart.CODE,
        status=AttemptStatus.GRADED, raw={"code": "def wrong(x):\n    return x  # too simple\n"},
        parsed={"lines": 2, "bytes": 40}, verdict=Verdict.INCORRECT, outcome=CodeOutcome.FAILED,
        feedback="0 of 1 tests passed.", started_at=now, finished_at=now,
        details={
            "outcome": "failed", "message": "0 of 1 tests passed.", "traceback": "", "prints": "",
            "tests": [{"id": test_id, "passed": False, "call": "wrong(1)", "message": "expected 2, got 1",
                       "expected": "2", "got": "1"}],
            "passed_count": 0, "total": 1,
        },
    )  # fmt: skip

    page = site.login(site.page(), teacher)
    page.goto(f"/admin/progress/cohort/{cohort.pk}/learners/{learner.pk}/")
    code_rows = page.locator(f"#exercise-{code.pk}")
    source = code_rows.locator(".highlight pre").first
    expect(source).to_contain_text("return x  # too simple")
    # Highlighted: the keyword in its own span, coloured by the stylesheet (the CSP forbids inline style).
    keyword = source.locator("span.k", has_text="def").first
    assert keyword.evaluate("el => getComputedStyle(el).color") == "rgb(0, 128, 0)"
    expect(code_rows.locator("table.tests")).to_contain_text(test_id)
    choice_rows = page.locator(f"#exercise-{choice.pk}")
    expect(choice_rows.locator(".answer-items li").first).to_contain_text(f"option {position}:")
    plain = options[picked].text.split("$")[0].strip()[:30]  # the text before any math
    if plain:
        expect(choice_rows.locator(".answer-items li").first).to_contain_text(plain)
    for opaque in payload["choices"]:
        assert opaque not in page.content()
    site.shot(page, "admin-learner-history")
