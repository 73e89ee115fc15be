"""Path converters that refuse malformed values before a view (and the database) sees them.

A value the converter refuses makes the pattern not match, so the request is a plain 404 (JSON
under /api/, the HTML page elsewhere). Django's own ``str`` and ``slug`` converters take any
length, and ``str`` takes a NUL, which PostgreSQL text cannot hold (psycopg raises DataError).
"""

from __future__ import annotations

from django.urls import register_converter

SLUG_MAX_LENGTH = 64  # Workbook.slug and Skill.key are SlugField(max_length=64)
EXERCISE_NUMBER_MAX_LENGTH = 16  # Exercise.number is CharField(max_length=16)


class BoundedSlugConverter:
    """A workbook slug or a skill key: letters, digits, - and _, at most 64 characters."""

    regex = "[-a-zA-Z0-9_]+"

    def to_python(self, value: str) -> str:
        if len(value) > SLUG_MAX_LENGTH:
            raise ValueError("too long")  # a ValueError here means "no match": a 404
        return value

    def to_url(self, value: str) -> str:
        return value


class ExerciseNumberConverter(BoundedSlugConverter):
    """An exercise number as the content schema allows it (``4.1``, ``q5``, ``q1a``)."""

    # The same format as apps/exercises/content/schema.py's _NUMBER.
    regex = r"(?:[0-9]+\.[0-9]+|q[0-9]+[a-z]?)"

    def to_python(self, value: str) -> str:
        if len(value) > EXERCISE_NUMBER_MAX_LENGTH:
            raise ValueError("too long")
        return value


def register() -> None:
    register_converter(BoundedSlugConverter, "slug64")
    register_converter(ExerciseNumberConverter, "exercise_number")
