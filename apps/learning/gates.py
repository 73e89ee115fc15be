"""Whether a learner may practise an exercise right now.

Apps above this one install checks here at start (``register``): ``assessments`` refuses practice
on the exercises of an exam the learner is taking, so that no hint, reveal, solution, review or
new numbers helps them during it. This module knows nothing of what a check looks at."""

from __future__ import annotations

from collections.abc import Callable

from apps.core.exceptions import ApplicationError

# (user id, exercise id) -> why practice is refused, or None.
Check = Callable[[int, int], str | None]
_checks: list[Check] = []


def register(check: Check) -> None:
    if check not in _checks:
        _checks.append(check)


def practice_refusal(*, user_id: int, exercise_id: int) -> str | None:
    for check in _checks:
        why = check(user_id, exercise_id)
        if why:
            return why
    return None


def practice_check(*, user_id: int, exercise_id: int) -> None:
    """Raise a 409 ``practice_paused`` that says why, when a check refuses."""
    why = practice_refusal(user_id=user_id, exercise_id=exercise_id)
    if why:
        raise ApplicationError(why, code="practice_paused", status_code=409)
