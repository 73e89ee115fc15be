"""Enumerations shared by models, content files and the API."""

from django.db import models


class ExerciseKind(models.TextChoices):
    """What the exercise asks of the learner, as the seeds name it."""

    DERIVE = "derive", "Derive"
    TRACE = "trace", "Trace"
    DESIGN = "design", "Design"
    BUILD = "build", "Build"
    DEBUG = "debug", "Debug"
    TABLE = "table", "Table"
    CHOICE = "choice", "Choice"
    CODE = "code", "Code"
    CHECKLIST = "checklist", "Checklist"


class AnswerFormat(models.TextChoices):
    """How the answer is entered and graded."""

    NUMERIC = "numeric", "Number with unit"
    CHOICE = "choice", "Single or multiple choice"
    ORDER = "order", "Order the steps"
    LINES = "lines", "Select the buggy lines"
    TABLE = "table", "Table of cells"
    CODE = "code", "Code"


class Verdict(models.TextChoices):
    CORRECT = "correct", "Correct"
    INCORRECT = "incorrect", "Incorrect"
