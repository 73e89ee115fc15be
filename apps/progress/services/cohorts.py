"""Cohorts: create, update, assign workbooks, join by code, leave, delete."""

from __future__ import annotations

import logging
import secrets
from collections.abc import Sequence
from datetime import date, datetime

from django.db import IntegrityError, transaction

from apps.accounts.models import Role, User
from apps.core.exceptions import ApplicationError
from apps.exercises.models import Workbook
from apps.progress.models import Cohort, CohortWorkbook, ExerciseProgress, Membership, Score
from apps.progress.services.profile import stats_time_zone_refresh, time_zone_validate
from apps.progress.services.solves import cohort_week_board

logger = logging.getLogger(__name__)


# No 0/O or 1/I/L: codes are read aloud and copied from slides.
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 8


def join_code_new() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def join_code_normalize(text: str) -> str:
    return "".join(ch for ch in text.upper() if ch.isalnum())


def can_teach(user: User) -> bool:
    return user.is_active and (user.role == Role.INSTRUCTOR or user.is_superuser)


@transaction.atomic
def cohort_create(
    *,
    instructor: User,
    name: str,
    time_zone: str = "UTC",
    workbooks: Sequence[tuple[Workbook, date | None]] = (),
    numbers: str = Cohort.Numbers.PER_LEARNER,
) -> Cohort:
    """A cohort with a fresh join code. ``numbers``: each learner their own numbers on varying
    exercises, or the same for the whole class (``shared``: the seed's first)."""
    if not can_teach(instructor):
        raise ApplicationError("Only instructors create cohorts.", code="permission_denied", status_code=403)
    if not name.strip():
        raise ApplicationError("A cohort needs a name.", code="bad_payload")
    time_zone_validate(time_zone)
    _numbers_validate(numbers)
    for _ in range(5):
        try:
            with transaction.atomic():
                cohort = Cohort.objects.create(
                    name=name.strip(),
                    instructor=instructor,
                    time_zone=time_zone,
                    join_code=join_code_new(),
                    numbers=numbers,
                )
            break
        except IntegrityError:  # a code collision (31^8 codes): draw again
            continue
    else:  # pragma: no cover - five collisions in a row
        raise ApplicationError("Could not allocate a join code; try again.", code="try_again", status_code=503)
    for workbook, due_on in workbooks:
        cohort_assign(cohort=cohort, workbook=workbook, due_on=due_on)
    logger.info("cohort created", extra={"user_id": instructor.pk, "cohort_id": cohort.pk})
    return cohort


def _numbers_validate(numbers: str) -> None:
    if numbers not in Cohort.Numbers.values:
        choices = ", ".join(Cohort.Numbers.values)
        raise ApplicationError(f"Unknown numbers setting {numbers!r}: use {choices}.", code="bad_payload")


@transaction.atomic
def cohort_update(
    *, cohort: Cohort, name: str, time_zone: str, instructor: User | None = None, numbers: str | None = None
) -> Cohort:
    """Rename, move to another zone, switch between per-learner and shared numbers, or
    (``instructor``) hand over a cohort. A new zone moves the streak day of members who follow
    their cohort's zone. Switching numbers changes what members see from their next visit; their
    attempts keep the numbers they answered."""
    if instructor is not None and not can_teach(instructor):
        raise ApplicationError("Only instructors teach cohorts.", code="permission_denied", status_code=403)
    if not name.strip():
        raise ApplicationError("A cohort needs a name.", code="bad_payload")
    time_zone_validate(time_zone)
    previous = Cohort.objects.select_for_update().values_list("time_zone", flat=True).get(pk=cohort.pk)
    cohort.name, cohort.time_zone = name.strip(), time_zone
    fields = ["name", "time_zone"]
    if numbers is not None:
        _numbers_validate(numbers)
        cohort.numbers = numbers
        fields.append("numbers")
    if instructor is not None:
        cohort.instructor = instructor
        fields.append("instructor")
    cohort.save(update_fields=fields)
    if time_zone != previous:
        for member in User.objects.filter(memberships__cohort=cohort):
            stats_time_zone_refresh(user=member)
    logger.info("cohort updated", extra={"cohort_id": cohort.pk})
    return cohort


