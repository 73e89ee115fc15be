"""The gradebook CSV (``exports.gradebook_csv``), the file both the admin and the API download:
wide, one row per learner, blank where nothing was taken, overrides counted, formulas defused."""

from __future__ import annotations

import csv
import io

import pytest

from apps.accounts.models import User
from apps.assessments import exports, selectors, services
from apps.assessments.models import Kind
from apps.assessments.tests.conftest import MakeAssessment, right, varying, wrong
from apps.progress.models import Cohort

pytestmark = pytest.mark.django_db


def test_the_gradebook_csv_has_a_column_per_assessment_with_final_scores_and_a_total(
    make_assessment: MakeAssessment, cohort: Cohort, instructor: User, student: User, other_student: User
) -> None:
    pool = varying(n=3)
    homework = make_assessment(pools=[[pool[0]], [pool[1]]], points=2.5, title="+Homework, week 1")
    exam = make_assessment(pools=[[pool[2]]], kind=Kind.EXAM, title="@Exam")
    quiz = make_assessment(pools=[[pool[0]]], title="-Quiz")
    mine = services.instance_open(assessment=homework, user=student)
    one, two = mine.questions.all()
    services.answer_submit(user=student, item_id=one.pk, payload=right(one))
    services.answer_submit(user=student, item_id=two.pk, payload=wrong(two))
    services.instance_open(assessment=exam, user=other_student)  # opened, nothing right: 0, not blank
    paper = services.instance_for_grading(assessment=exam, user=student)
    services.score_override_set(instance=paper, score=7.25, reason="Paper exam", by=instructor)
    services.instance_for_grading(assessment=quiz, user=other_student)  # an empty instance: still blank

    text = exports.gradebook_csv(selectors.gradebook(cohort=cohort))
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["username", "email", "'+Homework, week 1 [5 pts]", "'@Exam [10 pts]", "'-Quiz [10 pts]",
                       "Total [25 pts]"]  # fmt: skip
    assert rows[1:] == [
        ["alice", student.email, "2.5", "7.25", "", "9.75"],
        ["bob", other_student.email, "", "0", "", "0"],
    ]
    assert exports.gradebook_filename(selectors.gradebook(cohort=cohort)) == f"cohort-{cohort.pk}-gradebook.csv"


def test_a_cohort_without_assessments_or_learners_still_has_its_header(instructor: User) -> None:
    from apps.progress.services import cohorts as cohort_services

    empty = cohort_services.cohort_create(instructor=instructor, name="Empty")
    assert exports.gradebook_csv(selectors.gradebook(cohort=empty)).splitlines() == ["username,email,Total [0 pts]"]
