"""The skills checklist, scheduled by FSRS like the review cards (apps.progress.srs)."""

from __future__ import annotations

from datetime import UTC, datetime

from django.db import transaction

from apps.accounts.models import User
from apps.core.exceptions import ApplicationError
from apps.exercises.models import Skill
from apps.progress import srs
from apps.progress.models import SkillCheck

SKILL_ACTIONS = ("tick", "remembered", "forgot", "untick")


@transaction.atomic
def skill_mark(*, user: User, skill: Skill, action: str, at: datetime | None = None) -> SkillCheck | None:
    """Tick a skill, review it (remembered / forgot), or untick it. Returns the check (None once unticked).

    Ticking is the first review, rated Good (the learner says they can do it cold); "remembered"
    rates a review Good and "forgot" Again, and FSRS sets the next gap from the learner's history
    with this skill. Ticking twice changes nothing.
    """
    if action not in SKILL_ACTIONS:
        raise ApplicationError(f"Unknown action {action!r}: use one of {', '.join(SKILL_ACTIONS)}.", code="bad_payload")
    now = at or datetime.now(UTC)
    check = SkillCheck.objects.select_for_update().filter(user=user, skill=skill).first()
    if action == "untick":
        if check is not None:
            check.delete()
        return None
    if action == "tick":
        if check is None:
            check = SkillCheck(user=user, skill=skill, checked_at=now, due_at=now)
            srs.review(check, srs.Rating.Good, now)
            check.save()
        return check
    if check is None:
        raise ApplicationError("Tick the skill before reviewing it.", code="not_ticked")
    srs.review(check, srs.Rating.Good if action == "remembered" else srs.Rating.Again, now)
    check.save()
    return check
