"""No payload runs on the assessment pages: an instructor's homework and exam for the corpus's
cohort, with payloads in every free-text field an instructor controls (the title, the instructions,
each question's zone, an override's reason, a score override's reason), drawn from the corpus's
gradable exercises (whose prompts, options, steps, columns and hints carry the content payloads).

The veteran (a member of every corpus cohort) takes both through the pages: the list, the start
screen, the questions once started, an answer graded (its verdict shown), a refused answer (the
message and what was typed, echoed), a hint, the confirmation page, the closed page; the practice
page an open exam pauses (its title in the message). The instructor follows them in the admin: the
assessment's change page, the gradebook, the live view, the score page (a refused save echoing the
reason), the overrides and the instance with its score history. The API's JSON is not HTML: not here.

The assessments are made once for the module and deleted after it (the veteran's practice pages,
watched by test_pages.py, are then as the corpus left them)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from playwright.sync_api import Page

from apps.accounts.models import User
from apps.assessments import services
from apps.assessments.models import Assessment, Instance, InstanceQuestion, Kind, Override, Verdicts
from tests.xss import content
from tests.xss.conftest import Watcher, World, assert_clean
from tests.xss.payloads import ALL, BY_ID, STORABLE, Payload, chunks
from tests.xss.test_pages import assert_shows_corpus

pytestmark = [pytest.mark.xdist_group("xss")]

WB = content.SLUG
GRADABLE = (content.NUMERIC, content.CHOICE, content.ORDER, content.TABLE, content.PARTS, content.INTEGER)
REASON_CAP = 2000  # what services._reason keeps


def _paragraphs(where: str, payloads: tuple[Payload, ...]) -> str:
    """Plain text: a payload a paragraph (instructions are shown through ``linebreaks``)."""
    return "\n\n".join(p.render(where) for p in payloads)


def _zones(where: str) -> list[str]:
    """Three zones (80 characters each at most), from the breakouts a heading invites."""
    groups = (("h09", "b03"), ("h07", "h01"), ("t01", "b01"))
    return [content.line(f"{where}{i}", tuple(BY_ID[p] for p in g), cap=80) for i, g in enumerate(groups)]


def _title(where: str, ids: tuple[str, ...]) -> str:
    return content.line(where, tuple(BY_ID[i] for i in ids), cap=200)


@dataclass
class Made:
    """What the instructor set, as typed (each field's text is what the pages must show as text)."""

    homework: Assessment
    exam: Assessment
    zones: dict[int, list[str]]  # assessment id -> its questions' zones
    overrides: dict[int, Override]  # assessment id -> the veteran's override
    score_reasons: list[str]  # the homework's score history, oldest first
    score_instance: Instance


def _questions(zones: list[str]) -> list[dict[str, object]]:
    """Every gradable corpus exercise, in three pools drawn whole (choose = the pool's size)."""
    pools = (GRADABLE[:1], GRADABLE[1:3], GRADABLE[3:])
    return [
        {"position": i + 1, "zone": zone, "points": 2.0, "choose": len(pool), "pool": [f"{WB}/{n}" for n in pool]}
        for i, (zone, pool) in enumerate(zip(zones, pools, strict=True))
    ]


@pytest.fixture(scope="module")
def made(world: World) -> Iterator[Made]:
    cohort, by, learner = world.cohorts[0], world.instructor, world.veteran
    now = timezone.now()
    reasons = chunks(STORABLE, 4)
    zones_hw, zones_exam = _zones("hw-zone"), _zones("exam-zone")
    homework = services.assessment_create(
        cohort=cohort,
        by=by,
        questions=_questions(zones_hw),
        slug="xss-homework",
        title=_title("hw-title", ("b03", "h07", "h09", "t01")),
        kind=Kind.HOMEWORK,
        instructions=_paragraphs("hw-instructions", STORABLE),
        opens_at=now - timedelta(hours=1),
        due_at=now + timedelta(days=2),
        closes_at=now + timedelta(days=7),
        late_rules=[{"until": (now + timedelta(days=4)).isoformat(), "credit": 50}],
        max_attempts=3,
        attempt_credit=[100, 80],
        verdicts=Verdicts.LIVE,
        hints=True,
    )
    exam = services.assessment_create(
        cohort=cohort,
        by=by,
        questions=_questions(zones_exam),
        slug="xss-exam",
        # The exam's title is also in the practice page's pause message: string breakouts too.
        title=_title("exam-title", ("b08", "b09", "h04", "b03", "h07")),
        kind=Kind.EXAM,
        instructions=_paragraphs("exam-instructions", STORABLE),
        opens_at=now - timedelta(hours=1),
        closes_at=now + timedelta(days=1),
        time_limit_minutes=90,
        verdicts=Verdicts.AFTER_CLOSE,
    )
    overrides = {
        homework.pk: services.override_grant(
            assessment=homework,
            user=learner,
            by=by,
            reason=content.line("hw-override", reasons[0], cap=REASON_CAP),
            due_at=now + timedelta(days=3),
            extra_attempts=2,
        ),
        exam.pk: services.override_grant(
            assessment=exam,
            user=learner,
            by=by,
            reason=content.line("exam-override", reasons[1], cap=REASON_CAP),
            time_factor=1.5,
        ),
    }
    # A score by hand before the learner opened it (an empty instance holds it), then removed:
    # two reasons in its history. Opening it later still draws the learner's questions.
    held = services.instance_for_grading(assessment=homework, user=learner)
    score_reasons = [
        content.line("score-set", reasons[2], cap=REASON_CAP),
        content.line("score-removed", reasons[3], cap=REASON_CAP),
    ]
    services.score_override_set(instance=held, score=1.5, reason=score_reasons[0], by=by)
    services.score_override_set(instance=held, score=None, reason=score_reasons[1], by=by)
    try:
        yield Made(homework, exam, {homework.pk: zones_hw, exam.pk: zones_exam}, overrides, score_reasons, held)
    finally:
        Assessment.objects.filter(pk__in=[homework.pk, exam.pk]).delete()


# ---------------------------------------------------------------------------------------------
# Helpers: what the page shows as text, forms submitted by themselves
# ---------------------------------------------------------------------------------------------


def _text(page: Page, selector: str) -> str:
    return " ".join(page.locator(selector).all_text_contents())


def assert_inert(page: Page, selector: str, typed: str, name: str) -> None:
    """``typed`` is shown as text in ``selector`` (payloads a paragraph: each paragraph is)."""
    shown = _text(page, selector)
    for part in typed.split("\n\n"):
        assert part.strip() in shown, f"{name}: {part[:80]!r} not shown as text in {selector}"


def _submit(
    w: Watcher, page: Page, form: str, view: str, status: int | None = None, *, server_checks: bool = False
) -> None:
    """Submit ``form`` as the form itself does (markup a payload injected must not choose the
    control), follow it, and check the page it leads to. ``server_checks``: the browser's own
    validation is skipped, so that the server's refusal is what the page shows."""
    with page.expect_navigation() as nav:
        page.locator(form).first.evaluate("(f, off) => { f.noValidate = off; f.requestSubmit(); }", server_checks)
    response = nav.value
    assert response is not None and response.status < 500, f"{view}: {response and response.status}"
    if status is not None:
        assert response.status == status, f"{view}: {response.status}"
    w.findings.views.append(view)
    w.check(page)


def _position(assessment: Assessment, user: User, number: str) -> int:
    return InstanceQuestion.objects.get(
        instance__assessment=assessment, instance__user=user, exercise__workbook__slug=WB, exercise__number=number
    ).position


def _typed(where: str) -> str:
    return " ".join(p.render(where) for p in ALL)


def _learner_pages(w: Watcher, made: Made, assessment: Assessment, user: User) -> Page:
    """The list, the start screen, and the questions once started (every zone and prompt shown)."""
    page = w.open("/assessments/")
    assert_inert(page, "table.assessments-list", assessment.title, "list: title")
    assert_inert(page, "table.assessments-list", assessment.cohort.name, "list: cohort")
    url = reverse("web:assessment", args=[assessment.pk])
    page = w.open(url)
    assert page.locator("form.start-form").count() == 1, "the start screen"
    assert_inert(page, "h1", assessment.title, "start: title")
    assert_inert(page, ".instructions", assessment.instructions, "start: instructions")
    _submit(w, page, "form.start-form", f"{url} after Start")
    assert page.locator("section.question").count() == len(GRADABLE)
    assert_inert(page, "h1", assessment.title, "page: title")
    assert_inert(page, ".instructions", assessment.instructions, "page: instructions")
    for zone in made.zones[assessment.pk]:
        assert_inert(page, "h2.zone", zone, "page: zone")
    assert_shows_corpus(page, "assessment page: prompts")
    assert page.locator(".prompt img[onerror], .prompt svg[onload]").count() == 0
    return page


def _refused(w: Watcher, page: Page, assessment: Assessment, user: User, where: str) -> None:
    """An unreadable answer: refused (400) beside its question, with what was typed kept in its box."""
    q = _position(assessment, user, content.NUMERIC)
    typed = _typed(where)
    page.locator(f"#q{q}-answer").fill(typed)
    _submit(w, page, f"#q{q} form.answer", f"refused answer to q{q}", status=400)
    assert page.locator(f"#q{q}-error").count() == 1, "the refusal is shown beside its question"
    kept = page.locator(f"#q{q}-answer").input_value()
    assert BY_ID["h01"].render(where) in kept and BY_ID["b02"].render(where) in kept, "what was typed, kept as text"


def _answer_choice(w: Watcher, page: Page, assessment: Assessment, user: User) -> int:
    q = _position(assessment, user, content.CHOICE)
    page.locator(f"#q{q} input[name='choices']").first.check()
    _submit(w, page, f"#q{q} form.answer", f"answer to q{q}")
    return q


# ---------------------------------------------------------------------------------------------
# The learner
# ---------------------------------------------------------------------------------------------


def test_homework_pages_run_no_payload(
    made: Made, world: World, watch: Callable[[User | None], Watcher], caplog: pytest.LogCaptureFixture
) -> None:
    learner = world.veteran
    hw = made.homework
    w = watch(learner)
    page = _learner_pages(w, made, hw, learner)

    _refused(w, page, hw, learner, "hw-typed")
    q = _answer_choice(w, page, hw, learner)
    assert page.locator(f"#q{q} .badge.right, #q{q} .badge.wrong").count() == 1, "a live verdict"
    numeric = _position(hw, learner, content.NUMERIC)
    page.locator(f"#q{numeric}-answer").fill("84 params")  # the listed mistake: graded, wrong
    _submit(w, page, f"#q{numeric} form.answer", f"answer to q{numeric}")
    assert page.locator(f"#q{numeric} .badge.wrong").count() == 1

    # Hints, one at a time (the corpus's hints carry content payloads).
    hints = page.locator(f"#q{numeric} form.hint-form")
    shown = 0
    while hints.count():
        _submit(w, page, f"#q{numeric} form.hint-form", f"hint on q{numeric}")
        shown += 1
        assert page.locator(f"#q{numeric} .hint").count() == shown
    assert shown == 2

    submit_url = reverse("web:assessment-submit", args=[hw.pk])
    page = w.open(submit_url)
    assert_inert(page, "h1", hw.title, "submit: title")
    assert_inert(page, "nav.crumbs", hw.title, "submit: crumbs")
    _submit(w, page, "form.submit-confirm", "homework after submit and close")
    assert page.locator("#closed-line").count() == 1
    assert page.locator("#score").count() == 1  # live verdicts: the score once closed
    assert_inert(page, "h1", hw.title, "closed: title")
    assert_clean(caplog, w)


def test_exam_pages_run_no_payload(
    made: Made, world: World, watch: Callable[[User | None], Watcher], caplog: pytest.LogCaptureFixture
) -> None:
    learner = world.veteran
    exam = made.exam
    w = watch(learner)
    page = _learner_pages(w, made, exam, learner)
    assert page.locator("#timer").count() == 1, "the exam's timer (static/js/assessment.js)"

    _refused(w, page, exam, learner, "exam-typed")
    q = _answer_choice(w, page, exam, learner)
    assert page.locator(f"#q{q} .badge.saved").count() == 1, "saved: verdicts after the close"
    assert page.locator("form.hint-form").count() == 0, "an exam offers no hint"

    # Practice on the exam's exercises is paused, the message naming the exam.
    page = w.open(f"/w/{WB}/{content.NUMERIC}/")
    assert_inert(page, "body", exam.title, "paused practice: exam title")

    page = w.open(reverse("web:assessment-submit", args=[exam.pk]))
    assert_inert(page, "h1", exam.title, "submit: title")

    # The exam closed (moved to the past): the learner's page with their score and last answers.
    now = timezone.now()
    Assessment.objects.filter(pk=exam.pk).update(opens_at=now - timedelta(days=2), closes_at=now - timedelta(minutes=1))
    page = w.open(reverse("web:assessment", args=[exam.pk]))
    assert page.locator("#closed-line").count() == 1 and page.locator("#score").count() == 1
    assert_inert(page, "h1", exam.title, "closed exam: title")
    for zone in made.zones[exam.pk]:
        assert_inert(page, "h2.zone", zone, "closed exam: zone")
    assert_clean(caplog, w)


# ---------------------------------------------------------------------------------------------
# The instructor, in the admin
# ---------------------------------------------------------------------------------------------


def test_admin_assessment_pages_run_no_payload(
    made: Made, world: World, watch: Callable[[User | None], Watcher], caplog: pytest.LogCaptureFixture
) -> None:
    w = watch(world.instructor)
    hw, exam = made.homework, made.exam

    page = w.open(reverse("admin:assessments_assessment_changelist"))
    assert_inert(page, "#result_list", hw.title, "changelist: homework")
    assert_inert(page, "#result_list", exam.title, "changelist: exam")

    for a in (hw, exam):
        page = w.open(reverse("admin:assessments_assessment_change", args=[a.pk]))
        assert page.locator("#id_title").input_value() == a.title
        assert page.locator("#id_instructions").input_value() == a.instructions.replace("\r\n", "\n")
        zones = [page.locator(f"#id_questions-{i}-zone").input_value() for i in range(3)]
        assert zones == made.zones[a.pk]

    page = w.open(reverse("admin:assessments_gradebook", args=[hw.cohort_id]))
    assert_inert(page, "#gradebook thead", hw.title, "gradebook: homework")
    assert_inert(page, "#gradebook thead", exam.title, "gradebook: exam")
    assert_inert(page, ".breadcrumbs", hw.cohort.name, "gradebook: cohort")

    page = w.open(reverse("admin:assessments_assessment_live", args=[exam.pk]))
    assert_inert(page, ".breadcrumbs", exam.title, "live: title")

    score_url = reverse("admin:assessments_assessment_score", args=[hw.pk, world.veteran.pk])
    page = w.open(score_url)
    for reason in made.score_reasons:
        assert_inert(page, "#score-history", reason, "score history: reason")
    assert_inert(page, ".breadcrumbs", hw.title, "score: title")
    # A refused save: the form shows what was typed again, as text.
    typed = content.line("score-typed", STORABLE, cap=REASON_CAP)
    page.locator("#id_score").fill("-1")
    page.locator("#id_reason").fill(typed)
    _submit(w, page, "#score-form", f"{score_url} refused", server_checks=True)
    assert page.locator("#id_reason").input_value() == typed
    assert page.locator(".errorlist").count() >= 1

    page = w.open(reverse("admin:assessments_override_changelist"))
    assert_inert(page, "#result_list", hw.title, "overrides: homework")
    assert_inert(page, "#result_list", exam.title, "overrides: exam")
    for a in (hw, exam):
        override = made.overrides[a.pk]
        page = w.open(reverse("admin:assessments_override_change", args=[override.pk]))
        assert_inert(page, "#content", override.reason, "override: reason")

    page = w.open(reverse("admin:assessments_instance_change", args=[made.score_instance.pk]))
    for reason in made.score_reasons:
        assert_inert(page, "#content", reason, "instance: score history")
    assert_clean(caplog, w)
