"""A learner's progress, streak and scores, and the cohorts instructors teach.

Every table here is written in the same transaction as the graded attempt that changes it, so a
read is a lookup, never an aggregation over raw attempts:

- ``ExerciseProgress``: one row per (learner, exercise): solved, revealed, hints, attempts.
- ``LearnerStats``: one row per learner: day streak, points, solves (a streak read is one row).
- ``DailyActivity``: solves per learner per local day (the calendar heatmap).
- ``Score`` and ``ScoreBucket``: leaderboard rows per board, and how many learners hold each
  score on a global board, so "my rank" is a sum over buckets, not a count over 100k learners.
- ``ScoreSlot``: the same counts split by when the learners reached their score (per UTC day,
  hour and minute), so the learners tied with me who got there first are a sum too.
- ``SkillCheck``: a learner's ticked skill and its spaced-retrieval schedule (next review due).
- ``Cohort``, ``CohortWorkbook``, ``Membership``: classes with a join code, a time zone and
  assigned workbooks with optional due dates.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class Memory(models.Model):
    """What the FSRS scheduler knows of one thing a learner should remember (apps/progress/srs.py)."""

    state = models.PositiveSmallIntegerField(default=1, help_text="FSRS state: 1 learning, 2 review, 3 relearning.")
    stability = models.FloatField(null=True, blank=True, help_text="Days until recall falls to 90%.")
    difficulty = models.FloatField(null=True, blank=True, help_text="FSRS difficulty, 1 (easy) to 10.")
    due_at = models.DateTimeField(help_text="When the next review is due.")
    last_review_at = models.DateTimeField(null=True, blank=True)
    reviews = models.PositiveIntegerField(default=0)
    lapses = models.PositiveIntegerField(default=0, help_text="Reviews rated Again.")

    class Meta:
        abstract = True


class ReviewCard(Memory):
    """A solved exercise to prove again, on fresh numbers, when FSRS says it is due."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="review_cards")
    exercise = models.ForeignKey("exercises.Exercise", on_delete=models.CASCADE, related_name="+")
    reviewing_since = models.DateTimeField(
        null=True, blank=True, help_text="A review is under way (started, not yet rated): its outcome rates the card."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "exercise"], name="card_unique_user_exercise")]
        # The review queue is one range read of this index: a learner's cards due before a moment.
        indexes = [models.Index(fields=["user", "due_at"], name="card_user_due")]

    def __str__(self) -> str:
        return f"card {self.user_id}:{self.exercise_id}"


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
    solved_with_note = models.BooleanField(
        default=False,
        db_default=False,
        help_text="Solved only through answers accepted with a unit note (the GiB figure labelled GB); "
        "a correct answer in the unit asked clears it.",
    )
    parts_solved = models.PositiveSmallIntegerField(
        default=0, help_text="Bit set of solved parts (a Debug: 1 = buggy lines, 2 = fixed code)."
    )
    # History a workbook reset keeps: points are earned once, and statistics describe the first try.
    first_solved_at = models.DateTimeField(null=True, blank=True)
    attempts_to_solve = models.PositiveIntegerField(
        null=True, blank=True, help_text="Graded attempts up to and including the first solve."
    )
    forfeited = models.BooleanField(default=False, help_text="Revealed the answer before ever solving: no points.")
    points = models.PositiveIntegerField(default=0, help_text="Leaderboard points this exercise earned (once).")
    round = models.PositiveIntegerField(
        default=1,
        db_default=1,
        help_text="Which numbers the learner is on (a varying exercise): 1 at first, one more for each "
        "\u201ctry new numbers\u201d or spaced review. Round 0 is the seed's numbers.",
    )
    reviewing = models.BooleanField(
        default=False, db_default=False, help_text="A spaced review of it is under way: its outcome rates the card."
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


class LearnerStats(models.Model):
    """One row per learner who has solved something: the streak read is this row alone."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, primary_key=True, related_name="+")
    time_zone = models.CharField(max_length=64, help_text="The time zone days are counted in (effective setting).")
    current_streak = models.PositiveIntegerField(default=0)
    best_streak = models.PositiveIntegerField(default=0)
    last_day = models.DateField(null=True, blank=True, help_text="The latest local day with a solve.")
    solves = models.PositiveIntegerField(default=0, help_text="Exercises solved, counting re-solves after a reset.")
    points = models.PositiveIntegerField(default=0)

    class Meta:
        verbose_name_plural = "learner stats"
        constraints = [
            models.CheckConstraint(
                condition=models.Q(best_streak__gte=models.F("current_streak")), name="stats_best_ge_current"
            )
        ]

    def __str__(self) -> str:
        return f"stats:{self.user_id}"


class DailyActivity(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    day = models.DateField(help_text="In the learner's time zone at the time.")
    solves = models.PositiveIntegerField(default=0)
    points = models.PositiveIntegerField(default=0)

    class Meta:
        verbose_name_plural = "daily activity"
        constraints = [models.UniqueConstraint(fields=["user", "day"], name="activity_unique_user_day")]

    def __str__(self) -> str:
        return f"{self.user_id}@{self.day}"


class Score(models.Model):
    """A learner's points on one board.

    Boards: ``all`` and ``week:<monday>`` (global; weeks in the site's time zone), and
    ``cohort:<id>:week:<monday>`` (weeks in the cohort's time zone). A cohort's all-time board
    is its members' ``all`` rows. A row exists once a learner has a point on that board.
    """

    board = models.CharField(max_length=48)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    points = models.PositiveIntegerField(default=0)
    reached_at = models.DateTimeField(help_text="When the points reached this total: earlier wins a tie.")
    hidden = models.BooleanField(default=False, help_text="Left off global boards at the learner's wish.")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["board", "user"], name="score_unique_board_user")]
        indexes = [
            # Top-N and the tie count behind "my rank" are range scans of this index.
            models.Index(
                fields=["board", "-points", "reached_at", "user"],
                name="score_board_rank",
                condition=models.Q(hidden=False),
            ),
            models.Index(fields=["user", "board"], name="score_user_board"),
        ]

    def __str__(self) -> str:
        return f"{self.board}:{self.user_id}={self.points}"


class ScoreBucket(models.Model):
    """How many visible learners hold ``points`` on a global board (rank = learners above + ties ahead)."""

    board = models.CharField(max_length=48)
    points = models.PositiveIntegerField()
    learners = models.IntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["board", "points"], name="bucket_unique_board_points"),
            models.CheckConstraint(condition=models.Q(learners__gte=0), name="bucket_learners_nonnegative"),
        ]

    def __str__(self) -> str:
        return f"{self.board}:{self.points}×{self.learners}"


class ScoreSlot(models.Model):
    """How many visible learners reached ``points`` on a global board within one UTC day, hour or
    minute (``span`` seconds from ``start``).

    Ties are broken by who reached the score first, and a tie can hold tens of thousands of
    learners. "Tied with me and ahead of me" is then the day slots before my day, the hour slots
    of my day before my hour, the minute slots of my hour before my minute, and a count of the
    rows within my minute: a few hundred index entries at most, whatever the tie's size. Slot
    rows are written with their bucket row locked first, so the bucket row serializes them. A slot
    whose learners all moved on is deleted.
    """

    DAY, HOUR, MINUTE = 86400, 3600, 60
    SPANS = (DAY, HOUR, MINUTE)

    board = models.CharField(max_length=48)
    points = models.PositiveIntegerField()
    span = models.PositiveIntegerField(help_text="Seconds: 86400, 3600 or 60.")
    start = models.DateTimeField(help_text="The slot's first instant, on a UTC boundary of its span.")
    learners = models.IntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["board", "points", "span", "start"], name="slot_unique_board_points_span"),
            models.CheckConstraint(condition=models.Q(learners__gte=0), name="slot_learners_nonnegative"),
        ]

    def __str__(self) -> str:
        return f"{self.board}:{self.points}@{self.start:%Y-%m-%dT%H:%M}/{self.span}s×{self.learners}"


class Cohort(models.Model):
    class Numbers(models.TextChoices):
        PER_LEARNER = "per_learner", "Each learner their own numbers"
        SHARED = "shared", "The same numbers for everyone (the book's first)"

    name = models.CharField(max_length=120)
    instructor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="cohorts_taught")
    time_zone = models.CharField(max_length=64, default="UTC", help_text="IANA name; weeks and due dates use it.")
    join_code = models.CharField(max_length=16, unique=True, help_text="Learners join with it (case-insensitive).")
    numbers = models.CharField(
        max_length=16,
        choices=Numbers.choices,
        default=Numbers.PER_LEARNER,
        db_default=Numbers.PER_LEARNER,
        help_text="Varying exercises: each learner their own numbers (no copying), or one set for the whole "
        "class (for discussing in a lecture): the seed's numbers first, then shared new rounds.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    workbooks = models.ManyToManyField("exercises.Workbook", through="CohortWorkbook", related_name="+")
    members = models.ManyToManyField(settings.AUTH_USER_MODEL, through="Membership", related_name="cohorts")

    class Meta:
        ordering = ["name", "id"]

    def __str__(self) -> str:
        return self.name


class CohortWorkbook(models.Model):
    cohort = models.ForeignKey(Cohort, on_delete=models.CASCADE, related_name="assignments")
    workbook = models.ForeignKey("exercises.Workbook", on_delete=models.CASCADE, related_name="+")
    due_on = models.DateField(null=True, blank=True, help_text="Due at the end of this day in the cohort's time zone.")

    class Meta:
        ordering = ["workbook__position", "workbook__slug"]
        constraints = [models.UniqueConstraint(fields=["cohort", "workbook"], name="assignment_unique")]

    def __str__(self) -> str:
        return f"{self.workbook} for {self.cohort}"


class Membership(models.Model):
    cohort = models.ForeignKey(Cohort, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    joined_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["joined_at", "id"]
        constraints = [models.UniqueConstraint(fields=["cohort", "user"], name="membership_unique")]

    def __str__(self) -> str:
        return f"{self.user_id}∈{self.cohort_id}"


class SkillCheck(Memory):
    """A skill the learner says they can do cold, and when to prove it again: scheduled by FSRS
    like the review cards ("remembered" rates Good, "forgot" Again)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="skill_checks")
    skill = models.ForeignKey("exercises.Skill", on_delete=models.CASCADE, related_name="checks")
    checked_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "skill"], name="skillcheck_unique_user_skill")]
        indexes = [models.Index(fields=["user", "due_at"], name="skillcheck_user_due")]

    def __str__(self) -> str:
        return f"{self.user_id}:{self.skill_id}"
