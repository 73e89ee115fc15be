"""Every reveal teaches: once a learner solves or gives up, the page and the API show the correct
options with each one's feedback and the explanation, and the correct order, lines or cells beside
the learner's own last answer; before that, none of it reaches them."""

from __future__ import annotations

import html
import re
from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

from apps.accounts.models import User
from apps.exercises import presentation
from apps.exercises.choices import AnswerFormat
from apps.exercises.content.checks import check_exercise
from apps.exercises.content.schema import ExerciseSpec, OrderStep
from apps.exercises.formats.order import misplaced
from apps.exercises.models import Exercise
from apps.exercises.tests.answers import correct_payload, resolved_for, wrong_payload

pytestmark = pytest.mark.django_db
WORKBOOKS = ("transformer-math", "lm-from-scratch", "systems-serving", "scaling-book", "roofline")


@pytest.fixture
def web(student: User) -> Client:
    client = Client()
    client.force_login(student)
    return client


def active(fmt: str) -> list[Exercise]:
    return list(
        Exercise.objects.filter(workbook__slug__in=WORKBOOKS, is_active=True, format=fmt)
        .select_related("workbook", "current_version")
        .order_by("workbook__position", "chapter__number", "position")
    )


def api_url(e: Exercise, action: str = "") -> str:
    return f"/api/v1/workbooks/{e.workbook.slug}/exercises/{e.number}/" + (f"{action}/" if action else "")


def page_url(e: Exercise) -> str:
    return f"/w/{e.workbook.slug}/{e.number}/"


def solution_region(page: str) -> str:
    found = re.search(r'<section id="solution".*?</section>', page, re.S)
    assert found is not None
    return found.group(0)


