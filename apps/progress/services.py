"""Writes on a learner's per-exercise progress. Called inside the grading transaction."""

from __future__ import annotations

from django.utils import timezone

from apps.accounts.models import User
from apps.exercises.choices import Verdict
from apps.exercises.models import Attempt, Exercise
from apps.progress.models import ExerciseProgress


def progress_lock(*, user: User, exercise: Exercise) -> ExerciseProgress:
    """The learner's row for this exercise, created if needed and locked for the transaction."""
    progress, _ = ExerciseProgress.objects.select_for_update().get_or_create(
        user=user, exercise=exercise, defaults={"workbook_id": exercise.workbook_id}
    )
    return progress


def progress_record_attempt(*, progress: ExerciseProgress, attempt: Attempt) -> bool:
    """Count a graded attempt; mark the first solve. Returns whether this attempt first solved it."""
    progress.attempts += 1
    progress.last_attempt_at = attempt.created_at or timezone.now()
    fields = ["attempts", "last_attempt_at"]
    first_solve = attempt.verdict == Verdict.CORRECT and progress.solved_at is None
    if first_solve:
        progress.solved_at = progress.last_attempt_at
        progress.first_solve_attempt = attempt
        fields += ["solved_at", "first_solve_attempt"]
    progress.save(update_fields=fields)
    return first_solve
