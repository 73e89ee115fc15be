"""The learner's mastery: solved out of total per published workbook and chapter, split by kind
(the progress page and its charts)."""

from __future__ import annotations

from dataclasses import dataclass, field

from apps.accounts.models import User
from apps.exercises.models import Exercise, Workbook
from apps.exercises.selectors import Counts
from apps.progress.models import ExerciseProgress


@dataclass
class Mastery:
    """Solved out of total for a workbook or chapter, with the split by kind."""

    key: str
    title: str
    chapters: list[Mastery] = field(default_factory=list)
    kinds: dict[str, list[int]] = field(default_factory=dict, repr=False)  # kind: [solved, total]
    # Solved only through an answer accepted with a unit note (counted in the solved figures too).
    with_note: int = 0

    def add(self, kind: str, solved: bool, *, noted: bool = False) -> None:
        pair = self.kinds.setdefault(kind, [0, 0])
        pair[0] += solved
        pair[1] += 1
        self.with_note += solved and noted

    @property
    def by_kind(self) -> dict[str, Counts]:
        return {kind: Counts(total, solved) for kind, (solved, total) in self.kinds.items()}

    @property
    def tally(self) -> Counts:
        return Counts(sum(t for _, t in self.kinds.values()), sum(s for s, _ in self.kinds.values()))


def mastery(*, user: User, workbook: Workbook | None = None) -> list[Mastery]:
    """The learner's mastery per published workbook (or one), each with its chapters. Two queries."""
    exercises = Exercise.objects.filter(is_active=True, workbook__is_published=True)
    if workbook is not None:
        exercises = exercises.filter(workbook=workbook)
    rows = exercises.order_by("workbook__position", "workbook__slug", "chapter__number", "position").values_list(
        "pk", "kind", "workbook__slug", "workbook__title", "chapter__number", "chapter__title"
    )
    solved = dict(
        ExerciseProgress.objects.filter(user=user, solved_at__isnull=False).values_list(
            "exercise_id", "solved_with_note"
        )
    )
    books: dict[str, Mastery] = {}
    chapters: dict[tuple[str, int], Mastery] = {}
    for pk, kind, slug, title, ch_number, ch_title in rows:
        book = books.get(slug)
        if book is None:
            book = books[slug] = Mastery(key=slug, title=title)
        chapter = chapters.get((slug, ch_number))
        if chapter is None:
            chapter = chapters[(slug, ch_number)] = Mastery(key=str(ch_number), title=ch_title)
            book.chapters.append(chapter)
        book.add(kind, pk in solved, noted=solved.get(pk, False))
        chapter.add(kind, pk in solved, noted=solved.get(pk, False))
    return list(books.values())
