"""Whether a learner may practise an exercise right now.

Apps above this one install checks here at start (``register``): ``assessments`` refuses practice
on the exercises of an exam the learner is taking, so that no hint, reveal, solution, review or
new numbers helps them during it. This module knows nothing of what a check looks at."""

from __future__ import annotations

from collections.abc import Callable

from django.utils import timezone

from apps.accounts.models import User
from apps.core.exceptions import ApplicationError

# (user id, exercise id) -> why practice is refused, or None.
Check = Callable[[int, int], str | None]
_checks: list[Check] = []


def register(check: Check) -> None:
    if check not in _checks:
        _checks.append(check)


def practice_refusal(*, user: User, exercise_id: int) -> str | None:
    """Why practice on this exercise is refused now, or None. The checks run only while the user's
    ``practice_paused_until`` (set by the app that pauses, read with the user) is ahead: practice
    otherwise costs no query."""
    until = user.practice_paused_until
    if until is None or until <= timezone.now():
        return None
    for check in _checks:
        why = check(user.pk, exercise_id)
        if why:
            return why
    return None


def practice_check(*, user: User, exercise_id: int) -> None:
    """Raise a 409 ``practice_paused`` that says why, when a check refuses."""
    why = practice_refusal(user=user, exercise_id=exercise_id)
    if why:
        raise ApplicationError(why, code="practice_paused", status_code=409)
