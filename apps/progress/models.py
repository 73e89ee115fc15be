"""A learner's state on each exercise: solved, revealed, hints used, attempts counted.

One row per (user, exercise), written in the same transaction as the attempt that changes it.
Mastery, streaks and leaderboards (the progress issue) build on these rows.
"""

from django.conf import settings
from django.db import models


class ExerciseProgress(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="exercise_progress")
    exercise = models.ForeignKey("exercises.Exercise", on_delete=models.CASCADE, related_name="progress")
    workbook = models.ForeignKey("exercises.Workbook", on_delete=models.CASCADE, related_name="+")
    attempts = models.PositiveIntegerField(default=0, help_text="Graded attempts; invalid input does not count.")
    hints_used = models.PositiveIntegerField(default=0)
    solved_at = models.DateTimeField(null=True, blank=True)
    revealed_at = models.DateTimeField(null=True, blank=True, help_text="When the learner gave up and saw the answer.")
    first_solve_attempt = models.ForeignKey(
        "exercises.Attempt", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    last_attempt = models.ForeignKey(
        "exercises.Attempt", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    parts_solved = models.PositiveSmallIntegerField(
        default=0, help_text="Bit set of solved parts (a Debug: 1 = buggy lines, 2 = fixed code)."
    )

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "exercise"], name="progress_unique_user_exercise")]
        indexes = [models.Index(fields=["user", "workbook"], name="progress_user_workbook")]

    def __str__(self) -> str:
        return f"{self.user_id}:{self.exercise_id}"

    @property
    def solved(self) -> bool:
        return self.solved_at is not None

    @property
    def revealed(self) -> bool:
        return self.revealed_at is not None

    @property
    def answer_visible(self) -> bool:
        """Answers, alternates and derivations are shown only after solving or revealing."""
        return self.solved or self.revealed

    @property
    def solved_after_reveal(self) -> bool:
        return bool(self.solved_at and self.revealed_at and self.revealed_at <= self.solved_at)
