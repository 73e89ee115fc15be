"""Reads of assessments: what a learner's window and credit are now, what they may see, what an
instructor's gradebook shows. No writes here (``services.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import NamedTuple

from django.db import connection
from django.db.models import Prefetch, Q, QuerySet
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from apps.accounts.models import User
from apps.assessments.models import (
    Assessment,
    Instance,
    InstanceQuestion,
    Override,
    ScoreOverride,
    Submission,
    Verdicts,
)
from apps.core.exceptions import ApplicationError
from apps.progress.models import Cohort, Membership


@dataclass(frozen=True)
class Window:
    """One learner's terms for an assessment: the assessment's, moved by their override."""

    opens_at: datetime
    due_at: datetime | None
    closes_at: datetime
    late_rules: tuple[tuple[datetime, float], ...]
    time_limit: timedelta | None
    max_attempts: int | None
    override: Override | None

    def credit_at(self, at: datetime) -> float:
        """Percent of the points an answer at ``at`` can earn (before the attempt's own credit)."""
        if at >= self.closes_at:
            return 0.0
        if self.due_at is None or at <= self.due_at:
            return 100.0
        for until, credit in self.late_rules:
            if at <= until:
                return credit
        return 0.0


def _rules(assessment: Assessment, shift: timedelta) -> tuple[tuple[datetime, float], ...]:
    rules = []
    for rule in assessment.late_rules or []:
        until = parse_datetime(str(rule["until"]))
        if until is not None:
            rules.append((until + shift, float(rule["credit"])))
    return tuple(rules)


def override_in_force(*, assessment: Assessment, user_id: int) -> Override | None:
    return Override.objects.filter(assessment=assessment, user_id=user_id, revoked_at__isnull=True).first()


def window(*, assessment: Assessment, override: Override | None) -> Window:
    """The assessment's terms, moved by ``override``: a later due date moves the late rules with it
    (the same late period after the new date); a later close; the time limit × its factor; more
    attempts per question."""
    due, closes = assessment.due_at, assessment.closes_at
    shift, factor, extra = timedelta(0), 1.0, 0
    if override is not None:
        if override.due_at is not None:
            shift = override.due_at - due if due is not None else timedelta(0)
            due = override.due_at
        if override.closes_at is not None:
            closes = max(closes, override.closes_at)
        factor = override.time_factor or 1.0
        extra = override.extra_attempts
    limit = timedelta(minutes=assessment.time_limit_minutes * factor) if assessment.time_limit_minutes else None
    attempts = assessment.max_attempts + extra if assessment.max_attempts else None
    return Window(assessment.opens_at, due, closes, _rules(assessment, shift), limit, attempts, override)


def window_for(*, assessment: Assessment, user_id: int) -> Window:
    return window(assessment=assessment, override=override_in_force(assessment=assessment, user_id=user_id))


def attempt_credit(assessment: Assessment, k: int) -> float:
    """Percent the k-th graded answer (1, 2, …) to a question can earn: the list's k-th, the last repeating."""
    steps = [float(x) for x in assessment.attempt_credit or []]
    if not steps:
        return 100.0
    return steps[min(k, len(steps)) - 1]


def instance_closed(instance: Instance, *, at: datetime | None = None, terms: Window | None = None) -> bool:
    """Submitted, past its time limit, or past the (learner's) close: no more answers."""
    at = at or timezone.now()
    if instance.submitted_at is not None:
        return True
    if instance.deadline is not None and at >= instance.deadline:
        return True
    terms = terms or window_for(assessment=instance.assessment, user_id=instance.user_id)
    return at >= terms.closes_at


def verdicts_visible(instance: Instance, item: InstanceQuestion, *, at: datetime | None = None) -> bool:
    """Right or wrong, and points, are shown live unless the assessment (or this question) holds
    them until the assessment closes for everyone and this learner's instance is closed."""
    rule = item.question.verdicts or instance.assessment.verdicts
    if rule == Verdicts.LIVE:
        return True
    at = at or timezone.now()
    return at >= instance.assessment.closes_at and instance_closed(instance, at=at)


def score_visible(instance: Instance, *, at: datetime | None = None) -> bool:
    """The total: hidden while any question's verdicts are."""
    items = list(instance.questions.all())
    return all(verdicts_visible(instance, item, at=at) for item in items)


def cohorts_taught(*, user: User) -> QuerySet[Cohort]:
    if user.is_superuser:
        return Cohort.objects.all()
    return Cohort.objects.filter(instructor=user)


def assessment_for_instructor(*, user: User, assessment_id: int) -> Assessment:
    found = Assessment.objects.filter(pk=assessment_id, cohort__in=cohorts_taught(user=user)).first()
    if found is None:
        raise ApplicationError("No such assessment among your cohorts.", code="not_found", status_code=404)
    return found


def assessments_for_learner(*, user: User) -> QuerySet[Assessment]:
    """Assessments of the learner's cohorts that have opened (a future one is not listed)."""
    cohorts = Membership.objects.filter(user=user).values("cohort_id")
    return Assessment.objects.filter(cohort_id__in=cohorts, opens_at__lte=timezone.now()).select_related("cohort")


def assessment_for_learner(*, user: User, assessment_id: int) -> Assessment:
    found = assessments_for_learner(user=user).filter(pk=assessment_id).first()
    if found is None:
        raise ApplicationError("No such assessment for you.", code="not_found", status_code=404)
    return found


def instance_of(*, assessment: Assessment, user_id: int) -> Instance | None:
    items = InstanceQuestion.objects.select_related("question", "exercise", "version").order_by("position")
    return (
        Instance.objects.filter(assessment=assessment, user_id=user_id)
        .select_related("assessment")
        .prefetch_related(Prefetch("questions", queryset=items))
        .first()
    )


def open_exam_refusal(user_id: int, exercise_id: int) -> str | None:
    """Why practice on this exercise is refused now: it is in a pool of an exam this learner has
    open (started, not submitted, before its deadline and close). One indexed query when none is."""
    now = timezone.now()
    candidates = (
        Instance.objects.filter(
            user_id=user_id,
            submitted_at__isnull=True,
            assessment__kind="exam",
            assessment__questions__pool=exercise_id,
        )
        .filter(Q(deadline__isnull=True) | Q(deadline__gt=now))
        .select_related("assessment")
    )
    for instance in candidates[:3]:
        if not instance_closed(instance, at=now):
            return (
                f"You are taking the exam “{instance.assessment.title}”, which includes this exercise: practice on "
                "it (answers, hints, reveals, new numbers) is paused until you submit the exam or it closes."
            )
    return None


class Taken(NamedTuple):
    """An instance as the gradebook reads it: its scores and times, no model object. A tuple of
    plain values, which Python's collector stops tracking: a gradebook read builds ten thousand."""

    pk: int
    assessment_id: int
    user_id: int
    score: float
    max_score: float
    late: bool
    score_override: float | None
    started_at: datetime | None
    submitted_at: datetime | None

    @property
    def final_score(self) -> float:
        return self.score if self.score_override is None else self.score_override


TAKEN_FIELDS = ("pk", "assessment_id", "user_id", "score", "max_score", "late", "score_override", "started_at",
                "submitted_at")  # fmt: skip


class Cell(NamedTuple):
    instance: Taken | None
    override: Override | None

    @property
    def score(self) -> float | None:
        return None if self.instance is None else self.instance.final_score


@dataclass(frozen=True)
class Gradebook:
    cohort: Cohort
    assessments: list[Assessment]
    learners: list[User]
    cells: dict[tuple[int, int], Cell]  # (user id, assessment id)
    possible: dict[int, float]  # assessment id -> points

    def cell(self, user_id: int, assessment_id: int) -> Cell:
        return self.cells.get((user_id, assessment_id), _EMPTY)


_EMPTY = Cell(None, None)


def assessment_points(assessments: list[Assessment]) -> dict[int, float]:
    points = {a.pk: 0.0 for a in assessments}
    for a in assessments:
        for q in a.questions.all():
            points[a.pk] += q.points * q.choose
    return points


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# On PostgreSQL the two times come as integer microseconds since the epoch: Django's psycopg
# loader parses each timestamptz in Python (~15 us), the gradebook's largest cost after the
# query itself for 10,000 instances (bench/leaderboard.py).
_TAKEN_SQL = f"""SELECT i.id, i.assessment_id, i.user_id, i.score, i.max_score, i.late, i.score_override,
    (EXTRACT(EPOCH FROM i.started_at) * 1000000)::bigint, (EXTRACT(EPOCH FROM i.submitted_at) * 1000000)::bigint
FROM {Instance._meta.db_table} i JOIN {Assessment._meta.db_table} a ON a.id = i.assessment_id
WHERE a.cohort_id = %s"""  # noqa: S608 - names are ours, values are parameters


def _taken_of(cohort_id: int) -> list[Taken]:
    if connection.vendor != "postgresql":
        rows = Instance.objects.filter(assessment__cohort_id=cohort_id).values_list(*TAKEN_FIELDS)
        return [Taken._make(row) for row in rows]
    with connection.cursor() as cursor:
        cursor.execute(_TAKEN_SQL, [cohort_id])
        rows = cursor.fetchall()
    return [
        Taken._make((*row[:7], *(None if us is None else _EPOCH + timedelta(microseconds=us) for us in row[7:])))
        for row in rows
    ]


def gradebook(*, cohort: Cohort) -> Gradebook:
    """Learners × assessments of a cohort, in a fixed number of queries whatever its size."""
    assessments = list(cohort.assessments.prefetch_related("questions").order_by("opens_at", "id"))
    learners = list(
        User.objects.filter(memberships__cohort=cohort).order_by("username").only("id", "username", "email")
    )
    cells: dict[tuple[int, int], Cell] = {}
    overrides = {
        (o.user_id, o.assessment_id): o
        for o in Override.objects.filter(assessment__cohort=cohort, revoked_at__isnull=True)
    }
    for taken in _taken_of(cohort.pk):
        key = (taken.user_id, taken.assessment_id)
        cells[key] = Cell(taken, overrides.get(key))
    for key, o in overrides.items():
        if key not in cells:
            cells[key] = Cell(None, o)
    return Gradebook(cohort, assessments, learners, cells, assessment_points(assessments))


def score_history(*, instance: Instance) -> QuerySet[ScoreOverride]:
    return instance.score_history.select_related("by")


def submissions_of(*, instance: Instance) -> dict[int, list[Submission]]:
    """An instance's answers, oldest first, by instance question id (one query)."""
    by_item: dict[int, list[Submission]] = {}
    for s in Submission.objects.filter(item__instance=instance).order_by("created_at", "id"):
        by_item.setdefault(s.item_id, []).append(s)
    return by_item


def question_of(*, user: User, assessment_id: int, position: int) -> tuple[int, str]:
    """The learner's question at ``position`` of their instance: (its id, its answer format), in
    one query; a 404 when they have not opened the assessment or it has no such question."""
    row = (
        InstanceQuestion.objects.filter(
            instance__assessment_id=assessment_id,
            instance__user=user,
            instance__started_at__isnull=False,
            position=position,
        )
        .values_list("pk", "exercise__format")
        .first()
    )
    if row is None:
        raise ApplicationError(
            "No such question in your assessment (open the assessment first).", code="not_found", status_code=404
        )
    return int(row[0]), str(row[1])
