"""Typed request and response bodies for the progress, leaderboard and cohort API. Output bodies
name each field once and read the selectors' objects directly (apps.progress.selectors, and its
``bundles`` where a body needs several objects)."""

from __future__ import annotations

from typing import Any
from zoneinfo import available_timezones

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from apps.core.fields import StrictCharField
from apps.core.serializers import ComputedField, read_through
from apps.exercises.choices import AnswerFormat, AttemptPart, AttemptStatus, CodeOutcome, ExerciseKind, Verdict
from apps.exercises.content.render import markdown_html
from apps.exercises.models import Attempt
from apps.exercises.selectors import Counts
from apps.exercises.serializers import ProgressCountsOut
from apps.progress import selectors, services
from apps.progress.models import Cohort
from apps.progress.selectors.bundles import Assignment, CohortView


class KindTallyOut(serializers.Serializer[Any]):
    # Reads a (kind, Counts) item of Mastery.by_kind.
    kind = ComputedField()
    solved = ComputedField()
    total = ComputedField()

    @extend_schema_field(serializers.ChoiceField(choices=ExerciseKind.choices))
    def get_kind(self, item: tuple[str, Counts]) -> str:
        return item[0]

    @extend_schema_field(OpenApiTypes.INT)
    def get_solved(self, item: tuple[str, Counts]) -> int:
        return item[1].solved

    @extend_schema_field(OpenApiTypes.INT)
    def get_total(self, item: tuple[str, Counts]) -> int:
        return item[1].total


_kind_tally = KindTallyOut()


class MasteryCountsOut(ProgressCountsOut):
    # Reads a selectors.Mastery: the counts are its tally's.
    by_kind = ComputedField()
    solved_with_note = serializers.IntegerField(
        source="with_note",
        help_text="Of the solved, those solved only through an answer accepted with a unit note (GiB labelled GB).",
    )

    def get_fields(self) -> dict[str, Any]:
        return read_through(super().get_fields(), ProgressCountsOut._declared_fields, "tally")

    @extend_schema_field(KindTallyOut(many=True))
    def get_by_kind(self, m: selectors.Mastery) -> list[dict[str, Any]]:
        return [dict(_kind_tally.to_representation(item)) for item in m.by_kind.items()]


class ChapterMasteryOut(MasteryCountsOut):
    number = serializers.IntegerField(source="key")
    title = serializers.CharField()


class WorkbookMasteryOut(MasteryCountsOut):
    slug = serializers.SlugField(source="key")
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
    # Reads a bundles.Overview.
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
    cohort = serializers.IntegerField(allow_null=True, source="cohort_id")
    week_starts = serializers.DateField(
        allow_null=True, source="starts", help_text="Monday of this week, in `time_zone`."
    )
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
    # Reads the user.
    time_zone = serializers.CharField(allow_blank=True, help_text="Your setting; blank follows your first cohort.")
    effective_time_zone = ComputedField(help_text="The zone your days are counted in.")
    on_global_board = serializers.BooleanField()

    @extend_schema_field(OpenApiTypes.STR)
    def get_effective_time_zone(self, user: Any) -> str:
        return services.effective_time_zone(user)


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
    # Reads a bundles.Assignment.
    workbook = serializers.SlugField(source="assignment.workbook.slug")
    title = serializers.CharField(source="assignment.workbook.title")
    due_on = serializers.DateField(
        allow_null=True, source="assignment.due_on", help_text="Due at the end of this day in the cohort's time zone."
    )
    overdue = ComputedField(
        allow_null=True,
        help_text="For a member: the due day has ended and you have not solved every exercise (as the "
        "instructor's progress table says). Null without a due date, and for the instructor.",
    )

    @extend_schema_field(OpenApiTypes.BOOL)
    def get_overdue(self, a: Assignment) -> bool | None:
        return a.due.overdue if a.due else None


class AssignmentIn(serializers.Serializer[Any]):
    workbook = serializers.SlugField()
    due_on = serializers.DateField(required=False, allow_null=True)


