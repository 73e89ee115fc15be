"""The assessment services on real content and real PostgreSQL: pools drawn once per learner,
numbers never seen in practice, credit over time and per attempt, time limits enforced by the
server, overrides, score overrides with their history, and practice paused during an exam."""

from __future__ import annotations

from datetime import timedelta

import pytest

from apps.accounts.models import User
from apps.assessments import selectors, services
from apps.assessments.models import InstanceQuestion, Kind, ScoreOverride, Verdicts
from apps.assessments.tests.conftest import Clock, MakeAssessment, right, varying, wrong
from apps.core.exceptions import ApplicationError
from apps.exercises.content import cache, variants
from apps.exercises.content.schema import ExerciseSpec
from apps.exercises.tests.answers import correct_payload
from apps.learning import services as learning_services
from apps.progress.models import ExerciseProgress, LearnerStats

pytestmark = pytest.mark.django_db


def test_a_pool_is_drawn_once_per_learner_and_the_numbers_are_never_practice_numbers(
    make_assessment: MakeAssessment, student: User, other_student: User
) -> None:
    pool = varying(n=4)
    exam = make_assessment(kind=Kind.EXAM, pools=[pool], choose=[2])
    # The learner has practised every exercise of the pool on the book's numbers and on round 1.
    for exercise in pool:
        learning_services.attempt_create(user=student, exercise=exercise, payload=correct_payload(exercise, student))
    first = services.instance_open(assessment=exam, user=student)
    again = services.instance_open(assessment=exam, user=student)
    drawn = [(i.exercise_id, i.variant) for i in first.questions.all()]
    assert len(drawn) == 2 and drawn == [(i.exercise_id, i.variant) for i in again.questions.all()]
    for item in first.questions.all():
        practice = {variants.variant(
            variants_spec(item), seed=f"learner:{student.pk}", chapter=item.exercise.chapter_id, round=r
        ).values for r in range(0, 3)}  # fmt: skip
        assert services.variant_of(item).values not in practice
    other = services.instance_open(assessment=exam, user=other_student)
    assert [services.variant_of(i).values for i in other.questions.all()] != [
        services.variant_of(i).values for i in first.questions.all()
    ]


def variants_spec(item: InstanceQuestion) -> ExerciseSpec:
    return cache.resolved(item.version).spec


def test_credit_follows_the_timeline_and_the_attempt_and_the_best_answer_counts(
    make_assessment: MakeAssessment, student: User, clock: Clock
) -> None:
    homework = make_assessment(
        pools=[[e] for e in varying(n=2)],
        late_rules=[{"until": (clock.at + timedelta(days=5)).isoformat(), "credit": 50}],
        attempt_credit=[100, 80],
    )
    instance = services.instance_open(assessment=homework, user=student)
    one, two = instance.questions.all()
    assert services.answer_submit(user=student, item_id=one.pk, payload=wrong(one)).points == 0
    assert services.answer_submit(user=student, item_id=one.pk, payload=right(one)).points == pytest.approx(8.0)
    clock.advance(days=3)  # a day late: 50%
    late = services.answer_submit(user=student, item_id=two.pk, payload=right(two))
    assert late.late and late.points == pytest.approx(5.0)
    instance.refresh_from_db()
    assert instance.score == pytest.approx(13.0) and instance.late and instance.max_score == 20
    clock.advance(days=3)  # past the late period: 0%, but still open until the close
    assert services.answer_submit(user=student, item_id=two.pk, payload=right(two)).points == 0
    instance.refresh_from_db()
    assert instance.score == pytest.approx(13.0)


