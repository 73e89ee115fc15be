"""The instructor's pages fit a 1,280 px window however long what learners sent: a learner's history
(long code, test calls, answers, tracebacks), the cohort overview and the exercise statistics never
scroll sideways; long text wraps, and a long code line scrolls inside its own box."""

from __future__ import annotations

from django.utils import timezone
from playwright.sync_api import Page, expect

from apps.accounts.models import Role
from apps.exercises.choices import AnswerFormat, AttemptPart, AttemptStatus, CodeOutcome, Verdict
from apps.exercises.content import cache
from apps.exercises.models import Attempt, Exercise, Workbook
from apps.exercises.tests.answers import wrong_payload
from apps.learning import services as learning_services
from apps.progress import services as progress_services
from apps.progress.tests.conftest import gradable
from tests.e2e.conftest import Site

WB = "transformer-math"
# What learners can send that has no place to break: numbers of 100+ digits (both parse, so both
# are recorded as wrong answers), a code line of 300 characters, a test call with a long list.
LONG_NUMBERS = ("0." + "0" * 110 + "1", "1" * 115)
LONG_FORMULA = "(C/6)**0.5+" + "+".join(f"C/{i}" for i in range(7, 21))
LONG_LINE = "    total = " + " + ".join(["d*d"] * 60) + "  # " + "x" * 40
LONG_CALL = "param_count(" + ", ".join(str(10**12 + i) for i in range(40)) + ")"
LONG_VALUE = "9" * 240


def fits(page: Page) -> None:
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"{page.url} is {overflow} px wider than the window"


def test_the_instructor_pages_fit_1280px_with_long_answers_and_code(site: Site) -> None:
    teacher = site.user("wide_teacher", Role.INSTRUCTOR)
    learner = site.user("wide_learner")
    workbook = Workbook.objects.get(slug=WB)
    scaling = Workbook.objects.get(slug="scaling-book")
    cohort = progress_services.cohort_create(
        instructor=teacher, name="Wide class", workbooks=[(workbook, None), (scaling, None)]
    )
    progress_services.cohort_join(user=learner, code=cohort.join_code)
    exercises = gradable(WB)
    for exercise in exercises:  # a wrong answer on each: every format's wrong answers in the statistics
        learning_services.attempt_create(user=learner, exercise=exercise, payload=wrong_payload(exercise, learner))
    numeric = next(  # one whose wrong answers are listed as read, not by their relation to the learner's numbers
        e
        for e in exercises
        if e.format == AnswerFormat.NUMERIC
        and e.current_version is not None
        and cache.resolved(e.current_version).spec.vary is None
    )
    for answer in LONG_NUMBERS:
        learning_services.attempt_create(user=learner, exercise=numeric, payload={"answer": answer})
    # A multi-part answer is listed among the wrong answers as typed: a long formula, a long number.
    formula = Exercise.objects.get(workbook=scaling, number="5.4")
    learning_services.attempt_create(
        user=learner, exercise=formula, payload={"parts": {"n_formula": LONG_FORMULA, "n_opt": LONG_NUMBERS[0]}}
    )
    code = Exercise.objects.filter(workbook=workbook, format=AnswerFormat.CODE, is_active=True).first()
    assert code is not None and code.current_version is not None
    now = timezone.now()
    source = "def param_count(d, n_layers, vocab_size):\n" + LONG_LINE + "\n    return total\n"
    Attempt.objects.create(
        user=learner, exercise=code, version=code.current_version, part=AttemptPart.CODE,
        status=AttemptStatus.GRADED, raw={"code": source}, parsed={"lines": 3, "bytes": len(source)},
        verdict=Verdict.INCORRECT, outcome=CodeOutcome.FAILED, feedback="0 of 1 tests passed.",
        started_at=now, finished_at=now,
        details={
            "outcome": "failed", "message": "0 of 1 tests passed.", "prints": "",
            "traceback": "Traceback (most recent call last):\n  File \"solution.py\", line 2\nValueError: " + LONG_VALUE,
            "tests": [{"id": "long", "passed": False, "call": LONG_CALL, "message": "wrong value: " + LONG_VALUE,
                       "expected": LONG_VALUE, "got": LONG_VALUE[:-1] + "8"}],
            "passed_count": 0, "total": 1,
        },
    )  # fmt: skip

    page = site.login(site.page(), teacher)
    page.goto(f"/admin/progress/cohort/{cohort.pk}/learners/{learner.pk}/")
    history = page.locator("#attempts-table")
    expect(history.locator(f"#exercise-{code.pk} table.tests")).to_contain_text(LONG_CALL)  # all of it is there
    expect(history.locator(f"#exercise-{numeric.pk}")).to_contain_text(LONG_NUMBERS[1])
    fits(page)
    # The long code line scrolls inside its own box, which is no wider than the table's column.
    box = history.locator(f"#exercise-{code.pk} .highlight pre").first
    expect(box).to_contain_text(LONG_LINE.strip())
    assert box.evaluate("el => el.scrollWidth > el.clientWidth")
    site.shot(page, "admin-learner-history-long")

    page.goto(f"/admin/progress/cohort/{cohort.pk}/progress/")
    expect(page.locator("#progress-table")).to_contain_text("wide_learner")
    fits(page)

    page.goto(f"/admin/progress/cohort/{cohort.pk}/exercises/?workbook=scaling-book")
    expect(page.locator('[id="exercise-5.4"]')).to_contain_text(LONG_FORMULA)
    fits(page)
    site.shot(page, "admin-exercise-stats-long")
