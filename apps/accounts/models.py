from django.contrib.auth.models import AbstractUser
from django.db import models


class Role(models.TextChoices):
    STUDENT = "student", "Student"
    INSTRUCTOR = "instructor", "Instructor"
    AUTHOR = "author", "Author"


class User(AbstractUser):
    """A learner, instructor or author. Authors edit content in the admin (``is_staff``)."""

    role = models.CharField(max_length=16, choices=Role.choices, default=Role.STUDENT)
    time_zone = models.CharField(
        max_length=64,
        blank=True,
        help_text="IANA name (Asia/Tokyo). Blank: the first cohort's time zone, else the site's. Days for streaks.",
    )
    on_global_board = models.BooleanField(
        default=True, help_text="Shown on the global leaderboard. Cohort boards and instructors always see you."
    )
    practice_paused_until = models.DateTimeField(
        null=True,
        blank=True,
        help_text="Until then practice on some exercises may be paused (an exam being taken): the apps that "
        "pause it say which. Read with the user, so practice costs no query when it is blank or past.",
    )

    # Set by set_unusable_password, read (and cleared) after the save that stores it: with
    # Django's own ``_password`` (set by set_password, but not by a hash upgrade at sign-in) it
    # tells apps.accounts.signals that the password changed, whatever path changed it.
    _password_removed = False

    def set_unusable_password(self) -> None:
        super().set_unusable_password()
        self._password_removed = True

    def password_changed_on_save(self, update_fields: frozenset[str] | None) -> bool:
        """Whether the save under way stores a new password (or none), and forget it was set."""
        changed = getattr(self, "_password", None) is not None or self._password_removed
        self._password_removed = False
        return changed and (update_fields is None or "password" in update_fields)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=models.Q(role__in=Role.values), name="user_role_valid"),
        ]
