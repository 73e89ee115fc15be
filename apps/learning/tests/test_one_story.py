"""The real workbooks as learners read them through the API: two learners' numbers differ, and
new numbers are new (issue 31's figures, measured the way an outside tester measures them)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from apps.accounts.models import User
from apps.exercises import formats
from apps.exercises.content import cache, variants
from apps.exercises.models import Exercise
from apps.learning.tests.helpers import client_for

pytestmark = pytest.mark.django_db


def url(e: Exercise, tail: str = "") -> str:
    return f"/api/v1/workbooks/{e.workbook.slug}/exercises/{e.number}/{tail}"


def exercises(*, varying: bool | None = None, numeric_derive: bool = False) -> list[Exercise]:
    found = []
    for e in Exercise.objects.filter(is_active=True).select_related("workbook", "current_version").order_by("pk"):
        assert e.current_version is not None
        spec = cache.resolved(e.current_version).spec
        if numeric_derive and not (formats.get(e.format).one_number and e.kind == "derive"):
            continue
        if varying is not None and (spec.vary is not None) != varying:
            continue
        found.append(e)
    return found


def test_two_learners_see_different_numbers_on_most_numeric_derive_exercises(make_user: Callable[..., User]) -> None:
    numeric = exercises(numeric_derive=True)
    assert len(numeric) >= 150
    a, b = client_for(make_user()), client_for(make_user())
    same = [e.number for e in numeric if a.get(url(e)).json()["prompt_html"] == b.get(url(e)).json()["prompt_html"]]
    # The bar is 80% different; the content's collision rate makes ~90% the expectation.
    assert len(same) <= 0.2 * len(numeric), same


def test_new_numbers_are_never_the_old_ones(make_user: Callable[..., User]) -> None:
    varying = exercises(varying=True)
    picked = varying[:: max(1, len(varying) // 50)][:50]
    assert len(picked) == 50
    api = client_for(make_user())
    repeated = []
    for e in picked:
        before = api.get(url(e)).json()["prompt_html"]
        assert api.post(url(e, "reveal/")).status_code == 200
        after = api.post(url(e, "new-numbers/"))
        assert after.status_code == 200, after.json()
        if after.json()["prompt_html"] == before:
            repeated.append(f"{e.workbook.slug} {e.number}")
    assert repeated == []


def test_new_numbers_look_new_where_the_exercise_shows_only_part_of_its_scenario(db: None) -> None:
    """systems-serving 9.1 shows one drawn given of the capstone scenario (the active share) and
    leaves the others to later exercises: for about one learner in eighty the scenario's round 2
    moves only those, and 9.1 would show the same prompt again. New numbers pass over such rounds."""
    capstone = Exercise.objects.select_related("workbook", "current_version").get(
        workbook__slug="systems-serving", number="9.1"
    )
    assert capstone.current_version is not None
    spec = cache.resolved(capstone.current_version).spec
    assert spec.implicit

    def shown(user_id: int, at: int) -> object:
        drawn = variants.variant(spec, seed=f"learner:{user_id}", chapter=capstone.chapter_id, round=at)
        return [(k, v) for k, v in drawn.values if k not in spec.implicit], drawn.labels

    # Such a learner, by id (far above the sequence, so the other tests' learners keep their ids).
    found = next(i for i in range(9_000_000, 9_010_000) if shown(i, 1) == shown(i, 2))
    learner = User.objects.create_user(id=found, username=f"learner-{found}", password="a-strong-pass-123")
    api = client_for(learner)
    before = api.get(url(capstone)).json()["prompt_html"]
    assert api.post(url(capstone, "reveal/")).status_code == 200
    after = api.post(url(capstone, "new-numbers/"))
    assert after.status_code == 200, after.json()
    assert after.json()["prompt_html"] != before
