"""A tiny synthetic workbook, built in code, for tests whose point is behaviour rather than the
real content: they do not break when the content files grow or are renumbered.

Every exercise is numeric (graded in the web process, no sandbox): the answer to ``n.k`` is
``a * b`` for its own givens, so each one has a different right answer.
"""

from __future__ import annotations

from apps.exercises.content.schema import ChapterSpec, ExerciseSpec, WorkbookSpec

SLUG = "synthetic"


def numeric(key: str, number: str, *, a: int = 6, b: int = 7, difficulty: int = 1) -> ExerciseSpec:
    """A numeric exercise: ``a`` × ``b`` parameters."""
    return ExerciseSpec.model_validate(
        {
            "id": key,
            "number": number,
            "title": f"Exercise {key}",
            "kind": "derive",
            "format": "numeric",
            "difficulty": difficulty,
            "prompt": "A layer has {{a}} rows of {{b}} weights. How many parameters does it hold?",
            "explanation": "Rows times weights per row: {{a}} × {{b}} = {{answer}}.",
            "givens": {"a": a, "b": b},
            "derived": {"answer": "a * b"},
            "hints": ["Multiply."],
            "answer": {"value": "answer", "unit": "params"},
        }
    )


def chapter(number: int, exercises: list[ExerciseSpec], title: str = "") -> ChapterSpec:
    return ChapterSpec(number=number, title=title or f"Chapter {number}", exercises=exercises)


def workbook(chapters: list[ChapterSpec], *, slug: str = SLUG, position: int = 90) -> WorkbookSpec:
    return WorkbookSpec.model_validate(
        {"slug": slug, "title": f"Synthetic {slug}", "summary": "A workbook built by a test.", "position": position,
         "chapters": chapters}
    )  # fmt: skip


def small_workbook(*, slug: str = SLUG) -> WorkbookSpec:
    """Two chapters: 1.1-1.4 and 2.1-2.2, ids ``alpha``..``delta`` and ``zeta``, ``eta``."""
    return workbook(
        [
            chapter(1, [numeric("alpha", "1.1", a=2), numeric("beta", "1.2", a=3, difficulty=2),
                        numeric("gamma", "1.3", a=4, difficulty=3), numeric("delta", "1.4", a=5)]),
            chapter(2, [numeric("zeta", "2.1", a=11), numeric("eta", "2.2", a=13, difficulty=2)]),
        ],
        slug=slug,
    )  # fmt: skip
