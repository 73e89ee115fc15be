"""Every learner their own numbers: through the API, as learners and instructors use it."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from rest_framework.test import APIClient

from apps.accounts.models import Role, User
from apps.exercises.content import cache
from apps.exercises.models import Exercise
from apps.learning.tests.helpers import client_for
from apps.progress import services as progress_services
from apps.progress.models import Cohort

pytestmark = pytest.mark.django_db

SLUG, NUMBER = "transformer-math", "0.1"  # GPT-2 parameters: numbers drawn from the GPT-2 table
URL = f"/api/v1/workbooks/{SLUG}/exercises/{NUMBER}/"


def seed_prompt() -> str:
    exercise = Exercise.objects.get(workbook__slug=SLUG, number=NUMBER)
    assert exercise.current_version is not None
    return cache.rendered(exercise.current_version).prompt_html


def two_learners_apart(make_user: Callable[..., User]) -> tuple[APIClient, APIClient, str, str]:
    """Two learners whose numbers differ (a table of four models: some pairs share one)."""
    first = client_for(make_user())
    prompt = first.get(URL).json()["prompt_html"]
    for _ in range(20):
        second = client_for(make_user())
        other = second.get(URL).json()["prompt_html"]
        if other != prompt:
            return first, second, prompt, other
    raise AssertionError("twenty learners all drew the first learner's numbers")


def test_two_learners_see_different_numbers_and_each_answer_is_only_right_for_its_learner(
    make_user: Callable[..., User],
) -> None:
    a, b, prompt_a, prompt_b = two_learners_apart(make_user)
    assert prompt_a != prompt_b
    assert a.get(URL).json()["numbers"] == {
        "varies": True,
        "round": 1,
        "new_numbers_allowed": False,
        "scenario": None,
        "shared_with": [],
        "finished_on_other_numbers": [],
        "moved": [],
    }
    assert a.get(URL).json()["prompt_html"] == prompt_a  # stable: the same numbers on every visit
    revealed = a.post(URL + "reveal/").json()["solution"]["answer"]["text"]
    mine = a.post(URL + "attempts/", {"answer": revealed}, format="json").json()
    assert mine["correct"] is True, mine
    theirs = b.post(URL + "attempts/", {"answer": revealed}, format="json").json()
    assert theirs["correct"] is False, theirs
    # B's own answer is a different number, and it is right for B.
    b_answer = b.post(URL + "reveal/").json()["solution"]["answer"]["text"]
    assert b_answer != revealed
    assert b.post(URL + "attempts/", {"answer": b_answer}, format="json").json()["correct"] is True


def test_the_attempt_records_the_numbers_it_answered(make_user: Callable[..., User]) -> None:
    user = make_user()
    api = client_for(user)
    api.post(URL + "attempts/", {"answer": "1 M params"}, format="json")
    attempt = user.attempts.get()
    assert attempt.round == 1
    recorded = attempt.details["variant"]
    assert recorded["round"] == 1 and set(recorded["givens"]) == {"d", "L", "V", "T"}
    assert recorded["labels"] == {}  # 0.1 names no model: its vocabulary and context come unlabelled
    assert f"{recorded['givens']['d']:,}" in api.get(URL).json()["prompt_html"]


def test_new_numbers_after_revealing_start_the_exercise_over_on_the_next_round(make_user: Callable[..., User]) -> None:
    api = client_for(make_user())
    refused = api.post(URL + "new-numbers/")
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "answer_not_visible"
    first = api.post(URL + "reveal/").json()["solution"]["answer"]["text"]
    assert api.get(URL).json()["numbers"]["new_numbers_allowed"] is True
    page = api.post(URL + "new-numbers/").json()
    assert page["numbers"]["round"] == 2
    assert page["solution"] is None and page["state"]["revealed"] is False and page["state"]["solved"] is False
    # Whatever the new numbers are, the answer is graded against them: reveal again and solve.
    second = api.post(URL + "reveal/").json()["solution"]["answer"]["text"]
    solved = api.post(URL + "attempts/", {"answer": second}, format="json").json()
    assert solved["correct"] is True and solved["state"]["solved"] is True
    rounds = set()
    for _ in range(6):  # four models in the table: a few rounds bring a different one
        api.post(URL + "new-numbers/")
        rounds.add(api.post(URL + "reveal/").json()["solution"]["answer"]["text"])
    assert rounds - {first}


def test_an_exercise_with_fixed_numbers_has_no_new_numbers(api: APIClient) -> None:
    fixed = next(
        e
        for e in Exercise.objects.filter(workbook__slug=SLUG, is_active=True).select_related("current_version")
        if e.current_version is not None and cache.resolved(e.current_version).spec.vary is None
    )
    url = f"/api/v1/workbooks/{SLUG}/exercises/{fixed.number}/"
    assert api.get(url).json()["numbers"] == {
        "varies": False,
        "round": 0,
        "new_numbers_allowed": False,
        "scenario": None,
        "shared_with": [],
        "finished_on_other_numbers": [],
        "moved": [],
    }
    api.post(url + "reveal/")
    refused = api.post(url + "new-numbers/")
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "numbers_fixed"


def test_a_cohort_that_shares_numbers_sees_the_seeds_then_shared_rounds(make_user: Callable[..., User]) -> None:
    teacher = client_for(make_user(role=Role.INSTRUCTOR))
    created = teacher.post(
        "/api/v1/cohorts/",
        {"name": "Lecture", "numbers": "shared", "workbooks": [{"workbook": SLUG}]},
        format="json",
    )
    assert created.status_code == 201 and created.json()["numbers"] == "shared", created.content
    learners = [make_user() for _ in range(3)]
    clients = [client_for(u) for u in learners]
    for c in clients:
        assert c.post("/api/v1/cohorts/join/", {"code": created.json()["join_code"]}, format="json").status_code in (
            200,
            201,
        )
    pages = [c.get(URL).json() for c in clients]
    assert {p["prompt_html"] for p in pages} == {seed_prompt()}  # the book's own numbers, for the lecture
    assert pages[0]["numbers"]["round"] == 0
    for c in clients:
        c.post(URL + "reveal/")
        c.post(URL + "new-numbers/")
    assert len({c.get(URL).json()["prompt_html"] for c in clients}) == 1  # the class's shared round 1
    # The instructor switches to per-learner numbers (the admin's cohort form): each their own again.
    cohort = Cohort.objects.get(pk=created.json()["id"])
    progress_services.cohort_update(
        cohort=cohort, name=cohort.name, time_zone=cohort.time_zone, numbers=Cohort.Numbers.PER_LEARNER
    )
    assert all(c.get(URL).json()["numbers"]["round"] == 2 for c in clients)
    bad = teacher.post("/api/v1/cohorts/", {"name": "X", "numbers": "every-other"}, format="json")
    assert bad.status_code == 400


def test_export_content_gives_a_learners_round_and_round_0_is_the_seeds(make_user: Callable[..., User]) -> None:
    import io
    import json

    from django.core.management import call_command
    from django.core.management.base import CommandError

    user = make_user()
    api = client_for(user)
    revealed = api.post(URL + "reveal/").json()["solution"]["answer"]["text"]

    def export(**options: object) -> dict[str, dict[str, object]]:
        out = io.StringIO()
        call_command("export_content", workbook=SLUG, stdout=out, **options)
        return {e["number"]: e for e in json.loads(out.getvalue())["exercises"]}

    seed, round_zero, mine = export(), export(round=0, learner=user.pk), export(round=1, learner=user.pk)
    assert round_zero["0.1"]["answer_text"] == seed["0.1"]["answer_text"] == "124.3 M params"
    assert round_zero["0.1"]["round"] == 0 and "round" not in seed["0.1"]
    assert mine["0.1"]["answer_text"] == revealed and mine["0.1"]["round"] == 1
    attempt_givens = api.post(URL + "attempts/", {"answer": revealed}, format="json").json()
    assert attempt_givens["correct"] is True
    assert mine["0.1"]["givens"] == user.attempts.get().details["variant"]["givens"]
    # Fixed exercises export the same whatever the round.
    fixed = [n for n, e in seed.items() if "round" not in mine[n]]
    assert fixed and all(mine[n] == seed[n] for n in fixed)
    api.post(URL + "new-numbers/")
    assert (
        export(round=2, learner=user.pk)["0.1"]["answer_text"]
        == api.post(URL + "reveal/").json()["solution"]["answer"]["text"]
    )
    with pytest.raises(CommandError, match="name them with --learner"):
        export(round=2)
    with pytest.raises(CommandError, match="No user"):
        export(round=1, learner=10**9)


def test_instructors_see_wrong_answers_pooled_by_their_relation_to_each_learners_own(
    make_user: Callable[..., User],
) -> None:
    from apps.exercises.grading.numeric import format_in
    from apps.exercises.tests.answers import resolved_for

    teacher = client_for(make_user(role=Role.INSTRUCTOR))
    created = teacher.post("/api/v1/cohorts/", {"name": "Pooled", "workbooks": [{"workbook": SLUG}]}, format="json")
    code = created.json()["join_code"]
    exercise = Exercise.objects.select_related("current_version", "workbook").get(workbook__slug=SLUG, number=NUMBER)
    typed = set()
    for i in range(4):
        learner = make_user()
        api = client_for(learner)
        api.post("/api/v1/cohorts/join/", {"code": code}, format="json")
        target = resolved_for(exercise, learner).numeric
        assert target is not None
        doubled = format_in(target.value * 2, target.input_unit)  # K and V counted twice, say
        typed.add(doubled)
        assert api.post(URL + "attempts/", {"answer": doubled}, format="json").json()["correct"] is False
        if i == 0:  # the known mistake: the position embedding left out
            mistake = target.mistakes[0]
            api.post(URL + "attempts/", {"answer": format_in(mistake.value, target.input_unit)}, format="json")
    stats = teacher.get(f"/api/v1/cohorts/{created.json()['id']}/exercises/?workbook={SLUG}").json()
    [row] = [s for s in stats if s["number"] == NUMBER]
    wrong = {w["answer"]: w["count"] for w in row["wrong_answers"]}
    assert wrong["×2"] == 4, wrong  # four learners, up to four different numbers, one slip
    assert wrong["mistake: That leaves out the learned position embedding (T·d)"] == 1, wrong
