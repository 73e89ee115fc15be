"""The text a draft of an existing exercise starts from."""

from __future__ import annotations

from apps.exercises import selectors as exercise_selectors
from apps.exercises.models import Exercise


def exercise_yaml(*, exercise: Exercise) -> str:
    """The exercise's block as written in its chapter file (comments included), as the exercise
    admin's editor shows it: a draft of an edit changes only the lines the author changes."""
    return exercise_selectors.exercise_source(exercise=exercise)


def normalized(text: str, *, exercise: Exercise | None) -> str:
    """A textarea's text as the author meant it: browsers send its lines with CRLF, which the
    exercise's own text (nearly always) does not have."""
    if exercise is not None and "\r\n" in exercise_yaml(exercise=exercise):
        return text
    return text.replace("\r\n", "\n")
