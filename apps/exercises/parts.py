"""The parts of an exercise: what must be solved, and which part a submission answers.

Most exercises are one part. A Debug exercise whose snippet comes with tests has two: the buggy
lines (graded instantly) and the fixed code (graded in the sandbox); it is solved once both are.
Each part is a bit in ``ExerciseProgress.parts_solved``.
"""

from __future__ import annotations

from typing import Any

from apps.exercises.choices import AnswerFormat, AttemptPart
from apps.exercises.content.schema import ExerciseSpec


def parts(spec: ExerciseSpec) -> tuple[AttemptPart, ...]:
    if spec.format == AnswerFormat.CODE:
        return (AttemptPart.CODE,)
    if spec.format == AnswerFormat.LINES and spec.code is not None and spec.code.cases:
        return (AttemptPart.LINES, AttemptPart.CODE)
    return (AttemptPart.WHOLE,)


def part_of(spec: ExerciseSpec, payload: dict[str, Any]) -> AttemptPart:
    """The part a payload answers: code goes to the sandbox, anything else is graded here."""
    available = parts(spec)
    if AttemptPart.CODE in available and (spec.format == AnswerFormat.CODE or "code" in payload):
        return AttemptPart.CODE
    return available[0]


def bit(spec: ExerciseSpec, part: str) -> int:
    return 1 << parts(spec).index(AttemptPart(part))


def all_bits(spec: ExerciseSpec) -> int:
    return (1 << len(parts(spec))) - 1
