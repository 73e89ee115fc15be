"""Typed request and response bodies for the progress, leaderboard and cohort API."""

from __future__ import annotations

from typing import Any
from zoneinfo import available_timezones

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from apps.core.fields import StrictCharField
from apps.exercises.choices import AnswerFormat, AttemptPart, AttemptStatus, CodeOutcome, ExerciseKind, Verdict
from apps.exercises.serializers import ProgressCountsOut


class KindTallyOut(serializers.Serializer[Any]):
    kind = serializers.ChoiceField(choices=ExerciseKind.choices)
    solved = serializers.IntegerField()
    total = serializers.IntegerField()


class MasteryCountsOut(ProgressCountsOut):
    by_kind = KindTallyOut(many=True)
    solved_with_note = serializers.IntegerField(
        help_text="Of the solved, those solved only through an answer accepted with a unit note (GiB labelled GB)."
    )


class ChapterMasteryOut(MasteryCountsOut):
    number = serializers.IntegerField()
    title = serializers.CharField()


class WorkbookMasteryOut(MasteryCountsOut):
    slug = serializers.SlugField()
    title = serializers.CharField()
    chapters = ChapterMasteryOut(many=True)


class StreakOut(serializers.Serializer[Any]):
    current = serializers.IntegerField(help_text="Consecutive days with a solve, ending today or yesterday.")
    best = serializers.IntegerField()
    solved_today = serializers.BooleanField()
    last_day = serializers.DateField(allow_null=True, help_text="The latest day with a solve, in `time_zone`.")
    time_zone = serializers.CharField()
    solves = serializers.IntegerField()
    points = serializers.IntegerField()


class ProgressOut(serializers.Serializer[Any]):
    streak = StreakOut()
    workbooks = WorkbookMasteryOut(many=True)


class ResetOut(serializers.Serializer[Any]):
    cleared = serializers.IntegerField(help_text="Exercises whose solved state was cleared.")


class EntryOut(serializers.Serializer[Any]):
    rank = serializers.IntegerField()
    username = serializers.CharField()
    points = serializers.IntegerField()
    me = serializers.BooleanField()


class BoardOut(serializers.Serializer[Any]):
    scope = serializers.ChoiceField(choices=["global", "cohort"])
    period = serializers.ChoiceField(choices=["all", "week"])
    cohort = serializers.IntegerField(allow_null=True)
    week_starts = serializers.DateField(allow_null=True, help_text="Monday of this week, in `time_zone`.")
    time_zone = serializers.CharField()
    ranked = serializers.IntegerField(help_text="Learners with points on this board.")
    entries = EntryOut(many=True)
    me = EntryOut(allow_null=True, help_text="Your rank, even outside the top; null with no points yet.")
    me_hidden = serializers.BooleanField(help_text="You hid yourself from global boards.")


class BoardQueryIn(serializers.Serializer[Any]):
    scope = serializers.ChoiceField(choices=["global", "cohort"], default="global")
    period = serializers.ChoiceField(choices=["all", "week"], default="all")
    cohort = serializers.IntegerField(required=False, min_value=1)
    limit = serializers.IntegerField(required=False, min_value=1, max_value=200, default=50)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs["scope"] == "cohort" and "cohort" not in attrs:
            raise serializers.ValidationError({"cohort": "A cohort board needs `cohort=<id>`."})
        return attrs


class ProfileOut(serializers.Serializer[Any]):
    time_zone = serializers.CharField(allow_blank=True, help_text="Your setting; blank follows your first cohort.")
    effective_time_zone = serializers.CharField(help_text="The zone your days are counted in.")
    on_global_board = serializers.BooleanField()


# The IANA names services.time_zone_validate accepts (it answers `bad_time_zone` for the rest),
# declared in the schema so a client knows what is refused.
TIME_ZONES = sorted(available_timezones())


@extend_schema_field({"type": "string", "enum": TIME_ZONES})
class TimeZoneField(serializers.CharField):
    pass


