"""An exercise is its content id, not its number: renumbering a chapter (an exercise inserted
before another, one moved, one deleted, two swapped) leaves every learner's attempts, progress,
points and versions with the question they answered, and URLs find exercises by their new numbers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from apps.accounts.models import User
from apps.exercises import selectors, services
from apps.exercises.content.schema import WorkbookSpec
from apps.exercises.models import Attempt, Exercise, ExerciseVersion, Workbook
from apps.exercises.tests import synthetic
from apps.exercises.tests.answers import correct_payload, wrong_payload
from apps.exercises.tests.factories import ExerciseFactory
from apps.learning import services as learning_services
from apps.progress.models import ExerciseProgress, LearnerStats, Score

pytestmark = pytest.mark.django_db

SLUG = synthetic.SLUG


def by_key() -> dict[str, Exercise]:
    rows = Exercise.objects.filter(workbook__slug=SLUG).select_related("workbook", "chapter", "current_version")
    return {e.key: e for e in rows}


def attempt(user: User, exercise: Exercise, *, correct: bool = True) -> None:
    payload = correct_payload(exercise) if correct else wrong_payload(exercise)
    learning_services.attempt_create(user=user, exercise=exercise, payload=payload)


def renumbered(spec: WorkbookSpec) -> WorkbookSpec:
    """Chapter 1: ``epsilon`` inserted as 1.2 before ``beta`` (now 1.4), ``delta`` moved up from 1.4
    to 1.3, ``gamma`` (was 1.3) deleted. Chapter 2: ``zeta`` and ``eta`` swap numbers."""
    n = synthetic.numeric
    return synthetic.workbook(
        [
            synthetic.chapter(1, [n("alpha", "1.1", a=2), n("epsilon", "1.2", a=17),
                                  n("delta", "1.3", a=5), n("beta", "1.4", a=3, difficulty=2)]),
            synthetic.chapter(2, [n("eta", "2.1", a=13, difficulty=2), n("zeta", "2.2", a=11)]),
        ],
        slug=spec.slug,
    )  # fmt: skip


def test_renumbering_keeps_attempts_progress_points_and_versions_with_their_questions(
    synthetic_workbook: Workbook, make_user: Callable[..., User]
) -> None:
    spec = synthetic.small_workbook()
    before = by_key()
    alice, bob = make_user(), make_user()
    for key in ("alpha", "beta", "gamma", "delta"):
        attempt(alice, before[key], correct=False)
        attempt(alice, before[key])
    attempt(bob, before["beta"], correct=False)
    attempt(bob, before["zeta"])
    attempt(bob, before["eta"], correct=False)

    def snapshot() -> dict[str, list[tuple[Any, ...]]]:
        """Everything learners own, by exercise key (never by number)."""
        keys = {e.pk: e.key for e in Exercise.objects.filter(workbook__slug=SLUG)}
        return {
            "attempts": sorted((a.user_id, keys[a.exercise_id], a.version_id, a.verdict) for a in Attempt.objects.all()
                               if a.exercise_id in keys),
            "progress": sorted((p.user_id, keys[p.exercise_id], p.attempts, p.solved_at is not None, p.points)
                               for p in ExerciseProgress.objects.filter(exercise__workbook__slug=SLUG)),
            "versions": sorted((keys[v.exercise_id], v.pk, v.version)
                               for v in ExerciseVersion.objects.filter(exercise__workbook__slug=SLUG)),
            "scores": sorted((s.user_id, s.board, s.points) for s in Score.objects.filter(user__in=[alice, bob])),
            "stats": sorted((s.user_id, s.points, s.solves) for s in LearnerStats.objects.filter(user__in=[alice, bob])),
        }  # fmt: skip

    owned = snapshot()
    # Points by difficulty (10 each): alpha 1, beta 2, gamma 3, delta 1 for alice; zeta 1 for bob.
    assert ("all", 70) in {(board, pts) for user, board, pts in owned["scores"] if user == alice.pk}
    assert ("all", 10) in {(board, pts) for user, board, pts in owned["scores"] if user == bob.pk}

    report = services.workbook_sync(spec=renumbered(spec))

    assert report.created == ["1.2"]  # epsilon
    assert report.retired == ["1.3"]  # gamma's last number
    assert report.new_versions == []  # a number decides no verdict
    assert sorted(report.renumbered) == ["1.2 → 1.4", "1.4 → 1.3", "2.1 → 2.2", "2.2 → 2.1"]
    after = by_key()
    assert {k: (e.number, e.is_active) for k, e in after.items()} == {
        "alpha": ("1.1", True),
        "epsilon": ("1.2", True),
        "delta": ("1.3", True),
        "beta": ("1.4", True),
        "gamma": ("1.3", False),  # retired, sharing its old number with the active delta
        "zeta": ("2.2", True),
        "eta": ("2.1", True),
    }
    assert {k: e.pk for k, e in after.items() if k != "epsilon"} == {k: e.pk for k, e in before.items()}
    assert {k: e.current_version_id for k, e in after.items() if k != "epsilon"} == {
        k: e.current_version_id for k, e in before.items()
    }
    # Nothing learners own moved: same attempts, progress, points, versions, per question.
    new = snapshot()
    epsilon_version = ("epsilon", after["epsilon"].current_version_id, 1)
    assert new == {**owned, "versions": sorted([*owned["versions"], epsilon_version])}
    assert not Attempt.objects.filter(exercise=after["gamma"]).exclude(user=alice).exists()
    assert Attempt.objects.filter(exercise=after["gamma"], user=alice).count() == 2

    # The page and the API find exercises by their new numbers, among active ones only.
    assert selectors.exercise_get(workbook_slug=SLUG, number="1.3").key == "delta"
    assert selectors.exercise_get(workbook_slug=SLUG, number="1.4").key == "beta"
    api = APIClient()
    api.force_authenticate(alice)
    body = api.get(reverse("api:exercise-detail", kwargs={"slug": SLUG, "number": "1.4"})).json()
    assert (body["title"], body["number"], body["state"]["solved"], body["state"]["attempts"]) == (
        "Exercise beta", "1.4", True, 2,
    )  # fmt: skip
    body = api.get(reverse("api:exercise-detail", kwargs={"slug": SLUG, "number": "1.2"})).json()
    assert (body["title"], body["state"]["solved"], body["state"]["attempts"]) == ("Exercise epsilon", False, 0)
    assert (body["previous"], body["next"]) == ("1.1", "1.3")
    web = Client()
    web.force_login(bob)
    page = web.get(f"/w/{SLUG}/2.2/")
    assert page.status_code == 200 and "Exercise zeta" in page.text
    # A solve under the new number lands on the question bob answered under the old one.
    attempt(bob, after["eta"])  # 2.1 now; bob's wrong attempt was on it as 2.2
    progress = ExerciseProgress.objects.get(user=bob, exercise=after["eta"])
    assert (progress.attempts, progress.solved_at is not None) == (2, True)


def test_a_retired_exercise_comes_back_only_by_its_own_id(
    synthetic_workbook: Workbook, make_user: Callable[..., User]
) -> None:
    spec = synthetic.small_workbook()
    gamma = by_key()["gamma"]
    learner = make_user()
    attempt(learner, gamma)
    services.workbook_sync(spec=renumbered(spec))
    # A new exercise takes gamma's old number: it is a different question, with no history.
    n = synthetic.numeric
    taken = synthetic.workbook(
        [synthetic.chapter(1, [n("alpha", "1.1"), n("omega", "1.3", a=19)]), synthetic.chapter(2, [n("eta", "2.1")])],
        slug=SLUG,
    )
    report = services.workbook_sync(spec=taken)
    assert report.created == ["1.3"]
    omega = by_key()["omega"]
    assert omega.pk != gamma.pk and not ExerciseProgress.objects.filter(exercise=omega).exists()
    assert selectors.exercise_get(workbook_slug=SLUG, number="1.3").key == "omega"
    # gamma returns (as 1.5) with its attempts and progress; nothing else is attached to it.
    back = synthetic.workbook(
        [synthetic.chapter(1, [n("alpha", "1.1"), n("omega", "1.3", a=19), n("gamma", "1.5", a=4, difficulty=3)])],
        slug=SLUG,
    )
    services.workbook_sync(spec=back)
    gamma_now = by_key()["gamma"]
    assert (gamma_now.pk, gamma_now.number, gamma_now.is_active) == (gamma.pk, "1.5", True)
    assert ExerciseProgress.objects.get(user=learner, exercise=gamma_now).solved_at is not None
    assert Attempt.objects.filter(exercise=gamma_now).count() == 1


def test_a_standalone_upsert_refuses_a_number_another_active_exercise_shows() -> None:
    held = ExerciseFactory.create(number="1.1")
    intruder = synthetic.numeric("intruder", "1.1")
    with pytest.raises(services.NumberTaken, match="renumber it first"):
        services.exercise_upsert(workbook=held.workbook, chapter=held.chapter, spec=intruder, position=9)
    assert not Exercise.objects.filter(key="intruder").exists()
    # A retired exercise's number is free to take.
    Exercise.objects.filter(pk=held.pk).update(is_active=False)
    taken, outcome = services.exercise_upsert(workbook=held.workbook, chapter=held.chapter, spec=intruder, position=9)
    assert (outcome, taken.number, taken.key) == ("created", "1.1", "intruder")