def text_of(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", fragment))


# ---- choice: every exercise of the five workbooks ------------------------------------------------


def test_every_choice_reveal_names_its_correct_options_with_feedback_and_an_explanation(
    api: APIClient, web: Client, student: User
) -> None:
    choices = active(AnswerFormat.CHOICE)
    assert len(choices) >= 38 and {e.workbook.slug for e in choices} == set(WORKBOOKS)
    for e in choices:
        where = (e.workbook.slug, e.number)
        before = api.get(api_url(e)).json()
        assert before["solution"] is None, where
        assert all(set(o) == {"id", "html"} for o in before["widget"]["options"]), where
        page = web.get(page_url(e)).text
        assert "solution-option" not in page and "option-feedback" not in page, where

        correct = set(correct_payload(e, student)["choices"])
        revealed = api.post(api_url(e, "reveal")).json()["solution"]
        assert {o["id"] for o in revealed["options"] if o["correct"]} == correct, where
        assert all(o["feedback_html"].strip() and o["html"].strip() for o in revealed["options"]), where
        assert revealed["explanation_html"].strip(), where
        assert revealed["yours"] is None, where
        # Options in the order this learner saw them in the widget.
        assert [o["id"] for o in revealed["options"]] == [o["id"] for o in before["widget"]["options"]], where

        region = solution_region(web.get(page_url(e)).text)
        assert region.count("✓ Correct") == len(correct), where
        assert region.count("✗ Not correct") == len(revealed["options"]) - len(correct), where
        for option in revealed["options"]:
            assert option["feedback_html"] in region, where
        assert revealed["explanation_html"] in region, where
        assert "your answer" not in region and "You gave up before choosing" in region, where


def test_a_solved_choice_marks_the_learners_own_choice_on_the_page_and_in_the_api(
    api: APIClient, web: Client, student: User
) -> None:
    e = active(AnswerFormat.CHOICE)[0]
    wrong = wrong_payload(e, student)
    first = api.post(api_url(e, "attempts"), wrong, format="json").json()
    assert first["solution"] is None  # wrong, and nothing revealed: no answers yet
    right = correct_payload(e, student)
    solved = api.post(api_url(e, "attempts"), right, format="json").json()
    assert solved["correct"] and solved["solution"]["yours"] == right["choices"]
    # A reload shows the same: the correct option, marked as the learner's, with its feedback.
    region = solution_region(web.get(page_url(e)).text)
    mine = re.findall(r'<li class="solution-option ([^"]*)">', region)
    assert sorted(mine).count("is-correct is-yours") == len(right["choices"])
    assert not any("is-wrong is-yours" in m for m in mine)
    assert api.get(api_url(e)).json()["solution"]["yours"] == right["choices"]
    # After solving, another (wrong) answer is marked as the latest, in its own response too.
    again = api.post(api_url(e, "attempts"), wrong, format="json").json()
    assert again["solution"]["yours"] == wrong["choices"]
    assert "is-wrong is-yours" in solution_region(web.get(page_url(e)).text)


def test_a_choice_without_an_explanation_fails_check_content() -> None:
    spec = {
        "number": "0.1",
        "id": "which",
        "title": "Which",
        "kind": "trace",
        "format": "choice",
        "prompt": "Which is the KV cache?",
        "options": [
            {"text": "The keys and values kept per token", "correct": True, "feedback": "Yes."},
            {"text": "The weights kept per layer", "feedback": "No."},
        ],
    }
    problems = check_exercise(ExerciseSpec.model_validate(spec))
    assert any(p.startswith("no explanation") for p in problems), problems
    explained = {**spec, "explanation": "Attention reads each earlier token's key and value."}
    assert not any(p.startswith("no explanation") for p in check_exercise(ExerciseSpec.model_validate(explained)))


# ---- order, lines and table: the correct arrangement beside the learner's -------------------------


def test_misplaced_steps_by_position_or_by_broken_constraint() -> None:
    steps = [OrderStep(id=k, text=k) for k in ("a", "b", "c", "d")]
    assert misplaced(steps, None, ["a", "b", "c", "d"]) == set()
    assert misplaced(steps, None, ["b", "a", "c", "d"]) == {"a", "b"}
    # With constraints only the pairs broken count: c may go anywhere after a.
    pairs = [("a", "b"), ("a", "c")]
    assert misplaced(steps, pairs, ["a", "c", "d", "b"]) == set()
    assert misplaced(steps, pairs, ["c", "a", "b", "d"]) == {"a", "c"}


def test_an_order_reveal_shows_the_correct_order_beside_the_learners_last(
    api: APIClient, web: Client, student: User
) -> None:
    e = next(x for x in active(AnswerFormat.ORDER) if not resolved_for(x).spec.constraints)
    spec = resolved_for(e, student).spec
    ids = presentation.step_ids(e.current_version, spec)  # type: ignore[arg-type]
    mine = [ids[s.id] for s in reversed(spec.steps or [])]
    assert api.post(api_url(e, "attempts"), {"order": mine}, format="json").json()["correct"] is False
    solution = api.post(api_url(e, "reveal")).json()["solution"]
    assert [s["id"] for s in solution["steps"]] == [ids[s.id] for s in spec.steps or []]
    assert [s["id"] for s in solution["yours"]] == mine
    n = len(mine)
    assert [s["in_place"] for s in solution["yours"]] == [i == n - 1 - i for i in range(n)]
    region = solution_region(web.get(page_url(e)).text)
    assert "The correct order" in region and "Your last order" in region
    assert region.count("✗ out of place") == sum(not s["in_place"] for s in solution["yours"])
    correct_list, yours_list = re.findall(r'<ol class="solution-steps[^"]*">(.*?)</ol>', region, re.S)
    assert text_of(solution["steps"][0]["html"]).strip() in text_of(correct_list)
    assert text_of(yours_list).index(text_of(solution["yours"][0]["html"]).strip()) < text_of(yours_list).index(
        text_of(solution["yours"][-1]["html"]).strip()
    )


def test_an_order_revealed_before_any_answer_says_there_is_none(api: APIClient, web: Client) -> None:
    e = active(AnswerFormat.ORDER)[0]
    solution = api.post(api_url(e, "reveal")).json()["solution"]
    assert solution["yours"] is None and len(solution["steps"]) >= 2
    assert "You gave up before ordering the steps." in solution_region(web.get(page_url(e)).text)


def test_a_lines_reveal_marks_the_buggy_lines_and_the_learners_pick(api: APIClient, web: Client, student: User) -> None:
    e = active(AnswerFormat.LINES)[0]
    spec = resolved_for(e, student).spec
    pick = wrong_payload(e, student)["lines"]
    # Without JavaScript: the plain forms post the pick, then give up.
    assert "✗ Not yet" in web.post(page_url(e), {"action": "submit", "lines": pick}).text
    assert web.post(page_url(e), {"action": "reveal"}).status_code == 302
    solution = api.get(api_url(e)).json()["solution"]
    assert solution["yours"] == pick
    assert [n["number"] for n in solution["lines"] if n["buggy"]] == spec.buggy_lines
    assert len(solution["lines"]) == len((spec.code.starter if spec.code else "").splitlines())
    region = solution_region(web.get(page_url(e)).text)
    rows = re.findall(r'<li class="([^"]*)"><span class="ln">(\d+)</span>', region)
    assert {int(n) for c, n in rows if "is-buggy" in c} == set(spec.buggy_lines or [])
    assert {int(n) for c, n in rows if "is-picked" in c} == set(pick)
    assert region.count('<span class="tag bug">bug</span>') == len(spec.buggy_lines or [])


def test_a_table_reveal_shows_each_answer_beside_the_learners_cell(api: APIClient, web: Client, student: User) -> None:
    e = active(AnswerFormat.TABLE)[0]
    right = correct_payload(e, student)["cells"]
    first = sorted(right)[0]
    cells = {**right, first: "1"}  # one cell wrong, the rest right
    assert api.post(api_url(e, "attempts"), {"cells": cells}, format="json").json()["correct"] is False
    solution = api.post(api_url(e, "reveal")).json()["solution"]
    assert solution["yours"] == {cid: {"value": cells[cid], "correct": cid != first} for cid in right}
    region = solution_region(web.get(page_url(e)).text)
    marks = re.findall(r'<span class="yours (ok|bad)">yours: ([^<]*?) [✓✗]</span>', region)
    assert sorted(marks) == sorted(("bad" if cid == first else "ok", html.escape(v)) for cid, v in cells.items())
    for answer in solution["cells"].values():
        assert f'<span class="answer-value">{html.escape(answer)}</span>' in region


def _solution_keys(data: Any) -> set[str]:
    keys: set[str] = set()
    if isinstance(data, dict):
        for key, value in data.items():
            keys.add(key)
            keys |= _solution_keys(value)
    elif isinstance(data, list):
        for item in data:
            keys |= _solution_keys(item)
    return keys


def test_nothing_of_the_solution_reaches_a_learner_before_solving_or_revealing(api: APIClient, web: Client) -> None:
    for fmt in (AnswerFormat.ORDER, AnswerFormat.LINES, AnswerFormat.TABLE):
        e = active(fmt)[0]
        body = api.get(api_url(e)).json()
        assert body["solution"] is None
        assert not {"correct", "feedback_html", "buggy", "in_place", "yours"} & _solution_keys(body["widget"])
        region = solution_region(web.get(page_url(e)).text)
        for marker in ("solution-steps", "solution-lines", "solution-grid", "Your last order", "answer-value"):
            assert marker not in region, (e.number, marker)