def test_the_time_limit_is_the_servers_and_an_extension_gives_more(
    make_assessment: MakeAssessment, student: User, other_student: User, instructor: User, clock: Clock
) -> None:
    exam = make_assessment(kind=Kind.EXAM, pools=[[e] for e in varying(n=2)], time_limit_minutes=50)
    services.override_grant(assessment=exam, user=other_student, by=instructor, reason="Accommodation", time_factor=1.5)
    mine = services.instance_open(assessment=exam, user=student)
    theirs = services.instance_open(assessment=exam, user=other_student)
    assert mine.deadline == clock.at + timedelta(minutes=50)
    assert theirs.deadline == clock.at + timedelta(minutes=75)
    first = mine.questions.all()[0]
    services.answer_submit(user=student, item_id=first.pk, payload=right(first))
    clock.advance(minutes=51)
    second = mine.questions.all()[1]
    with pytest.raises(ApplicationError) as refused:
        services.answer_submit(user=student, item_id=second.pk, payload=right(second))
    assert refused.value.code == "time_up" and "kept" in refused.value.message
    mine.refresh_from_db()
    assert mine.score == pytest.approx(10.0)  # nothing lost from before the limit
    item = theirs.questions.all()[0]
    assert services.answer_submit(user=other_student, item_id=item.pk, payload=right(item)).points == 10


def test_attempts_run_out_and_an_unreadable_answer_costs_none(
    make_assessment: MakeAssessment, student: User, instructor: User
) -> None:
    homework = make_assessment(pools=[varying(n=1)], max_attempts=1)
    item = services.instance_open(assessment=homework, user=student).questions.all()[0]
    with pytest.raises(ApplicationError) as unreadable:
        services.answer_submit(user=student, item_id=item.pk, payload={"answer": "about a lot"})
    assert unreadable.value.status_code == 400
    services.answer_submit(user=student, item_id=item.pk, payload=wrong(item))
    with pytest.raises(ApplicationError) as out:
        services.answer_submit(user=student, item_id=item.pk, payload=right(item))
    assert out.value.code == "no_attempts_left"
    services.override_grant(assessment=homework, user=student, by=instructor, reason="Fire alarm", extra_attempts=1)
    assert services.answer_submit(user=student, item_id=item.pk, payload=right(item)).points == 10


def test_an_exam_pauses_practice_on_its_exercises_and_counts_for_no_mastery(
    make_assessment: MakeAssessment, student: User
) -> None:
    pool = varying(n=2)
    exam = make_assessment(kind=Kind.EXAM, pools=[pool], choose=[1], verdicts=Verdicts.AFTER_CLOSE)
    instance = services.instance_open(assessment=exam, user=student)
    item = instance.questions.all()[0]
    for move in (learning_services.exercise_reveal, learning_services.hint_reveal_next):
        with pytest.raises(ApplicationError) as paused:
            move(user=student, exercise=pool[1])  # the whole pool, not only the drawn exercise
        assert paused.value.code == "practice_paused"
    services.answer_submit(user=student, item_id=item.pk, payload=right(item))
    assert not ExerciseProgress.objects.filter(user=student).exists()
    assert not LearnerStats.objects.filter(user=student, points__gt=0).exists()
    assert not selectors.verdicts_visible(instance, item)
    services.instance_submit(user=student, instance=instance)
    learning_services.exercise_reveal(user=student, exercise=pool[1])  # practice again after submitting


def test_a_score_override_needs_a_reason_and_keeps_its_history(
    make_assessment: MakeAssessment, student: User, instructor: User
) -> None:
    homework = make_assessment(pools=[varying(n=1)])
    instance = services.instance_open(assessment=homework, user=student)
    with pytest.raises(ApplicationError) as why:
        services.score_override_set(instance=instance, score=9, reason=" ", by=instructor)
    assert why.value.code == "reason_required"
    services.score_override_set(instance=instance, score=9, reason="Regrade: units accepted", by=instructor)
    services.score_override_set(instance=instance, score=None, reason="Back to computed", by=instructor)
    history = list(
        ScoreOverride.objects.filter(instance=instance).order_by("at", "id").values_list("previous", "score")
    )
    assert history == [(0.0, 9.0), (9.0, None)]
    book = selectors.gradebook(cohort=homework.cohort)
    assert book.cell(student.pk, homework.pk).score == 0.0
