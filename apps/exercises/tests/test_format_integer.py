"""The integer format: a whole number with no unit, matched exactly, from a small spec."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pydantic import ValidationError
from rest_framework.test import APIClient

from apps.accounts.models import Role, User
from apps.exercises import formats, services
from apps.exercises.content.checks import check_exercise
from apps.exercises.content.resolve import resolve
from apps.exercises.content.schema import ExerciseSpec
from apps.exercises.formats import AnswerShown
from apps.exercises.formats.integer import read_integer
from apps.exercises.grading.base import InvalidAnswer
from apps.exercises.models import Attempt, Workbook
from apps.exercises.tests import synthetic
from apps.progress import selectors as progress_selectors
from apps.progress import services as progress_services

SLUG = "integer-format"
ATTEMPTS = f"/api/v1/workbooks/{SLUG}/exercises/1.1/attempts/"


def spec(**over: Any) -> ExerciseSpec:
    answer = {
        "value": "2 * n_layers",
        "unit": "",
        "mistakes": [{"value": "n_layers", "feedback": "Each layer has two: one after attention, one after the MLP."}],
    }
    raw: dict[str, Any] = {
        "id": "all-reduces",
        "number": "1.1",
        "title": "All-reduces per step",
        "kind": "derive",
        "format": "integer",
        "givens": {"n_layers": 12},
        "prompt": "A tensor-parallel model has {{n_layers}} layers. How many all-reduces does a forward pass take?",
        "explanation": "Two per layer: {{n_layers}} × 2 = {{answer}}.",
        "answer": answer,
    }
    return ExerciseSpec.model_validate(raw | over)


@pytest.mark.parametrize(
    ("text", "value"), [("24", 24), (" 24 ", 24), ("-3", -3), ("+7", 7), ("1,024", 1024), ("1_024", 1024)]
)
def test_a_whole_number_is_read(text: str, value: int) -> None:
    assert read_integer(text) == value


@pytest.mark.parametrize(
    ("text", "code", "says"),
    [
        ("", "empty_answer", "Enter a whole number"),
        ("2.5", "not_integer", "2.5 is not a whole number"),
        ("2.0", "not_integer", "no decimal point"),
        ("1e3", "not_integer", "1e3 is 1000"),
        ("ten", "not_a_number", "in digits"),
        ("12 steps", "unexpected_unit", "no unit"),
        ("1,02", "not_a_number", "in digits"),
    ],
)
def test_anything_else_is_an_input_error_that_says_why(text: str, code: str, says: str) -> None:
    with pytest.raises(InvalidAnswer) as exc:
        read_integer(text)
    assert exc.value.code == code
    assert says in exc.value.message


def test_a_sound_integer_exercise_passes_the_content_checks() -> None:
    assert check_exercise(spec()) == []
    assert formats.get("integer").export(spec(), resolve(spec())) == {"answer": 24}


def test_the_checks_catch_a_unit_a_fraction_and_a_mistake_equal_to_the_answer() -> None:
    def problems(**answer: Any) -> list[str]:
        return check_exercise(spec(answer={"value": "2 * n_layers", "unit": ""} | answer))

    assert any("no unit" in p for p in problems(unit="GB"))
    assert any("not a whole number" in p for p in problems(value="n_layers / 5"))
    assert any("equals the answer" in p for p in problems(mistakes=[{"value": "24", "feedback": "x"}]))
    assert any("cannot use the integer format" in p for p in check_exercise(spec(kind="build")))


def test_the_schema_wants_an_answer_and_nothing_of_other_formats() -> None:
    with pytest.raises(ValidationError, match="needs `answer`"):
        spec(answer=None)
    with pytest.raises(ValidationError, match="`steps` does not belong"):
        spec(steps=[{"id": "a", "text": "A"}, {"id": "b", "text": "B"}])


@pytest.fixture
def synced(db: None) -> None:
    services.workbook_sync(spec=synthetic.workbook([synthetic.chapter(1, [spec()])], slug=SLUG))


@pytest.mark.usefixtures("synced")
def test_learners_answer_it_through_the_api(api: APIClient, student: User) -> None:
    detail = api.get(f"/api/v1/workbooks/{SLUG}/exercises/1.1/").json()
    assert detail["format"] == "integer"
    assert detail["widget"] == {"format": "integer"}
    assert detail["solution"] is None
    # No unit to read: the preview is for numbers with units.
    preview = api.post(f"/api/v1/workbooks/{SLUG}/exercises/1.1/preview/", {"answer": "24"}, format="json")
    assert (preview.status_code, preview.json()["error"]["code"]) == (400, "no_preview")

    refused = api.post(ATTEMPTS, {"answer": "2.5"}, format="json")
    assert refused.status_code == 400
    assert refused.json()["error"]["code"] == "not_integer"
    assert not Attempt.objects.filter(user=student).exists()

    wrong = api.post(ATTEMPTS, {"answer": "12"}, format="json").json()
    assert (wrong["correct"], wrong["feedback"]) == (
        False,
        "Each layer has two: one after attention, one after the MLP.",
    )
    assert wrong["understood"] == "12"

    right = api.post(ATTEMPTS, {"answer": "24"}, format="json")
    assert right.status_code == 201
    body = right.json()
    assert body["correct"] is True and body["state"]["solved"] is True
    assert body["solution"]["format"] == "integer" and body["solution"]["answer"] == 24
    assert [a.verdict for a in Attempt.objects.filter(user=student).order_by("id")] == ["incorrect", "correct"]


@pytest.mark.usefixtures("synced")
def test_the_page_works_without_javascript(student: User, client: Any) -> None:
    client.force_login(student)
    page = client.get(f"/w/{SLUG}/1.1/")
    assert page.status_code == 200
    assert b'inputmode="numeric"' in page.content and b"Check answer" in page.content
    answered = client.post(f"/w/{SLUG}/1.1/", {"action": "submit", "answer": "24"})
    assert answered.status_code == 200
    assert Attempt.objects.get(user=student).verdict == "correct"


@pytest.mark.usefixtures("synced")
def test_instructors_see_the_number_in_the_history_and_the_statistics(
    api: APIClient, student: User, make_user: Callable[..., User]
) -> None:
    teacher = make_user("teacher", role=Role.INSTRUCTOR)
    cohort = progress_services.cohort_create(
        instructor=teacher, name="Evening", workbooks=[(Workbook.objects.get(slug=SLUG), None)]
    )
    progress_services.cohort_join(user=student, code=cohort.join_code)
    for typed in ("12", "1,2", "012", "24"):
        api.post(ATTEMPTS, {"answer": typed}, format="json")
    wrong = Attempt.objects.filter(user=student, verdict="incorrect").order_by("id")
    # answer_shown: as typed; the statistics count readings, so "12" and "012" are one wrong answer.
    assert [progress_selectors.answer_shown(a) for a in wrong] == [AnswerShown("12", []), AnswerShown("012", [])]
    [stats] = progress_selectors.exercise_stats(viewer=teacher, cohort=cohort, workbook=Workbook.objects.get(slug=SLUG))
    assert stats.wrong_answers == [("12", 2)] and stats.solved == 1
