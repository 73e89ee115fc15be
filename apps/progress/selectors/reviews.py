"""The review queue: a learner's review cards (and skills) due, and retention per chapter."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from apps.accounts.models import User
from apps.exercises.models import Exercise, Workbook
from apps.progress import srs
from apps.progress.models import ReviewCard, SkillCheck


@dataclass(frozen=True)
class ReviewQueue:
    cards: list[ReviewCard]
    skills: list[SkillCheck]

    @property
    def count(self) -> int:
        return len(self.cards) + len(self.skills)


def due_cards(*, user_id: int, until: datetime, limit: int = 200) -> list[ReviewCard]:
    """A learner's cards due before ``until``, soonest first: one range read of the (user, due_at)
    index, nothing joined (bench/leaderboard.py measures it at 100k learners)."""
    return list(ReviewCard.objects.filter(user_id=user_id, due_at__lt=until).order_by("due_at", "id")[:limit])


def reviews_due(*, user: User, until: datetime, limit: int = 200) -> ReviewQueue:
    """Cards and ticked skills due before ``until`` (the end of the learner's day), soonest first,
    with the cards' exercises (by primary key)."""
    cards = due_cards(user_id=user.pk, until=until, limit=limit)
    exercises = Exercise.objects.select_related("workbook", "chapter").in_bulk({c.exercise_id for c in cards})
    for card in cards:
        card.exercise = exercises[card.exercise_id]
    skills = list(
        SkillCheck.objects.filter(user=user, due_at__lt=until, skill__is_active=True)
        .select_related("skill", "skill__workbook")
        .order_by("due_at", "id")[:limit]
    )
    return ReviewQueue(cards, skills)


def reviews_due_count(*, user: User, until: datetime) -> int:
    """Cards and skills due before ``until``, in one query (the navigation shows it on every page):
    a UNION ALL of two range reads of the (user, due_at) indexes."""
    cards = ReviewCard.objects.filter(user=user, due_at__lt=until).values("id")
    skills = SkillCheck.objects.filter(user=user, due_at__lt=until, skill__is_active=True).values("id")
    return cards.union(skills, all=True).count()


def retention(*, user: User, at: datetime) -> dict[tuple[str, int], float]:
    """FSRS retrievability now, averaged over the learner's cards per (workbook slug, chapter
    number), over every workbook: one query. Chapters without cards are left out."""
    values: dict[tuple[str, int], list[float]] = {}
    cards = ReviewCard.objects.filter(user=user).select_related("exercise__workbook", "exercise__chapter")
    for card in cards:
        key = (card.exercise.workbook.slug, card.exercise.chapter.number)
        values.setdefault(key, []).append(srs.retrievability(card, at))
    return {key: sum(v) / len(v) for key, v in values.items()}


def retention_by_chapter(*, user: User, workbook: Workbook, at: datetime) -> dict[int, float]:
    """FSRS retrievability now, averaged over the learner's cards in each chapter (by chapter id).
    Chapters without cards are left out."""
    sums: dict[int, list[float]] = {}
    for card in ReviewCard.objects.filter(user=user, exercise__workbook=workbook).select_related("exercise"):
        sums.setdefault(card.exercise.chapter_id, []).append(srs.retrievability(card, at))
    return {chapter: sum(values) / len(values) for chapter, values in sums.items()}
