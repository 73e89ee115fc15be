"""The parts of an exercise: what must be solved, and which part a submission answers.

Most exercises are one part. A Debug exercise whose snippet comes with tests has two: the buggy
lines (graded instantly) and the fixed code (graded in the sandbox); it is solved once both are.
Each part is a bit in ``ExerciseProgress.parts_solved``.
"""

from __future__ import annotations

from typing import Any

from apps.exercises import formats
from apps.exercises.choices import AttemptPart
from apps.exercises.content.schema import ExerciseSpec


def parts(spec: ExerciseSpec) -> tuple[AttemptPart, ...]:
    return formats.get(spec.format).parts(spec)


def part_of(spec: ExerciseSpec, payload: dict[str, Any]) -> AttemptPart:
    """The part a payload answers: code goes to the sandbox, anything else is graded here."""
    return formats.get(spec.format).part_of(spec, payload)


def bit(spec: ExerciseSpec, part: str) -> int:
    return 1 << parts(spec).index(AttemptPart(part))


def all_bits(spec: ExerciseSpec) -> int:
    return (1 << len(parts(spec))) - 1
