"""A draft of an exercise: the YAML an author is working on, not yet what learners see."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models


class DraftStatus(models.TextChoices):
    DRAFT = "draft", "Draft"  # saved, not checked (or edited since it was)
    CHECKING = "checking", "Checking"  # the checks are queued or running
    CHECKED = "checked", "Checked"  # the report is about this very text (passed or not)
    PUBLISHED = "published", "Published"  # applied through the content services; read-only now


def empty_report() -> dict[str, Any]:
    return {}


class Draft(models.Model):
    """An exercise's YAML (a chapter file's exercise entry) for a new exercise of ``chapter``, or a
    pending edit of ``exercise``. Only authors see it (the admin, behind the exercise permission);
    it reaches learners only when published."""

    chapter = models.ForeignKey("exercises.Chapter", on_delete=models.CASCADE, related_name="drafts")
    # The exercise this edits (None: a new one). ``base_version`` is its version when the draft was
    # begun: publishing over a version that moved on since would undo someone else's change.
    exercise = models.ForeignKey(
        "exercises.Exercise", on_delete=models.CASCADE, null=True, blank=True, related_name="drafts"
    )
    base_version = models.ForeignKey(
        "exercises.ExerciseVersion", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    spec_text = models.TextField("Exercise (YAML)")
    status = models.CharField(max_length=16, choices=DraftStatus.choices, default=DraftStatus.DRAFT)
    # What the checks found, with their progress while they run; ``checked_hash`` is the digest of
    # the text they are about (a report about other text is stale).
    report = models.JSONField(default=empty_report, blank=True)
    checked_hash = models.CharField(max_length=64, blank=True, default="")
    check_started_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    updated_at = models.DateTimeField(auto_now=True)
    published_at = models.DateTimeField(null=True, blank=True)
    published_version = models.ForeignKey(
        "exercises.ExerciseVersion", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        ordering = ("-updated_at",)
        constraints = [
            models.CheckConstraint(
                condition=models.Q(status__in=DraftStatus.values), name="authoring_draft_status_valid"
            ),
            models.CheckConstraint(
                condition=~models.Q(status=DraftStatus.PUBLISHED) | models.Q(published_at__isnull=False),
                name="authoring_draft_published_has_time",
            ),
        ]

    def __str__(self) -> str:
        target = f"edit of {self.exercise}" if self.exercise_id else f"new exercise in {self.chapter}"
        return f"Draft {self.pk} ({target})"