class CohortOut(serializers.Serializer[Any]):
    # Reads a bundles.CohortView.
    id = serializers.IntegerField(source="cohort.pk")
    name = serializers.CharField(source="cohort.name")
    time_zone = serializers.CharField(source="cohort.time_zone")
    numbers = serializers.ChoiceField(
        source="cohort.numbers",
        choices=Cohort.Numbers.choices,
        help_text="Varying exercises: each learner their own numbers, or the same for everyone (the seed's first).",
    )
    instructor = serializers.CharField(source="cohort.instructor.username", help_text="The instructor's username.")
    role = serializers.ChoiceField(choices=["instructor", "member"], help_text="Your place in this cohort.")
    join_code = ComputedField(allow_null=True, help_text="Shown to the cohort's instructor only.")
    members = serializers.IntegerField()
    workbooks = AssignmentOut(many=True, source="assignments")

    @extend_schema_field(OpenApiTypes.STR)
    def get_join_code(self, view: CohortView) -> str | None:
        return view.cohort.join_code if view.teaches else None


class CohortIn(serializers.Serializer[Any]):
    name = StrictCharField(max_length=120)
    time_zone = TimeZoneField(max_length=64, default="UTC", help_text="An IANA time zone name.")
    numbers = serializers.ChoiceField(
        choices=Cohort.Numbers.choices,
        default=Cohort.Numbers.PER_LEARNER,
        help_text="per_learner (default: no copying) or shared (one set of numbers for discussing in class).",
    )
    workbooks = AssignmentIn(many=True, required=False, default=list)


class JoinIn(serializers.Serializer[Any]):
    code = StrictCharField(max_length=32, help_text="The cohort's join code; case and dashes do not matter.")


class WorkbookCellOut(ProgressCountsOut):
    workbook = serializers.SlugField(source="slug")
    due_on = serializers.DateField(allow_null=True)
    overdue = serializers.BooleanField()


class LearnerRowOut(serializers.Serializer[Any]):
    user_id = serializers.IntegerField()
    username = serializers.CharField()
    workbooks = WorkbookCellOut(many=True, source="cells")
    current_streak = serializers.IntegerField()
    best_streak = serializers.IntegerField()
    last_active = serializers.DateTimeField(allow_null=True)
    overdue = serializers.ListField(child=serializers.SlugField())


class CohortProgressOut(serializers.Serializer[Any]):
    # Reads a bundles.CohortProgress.
    cohort = serializers.IntegerField(source="cohort.pk")
    learners = LearnerRowOut(many=True)


class OverviewQueryIn(serializers.Serializer[Any]):
    idle_days = serializers.IntegerField(
        required=False, min_value=1, max_value=365, default=selectors.overview.IDLE_DAYS
    )
    sort = serializers.RegexField(
        r"^(" + "|".join(selectors.LEARNER_SORTS) + r"|workbook:[a-z0-9-]+)$", required=False, default="risk"
    )
    desc = serializers.BooleanField(required=False, default=False)
    stuck_sort = serializers.ChoiceField(choices=selectors.STUCK_SORTS, required=False, default="stuck")
    stuck_limit = serializers.IntegerField(required=False, min_value=1, max_value=500, default=10)

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        # DRF reads "idle_days=" as absent; the schema promises an integer, so a blank is an error.
        blank = {
            name: "Give a value, or leave the parameter out." for name, _ in self.fields.items() if data.get(name) == ""
        }
        if blank:
            raise serializers.ValidationError(blank)
        values: dict[str, Any] = super().to_internal_value(data)
        return values


class RiskOut(serializers.Serializer[Any]):
    code = serializers.ChoiceField(
        choices=["idle", "behind", "overdue"],
        help_text="idle: no solve for idle_days; behind: less than half the due date's pace; overdue: past due, "
        "incomplete.",
    )
    workbook = serializers.SlugField(allow_null=True)
    detail = serializers.CharField()


class OverviewLearnerOut(LearnerRowOut):
    # Reads a selectors.OverviewRow: the progress row's fields through its learner.
    user_id = serializers.IntegerField(source="learner.user_id")
    username = serializers.CharField(source="learner.username")
    workbooks = WorkbookCellOut(many=True, source="learner.cells")
    current_streak = serializers.IntegerField(source="learner.current_streak")
    best_streak = serializers.IntegerField(source="learner.best_streak")
    last_active = serializers.DateTimeField(source="learner.last_active", allow_null=True)
    overdue = serializers.ListField(child=serializers.SlugField(), source="learner.overdue")
    solved = serializers.IntegerField(help_text="Over every assigned workbook.")
    total = serializers.IntegerField()
    mastery = serializers.FloatField(help_text="solved / total, 0 to 1.")
    last_solve_day = serializers.DateField(source="learner.last_solve_day", allow_null=True)
    days_since_solve = serializers.IntegerField(allow_null=True, help_text="Null: never solved.")
    at_risk = serializers.BooleanField()
    risks = RiskOut(many=True)


