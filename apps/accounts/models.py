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

    class Meta:
        constraints = [
            models.CheckConstraint(condition=models.Q(role__in=Role.values), name="user_role_valid"),
        ]
