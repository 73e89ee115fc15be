"""The review queue: a learner's review cards (and skills) due, and retention per chapter."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db import connection

from apps.accounts.models import User
from apps.exercises.content import cache
from apps.exercises.models import Exercise, Skill, Workbook
from apps.progress import srs
from apps.progress.models import ReviewCard, SkillCheck


@dataclass(frozen=True)
class ReviewQueue:
    cards: list[ReviewCard]
    skills: list[SkillCheck]

    @property
    def count(self) -> int:
        return len(self.cards) + len(self.skills)


_CARD_COLUMNS = ", ".join(str(f.column) for f in ReviewCard._meta.concrete_fields)
# Raw: composing this one-index read through the ORM cost more than PostgreSQL spent on it.
_DUE_CARDS = f"""SELECT {_CARD_COLUMNS} FROM {ReviewCard._meta.db_table}
WHERE user_id = %s AND due_at < %s ORDER BY due_at, id LIMIT %s"""  # noqa: S608 - names are ours


def due_cards(*, user_id: int, until: datetime, limit: int = 200) -> list[ReviewCard]:
    """A learner's cards due before ``until``, soonest first: one range read of the (user, due_at)
    index, nothing joined (bench/leaderboard.py measures it at 1M learners)."""
    return list(ReviewCard.objects.raw(_DUE_CARDS, [user_id, until, limit]))


# Exercises by id with their workbook and chapter, per process, dropped whenever the content
# generation moves (content/cache.py): the instances are shared read-only between requests.
_exercises: dict[int, Exercise] = {}
_exercises_generation = [""]


def _exercises_by_id(ids: set[int]) -> dict[int, Exercise]:
    generation = cache.generation()
    if _exercises_generation[0] != generation:
        _exercises.clear()
        _exercises_generation[0] = generation
    missing = ids - _exercises.keys()
    if missing:
        _exercises.update(Exercise.objects.select_related("workbook", "chapter").in_bulk(missing))
    return _exercises


_SKILL_PARTS = [(m, list(m._meta.concrete_fields)) for m in (SkillCheck, Skill, Workbook)]
_DUE_SKILLS = f"""SELECT {", ".join(f"{alias}.{f.column}" for (_, fields), alias in zip(_SKILL_PARTS, "csw", strict=True) for f in fields)}
FROM {SkillCheck._meta.db_table} c JOIN {Skill._meta.db_table} s ON s.id = c.skill_id
JOIN {Workbook._meta.db_table} w ON w.id = s.workbook_id
WHERE c.user_id = %s AND c.due_at < %s AND s.is_active ORDER BY c.due_at, c.id LIMIT %s"""  # noqa: S608
_NAMES = [[f.attname for f in fields] for _, fields in _SKILL_PARTS]


def _due_skills(*, user_id: int, until: datetime, limit: int) -> list[SkillCheck]:
    """Ticked skills due before ``until`` with their skill and workbook: one raw statement whose rows
    become the instances ``select_related`` would build (without composing the query each time)."""
    with connection.cursor() as cursor:
        cursor.execute(_DUE_SKILLS, [user_id, until, limit])
        rows = cursor.fetchall()
    checks = []
    for row in rows:
        values, at = [], 0
        for _, fields in _SKILL_PARTS:
            values.append(row[at : at + len(fields)])
            at += len(fields)
        check = SkillCheck.from_db(connection.alias, _NAMES[0], values[0])
        skill = Skill.from_db(connection.alias, _NAMES[1], values[1])
        skill.workbook = Workbook.from_db(connection.alias, _NAMES[2], values[2])
        check.skill = skill
        checks.append(check)
    return checks


def reviews_due(*, user: User, until: datetime, limit: int = 200) -> ReviewQueue:
    """Cards and ticked skills due before ``until`` (the end of the learner's day), soonest first,
    with the cards' exercises (by primary key, cached per content generation)."""
    cards = due_cards(user_id=user.pk, until=until, limit=limit)
    exercises = _exercises_by_id({c.exercise_id for c in cards})
    for card in cards:
        card.exercise = exercises[card.exercise_id]
    skills = _due_skills(user_id=user.pk, until=until, limit=limit)
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