class ExerciseFiguresOut(serializers.Serializer[Any]):
    """The per-exercise figures (``selectors.figures``), under the same names wherever they appear."""

    learners = serializers.IntegerField(
        help_text="Learners who engaged with it (a graded attempt, a solve or a reveal): solved + revealed + stuck."
    )
    solved = serializers.IntegerField(help_text="Learners who solved it without revealing the answer first.")
    revealed = serializers.IntegerField(
        help_text="Learners who revealed the answer before their first solve (whether or not they solved it after)."
    )
    stuck = serializers.IntegerField(help_text="Learners who engaged and have neither solved nor revealed it.")
    solve_rate = serializers.FloatField(allow_null=True, help_text="solved / learners (null: no learners).")
    reveal_share = serializers.FloatField(allow_null=True, help_text="revealed / learners (null: no learners).")
    attempts = serializers.IntegerField(
        help_text="Counted graded attempts by every engaged learner, after a solve too (a multi-part check with "
        "parts left for later and the rest right does not count)."
    )
    median_attempts_to_solve = serializers.FloatField(
        allow_null=True,
        help_text="Median, over the learners who solved it, of their counted attempts up to and including the "
        "first solve (null: nobody solved it).",
    )
    median_minutes_to_solve = serializers.FloatField(
        allow_null=True,
        help_text="Median, over the learners who solved it, of the minutes from their first counted attempt to "
        "their first solve (0 when the first attempt solved it; null: nobody solved it).",
    )


class StuckPointOut(ExerciseFiguresOut):
    exercise_id = serializers.IntegerField()
    workbook = serializers.SlugField()
    number = serializers.CharField()
    title = serializers.CharField()
    kind = serializers.ChoiceField(choices=ExerciseKind.choices)


class RiskCountsOut(serializers.Serializer[Any]):
    learners = serializers.IntegerField()
    at_risk = serializers.IntegerField()
    idle = serializers.IntegerField()
    behind = serializers.IntegerField()
    overdue = serializers.IntegerField()


class CohortOverviewOut(serializers.Serializer[Any]):
    # Reads a selectors.CohortOverview.
    cohort = serializers.IntegerField(source="cohort.pk")
    at = serializers.DateTimeField(help_text="When the overview was computed.")
    idle_days = serializers.IntegerField()
    summary = ComputedField(help_text="Learners, at risk, and at risk by reason.")
    learners = OverviewLearnerOut(many=True, source="rows")
    stuck_points = StuckPointOut(many=True)

    @extend_schema_field(RiskCountsOut)
    def get_summary(self, overview: selectors.CohortOverview) -> dict[str, Any]:
        return selectors.risk_counts(overview)


class WrongAnswerOut(serializers.Serializer[Any]):
    # Reads an (answer, count) pair of ExerciseStats.wrong_answers.
    answer = ComputedField()
    count = ComputedField()

    @extend_schema_field(OpenApiTypes.STR)
    def get_answer(self, pair: tuple[str, int]) -> str:
        return pair[0]

    @extend_schema_field(OpenApiTypes.INT)
    def get_count(self, pair: tuple[str, int]) -> int:
        return pair[1]


class ExerciseStatsOut(ExerciseFiguresOut):
    number = serializers.CharField()
    title = serializers.CharField()
    kind = serializers.ChoiceField(choices=ExerciseKind.choices)
    wrong_answers = WrongAnswerOut(many=True)
    solved_with_note = serializers.IntegerField(
        help_text="Learners whose solve came only through an answer accepted with a unit note (GiB labelled GB)."
    )


class SkillCheckOut(serializers.Serializer[Any]):
    checked_at = serializers.DateTimeField()
    reviewed_at = serializers.DateTimeField(source="last_review_at", allow_null=True)
    stability_days = serializers.FloatField(
        source="stability", allow_null=True, help_text="FSRS stability: days until recall falls to 90%."
    )
    due_at = serializers.DateTimeField(help_text="When the next review is due.")
    reviews = serializers.IntegerField()
    lapses = serializers.IntegerField()


class SkillOut(serializers.Serializer[Any]):
    # Reads a selectors.SkillRow.
    key = serializers.CharField(source="skill.key")
    text = serializers.CharField(source="skill.text")
    chapter = ComputedField(allow_null=True)
    exercises = serializers.ListField(
        child=serializers.CharField(), source="skill.exercises", help_text="Exercise numbers to practise it."
    )
    state = serializers.ChoiceField(choices=["open", "mastered", "due"])
    check = SkillCheckOut(allow_null=True)

    @extend_schema_field(OpenApiTypes.INT)
    def get_chapter(self, row: selectors.SkillRow) -> int | None:
        return row.skill.chapter.number if row.skill.chapter else None


