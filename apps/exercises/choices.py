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
    PARTS = "parts", "Several answers (numbers or expressions)"
    CODE = "code", "Code"
    INTEGER = "integer", "Whole number"


class Verdict(models.TextChoices):
    CORRECT = "correct", "Correct"
    INCORRECT = "incorrect", "Incorrect"


class AttemptStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    GRADED = "graded", "Graded"
    NOT_GRADED = "not_graded", "Not graded (platform fault; not counted)"


class AttemptPart(models.TextChoices):
    """The parts of an exercise; each is solved on its own and the exercise once all are."""

    WHOLE = "", "Whole exercise"
    LINES = "lines", "Buggy lines"
    CODE = "code", "Code"


class CodeOutcome(models.TextChoices):
    """How a sandbox run ended. Only ``passed`` is a pass."""

    PASSED = "passed", "Passed"
    FAILED = "failed", "Failed"
    ERROR = "error", "Error"
    TIMEOUT = "timeout", "Time limit"
    MEMORY_LIMIT = "memory_limit", "Memory limit"
    CRASH = "crash", "Crashed"
    OUTPUT_LIMIT = "output_limit", "Output limit"
    NOT_GRADED = "not_graded", "Not graded"
