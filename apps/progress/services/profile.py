"""A learner's own settings and actions: reset a workbook, time zone, global board visibility."""

from __future__ import annotations

import logging
from zoneinfo import available_timezones

from django.db import connection, transaction

from apps.accounts import services as account_services
from apps.accounts.models import User
from apps.core.exceptions import ApplicationError
from apps.exercises.models import Workbook
from apps.progress.models import ExerciseProgress, LearnerStats, Score
from apps.progress.services.solves import effective_time_zone, level_join, level_leave

logger = logging.getLogger(__name__)


@transaction.atomic
def workbook_reset(*, user: User, workbook: Workbook) -> int:
    """Start a workbook over: mastery restarts, answers are hidden again; attempts, points and
    the statistics of the first try are kept. Returns how many exercises were cleared."""
    cleared = ExerciseProgress.objects.filter(user=user, workbook=workbook).update(
        solved_at=None, revealed_at=None, parts_solved=0, hints_used=0, first_solve_attempt=None, solved_with_note=False
    )
    logger.info("workbook reset", extra={"user_id": user.pk, "workbook": workbook.slug, "cleared": cleared})
    return cleared


_ZONES: frozenset[str] = frozenset()


def time_zone_validate(name: str) -> str:
    global _ZONES
    if not _ZONES:
        _ZONES = frozenset(available_timezones())
    if name not in _ZONES:
        raise ApplicationError(
            f"{name!r} is not a time zone name. Use an IANA name such as Europe/Paris or Asia/Tokyo.",
            code="bad_time_zone",
        )
    return name


@transaction.atomic
def profile_update(
    *, user: User, time_zone: str | None = None, on_global_board: bool | None = None, email: str | None = None
) -> User:
    """Change the learner's time zone (future days count in it), global board visibility or email
    address (``accounts.services.user_set_email``'s rules). All or nothing: every value is checked
    before anything is written."""
    if time_zone:
        time_zone_validate(time_zone)
    if email is not None:
        email = account_services.email_validate(email)
    fields: list[str] = []
    if email is not None and email != user.email:
        user.email = email
        fields.append("email")
    if time_zone is not None:
        user.time_zone = time_zone
        fields.append("time_zone")
    if on_global_board is not None and on_global_board != user.on_global_board:
        user.on_global_board = on_global_board
        fields.append("on_global_board")
        _global_rows_hide(user, hidden=not on_global_board)
    if fields:
        user.save(update_fields=fields)
    if fields and fields != ["email"]:
        stats_time_zone_refresh(user=user)
    return user


def _global_rows_hide(user: User, *, hidden: bool) -> None:
    LearnerStats.objects.select_for_update().filter(pk=user.pk).first()  # serialize with the learner's solves
    rows = list(
        Score.objects.select_for_update()
        .filter(user=user, hidden=not hidden)
        .exclude(board__startswith="cohort:")
        .order_by("board")
        .values_list("board", "points", "reached_at")
    )
    Score.objects.filter(user=user, board__in=[b for b, _, _ in rows]).update(hidden=hidden)
    with connection.cursor() as cursor:
        for board, points, reached_at in rows:
            move = level_leave if hidden else level_join
            move(cursor, board=board, points=points, reached_at=reached_at)


def stats_time_zone_refresh(*, user: User) -> None:
    """Keep the zone a streak is read in equal to the learner's effective time zone."""
    LearnerStats.objects.filter(pk=user.pk).update(time_zone=effective_time_zone(user))