class SkillBoardOut(serializers.Serializer[Any]):
    # Reads a selectors.SkillBoard.
    workbook = serializers.CharField(source="workbook.slug")
    protocol_html = ComputedField()
    total = serializers.IntegerField()
    mastered = serializers.IntegerField()
    due = serializers.IntegerField()
    skills = SkillOut(many=True, source="rows")

    @extend_schema_field(OpenApiTypes.STR)
    def get_protocol_html(self, board: selectors.SkillBoard) -> str:
        protocol = board.workbook.skills_protocol
        return markdown_html(protocol) if protocol else ""


class SkillMarkIn(serializers.Serializer[Any]):
    action = serializers.ChoiceField(
        choices=["tick", "remembered", "forgot", "untick"],
        help_text="tick: I can do this cold (a first review rated Good). remembered / forgot: a review's outcome "
        "(rated Good / Again; FSRS sets the next gap). "
        "untick: take it off the list.",
    )


# ---- a learner's attempts, for the cohort's instructor ------------------------------------------


class AnswerItemOut(serializers.Serializer[Any]):
    # Reads a (label, value) item of AnswerShown.items.
    label = ComputedField(  # type: ignore[assignment]  # a field named like Field.label
        method_name="label_of",
        help_text='"option 2" (as this learner was shown the options), "3" (a step\'s place), "line 8", a '
        "table cell's or a part's label.",
    )
    value = ComputedField(
        method_name="value_of",
        help_text="The option's or step's text, the line's code, the value as typed (with its unit).",
    )

    @extend_schema_field(OpenApiTypes.STR)
    def label_of(self, item: tuple[str, str]) -> str:
        return item[0]

    @extend_schema_field(OpenApiTypes.STR)
    def value_of(self, item: tuple[str, str]) -> str:
        return item[1]


class AnswerShownOut(serializers.Serializer[Any]):
    text = serializers.CharField(allow_blank=True, help_text="The answer on one line, in the words on the page.")
    items = AnswerItemOut(many=True, help_text="One per piece of a structured answer; empty for a number or code.")
    code = serializers.CharField(allow_null=True, help_text="The submitted code (code attempts); null otherwise.")


_answer_shown = AnswerShownOut()


class LearnerAttemptOut(serializers.Serializer[Any]):
    # Reads an Attempt.
    id = serializers.IntegerField(source="pk")
    workbook = serializers.SlugField(source="exercise.workbook.slug")
    exercise = serializers.CharField(source="exercise.number", help_text="The exercise number.")
    title = serializers.CharField(source="exercise.title", help_text="The exercise's title.")
    format = serializers.ChoiceField(choices=AnswerFormat.choices, source="exercise.format")
    version = serializers.IntegerField(
        source="version.version", help_text="The exercise version it was graded against."
    )
    created_at = serializers.DateTimeField()
    part = serializers.ChoiceField(choices=AttemptPart.choices, allow_blank=True)
    status = serializers.ChoiceField(choices=AttemptStatus.choices)
    verdict = serializers.ChoiceField(choices=Verdict.choices, allow_blank=True, help_text="Empty until graded.")
    outcome = serializers.ChoiceField(
        choices=CodeOutcome.choices, allow_blank=True, help_text="Code: how the run ended."
    )
    correct = ComputedField()
    accepted_with_note = serializers.BooleanField()
    counted = serializers.BooleanField(help_text="Whether it counts as an attempt.")
    score = serializers.FloatField()
    answer = ComputedField(help_text="What the learner answered, as they saw it.")
    understood = ComputedField(
        allow_null=True, help_text="How a number or an expression was read (the reading the grader took)."
    )
    feedback = serializers.CharField(allow_blank=True, help_text="The feedback the learner was given.")

    @extend_schema_field(OpenApiTypes.BOOL)
    def get_correct(self, a: Attempt) -> bool:
        return a.verdict == Verdict.CORRECT

    @extend_schema_field(AnswerShownOut)
    def get_answer(self, a: Attempt) -> dict[str, Any]:
        return dict(_answer_shown.to_representation(selectors.answer_shown(a)))

    @extend_schema_field(OpenApiTypes.STR)
    def get_understood(self, a: Attempt) -> str | None:
        return a.parsed.get("understood") if isinstance(a.parsed, dict) else None
