"""Spaced review on fresh numbers, scheduled by FSRS: through the API, with a frozen clock."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from apps.accounts.models import User
from apps.exercises.models import Exercise
from apps.exercises.tests.answers import correct_payload, wrong_payload
from apps.learning.tests.helpers import client_for
from apps.progress.models import LearnerStats, ReviewCard
from apps.progress.tests.conftest import Clock

pytestmark = pytest.mark.django_db

SLUG, NUMBER = "transformer-math", "0.1"
URL = f"/api/v1/workbooks/{SLUG}/exercises/{NUMBER}/"
T0 = datetime.fromisoformat("2026-03-02T09:00:00+00:00")


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    """The platform's "now", frozen at T0 and moved by the test."""
    c = Clock()
    c.set(T0.isoformat())
    monkeypatch.setattr(timezone, "now", lambda: c.at)
    return c


def exercise() -> Exercise:
    return Exercise.objects.select_related("current_version", "workbook", "chapter").get(
        workbook__slug=SLUG, number=NUMBER
    )


def answer(api: APIClient, user: User, *, right: bool) -> dict[str, object]:
    payload = correct_payload(exercise(), user) if right else wrong_payload(exercise(), user)
    response = api.post(URL + "attempts/", payload, format="json")
    assert response.status_code == 201, response.content
    return dict(response.json())


def card_of(user: User) -> ReviewCard:
    return ReviewCard.objects.get(user=user, exercise=exercise())


def test_a_first_try_solve_makes_a_card_that_comes_due_and_is_reviewed_on_fresh_numbers(
    make_user: Callable[..., User], clock: Clock
) -> None:
    user = make_user()
    api = client_for(user)
    round_one = api.get(URL).json()["prompt_html"]
    assert answer(api, user, right=True)["correct"] is True
    card = card_of(user)
    assert card.due_at == T0 + timedelta(days=2) and card.reviews == 0  # a first Good: two days
    assert api.get("/api/v1/reviews/").json()["count"] == 0

    clock.at += timedelta(days=2)
    api = client_for(user)  # a day idle: its API token has expired; sign in again
    queue = api.get("/api/v1/reviews/").json()
    assert queue["count"] == 1
    [due] = queue["exercises"]
    assert (due["workbook"], due["number"], due["reviewing"]) == (SLUG, NUMBER, False)
    assert 0.85 < due["retrievability"] < 0.95  # FSRS schedules at 90% retention

    page = api.post(due["start_url"]).json()
    assert page["numbers"]["round"] == 2 and page["solution"] is None and page["state"]["solved"] is False
    assert api.post(due["start_url"]).json()["numbers"]["round"] == 2  # starting twice changes nothing
    assert api.get("/api/v1/reviews/").json()["exercises"][0]["reviewing"] is True
    # Round 2 is drawn afresh: over several learners it differs from round 1 (GPT-2 has four sizes).
    assert page["prompt_html"] != round_one or card_of(user).reviewing_since is not None

    streak_before = LearnerStats.objects.get(pk=user.pk).solves
    assert answer(api, user, right=True)["correct"] is True
    card = card_of(user)
    assert card.reviewing_since is None and card.reviews == 1 and card.lapses == 0
    assert (card.due_at - clock.at).days > 2  # Good again: a wider gap
    assert LearnerStats.objects.get(pk=user.pk).solves == streak_before + 1  # a review solve counts for the day
    assert api.get("/api/v1/reviews/").json()["count"] == 0


def test_a_wrong_first_answer_rates_the_review_again_and_brings_it_back_soon(
    make_user: Callable[..., User], clock: Clock
) -> None:
    user = make_user()
    api = client_for(user)
    answer(api, user, right=True)
    clock.at += timedelta(days=2)
    api = client_for(user)  # a day idle: its API token has expired; sign in again
    start = api.get("/api/v1/reviews/").json()["exercises"][0]["start_url"]
    api.post(start)
    assert answer(api, user, right=False)["correct"] is False
    card = card_of(user)
    assert card.reviewing_since is None and card.lapses == 1
    assert (card.due_at - clock.at) <= timedelta(days=1)
    # Solving it afterwards completes the exercise but does not rate the card twice.
    assert answer(api, user, right=True)["state"]["solved"] is True  # type: ignore[index]
    assert card_of(user).reviews == 1


def test_hints_make_a_review_hard_and_revealing_makes_it_again(make_user: Callable[..., User], clock: Clock) -> None:
    hinted, revealed, clean = make_user(), make_user(), make_user()
    for user in (hinted, revealed, clean):
        answer(client_for(user), user, right=True)
    clock.at += timedelta(days=2)
    for user in (hinted, revealed, clean):
        api = client_for(user)
        api.post(api.get("/api/v1/reviews/").json()["exercises"][0]["start_url"])
    client_for(hinted).post(URL + "hints/")
    answer(client_for(hinted), hinted, right=True)
    answer(client_for(clean), clean, right=True)
    client_for(revealed).post(URL + "reveal/")
    gaps = {name: card_of(u).due_at - clock.at for name, u in [("hard", hinted), ("good", clean), ("again", revealed)]}
    assert gaps["again"] < gaps["hard"] < gaps["good"], gaps
    assert card_of(revealed).lapses == 1 and card_of(hinted).lapses == 0


