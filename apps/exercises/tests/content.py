"""What the real content files hold, read through the loader. Tests compare the platform with
these instead of hard-coding counts, so adding an exercise or a chapter breaks no test."""

from __future__ import annotations

from functools import cache

from apps.exercises.content.loader import load_workbook, workbook_dirs
from apps.exercises.content.report import DEFAULT_ROOT
from apps.exercises.content.schema import ExerciseSpec, WorkbookSpec


def slugs() -> list[str]:
    """Every workbook in the content folder."""
    return [folder.name for folder in workbook_dirs(DEFAULT_ROOT)]


@cache
def workbook(slug: str) -> WorkbookSpec:
    # Expected values of code tests are computed by running reference solutions: not needed here.
    return load_workbook(DEFAULT_ROOT / slug, compute_expected=False)


def exercises(slug: str, chapter: int | None = None) -> list[ExerciseSpec]:
    """A workbook's (or one chapter's) exercises, in order."""
    return [e for c in workbook(slug).chapters if chapter is None or c.number == chapter for e in c.exercises]


def exercise_count(slug: str) -> int:
    return len(exercises(slug))


def chapter_numbers(slug: str) -> list[int]:
    return [c.number for c in workbook(slug).chapters]


def skill_count(slug: str) -> int:
    skills = workbook(slug).skills
    return len(skills.skills) if skills else 0
