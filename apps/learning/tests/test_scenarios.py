"""A chain of exercises on one learner's numbers, through the API and the page: references that
show an earlier answer only once it is finished, and new numbers that move the whole scenario."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from django.test import Client
from rest_framework.test import APIClient

from apps.accounts.models import User
from apps.exercises import services as exercise_services
from apps.exercises.content import cache
from apps.exercises.content.loader import load_workbook
from apps.exercises.models import Exercise
from apps.exercises.tests import scenario_content
from apps.learning import selectors as learning_selectors
from apps.learning.tests.helpers import client_for
from apps.progress.models import ExerciseProgress

pytestmark = pytest.mark.django_db

SLUG = scenario_content.SLUG


@pytest.fixture
def fleet_book(tmp_path: Path) -> None:
    exercise_services.workbook_sync(spec=load_workbook(scenario_content.write(tmp_path), compute_expected=False))


def url(number: str, tail: str = "") -> str:
    return f"/api/v1/workbooks/{SLUG}/exercises/{number}/{tail}"


def traffic(prompt_html: str) -> tuple[str, str]:
    found = re.search(r"([\d,]+) requests per second of ([\d,]+)", prompt_html)
    assert found, prompt_html
    return found.group(1), found.group(2)


def answer_of(api: APIClient, number: str) -> str:
    body = api.post(url(number, "reveal/")).json()
    return str(body["solution"]["answer"]["text"])


def test_a_reference_shows_the_earlier_answer_only_once_that_exercise_is_finished(
    fleet_book: None, make_user: Callable[..., User]
) -> None:
    api = client_for(make_user())
    bill = api.get(url("1.2")).json()
    assert bill["numbers"]["scenario"] == "fleet" and bill["numbers"]["shared_with"] == ["1.1", "1.3"]
    assert "solve it first" in bill["prompt_html"] and " GPUs," not in bill["prompt_html"]
    # The chain shows one set of numbers: 1.3 states the traffic 1.1 states.
    assert traffic(api.get(url("1.3")).json()["prompt_html"]) == traffic(api.get(url("1.1")).json()["prompt_html"])
    gpus = float(answer_of(api, "1.1"))
    bill = api.get(url("1.2")).json()
    assert f"the fleet of 1.1, {gpus:,.0f} GPUs," in bill["prompt_html"] and "solve it first" not in bill["prompt_html"]
    assert bill["numbers"]["finished_on_other_numbers"] == []


def test_new_numbers_move_the_unfinished_exercises_of_the_scenario_and_keep_finished_ones(
    fleet_book: None, make_user: Callable[..., User]
) -> None:
    user = make_user()
    api = client_for(user)
    first_page = api.get(url("1.1")).json()["prompt_html"]
    first = traffic(first_page)
    tokens = answer_of(api, "1.3")  # 1.3 finished (revealed) on round 1
    assert api.post(url("1.3", "attempts/"), {"answer": tokens}, format="json").json()["correct"] is True
    answer_of(api, "1.1")
    moved = api.post(url("1.1", "new-numbers/")).json()
    # The next round of the scenario, or a later one where a round changes nothing 1.1 shows.
    r2 = moved["numbers"]["round"]
    assert r2 >= 2 and moved["numbers"]["moved"] == ["1.2"]
    assert moved["prompt_html"] != first_page  # new means new
    assert api.get(url("1.2")).json()["numbers"]["round"] == r2  # 1.2 moved with it, untouched as it was
    kept = api.get(url("1.3")).json()
    assert traffic(kept["prompt_html"]) == first and kept["state"]["solved"] is True  # finished: kept
    rounds = dict(ExerciseProgress.objects.filter(user=user).values_list("exercise__number", "round"))
    assert rounds == {"1.1": r2, "1.2": r2, "1.3": 1}

    # 1.3 on new numbers: past any round of the scenario, so never numbers already seen.
    again = api.post(url("1.3", "new-numbers/")).json()
    assert again["numbers"]["round"] > r2 and again["numbers"]["moved"] == ["1.1", "1.2"]
    third = traffic(again["prompt_html"])
    assert again["prompt_html"] != kept["prompt_html"]  # 1.3's numbers are new to it
    assert traffic(api.get(url("1.1")).json()["prompt_html"]) == third


def test_an_answer_from_other_numbers_is_marked_as_such(fleet_book: None, make_user: Callable[..., User]) -> None:
    user = make_user()
    api = client_for(user)
    answer_of(api, "1.1")
    answer_of(api, "1.2")
    api.post(url("1.2", "new-numbers/"))  # 1.2 moves on; 1.1, finished on round 1, stays
    bill = api.get(url("1.2")).json()
    moved_to = bill["numbers"]["round"]  # 2, or later where round 2 changes nothing 1.2 shows
    assert moved_to >= 2 and bill["numbers"]["finished_on_other_numbers"] == ["1.1"]
    shown = re.search(r"the fleet of 1.1, ([\d,]+) GPUs,", bill["prompt_html"])
    assert shown, bill["prompt_html"]
    # The number is what 1.1 gives on 1.2's numbers (round 2), not 1.1's own round-1 answer.
    size = Exercise.objects.get(workbook__slug=SLUG, number="1.1")
    assert size.current_version is not None
    on_round_2 = learning_selectors.learner_variant(
        user_id=user.pk, exercise=size, version=size.current_version, round=moved_to
    )
    target = cache.resolved(size.current_version, on_round_2).numeric
    assert target is not None and shown.group(1) == f"{target.value:,.0f}"
    page = Client()
    page.force_login(user)
    html = page.get(f"/w/{SLUG}/1.2/").content.decode()
    assert "You finished 1.1 on other numbers; what it gives on these numbers is shown here." in html


def test_the_page_says_which_exercises_moved_and_ignores_anything_else(
    fleet_book: None, make_user: Callable[..., User]
) -> None:
    user = make_user()
    page = Client()
    page.force_login(user)
    api = client_for(user)
    answer_of(api, "1.1")
    response = page.post(f"/w/{SLUG}/1.1/", {"action": "new_numbers"})
    assert response.status_code == 302 and response["Location"].endswith("?moved=1.2,1.3")
    html = page.get(response["Location"].replace("1.2,1.3", "1.2,1.3,<b>x</b>,1.4")).content.decode()
    assert "with it, 1.2, 1.3 (not finished yet)" in html
    assert "<b>x</b>" not in html and "1.4 (not" not in html
    assert "Same numbers as 1.2, 1.3" in html
