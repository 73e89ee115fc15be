"""End to end: answers submitted through the API on the real grading path are analysed on the
numbers the learner was given, with the known mistake the grader matched."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from apps.accounts import services as account_services
from apps.accounts.models import User
from apps.exercises.models import Exercise
from apps.exercises.tests.answers import correct_payload, variant_for
from apps.itemstats import selectors
from apps.progress.models import Cohort
from apps.progress.services import cohorts as cohort_services

pytestmark = pytest.mark.django_db


def test_graded_attempts_are_split_by_their_numbers(
    item: Exercise, cohort: Cohort, instructor: User, student: User
) -> None:
    cohort_services.cohort_join(user=student, code=cohort.join_code)
    variant = variant_for(item, student)
    assert variant is not None
    a = dict(variant.values)["a"]
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {account_services.auth_token_issue(user=student).key}")
    attempts = f"/api/v1/workbooks/{item.workbook.slug}/exercises/{item.number}/attempts/"
    wrong = api.post(attempts, {"answer": f"{a + 7} params"}, format="json")  # a + b: known mistake #0
    assert wrong.status_code == 201 and wrong.json()["verdict"] == "incorrect"
    right = api.post(attempts, correct_payload(item, student), format="json")
    assert right.status_code == 201 and right.json()["verdict"] == "correct"

    found = selectors.item_analysis(viewer=instructor, exercise=item, cohort_id=cohort.pk)
    (only,) = found.variants
    assert only.givens == {"a": a} and not only.seed
    assert (only.figures.learners, only.figures.solved, only.figures.first_try) == (1, 1, 0)
    assert only.figures.mean_attempts_to_solve == 2.0
    assert [(m.index, m.count) for m in only.mistakes] == [(0, 1)]
    assert [(m.index, m.count) for m in found.mistakes] == [(0, 1)]
