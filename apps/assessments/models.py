"""Assessments: what an instructor sets (Assessment, its questions and pools), what each learner
gets (an Instance with its drawn questions and numbers), what they answered (Submission), and what
the instructor changed for one learner (Override) or for one score (ScoreOverride, kept forever).

Practice stays practice: a submission here is graded like an attempt (the same graders, on the
numbers stored with the question) but it is not an ``exercises.Attempt``, so mastery, streaks,
review cards and leaderboards never see it."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class Kind(models.TextChoices):
    HOMEWORK = "homework", "Homework"
    EXAM = "exam", "Exam"


class Verdicts(models.TextChoices):
    LIVE = "live", "Right after each answer"
    AFTER_CLOSE = "after_close", "Only after the assessment closes"


class Assessment(models.Model):
    """Graded work set for one cohort.

    Credit over time: 100% until ``due_at`` (or ``closes_at`` when there is no due date), then each
    of ``late_rules`` in turn (``[{"until": ISO datetime, "credit": 50}]``), then 0; no answer is
    taken after ``closes_at``. A learner's override moves these for them alone.
    """

    cohort = models.ForeignKey("progress.Cohort", on_delete=models.CASCADE, related_name="assessments")
    slug = models.SlugField(max_length=80, help_text="Unique in its cohort; used in URLs and the CSV export.")
    title = models.CharField(max_length=200)
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.HOMEWORK)
    instructions = models.TextField(blank=True, help_text="Shown above the questions (plain text).")
    opens_at = models.DateTimeField()
    due_at = models.DateTimeField(null=True, blank=True, help_text="Full credit until then; blank: until it closes.")
    closes_at = models.DateTimeField(help_text="No answer is taken after this (a learner's override may extend it).")
    late_rules = models.JSONField(
        default=list,
        blank=True,
        help_text='After the due date: [{"until": "2026-12-04T23:59:00+00:00", "credit": 50}, …] in order; '
        "0% after the last.",
    )
    time_limit_minutes = models.PositiveIntegerField(
        null=True, blank=True, help_text="Counted by the server from the learner's first open; blank: none."
    )
    max_attempts = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="Graded answers per question; blank: unlimited."
    )
    attempt_credit = models.JSONField(
        default=list,
        blank=True,
        help_text="Percent of a question's points each attempt can earn, e.g. [100, 80, 50] (the last repeats); "
        "blank: 100 every time.",
    )
    verdicts = models.CharField(
        max_length=16,
        choices=Verdicts.choices,
        default=Verdicts.LIVE,
        help_text="When a learner sees right or wrong (and their score).",
    )
    hints = models.BooleanField(default=True, help_text="Homework may offer hints; an exam never does.")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["opens_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["cohort", "slug"], name="assessment_unique_slug"),
            models.CheckConstraint(condition=models.Q(closes_at__gt=models.F("opens_at")), name="assessment_window"),
        ]

    def __str__(self) -> str:
        return self.title

    @property
    def is_exam(self) -> bool:
        return self.kind == Kind.EXAM


class Question(models.Model):
    """A place in an assessment: a fixed exercise (a pool of one), or ``choose`` of the pool's
    exercises drawn per learner. Each drawn exercise is worth ``points``."""

    assessment = models.ForeignKey(Assessment, on_delete=models.CASCADE, related_name="questions")
    position = models.PositiveSmallIntegerField()
    zone = models.CharField(max_length=80, blank=True, help_text="A heading over the questions, e.g. 'Part A'.")
    points = models.FloatField(default=1.0)
    choose = models.PositiveSmallIntegerField(default=1)
    pool = models.ManyToManyField("exercises.Exercise", related_name="+")
    verdicts = models.CharField(
        max_length=16, choices=Verdicts.choices, blank=True, help_text="Blank: as the assessment says."
    )

    class Meta:
        ordering = ["assessment", "position", "id"]
        constraints = [
            models.UniqueConstraint(fields=["assessment", "position"], name="assessment_question_position"),
            models.CheckConstraint(condition=models.Q(points__gte=0), name="assessment_question_points"),
            models.CheckConstraint(condition=models.Q(choose__gte=1), name="assessment_question_choose"),
        ]

    def __str__(self) -> str:
        return f"{self.assessment} · question {self.position}"


class Override(models.Model):
    """One learner's exception: a later due date or close, more time, more attempts; who granted
    it and why. At most one is in force per (assessment, learner); a revoked one is kept."""

    assessment = models.ForeignKey(Assessment, on_delete=models.CASCADE, related_name="overrides")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assessment_overrides")
    due_at = models.DateTimeField(null=True, blank=True)
    closes_at = models.DateTimeField(null=True, blank=True)
    time_factor = models.FloatField(null=True, blank=True, help_text="Time limit × this, e.g. 1.5.")
    extra_attempts = models.PositiveSmallIntegerField(default=0)
    reason = models.TextField()
    granted_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    granted_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )

    class Meta:
        ordering = ["-granted_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["assessment", "user"], condition=models.Q(revoked_at__isnull=True), name="override_one_in_force"
            ),
            models.CheckConstraint(
                condition=models.Q(time_factor__isnull=True) | models.Q(time_factor__gte=1, time_factor__lte=10),
                name="override_time_factor",
            ),
        ]

    def __str__(self) -> str:
        return f"override for {self.user} on {self.assessment}"


class Instance(models.Model):
    """A learner's copy of an assessment: created at their first open, it fixes their questions,
    their numbers and (with a time limit) their deadline."""

    assessment = models.ForeignKey(Assessment, on_delete=models.CASCADE, related_name="instances")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assessment_instances")
    started_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="The learner's first open (blank: an instructor graded it before they opened it).",
    )
    deadline = models.DateTimeField(
        null=True, blank=True, help_text="The time limit's end (with any override), capped by the close."
    )
    submitted_at = models.DateTimeField(null=True, blank=True, help_text="'Submit and close', by the learner.")
    closed_at = models.DateTimeField(
        null=True, blank=True, help_text="When it closed (submitted, time up, or the close), once its score was posted."
    )
    score = models.FloatField(default=0.0, help_text="Points earned, credit applied (before any override).")
    max_score = models.FloatField(default=0.0)
    late = models.BooleanField(default=False, help_text="Some points were earned at reduced credit.")
    score_override = models.FloatField(null=True, blank=True, help_text="Set by an instructor, with a reason.")
    posted_score = models.FloatField(null=True, blank=True, help_text="The last score sent to the LMS.")
    posted_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["assessment", "user"]
        constraints = [models.UniqueConstraint(fields=["assessment", "user"], name="instance_unique")]

    def __str__(self) -> str:
        return f"{self.user} · {self.assessment}"

    @property
    def final_score(self) -> float:
        return self.score if self.score_override is None else self.score_override


class InstanceQuestion(models.Model):
    """One question as this learner got it: the exercise drawn from the pool, and its numbers
    (a round of their own, never one they saw in practice), stored so a reload shows the same."""

    instance = models.ForeignKey(Instance, on_delete=models.CASCADE, related_name="questions")
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="+")
    exercise = models.ForeignKey("exercises.Exercise", on_delete=models.PROTECT, related_name="+")
    version = models.ForeignKey("exercises.ExerciseVersion", on_delete=models.PROTECT, related_name="+")
    position = models.PositiveSmallIntegerField()
    points = models.FloatField()
    variant = models.JSONField(default=dict, blank=True, help_text="The numbers drawn for it (as attempts record).")
    attempts = models.PositiveSmallIntegerField(default=0)
    best = models.FloatField(default=0.0, help_text="Points earned: the best answer, credit applied.")
    hints_used = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["instance", "position"]
        constraints = [models.UniqueConstraint(fields=["instance", "position"], name="instance_question_position")]

    def __str__(self) -> str:
        return f"{self.instance_id}#{self.position}"


class Submission(models.Model):
    """One graded answer to an instance question. An unreadable answer is explained and not kept."""

    item = models.ForeignKey(InstanceQuestion, on_delete=models.CASCADE, related_name="submissions")
    raw = models.JSONField()
    parsed = models.JSONField(default=dict)
    correct = models.BooleanField()
    score = models.FloatField(help_text="0..1 as graded.")
    counted = models.BooleanField(default=True)
    late = models.BooleanField(default=False, help_text="Made after the (learner's) due date.")
    credit = models.FloatField(help_text="Percent of the points this answer could earn (time × attempt).")
    points = models.FloatField()
    feedback = models.TextField(blank=True)
    details = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["item", "created_at", "id"]

    def __str__(self) -> str:
        return f"submission {self.pk} on {self.item_id}"


class ScoreOverride(models.Model):
    """Every manual change of an instance's score, with its reason: the history is never rewritten
    (``score`` None: the override was removed and the computed score stands again)."""

    instance = models.ForeignKey(Instance, on_delete=models.CASCADE, related_name="score_history")
    score = models.FloatField(null=True, blank=True)
    previous = models.FloatField(null=True, blank=True)
    reason = models.TextField()
    by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["instance", "-at", "-id"]

    def __str__(self) -> str:
        return f"{self.instance_id}: {self.previous} → {self.score}"
