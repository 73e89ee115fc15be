"""The skills checklist and its spaced retrieval."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from django.db import transaction

from apps.accounts.models import User
from apps.core.exceptions import ApplicationError
from apps.exercises.models import Skill
from apps.progress.models import SkillCheck

SKILL_ACTIONS = ("tick", "remembered", "forgot", "untick")


@transaction.atomic
def skill_mark(*, user: User, skill: Skill, action: str, at: datetime | None = None) -> SkillCheck | None:
    """Tick a skill, review it (remembered / forgot), or untick it. Returns the check (None once unticked).

    Ticking schedules the first review a day later; each "remembered" moves to the next, wider gap
    in ``SkillCheck.REVIEW_DAYS``; "forgot" starts over at a day. Ticking twice changes nothing.
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
            check = SkillCheck.objects.create(
                user=user, skill=skill, stage=0, checked_at=now, due_at=now + timedelta(days=SkillCheck.REVIEW_DAYS[0])
            )
        return check
    if check is None:
        raise ApplicationError("Tick the skill before reviewing it.", code="not_ticked")
    if action == "remembered":
        check.stage = min(check.stage + 1, len(SkillCheck.REVIEW_DAYS) - 1)
    else:
        check.stage = 0
        check.lapses += 1
    check.reviews += 1
    check.reviewed_at = now
    check.due_at = now + timedelta(days=SkillCheck.REVIEW_DAYS[check.stage])
    check.save()
    return check