def cohort_assign(*, cohort: Cohort, workbook: Workbook, due_on: date | None = None) -> CohortWorkbook:
    assignment, _ = CohortWorkbook.objects.update_or_create(
        cohort=cohort, workbook=workbook, defaults={"due_on": due_on}
    )
    return assignment


def cohort_unassign(*, cohort: Cohort, workbook_id: int) -> None:
    """The workbook is no longer assigned to the cohort (its learners' progress stays)."""
    CohortWorkbook.objects.filter(cohort=cohort, workbook_id=workbook_id).delete()


@transaction.atomic
def cohort_code_rotate(*, cohort: Cohort) -> Cohort:
    """A new join code (the old one leaked); members stay."""
    cohort.join_code = join_code_new()
    cohort.save(update_fields=["join_code"])
    return cohort


@transaction.atomic
def cohort_join(*, user: User, code: str) -> tuple[Cohort, bool]:
    """Join by code. Returns the cohort and whether the learner is new to it (joining twice is fine)."""
    normalized = join_code_normalize(code)
    cohort = Cohort.objects.filter(join_code=normalized).first() if normalized else None
    if cohort is None:
        raise ApplicationError("No cohort has that join code. Check it with your instructor.", code="bad_join_code")
    if cohort.instructor_id == user.pk:
        raise ApplicationError("You teach this cohort; instructors do not join their own.", code="own_cohort")
    _, created = Membership.objects.get_or_create(cohort=cohort, user=user)
    if created:
        _cohort_scores_backfill(cohort, user)
        stats_time_zone_refresh(user=user)
        logger.info("cohort joined", extra={"user_id": user.pk, "cohort_id": cohort.pk})
    return cohort, created


def _cohort_scores_backfill(cohort: Cohort, user: User) -> None:
    """A new member's points so far, on the cohort's weekly boards (as if they had been a member)."""
    tz = cohort.time_zone
    earned = ExerciseProgress.objects.filter(user=user, points__gt=0, first_solved_at__isnull=False).values_list(
        "first_solved_at", "points"
    )
    weeks: dict[str, tuple[int, datetime]] = {}
    for at, points in earned:
        if at is None:  # excluded by the filter; for the type checker
            continue
        board = cohort_week_board(cohort.pk, at, tz)
        total, latest = weeks.get(board, (0, at))
        weeks[board] = (total + points, max(latest, at))
    Score.objects.bulk_create(
        [Score(board=b, user=user, points=p, reached_at=at) for b, (p, at) in weeks.items()],
        update_conflicts=True,
        unique_fields=["board", "user"],
        update_fields=["points", "reached_at"],
    )


@transaction.atomic
def cohort_delete(*, cohort: Cohort) -> None:
    """Delete a cohort, its memberships and its weekly boards (learners' progress stays)."""
    members = list(User.objects.filter(memberships__cohort=cohort))
    Score.objects.filter(board__startswith=f"cohort:{cohort.pk}:").delete()
    cohort.delete()
    for user in members:
        stats_time_zone_refresh(user=user)
    logger.info("cohort deleted", extra={"cohort_id": cohort.pk})


@transaction.atomic
def cohort_leave(*, user: User, cohort: Cohort) -> None:
    if cohort.instructor_id == user.pk:
        raise ApplicationError("You teach this cohort; delete it in the admin instead.", code="own_cohort")
    Membership.objects.filter(cohort=cohort, user=user).delete()
    Score.objects.filter(user=user, board__startswith=f"cohort:{cohort.pk}:").delete()
    stats_time_zone_refresh(user=user)
    logger.info("cohort left", extra={"user_id": user.pk, "cohort_id": cohort.pk})