def test_first_solves_are_rated_by_how_they_went(make_user: Callable[..., User], clock: Clock) -> None:
    first_try, after_wrong, after_reveal = make_user(), make_user(), make_user()
    answer(client_for(first_try), first_try, right=True)
    answer(client_for(after_wrong), after_wrong, right=False)
    answer(client_for(after_wrong), after_wrong, right=True)
    client_for(after_reveal).post(URL + "reveal/")
    answer(client_for(after_reveal), after_reveal, right=True)
    due = {u.username: card_of(u).due_at for u in (first_try, after_wrong, after_reveal)}
    assert due[after_reveal.username] < due[first_try.username]
    assert due[after_wrong.username] <= due[first_try.username]


def test_reviews_are_private_and_not_started_before_they_are_due(make_user: Callable[..., User], clock: Clock) -> None:
    owner, stranger = make_user(), make_user()
    answer(client_for(owner), owner, right=True)
    card = card_of(owner)
    early = client_for(owner).post(f"/api/v1/reviews/{card.pk}/start/")
    assert early.status_code == 409 and early.json()["error"]["code"] == "not_due"
    clock.at += timedelta(days=3)
    assert client_for(stranger).post(f"/api/v1/reviews/{card.pk}/start/").status_code == 404
    assert client_for(stranger).get("/api/v1/reviews/").json()["count"] == 0
    assert APIClient().get("/api/v1/reviews/").status_code == 401


def test_due_today_means_before_the_end_of_the_learners_own_day(make_user: Callable[..., User], clock: Clock) -> None:
    user = make_user()
    user.time_zone = "Pacific/Auckland"  # UTC+13 in March: the learner's day ends at 11:00 UTC
    user.save()
    api = client_for(user)
    answer(api, user, right=True)  # 09:00 UTC: due 2026-03-04 09:00 UTC = 22:00 on the 4th in Auckland
    clock.at = datetime.fromisoformat("2026-03-03T10:59:00+00:00")  # 23:59 on the 3rd in Auckland
    api = client_for(user)  # a day idle: its API token has expired; sign in again
    assert api.get("/api/v1/reviews/").json()["count"] == 0
    clock.at = datetime.fromisoformat("2026-03-03T11:00:00+00:00")  # 00:00 on the 4th: due today
    assert api.get("/api/v1/reviews/").json()["count"] == 1


def test_code_exercises_have_no_review_cards(make_user: Callable[..., User], clock: Clock) -> None:
    from apps.progress.models import ExerciseProgress
    from apps.progress.services import review_solved

    user = make_user()
    build = Exercise.objects.filter(workbook__slug=SLUG, format="code").first()
    assert build is not None
    progress = ExerciseProgress.objects.create(user=user, exercise=build, workbook=build.workbook, solved_at=T0)
    assert review_solved(exercise=build, progress=progress, at=T0) is None
    assert not ReviewCard.objects.filter(user=user).exists()


def test_the_review_page_home_count_and_retention_without_javascript(
    make_user: Callable[..., User], clock: Clock
) -> None:
    from django.test import Client

    user = make_user()
    api = client_for(user)
    answer(api, user, right=True)
    web = Client()
    web.force_login(user)
    assert "due today" not in web.get("/").text
    assert "Nothing is due today" in web.get("/reviews/").text
    assert "ch. 0: " in web.get("/progress/").text  # retention by chapter, next to mastery

    clock.at += timedelta(days=2)
    assert "1 review due today" in web.get("/").text
    page = web.get("/reviews/").text
    assert "0.1" in page and "Review on new numbers" in page
    card = card_of(user)
    started = web.post("/reviews/", {"card": card.pk})
    assert started.status_code == 302 and started["Location"] == f"/w/{SLUG}/{NUMBER}/"
    exercise_page = web.get(started["Location"]).text
    assert "Review</strong> on new numbers" in exercise_page and "Derivation</h2>" not in exercise_page
    assert web.post("/reviews/", {"card": "nope"}).status_code == 302  # a bad id is a message, not a 500
    stranger = Client()
    stranger.force_login(make_user())
    assert stranger.post("/reviews/", {"card": card.pk}).status_code == 302
    assert card_of(user).reviews == 0


def test_try_new_numbers_on_the_page_after_revealing(make_user: Callable[..., User], clock: Clock) -> None:
    from django.test import Client

    web = Client()
    web.force_login(make_user())
    path = f"/w/{SLUG}/{NUMBER}/"
    assert "Try new numbers" not in web.get(path).text
    web.post(path, {"action": "reveal"})
    assert "Try new numbers" in web.get(path).text
    assert web.post(path, {"action": "new_numbers"}).status_code == 302
    page = web.get(path).text
    assert "Try new numbers" not in page and "Give up and show the derivation" in page
