"""Workbooks, chapters, exercises, their versions, and learners' attempts.

An Exercise is the stable identity (workbook + key, the content file's ``id:``) that attempts and
progress point at; its number is display only, and URLs find it among the active exercises. What
it asks and how it is graded lives in an immutable ExerciseVersion: when the grading spec changes,
``sync_content`` adds a version and attempts keep pointing at the one they were graded against.
Prose edits (prompt, explanation, hints) update the current version in place.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from apps.exercises.choices import AnswerFormat, AttemptPart, AttemptStatus, CodeOutcome, ExerciseKind, Verdict

__all__ = [
    "AnswerFormat",
    "Attempt",
    "Chapter",
    "ChapterSource",
    "Exercise",
    "ExerciseKind",
    "ExerciseSource",
    "ExerciseVersion",
    "Skill",
    "Verdict",
    "Workbook",
]


class Workbook(models.Model):
    slug = models.SlugField(max_length=64, unique=True)
    title = models.CharField(max_length=200)
    summary = models.TextField(blank=True)
    prerequisites = models.TextField(blank=True)
    source = models.CharField(max_length=300, blank=True)
    position = models.PositiveIntegerField(default=0)
    is_published = models.BooleanField(default=True)
    skills_protocol = models.TextField(blank=True, help_text="Markdown: how to use the skills checklist.")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["position", "slug"]

    def __str__(self) -> str:
        return self.title


class Chapter(models.Model):
    workbook = models.ForeignKey(Workbook, on_delete=models.CASCADE, related_name="chapters")
    number = models.PositiveIntegerField()
    title = models.CharField(max_length=200)
    intro = models.TextField(blank=True, help_text="Markdown with {{ formula }} placeholders over `givens`.")
    givens = models.JSONField(default=dict, blank=True)
    derived = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["workbook", "number"]
        constraints = [models.UniqueConstraint(fields=["workbook", "number"], name="chapter_unique_number")]

    def __str__(self) -> str:
        return f"{self.workbook.slug} · {self.number}. {self.title}"


class Exercise(models.Model):
    workbook = models.ForeignKey(Workbook, on_delete=models.CASCADE, related_name="exercises")
    chapter = models.ForeignKey(Chapter, on_delete=models.CASCADE, related_name="exercises")
    key = models.SlugField(
        max_length=48,
        db_index=False,  # exercise_unique_key indexes it
        help_text="The content file's `id:`: the exercise's identity, which renumbering leaves alone. "
        "`retired-<pk>` for an exercise retired before ids existed.",
    )
    number = models.CharField(
        max_length=16, help_text="As the source numbers it: 0.1, q1a. Display only; unique among active exercises."
    )
    position = models.PositiveIntegerField(default=0, help_text="Order within the chapter.")
    title = models.CharField(max_length=200)
    kind = models.CharField(max_length=16, choices=ExerciseKind.choices)
    format = models.CharField(max_length=16, choices=AnswerFormat.choices)
    difficulty = models.PositiveSmallIntegerField(default=2)
    # Retired exercises (gone from the content files) stay for their attempts but are not listed.
    is_active = models.BooleanField(default=True)
    current_version = models.ForeignKey(
        "ExerciseVersion", on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )

    class Meta:
        ordering = ["workbook", "chapter__number", "position"]
        constraints = [
            models.UniqueConstraint(fields=["workbook", "key"], name="exercise_unique_key"),
            # A retired exercise keeps its last number, which a new exercise may take.
            models.UniqueConstraint(
                fields=["workbook", "number"], condition=models.Q(is_active=True), name="exercise_unique_active_number"
            ),
            models.CheckConstraint(condition=models.Q(kind__in=ExerciseKind.values), name="exercise_kind_valid"),
            models.CheckConstraint(condition=models.Q(format__in=AnswerFormat.values), name="exercise_format_valid"),
            models.CheckConstraint(
                condition=models.Q(difficulty__gte=1, difficulty__lte=3), name="exercise_difficulty_range"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.workbook.slug} {self.number} {self.title}"


class Skill(models.Model):
    """One line of a workbook's skills checklist: something to be able to do cold."""

    workbook = models.ForeignKey(Workbook, on_delete=models.CASCADE, related_name="skills")
    key = models.SlugField(max_length=64, help_text="Stable id from skills.yaml; learners' checks point here.")
    text = models.CharField(max_length=300)
    chapter = models.ForeignKey(Chapter, on_delete=models.SET_NULL, null=True, blank=True, related_name="skills")
    exercises = models.JSONField(default=list, blank=True, help_text="Exercise numbers to practise it with.")
    position = models.PositiveIntegerField(default=0)
    is_active = models.BooleanField(default=True, help_text="Gone from skills.yaml: kept for learners' history.")

    class Meta:
        ordering = ["workbook", "position"]
        constraints = [models.UniqueConstraint(fields=["workbook", "key"], name="skill_unique_key")]

    def __str__(self) -> str:
        return f"{self.workbook.slug} · {self.text}"


