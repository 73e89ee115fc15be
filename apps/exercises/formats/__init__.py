"""The answer formats, by name: ``formats.get(exercise.format)``. Each is one module here.

Adding a format: a module with a ``Format`` subclass, its widget template
(``templates/exercises/widgets/<name>.html``), a line in ``ALL`` and its value in
``choices.AnswerFormat`` (the database constraint lists the names, so a migration too).
"""

from __future__ import annotations

from apps.exercises.formats.base import FORMAT_FIELDS, AnswerShown, Format
from apps.exercises.formats.choice import Choice
from apps.exercises.formats.code import Code
from apps.exercises.formats.integer import Integer
from apps.exercises.formats.lines import Lines
from apps.exercises.formats.numeric import Numeric
from apps.exercises.formats.order import Order
from apps.exercises.formats.parts import Parts
from apps.exercises.formats.table import Table

# In this order in the OpenAPI schema's oneOf lists.
ALL: tuple[Format, ...] = (
    Numeric(),
    Choice(),
    Order(),
    Lines(),
    Table(),
    Parts(),
    Code(),
    Integer(),
)

_BY_NAME: dict[str, Format] = {f.name: f for f in ALL}


def get(name: str) -> Format:
    """The format named ``name`` (an ``AnswerFormat`` value). KeyError for an unknown name."""
    return _BY_NAME[str(name)]


__all__ = ["ALL", "FORMAT_FIELDS", "AnswerShown", "Format", "get"]
