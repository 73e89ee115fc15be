"""The periodic close: beat runs ``assessments.close_due`` every minute; on the embedded default (no
broker, no beat) the web process runs it itself, at most once a minute, off the request's thread."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.conf import settings

from apps.accounts.models import User
from apps.assessments import services, tasks
from apps.assessments.models import Instance, Kind
from apps.assessments.signals import instance_scored
from apps.assessments.tests.conftest import Clock, MakeAssessment, right, varying
from apps.exercises.models import Exercise, Workbook
from config.celery_app import app


@pytest.fixture
def scored() -> Iterator[list[int]]:
    """The instance ids ``instance_scored`` was sent for, in order."""
    sent: list[int] = []

    def receiver(sender: Any, instance_id: int, **kwargs: Any) -> None:
        sent.append(instance_id)

    instance_scored.connect(receiver, dispatch_uid="test-tasks-scored")
    yield sent
    instance_scored.disconnect(dispatch_uid="test-tasks-scored")


def test_the_close_runs_every_minute_on_beat() -> None:
    entry = settings.CELERY_BEAT_SCHEDULE["assessments-close-due"]
    assert entry == {"task": tasks.CLOSE_DUE_TASK, "schedule": 60.0}
    assert app.tasks[tasks.CLOSE_DUE_TASK].name == tasks.close_due.name == tasks.CLOSE_DUE_TASK


@pytest.mark.django_db
def test_the_task_closes_what_is_due_once_and_leaves_the_rest_open(
    make_assessment: MakeAssessment,
    student: User,
    other_student: User,
    clock: Clock,
    scored: list[int],
) -> None:
    start = clock.at
    exam = make_assessment(kind=Kind.EXAM, slug="exam", pools=[[e] for e in varying(n=2)], time_limit_minutes=50)
    homework = make_assessment(slug="hw", pools=[[e] for e in varying(n=2)], closes_at=start + timedelta(days=1))
    mine = services.instance_open(assessment=exam, user=student)
    item = mine.questions.all()[0]
    services.answer_submit(user=student, item_id=item.pk, payload=right(item))
    my_homework = services.instance_open(assessment=homework, user=student)
    clock.advance(minutes=40)
    theirs = services.instance_open(assessment=exam, user=other_student)  # 50 minutes from now
    submitted = services.instance_open(assessment=homework, user=other_student)
    services.instance_submit(user=other_student, instance=submitted)  # closed by the submit itself
    scored.clear()

    clock.advance(minutes=20)  # my exam's time is up; theirs runs 30 more minutes
    assert tasks.close_due.apply().get() == 1
    assert scored == [mine.pk]
    mine.refresh_from_db()
    assert mine.closed_at == clock.at and mine.score == pytest.approx(10.0)
    assert Instance.objects.get(pk=theirs.pk).closed_at is None
    assert Instance.objects.get(pk=my_homework.pk).closed_at is None

    assert tasks.close_due.apply().get() == 0  # again: nothing changes, nothing is sent twice
    assert scored == [mine.pk]
    closed_at = mine.closed_at

    clock.set(start + timedelta(days=1, minutes=1))  # their time is up, and the homework closed
    assert tasks.close_due.apply().get() == 2
    assert sorted(scored) == sorted([mine.pk, theirs.pk, my_homework.pk])
    mine.refresh_from_db()
    assert mine.closed_at == closed_at  # closed once, at the first close
    assert Instance.objects.filter(closed_at__isnull=True).count() == 0


@pytest.fixture
def lazily() -> Iterator[None]:
    tasks.close_due_lazily_reset()
    yield
    tasks.close_due_lazily_reset()


@pytest.mark.django_db(transaction=True)  # the close runs on its own thread and connection
@pytest.mark.usefixtures("lazily")
def test_without_a_broker_requests_run_the_close_on_a_thread_at_most_once_a_minute(
    make_assessment: MakeAssessment,
    student: User,
    clock: Clock,
    synthetic_workbook: Workbook,
    scored: list[int],
    settings: Any,
) -> None:
    exercises = list(Exercise.objects.filter(workbook=synthetic_workbook).order_by("pk")[:2])
    exam = make_assessment(kind=Kind.EXAM, pools=[[e] for e in exercises], time_limit_minutes=30)
    instance = services.instance_open(assessment=exam, user=student)
    clock.advance(minutes=31)

    settings.CELERY_TASK_ALWAYS_EAGER = False  # a broker: beat's job, not the request's
    assert tasks.close_due_lazily() is None

    settings.CELERY_TASK_ALWAYS_EAGER = True  # the embedded default
    thread = tasks.close_due_lazily()
    assert thread is not None and thread.daemon
    thread.join(timeout=30)
    assert not thread.is_alive()
    instance.refresh_from_db()
    assert instance.closed_at == clock.at and scored == [instance.pk]

    later = services.instance_open(
        assessment=make_assessment(pools=[exercises[:1]], time_limit_minutes=5), user=student
    )
    clock.advance(minutes=6)
    assert tasks.close_due_lazily() is None  # within the minute: not again
    assert Instance.objects.get(pk=later.pk).closed_at is None
    tasks.close_due_lazily_reset()  # a minute later
    thread = tasks.close_due_lazily()
    assert thread is not None
    thread.join(timeout=30)
    assert Instance.objects.get(pk=later.pk).closed_at == clock.at


def test_a_due_instance_behind_the_limit_of_open_ones_is_closed(
    make_assessment: MakeAssessment, student: User, other_student: User, clock: Clock
) -> None:
    """The sweep reads only what can be due: instances open for days ahead of it in id order do
    not use up its batch and keep a due one open."""
    homework = make_assessment(slug="hw", pools=[varying(n=1)])  # closes in 7 days: open
    exam = make_assessment(kind=Kind.EXAM, slug="exam", pools=[varying(n=1)], time_limit_minutes=30)
    services.instance_open(assessment=homework, user=student)  # the lower id, open for days
    due = services.instance_open(assessment=exam, user=other_student)
    clock.advance(minutes=31)
    assert services.instances_close_due(limit=1) == 1
    assert Instance.objects.get(pk=due.pk).closed_at is not None