class ExerciseVersion(models.Model):
    """One graded form of an exercise: the validated spec (JSON), frozen once attempts exist."""

    exercise = models.ForeignKey(Exercise, on_delete=models.CASCADE, related_name="versions")
    version = models.PositiveIntegerField()
    spec = models.JSONField(help_text="The exercise as in the content file, validated, code inlined.")
    grading_hash = models.CharField(max_length=32, help_text="Hash of what decides a verdict.")
    content_hash = models.CharField(max_length=32, help_text="Hash of the whole spec; changes on prose edits too.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["exercise", "version"]
        constraints = [models.UniqueConstraint(fields=["exercise", "version"], name="version_unique_number")]

    def __str__(self) -> str:
        return f"{self.exercise} v{self.version}"


class Attempt(models.Model):
    """One submission. Unparseable input is answered with an error and not stored.

    Numeric, choice, order, line and table answers are graded on arrival (status ``graded``).
    Code waits for the sandbox: ``queued`` → ``running`` → ``graded``, or ``not_graded`` when the
    platform failed (no Docker, no image): that never counts as an attempt and is never a pass.
    A final state is never overwritten.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="attempts")
    exercise = models.ForeignKey(Exercise, on_delete=models.CASCADE, related_name="attempts")
    version = models.ForeignKey(ExerciseVersion, on_delete=models.PROTECT, related_name="attempts")
    part = models.CharField(
        max_length=8, choices=AttemptPart.choices, default=AttemptPart.WHOLE, blank=True,
        help_text="Which part of a two-part exercise (a Debug's buggy lines, or its fixed code).",
    )  # fmt: skip
    status = models.CharField(max_length=16, choices=AttemptStatus.choices, default=AttemptStatus.GRADED)
    raw = models.JSONField(help_text="What the learner submitted, as submitted.")
    parsed = models.JSONField(default=dict, help_text="What we read: value and unit, choices, order...")
    verdict = models.CharField(max_length=16, choices=Verdict.choices, blank=True, help_text="Empty until graded.")
    outcome = models.CharField(
        max_length=16, choices=CodeOutcome.choices, blank=True, help_text="How a sandbox run ended (code only)."
    )
    score = models.FloatField(default=0.0)
    # db_default as well: the grading hot path inserts attempts with raw SQL (progress.services).
    accepted_with_note = models.BooleanField(
        default=False,
        db_default=False,
        help_text="Accepted only under another unit convention (the GiB figure labelled GB): solved, with a note.",
    )
    counted = models.BooleanField(
        default=True,
        db_default=True,
        help_text="Counts as an attempt. A multi-part answer with parts left empty and every answered part "
        "right does not: leaving parts for later costs nothing.",
    )
    round = models.PositiveIntegerField(
        default=0, db_default=0, help_text="The round of numbers it answered (a varying exercise); 0: the seed's."
    )
    feedback = models.TextField(blank=True)
    details = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True, help_text="When a sandbox worker claimed it.")
    # Code only (apps/sandbox/services.py): nothing accepted is lost when a worker or the broker dies.
    lease_expires_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="Queued: when it is published again if no worker has claimed it. Running: when the claiming "
        "worker's lease runs out (the worker renews it while the run goes on); then it is queued again.",
    )
    claims = models.PositiveSmallIntegerField(
        default=0, db_default=0, help_text="How many times a sandbox worker claimed it (a finish must hold the last)."
    )
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["user", "exercise", "-created_at"], name="attempt_user_exercise"),
            models.Index(fields=["exercise", "verdict"], name="attempt_exercise_verdict"),
            models.Index(
                fields=["status", "created_at"],
                name="attempt_pending",
                condition=models.Q(status__in=["queued", "running"]),
            ),
        ]
        constraints = [
            models.CheckConstraint(
                condition=(
                    models.Q(status="graded", verdict__in=Verdict.values)
                    | ~models.Q(status="graded") & models.Q(verdict="")
                ),
                name="attempt_verdict_iff_graded",
            ),
            models.CheckConstraint(condition=models.Q(status__in=AttemptStatus.values), name="attempt_status_valid"),
            models.CheckConstraint(condition=models.Q(score__gte=0, score__lte=1), name="attempt_score_range"),
        ]

    def __str__(self) -> str:
        return f"attempt {self.pk} {self.status} {self.verdict}"

    @property
    def is_final(self) -> bool:
        return self.status in (AttemptStatus.GRADED, AttemptStatus.NOT_GRADED)


class ChapterSource(models.Model):
    """The chapter file as the author wrote it, around its exercises' blocks (each kept by its
    exercise's ExerciseSource): ``head + blocks in order + tail`` is the file byte for byte.

    A table of its own, not columns: exercise and chapter rows are read on every learner request,
    and kilobytes of text they never show would ride along (bench/pages.py)."""

    chapter = models.OneToOneField(Chapter, on_delete=models.CASCADE, primary_key=True, related_name="source")
    name = models.CharField(max_length=200, help_text="The file's name in the workbook's chapters/ folder.")
    head = models.TextField(blank=True, help_text="The file's text before its first exercise.")
    tail = models.TextField(blank=True, help_text="The file's text after its exercises (usually none).")

    def __str__(self) -> str:
        return self.name


class ExerciseSource(models.Model):
    """An exercise's block in its chapter file as the author wrote it: its list item from the ``- ``
    line up to the next item, comments included. Downloads and the admin editor show this text."""

    exercise = models.OneToOneField(Exercise, on_delete=models.CASCADE, primary_key=True, related_name="source")
    text = models.TextField()

    def __str__(self) -> str:
        return f"source of {self.exercise_id}"
