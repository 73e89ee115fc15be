"""The skills checklist: a workbook's skills with the learner's ticks and the reviews due."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.http import Http404
from django.utils import timezone

from apps.accounts.models import User
from apps.exercises.models import Skill, Workbook
from apps.progress.models import SkillCheck


@dataclass(frozen=True)
class SkillRow:
    skill: Skill
    check: SkillCheck | None
    due: bool  # ticked and its review is due now

    @property
    def state(self) -> str:
        if self.check is None:
            return "open"
        return "due" if self.due else "mastered"


@dataclass(frozen=True)
class SkillBoard:
    workbook: Workbook
    rows: list[SkillRow]

    @property
    def total(self) -> int:
        return len(self.rows)

    @property
    def mastered(self) -> int:
        return sum(1 for r in self.rows if r.check is not None)

    @property
    def due(self) -> int:
        return sum(1 for r in self.rows if r.due)


def skill_board(*, user: User, workbook: Workbook, at: datetime | None = None) -> SkillBoard:
    """The checklist with this learner's ticks and reviews due. Two queries."""
    now = at or timezone.now()
    skills = list(Skill.objects.filter(workbook=workbook, is_active=True).select_related("chapter"))
    checks = {c.skill_id: c for c in SkillCheck.objects.filter(user=user, skill__in=[s.pk for s in skills])}
    return SkillBoard(workbook, [skill_row(skill, checks.get(skill.pk), now) for skill in skills])


def skill_row(skill: Skill, check: SkillCheck | None, now: datetime | None = None) -> SkillRow:
    return SkillRow(skill, check, check is not None and check.due_at <= (now or timezone.now()))


def skill_get(*, workbook: Workbook, key: str) -> Skill:
    skill = Skill.objects.filter(workbook=workbook, key=key, is_active=True).first()
    if skill is None:
        raise Http404("No such skill.")
    return skill
