"""Types shared by every answer format's grader."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class InvalidAnswer(Exception):
    """Input we cannot grade (unparseable, wrong dimension, malformed). Costs no attempt.

    ``understood`` says what we read, so the learner can see exactly where we parted ways.
    """

    def __init__(self, code: str, message: str, *, understood: str | None = None, field: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.understood = understood
        self.field = field  # the part or cell that could not be read, in a multi-field answer


@dataclass
class GradeResult:
    correct: bool
    feedback: str
    score: float = 0.0
    # What we read from the input, stored with the attempt (value and unit for numeric answers).
    parsed: dict[str, Any] = field(default_factory=dict)
    # Format-specific verdict details: per-cell verdicts, the first misplaced step, and so on.
    details: dict[str, Any] = field(default_factory=dict)
    # Accepted only under another unit convention (the GiB figure labelled GB): solved, with a note.
    noted: bool = False
    # Whether it counts as an attempt: parts left for later, beside only right ones, cost nothing.
    counts: bool = True

    def __post_init__(self) -> None:
        if self.correct and self.score == 0.0:
            self.score = 1.0