@extend_schema_field({"type": "string", "enum": ["", *TIME_ZONES]})
class OptionalTimeZoneField(serializers.CharField):
    pass


class StrictBooleanField(serializers.BooleanField):
    """JSON true or false only: DRF's BooleanField also takes 0, 1, "yes", "off"..., which the
    schema's `boolean` does not allow."""

    def to_internal_value(self, data: Any) -> bool:
        if data is True or data is False:
            return data
        self.fail("invalid", input=data)
        raise AssertionError  # fail() raises


class ProfileIn(serializers.Serializer[Any]):
    time_zone = OptionalTimeZoneField(
        max_length=64, allow_blank=True, required=False, help_text="An IANA name; blank follows your first cohort."
    )
    on_global_board = StrictBooleanField(required=False)


class AssignmentOut(serializers.Serializer[Any]):
    workbook = serializers.SlugField()
    title = serializers.CharField()
    due_on = serializers.DateField(allow_null=True, help_text="Due at the end of this day in the cohort's time zone.")
    overdue = serializers.BooleanField(
        allow_null=True,
        help_text="For a member: the due day has ended and you have not solved every exercise (as the "
        "instructor's progress table says). Null without a due date, and for the instructor.",
    )


class AssignmentIn(serializers.Serializer[Any]):
    workbook = serializers.SlugField()
    due_on = serializers.DateField(required=False, allow_null=True)


