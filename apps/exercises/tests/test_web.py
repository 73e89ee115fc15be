"""Server-rendered pages: every path works without JavaScript."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from apps.accounts.models import User
from apps.exercises.content import cache
from apps.exercises.models import Attempt, Exercise
from apps.exercises.tests import content
from apps.exercises.tests.answers import correct_payload, on_seed_numbers
from apps.learning import services as learning_services

pytestmark = pytest.mark.django_db
WB = "/w/transformer-math/"


@pytest.fixture
def web(student: User) -> Client:
    client = Client()
    client.force_login(student)
    return client


def ex(number: str) -> Exercise:
    return Exercise.objects.select_related("current_version").get(workbook__slug="transformer-math", number=number)


def test_sign_up_log_out_and_log_in() -> None:
    client = Client()
    assert "Workbooks" in client.get("/").text
    response = client.post(
        "/signup/",
        {"username": "newbie", "email": "", "password1": "correct horse 42", "password2": "correct horse 42"},
    )
    assert response.status_code == 302
    assert User.objects.get(username="newbie").role == "student"
    assert "newbie" in client.get("/").text
    client.post("/logout/")
    assert "Log in" in client.get("/").text
    assert client.post("/login/", {"username": "newbie", "password": "correct horse 42"}).status_code == 302
    assert f"Mastery 0 / {content.exercise_count('transformer-math')} exercises (0%)" in client.get("/").text


def test_exercise_pages_need_an_account() -> None:
    response = Client().get(f"{WB}0.1/")
    assert response.status_code == 302
    assert response["Location"].startswith("/login/")


def test_workbook_page_lists_chapters_kinds_and_progress(web: Client) -> None:
    page = web.get(WB).text
    assert "Chapter 9: Capstone" in page
    assert page.count('class="badge kind-build"') == 4
    assert page.count('class="badge kind-debug"') == 1
    assert "Mastery 0 / 7 exercises (0%)" in page


def test_workbook_page_links_every_exercise_where_its_url_reverses(web: Client, student: User) -> None:
    first = Exercise.objects.get(workbook__slug="transformer-math", number="0.1")
    learning_services.attempt_create(user=student, exercise=first, payload={"answer": "1"})
    page = web.get(WB).text
    exercises = Exercise.objects.filter(workbook__slug="transformer-math", is_active=True)
    links = re.findall(r'<a href="(/w/transformer-math/[^"]+/)">', page)
    assert sorted(links) == sorted(reverse("web:exercise", args=["transformer-math", e.number]) for e in exercises)
    assert "1 try</span>" in page


@pytest.mark.parametrize(
    ("number", "marker"),
    [
        ("0.1", 'name="answer"'),
        ("0.3", 'type="radio" name="choices"'),
        ("2.5", 'name="pos:'),
        ("0.6", 'type="checkbox" name="lines"'),
        ("8.5", 'name="cell:'),
        ("0.5", '<textarea id="code" name="code"'),
    ],
)
def test_each_format_has_its_widget_and_no_answer(web: Client, number: str, marker: str) -> None:
    page = web.get(f"{WB}{number}/").text
    assert marker in page
    version = ex(number).current_version
    assert version is not None
    explanation = cache.rendered(version).explanation_html
    if explanation:
        assert explanation not in page
    assert 'id="solution"' in page
    assert "Give up and show the derivation" in page


def test_numeric_answer_without_javascript(web: Client, student: User) -> None:
    on_seed_numbers(student, ex("0.1"))  # GPT-2 Small's numbers, quoted below
    invalid = web.post(f"{WB}0.1/", {"answer": "124.3 GB"})
    assert invalid.status_code == 400
    assert "Not graded — no attempt used." in invalid.text
    assert "124.3 GB = 124,300,000,000 bytes" in invalid.text
    assert Attempt.objects.count() == 0

    wrong = web.post(f"{WB}0.1/", {"answer": "123.5M"})
    assert "✗ Not yet" in wrong.text
    assert "position embedding" in wrong.text

    right = web.post(f"{WB}0.1/", {"answer": "124.32M"})
    assert "✓ Correct" in right.text
    assert "Derivation" in right.text
    assert "84,934,656" in right.text
    assert Attempt.objects.filter(user=student).count() == 2


def test_order_with_position_selects(web: Client, student: User) -> None:
    exercise = ex("2.5")
    correct = correct_payload(exercise, student)["order"]
    form = {f"pos:{step}": str(i + 1) for i, step in enumerate(correct)}
    assert "✓ Correct" in web.post(f"{WB}2.5/", form).text
    clash = {f"pos:{step}": "1" for step in correct}
    response = web.post(f"{WB}2.5/", clash)
    assert "Give each step a different position." in response.text


def test_table_choice_and_lines_without_javascript(web: Client, student: User) -> None:
    cells = correct_payload(ex("8.5"), student)["cells"]
    assert "✓ Correct" in web.post(f"{WB}8.5/", {f"cell:{k}": v for k, v in cells.items()}).text
    choices = correct_payload(ex("0.3"), student)["choices"]
    assert "✓ Correct" in web.post(f"{WB}0.3/", {"choices": choices}).text
    assert "✓ Correct" in web.post(f"{WB}0.6/", {"lines": ["8"]}).text


def test_hints_and_reveal(web: Client) -> None:
    response = web.post(f"{WB}0.2/", {"action": "hint"})
    assert response.status_code == 302
    page = web.get(f"{WB}0.2/").text
    assert "Hint 1 of 2." in page
    assert "Show the next hint (2 of 2)" in page
    web.post(f"{WB}0.2/", {"action": "reveal"})
    page = web.get(f"{WB}0.2/").text
    assert "Answer revealed" in page
    assert "6.74 B params" in page  # to the three figures the prompt asks for


def test_previous_and_next_links(web: Client) -> None:
    page = web.get(f"{WB}1.1/").text
    assert re.search(r'rel="prev" href="/w/transformer-math/0.7/"', page)
    assert re.search(r'rel="next" href="/w/transformer-math/1.2/"', page)


def test_code_exercise_says_plainly_when_the_sandbox_is_not_running(web: Client, no_sandbox: None) -> None:
    assert "Code cannot be graded right now" in web.get(f"{WB}0.5/").text
    response = web.post(f"{WB}0.5/", {"code": "def param_count(d, n_layers, vocab_size):\n    return 0\n"})
    assert "not running on this server right now. Nothing was recorded." in response.text
    assert Attempt.objects.count() == 0


def form_fields(payload: dict[str, object]) -> dict[str, object]:
    """The API payload as the page's plain form posts it (no JavaScript)."""
    if "cells" in payload:
        cells = payload["cells"]
        assert isinstance(cells, dict)
        return {f"cell:{cid}": value for cid, value in cells.items()}
    if "parts" in payload:
        parts = payload["parts"]
        assert isinstance(parts, dict)
        return {f"part:{key}": value for key, value in parts.items()}
    return payload


