"""A learner's history in the admin, as the learner saw it: every answer format the content uses,
reveals, hints, unit notes and a varying exercise's numbers; and the exercise statistics' wrong
answers in the same words.

Answers go through the API as a learner's client sends them (opaque option and step ids), so the
attempts are real. Code attempts are rows with the details a sandbox worker writes (the sandbox
itself is tested in apps/sandbox).
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from apps.accounts.models import Role, User
from apps.exercises import presentation
from apps.exercises.choices import AttemptPart, AttemptStatus, CodeOutcome, Verdict
from apps.exercises.content import cache
from apps.exercises.content.render import format_value
from apps.exercises.content.resolve import ResolvedExercise
from apps.exercises.formats.base import inline_html, learner_order
from apps.exercises.formats.parts import expression_html
from apps.exercises.grading.numeric import format_in
from apps.exercises.models import Attempt, Exercise, Workbook
from apps.exercises.tests.answers import correct_payload, resolved_for, wrong_payload
from apps.learning.tests.helpers import client_for
from apps.progress import selectors, services
from apps.progress.models import Cohort, ExerciseProgress

pytestmark = pytest.mark.django_db

BOOKS = ("transformer-math", "scaling-book", "roofline", "lm-from-scratch")


@pytest.fixture
def cohort(make_user: Callable[..., User]) -> Cohort:
    teacher = make_user("teacher", role=Role.INSTRUCTOR)
    c = services.cohort_create(
        instructor=teacher, name="Evening", workbooks=[(Workbook.objects.get(slug=s), None) for s in BOOKS]
    )
    services.cohort_join(user=make_user("ada"), code=c.join_code)
    return c


def learner() -> User:
    return User.objects.get(username="ada")


def exercise(slug: str, number: str) -> Exercise:
    return Exercise.objects.select_related("workbook", "current_version", "chapter").get(
        workbook__slug=slug, number=number, is_active=True
    )


def find(slug: str, fmt: str, test: Callable[[ResolvedExercise], bool] = lambda r: True) -> Exercise:
    """The first active exercise of ``fmt`` in ``slug`` whose (seed) content passes ``test``."""
    for e in (
        Exercise.objects.filter(workbook__slug=slug, format=fmt, is_active=True)
        .select_related("workbook", "current_version", "chapter")
        .order_by("chapter__number", "position")
    ):
        assert e.current_version is not None
        if test(cache.resolved(e.current_version)):
            return e
    raise AssertionError(f"no {fmt} exercise in {slug} fits")


def url(e: Exercise, action: str = "attempts") -> str:
    return f"/api/v1/workbooks/{e.workbook.slug}/exercises/{e.number}/{action}/"


def submit(api: APIClient, e: Exercise, payload: dict[str, Any]) -> dict[str, Any]:
    response = api.post(url(e), payload, format="json")
    assert response.status_code == 201, response.content
    body: dict[str, Any] = response.json()
    return body


def history_page(c: Cohort, user: User) -> str:
    client = Client()
    client.force_login(c.instructor)
    response = client.get(f"/admin/progress/cohort/{c.pk}/learners/{user.pk}/")
    assert response.status_code == 200
    return str(response.content.decode())


def group(page: str, e: Exercise) -> str:
    """The rows of one exercise in the history (up to the next exercise's)."""
    return page.split(f'<tbody id="exercise-{e.pk}">')[1].split('<tbody id="exercise-')[0].split("</form>")[0]


def queries(run: Callable[[], object]) -> list[str]:
    """The SQL ``run`` sends (counted as sent: a request start empties Django's own query log)."""
    sent: list[str] = []

    def record(execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any) -> Any:
        sent.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        run()
    return sent


def assert_no_raw_data(page: str, *opaque: str) -> None:
    table = page.split('id="attempts-table"')[1].split("</table>")[0]
    assert "{'" not in table and "{&#x27;" not in table, "a Python dict reached the page"
    assert not re.search(r"\{\{.*?\}\}", table), "an unrendered placeholder reached the page"
    for token in opaque:
        assert token not in table, f"opaque id {token} reached the page"


def code_details(e: Exercise, *, passed: list[bool], outcome: str) -> dict[str, Any]:
    """What the sandbox worker stores on a graded code attempt (learning.services.attempt_finish)."""
    assert e.current_version is not None
    code = cache.resolved(e.current_version).spec.code
    assert code is not None
    ids = [c.id for c in code.cases][: len(passed)]
    tests = [
        {
            "id": test_id,
            "passed": ok,
            "call": f"{code.entry}(2, 3)",
            "message": "" if ok else "expected 6, got 5",
            "expected": "6",
            "got": "6" if ok else "5",
        }
        for test_id, ok in zip(ids, passed, strict=True)
    ]
    return {
        "limits": {"time_s": 10.0, "memory_mb": 512},
        "tests_total": len(tests),
        "outcome": outcome,
        "message": f"{sum(passed)} of {len(tests)} tests passed.",
        "traceback": "",
        "prints": "debug 42",
        "tests": tests,
        "passed_count": sum(passed),
        "total": len(tests),
        "duration_s": 1.234,
    }


def code_attempt(user: User, e: Exercise, source: str, *, passed: list[bool], part: str = AttemptPart.CODE) -> Attempt:
    assert e.current_version is not None
    ok = all(passed)
    details = code_details(e, passed=passed, outcome=CodeOutcome.PASSED if ok else CodeOutcome.FAILED)
    now = timezone.now()
    return Attempt.objects.create(
        user=user, exercise=e, version=e.current_version, part=part, status=AttemptStatus.GRADED,
        raw={"code": source}, parsed={"lines": source.count("\n") + 1, "bytes": len(source.encode())},
        verdict=Verdict.CORRECT if ok else Verdict.INCORRECT, outcome=details["outcome"],
        score=1.0 if ok else sum(passed) / len(passed), feedback=details["message"], details=details,
        started_at=now, finished_at=now,
    )  # fmt: skip


# ---- one test per format ----------------------------------------------------------------------


def test_a_number_with_its_unit_and_the_reading_the_grader_took(cohort: Cohort) -> None:
    ada = learner()
    e = find("transformer-math", "numeric", lambda r: r.spec.vary is not None)
    api = client_for(ada)
    typed = wrong_payload(e, ada)["answer"]
    submit(api, e, {"answer": typed})
    submit(api, e, correct_payload(e, ada))
    rows = group(history_page(cohort, ada), e)
    stored = Attempt.objects.filter(user=ada, exercise=e).order_by("created_at")
    assert f"<code>{html.escape(typed)}</code>" in rows
    understood = stored[0].parsed["understood"]
    if understood != typed:
        assert f"The grader read: {html.escape(understood)}" in rows
    assert "Incorrect" in rows and "Correct" in rows
    assert f'href="/w/{e.workbook.slug}/{e.number}/"' in rows and html.escape(e.title) in rows


def test_a_varying_exercise_shows_the_numbers_this_learner_had(cohort: Cohort) -> None:
    ada = learner()
    e = find("transformer-math", "numeric", lambda r: r.spec.vary is not None)
    submit(client_for(ada), e, wrong_payload(e, ada))
    attempt = Attempt.objects.get(user=ada, exercise=e)
    recorded = attempt.details["variant"]
    assert recorded["givens"], "a learner in a per-learner cohort answers their own numbers"
    rows = group(history_page(cohort, ada), e)
    for name, value in recorded["givens"].items():
        assert html.escape(f"{name} = {format_value(value)}") in rows
    for label, name in recorded.get("labels", {}).items():
        assert html.escape(f"{label} = {name}") in rows


def test_choice_options_by_their_text_on_the_learners_own_numbers(cohort: Cohort) -> None:
    ada = learner()
    api = client_for(ada)
    # A choice whose option texts carry the learner's numbers: shown from that variant's spec.
    varying = find("scaling-book", "choice", lambda r: r.spec.vary is not None)
    single = find("transformer-math", "choice", lambda r: not r.spec.multiple)
    multi = find("scaling-book", "choice", lambda r: r.spec.multiple)
    sent: list[str] = []
    for e in (varying, single):
        payload = wrong_payload(e, ada)
        sent += payload["choices"]
        submit(api, e, payload)
    payload = correct_payload(multi, ada)
    sent += payload["choices"]
    submit(api, multi, payload)
    page = history_page(cohort, ada)
    assert_no_raw_data(page, *sent)
    for e, picked in ((varying, wrong_payload(varying, ada)), (single, wrong_payload(single, ada))):
        assert e.current_version is not None
        r = resolved_for(e, ada)
        ids = presentation.option_ids(e.current_version, len(r.spec.options or []))
        order = learner_order(ada.pk, e.current_version, len(ids))
        [index] = [ids.index(p) for p in picked["choices"]]
        rows = group(page, e)
        assert inline_html(r.spec.options[index].text) in rows  # type: ignore[index]
        assert f"option {order.index(index) + 1}:" in rows
    r = resolved_for(multi, ada)
    correct = [o.text for o in r.spec.options or [] if o.correct]
    assert len(correct) >= 2
    rows = group(page, multi)
    assert all(inline_html(text) in rows for text in correct)


def test_steps_in_the_order_the_learner_submitted_them(cohort: Cohort) -> None:
    ada = learner()
    e = find("transformer-math", "order")
    payload = wrong_payload(e, ada)  # the steps reversed
    submit(client_for(ada), e, payload)
    page = history_page(cohort, ada)
    assert_no_raw_data(page, *payload["order"])
    rows = group(page, e)
    steps = [s.text for s in reversed(resolved_for(e, ada).spec.steps or [])]
    where = [rows.index(inline_html(text)) for text in steps]
    assert where == sorted(where), "the steps in the order given"
    assert "<math" in rows  # the steps' math rendered, not TeX


def test_lines_with_their_code_and_a_debug_fix_highlighted_with_its_tests(cohort: Cohort) -> None:
    ada = learner()
    e = find("transformer-math", "lines")
    assert e.current_version is not None
    spec = cache.resolved(e.current_version).spec
    assert spec.code is not None
    [n] = wrong_payload(e, ada)["lines"]
    submit(client_for(ada), e, {"lines": [n]})
    code_attempt(ada, e, spec.code.solution, passed=[True, True])
    rows = group(history_page(cohort, ada), e)
    assert f"line {n}:" in rows and html.escape(spec.code.starter.splitlines()[n - 1]) in rows
    assert '<span class="hll">' in rows  # the picked line marked in the snippet (static/css/admin-attempts.css)
    assert "Buggy lines" in rows and "Code" in rows  # both parts, labelled
    assert "2 of 2 tests passed" in rows


def test_a_table_by_its_cells_with_their_readings(cohort: Cohort) -> None:
    ada = learner()
    e = find("transformer-math", "table")
    payload = wrong_payload(e, ada)
    submit(client_for(ada), e, payload)
    rows = group(history_page(cohort, ada), e)
    labels = presentation.table_labels(resolved_for(e, ada).spec)
    for cell, label in labels.items():
        assert f"{html.escape(label)}:</span> <code>{html.escape(payload['cells'][cell])}</code>" in rows
    assert "✗" in rows and "read as" in rows


def test_parts_with_units_and_expressions_as_math(cohort: Cohort) -> None:
    ada = learner()
    api = client_for(ada)
    numbers = find("scaling-book", "parts", lambda r: all(p.answer is not None for p in r.spec.parts or []))
    symbolic = find("roofline", "parts", lambda r: any(p.expression is not None for p in r.spec.parts or []))
    typed = correct_payload(numbers, ada)["parts"]
    submit(api, numbers, {"parts": typed})
    wrong = wrong_payload(symbolic, ada)["parts"]
    submit(api, symbolic, {"parts": wrong})
    page = history_page(cohort, ada)
    rows = group(page, numbers)
    labels = presentation.part_labels(resolved_for(numbers, ada).spec)
    for key, label in labels.items():
        assert f"{html.escape(label)}:</span> <code>{html.escape(typed[key])}</code>" in rows
    assert "✓" in rows
    rows = group(page, symbolic)
    spec = resolved_for(symbolic, ada).spec
    for p in spec.parts or []:
        if p.expression is not None:
            math = expression_html(wrong[p.key], tuple(p.expression.symbols))
            assert math.startswith("<math") and math in rows
    assert_no_raw_data(page)


def test_code_highlighted_with_the_failing_tests_named(cohort: Cohort) -> None:
    ada = learner()
    e = find("transformer-math", "code")
    source = "def f(x):\n    # a first try\n    return x + 1\n"
    attempt = code_attempt(ada, e, source, passed=[True, False])
    rows = group(history_page(cohort, ada), e)
    assert '<span class="k">def</span>' in rows  # Pygments' classes: the CSP allows no inline style
    assert "style=" not in rows
    assert "a first try" in rows
    failing = attempt.details["tests"][1]
    assert html.escape(failing["id"]) in rows and "expected 6, got 5" in rows
    assert "1 of 2 tests passed" in rows and "debug 42" in rows


def test_reveals_hints_and_a_unit_note_are_flagged(cohort: Cohort) -> None:
    ada = learner()
    api = client_for(ada)
    noted = exercise("transformer-math", "4.4")  # a card's GB figure read as GiB: accepted with a note
    r = resolved_for(noted, ada)
    assert r.numeric is not None
    convention = next(a for a in r.numeric.alternates if a.convention)
    # Six figures: the alternate itself (rounded to the figures asked it may leave its tolerance).
    body = submit(api, noted, {"answer": format_in(convention.value, r.numeric.input_unit, sig=6)})
    assert body["accepted_with_note"] is True
    hinted = find("transformer-math", "order")
    assert api.post(url(hinted, "hints")).status_code == 200
    submit(api, hinted, correct_payload(hinted, ada))
    revealed = find("scaling-book", "choice", lambda r: r.spec.multiple)
    submit(api, revealed, wrong_payload(revealed, ada))
    assert api.post(url(revealed, "reveal")).status_code == 200
    untried = find("scaling-book", "order")  # revealed without a single attempt
    assert api.post(url(untried, "reveal")).status_code == 200
    page = history_page(cohort, ada)
    rows = group(page, noted)
    assert "Accepted, with a unit note" in rows and "solved only with a unit note" in rows
    assert "used 1 of" in group(page, hinted)
    rows = group(page, revealed)
    at = ExerciseProgress.objects.get(user=ada, exercise=revealed).revealed_at
    assert at is not None and f"revealed the answer at {at:%Y-%m-%d %H:%M}" in rows
    assert "Revealed the answer</strong>" in rows and "no points" in rows
    assert rows.index("Revealed the answer</strong>") < rows.index("Incorrect"), "newest first"
    assert "Revealed the answer</strong>" in group(page, untried)


# ---- the page as a whole ----------------------------------------------------------------------


def test_the_history_takes_a_fixed_number_of_queries(
    cohort: Cohort, django_assert_max_num_queries: Callable[..., Any]
) -> None:
    ada = learner()
    api = client_for(ada)
    picks = [
        find("transformer-math", "numeric", lambda r: r.spec.vary is not None),
        find("transformer-math", "choice"),
        find("transformer-math", "order"),
        find("transformer-math", "table"),
        find("scaling-book", "parts"),
        find("roofline", "parts", lambda r: any(p.expression is not None for p in r.spec.parts or [])),
    ]
    submit(api, picks[0], wrong_payload(picks[0], ada))
    client = Client()
    client.force_login(cohort.instructor)
    page_url = f"/admin/progress/cohort/{cohort.pk}/learners/{ada.pk}/"
    client.get(page_url)  # the session's first read
    one = queries(lambda: client.get(page_url))
    for e in picks * 4:
        submit(api, e, wrong_payload(e, ada))
    code_attempt(ada, find("transformer-math", "code"), "def f():\n    pass\n", passed=[False])
    assert api.post(url(picks[1], "reveal")).status_code == 200
    with django_assert_max_num_queries(len(one)):
        response = client.get(page_url)
    assert len(queries(lambda: client.get(page_url))) == len(one), one
    assert response.content.decode().count('<tbody id="exercise-') == len(picks) + 1


def test_a_long_history_shows_the_newest_attempts(cohort: Cohort) -> None:
    ada = learner()
    e = find("transformer-math", "numeric", lambda r: r.spec.vary is None)
    assert e.current_version is not None
    for i in range(3):
        Attempt.objects.create(
            user=ada, exercise=e, version=e.current_version, raw={"answer": f"{i} B"}, parsed={},
            verdict=Verdict.INCORRECT, feedback="No.",
        )  # fmt: skip
    history = selectors.learner_history(viewer=cohort.instructor, cohort=cohort, user_id=ada.pk, limit=2)
    assert history.truncated and history.attempts == 2
    assert [r.attempt.answer.text for r in history.exercises[0].rows if r.attempt] == ["2 B", "1 B"]


def assert_shown(text: str, page: str) -> None:
    """Content text on the statistics page: its math rendered, so the prose around it is there as
    written (up to the first formula) and the formula is MathML, not TeX."""
    prose = text.split("$")[0].strip()
    if prose:
        assert html.escape(prose) in page, prose
    if "$" in text:
        assert "<math" in page


def test_the_statistics_read_wrong_answers_as_the_learner_saw_them(cohort: Cohort) -> None:
    ada = learner()
    api = client_for(ada)
    choice = find("transformer-math", "choice", lambda r: r.spec.vary is None)
    order = find("transformer-math", "order")
    table = find("transformer-math", "table")
    code = find("transformer-math", "code")
    sent = wrong_payload(choice, ada)["choices"] + wrong_payload(order, ada)["order"]
    for e in (choice, order, table):
        submit(api, e, wrong_payload(e, ada))
    failed = code_attempt(ada, code, "def f():\n    pass\n", passed=[True, False])
    client = Client()
    client.force_login(cohort.instructor)
    page = client.get(f"/admin/progress/cohort/{cohort.pk}/exercises/?workbook=transformer-math").content.decode()
    stats = page.split('id="stats-table"')[1].split("</table>")[0]
    for token in sent:
        assert token not in stats
    r = resolved_for(choice, ada)
    ids = presentation.option_ids(choice.current_version, len(r.spec.options or []))  # type: ignore[arg-type]
    [index] = [ids.index(p) for p in wrong_payload(choice, ada)["choices"]]
    assert_shown(r.spec.options[index].text, stats)  # type: ignore[index]
    first_step = (resolved_for(order, ada).spec.steps or [])[-1]  # the wrong payload reverses them
    assert_shown(first_step.text, stats)
    assert f">order {first_step.id}" not in stats
    labels = presentation.table_labels(resolved_for(table, ada).spec)
    assert html.escape(next(iter(labels.values()))) in stats
    assert html.escape(f"code: failed, test {failed.details['tests'][1]['id']}") in stats


def test_an_old_attempt_keeps_its_own_numbers(cohort: Cohort) -> None:
    """A varying exercise's attempt is shown with the numbers of its round, not the ones the
    learner is on now."""
    ada = learner()
    e = find("transformer-math", "numeric", lambda r: r.spec.vary is not None)
    api = client_for(ada)
    submit(api, e, correct_payload(e, ada))
    first = Attempt.objects.get(user=ada, exercise=e)
    assert api.post(url(e, "new-numbers")).status_code == 200
    submit(api, e, wrong_payload(e, ada))
    second = Attempt.objects.filter(user=ada, exercise=e).exclude(pk=first.pk).get()
    assert first.details["variant"] != second.details["variant"]
    rows = group(history_page(cohort, ada), e)
    assert "numbers of round 2" in rows and "numbers of round 1" in rows
    assert rows.index("round 2") < rows.index("round 1")


def test_the_instructor_reads_every_hidden_test_and_the_draw_the_learner_never_sees(cohort: Cohort) -> None:
    ada = learner()
    e = exercise("transformer-math", "0.5")
    attempt = code_attempt(ada, e, "def param_count(d, n_layers, vocab_size):\n    return 0\n", passed=[False, False])
    hidden = {"id": "random_shapes", "passed": False, "call": "param_count(7356, 58, 14278)",
              "message": "Wrong value.", "expected": "37614853560", "got": "0", "example": False,
              "category": "wrong_value", "random": True}  # fmt: skip
    shown = {**attempt.details["tests"][0], "example": True, "category": "wrong_value", "message": "Wrong value."}
    attempt.details |= {
        "tests": [shown, hidden],
        "draw": {"seed": 424242, "inputs": {"random_shapes": {"args": [7356, 58, 14278], "kwargs": {}}}},
    }
    attempt.save(update_fields=["details"])
    rows = group(history_page(cohort, ada), e)
    assert "Hidden test 1 of 1 · random_shapes" in rows and "param_count(7356, 58, 14278)" in rows
    assert "37614853560" in rows
    assert "424242" in rows and "14278" in rows.split("424242")[1]
    # The learner's own view of the same attempt: the example in full, the hidden test as its label and why.
    body = client_for(ada).get(f"/api/v1/attempts/{attempt.pk}/").json()
    assert "draw" not in body["details"] and "424242" not in str(body)
    assert body["details"]["tests"][1] == {
        "label": "Hidden test 1 of 1", "example": False, "passed": False, "category": "wrong_value", "message": "Wrong value."
    }  # fmt: skip
    assert "37614853560" not in str(body) and "14278" not in str(body)