class CohortOut(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    name = serializers.CharField()
    time_zone = serializers.CharField()
    instructor = serializers.CharField(help_text="The instructor's username.")
    role = serializers.ChoiceField(choices=["instructor", "member"], help_text="Your place in this cohort.")
    join_code = serializers.CharField(allow_null=True, help_text="Shown to the cohort's instructor only.")
    members = serializers.IntegerField()
    workbooks = AssignmentOut(many=True)


class CohortIn(serializers.Serializer[Any]):
    name = StrictCharField(max_length=120)
    time_zone = TimeZoneField(max_length=64, default="UTC", help_text="An IANA time zone name.")
    workbooks = AssignmentIn(many=True, required=False, default=list)


class JoinIn(serializers.Serializer[Any]):
    code = StrictCharField(max_length=32, help_text="The cohort's join code; case and dashes do not matter.")


class WorkbookCellOut(ProgressCountsOut):
    workbook = serializers.SlugField()
    due_on = serializers.DateField(allow_null=True)
    overdue = serializers.BooleanField()


class LearnerRowOut(serializers.Serializer[Any]):
    user_id = serializers.IntegerField()
    username = serializers.CharField()
    workbooks = WorkbookCellOut(many=True)
    current_streak = serializers.IntegerField()
    best_streak = serializers.IntegerField()
    last_active = serializers.DateTimeField(allow_null=True)
    overdue = serializers.ListField(child=serializers.SlugField())


class CohortProgressOut(serializers.Serializer[Any]):
    cohort = serializers.IntegerField()
    learners = LearnerRowOut(many=True)


class WrongAnswerOut(serializers.Serializer[Any]):
    answer = serializers.CharField()
    count = serializers.IntegerField()


class ExerciseStatsOut(serializers.Serializer[Any]):
    number = serializers.CharField()
    title = serializers.CharField()
    kind = serializers.ChoiceField(choices=ExerciseKind.choices)
    attempts = serializers.IntegerField(
        help_text="Graded attempts by the cohort's learners (a multi-part check with parts left for later and "
        "the rest right does not count)."
    )
    learners = serializers.IntegerField(help_text="Learners who attempted or revealed it.")
    solved = serializers.IntegerField()
    solve_rate = serializers.FloatField(allow_null=True)
    median_attempts_to_solve = serializers.FloatField(allow_null=True)
    reveal_share = serializers.FloatField(allow_null=True, help_text="Share who revealed before solving.")
    wrong_answers = WrongAnswerOut(many=True)
    solved_with_note = serializers.IntegerField(
        help_text="Learners whose solve came only through an answer accepted with a unit note (GiB labelled GB)."
    )


class SkillCheckOut(serializers.Serializer[Any]):
    stage = serializers.IntegerField(help_text="0..4: the review gap is REVIEW_DAYS[stage] days.")
    checked_at = serializers.DateTimeField()
    reviewed_at = serializers.DateTimeField(allow_null=True)
    due_at = serializers.DateTimeField(help_text="When the next review is due.")
    reviews = serializers.IntegerField()
    lapses = serializers.IntegerField()


class SkillOut(serializers.Serializer[Any]):
    key = serializers.CharField()
    text = serializers.CharField()
    chapter = serializers.IntegerField(allow_null=True)
    exercises = serializers.ListField(child=serializers.CharField(), help_text="Exercise numbers to practise it.")
    state = serializers.ChoiceField(choices=["open", "mastered", "due"])
    check = SkillCheckOut(allow_null=True)


class SkillBoardOut(serializers.Serializer[Any]):
    workbook = serializers.CharField()
    protocol_html = serializers.CharField(allow_blank=True)
    review_days = serializers.ListField(child=serializers.IntegerField())
    total = serializers.IntegerField()
    mastered = serializers.IntegerField()
    due = serializers.IntegerField()
    skills = SkillOut(many=True)


class SkillMarkIn(serializers.Serializer[Any]):
    action = serializers.ChoiceField(
        choices=["tick", "remembered", "forgot", "untick"],
        help_text="tick: I can do this cold (first review in a day). remembered / forgot: a review's outcome. "
        "untick: take it off the list.",
    )


# ---- a learner's attempts, for the cohort's instructor ------------------------------------------


class AnswerItemOut(serializers.Serializer[Any]):
    label = serializers.CharField(  # type: ignore[assignment]  # a field named like Field.label
        help_text='"option 2" (as this learner was shown the options), "3" (a step\'s place), "line 8", a '
        "table cell's or a part's label."
    )
    value = serializers.CharField(allow_blank=True, help_text="The option's or step's text, the line's code, the "
                                  "value as typed (with its unit).")  # fmt: skip


class AnswerShownOut(serializers.Serializer[Any]):
    text = serializers.CharField(allow_blank=True, help_text="The answer on one line, in the words on the page.")
    items = AnswerItemOut(many=True, help_text="One per piece of a structured answer; empty for a number or code.")
    code = serializers.CharField(allow_null=True, help_text="The submitted code (code attempts); null otherwise.")


class LearnerAttemptOut(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    workbook = serializers.SlugField()
    exercise = serializers.CharField(help_text="The exercise number.")
    title = serializers.CharField(help_text="The exercise's title.")
    format = serializers.ChoiceField(choices=AnswerFormat.choices)
    version = serializers.IntegerField(help_text="The exercise version it was graded against.")
    created_at = serializers.DateTimeField()
    part = serializers.ChoiceField(choices=AttemptPart.choices, allow_blank=True)
    status = serializers.ChoiceField(choices=AttemptStatus.choices)
    verdict = serializers.ChoiceField(choices=Verdict.choices, allow_blank=True, help_text="Empty until graded.")
    outcome = serializers.ChoiceField(
        choices=CodeOutcome.choices, allow_blank=True, help_text="Code: how the run ended."
    )
    correct = serializers.BooleanField()
    accepted_with_note = serializers.BooleanField()
    counted = serializers.BooleanField(help_text="Whether it counts as an attempt.")
    score = serializers.FloatField()
    answer = AnswerShownOut(help_text="What the learner answered, as they saw it.")
    understood = serializers.CharField(
        allow_null=True, help_text="How a number or an expression was read (the reading the grader took)."
    )
    feedback = serializers.CharField(allow_blank=True, help_text="The feedback the learner was given.")