@pytest.mark.parametrize("slug", ["transformer-math", "lm-from-scratch", "systems-serving", "scaling-book", "roofline"])
def test_every_exercise_page_renders_and_grades_its_instant_answers(
    web: Client, student: User, slug: str, no_sandbox: None
) -> None:
    """Every exercise of every workbook through the page itself: its widget, and a correct plain-form
    answer graded as correct (code is the sandbox's: apps/sandbox/tests/test_flow.py)."""
    listed = Exercise.objects.filter(workbook__slug=slug, is_active=True).select_related("current_version", "workbook")
    assert listed.exists()
    markers = {
        "numeric": 'name="answer"',
        "choice": 'name="choices"',
        "order": 'name="pos:',
        "lines": 'name="lines"',
        "table": 'name="cell:',
        "parts": 'name="part:',
        "code": 'name="code"',
    }
    plotted = 0
    for exercise in listed:
        page = web.get(f"/w/{slug}/{exercise.number}/")
        assert page.status_code == 200, exercise.number
        assert markers[exercise.format] in page.text, exercise.number
        assert '<svg class="roofline"' not in page.text, exercise.number  # not before solving
        if exercise.format == "code":
            continue
        graded = web.post(f"/w/{slug}/{exercise.number}/", form_fields(correct_payload(exercise, student)))
        assert graded.status_code == 200, (exercise.number, graded.text[-500:])
        assert "✓ Correct" in graded.text, exercise.number
        assert exercise.current_version is not None
        if cache.resolved(exercise.current_version).spec.plot is not None:
            # Solved: the roofline is drawn, its marks numbered as in the table under it.
            assert '<svg class="roofline"' in graded.text, exercise.number
            assert '<text class="mark-key"' in graded.text and "<td>1</td>" in graded.text, exercise.number
            plotted += 1
    assert plotted == {"scaling-book": 4, "roofline": 5}.get(slug, 0)
