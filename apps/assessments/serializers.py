"""Typed request and response bodies of the assessments API. Output bodies read plain dicts the
views build from the selectors (one field named once here); what a learner may see of verdicts and
scores is decided before (``selectors.verdicts_visible``, ``selectors.score_visible``): a hidden
value is ``null`` here, never the value."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from apps.assessments.models import Kind, Verdicts
from apps.core.fields import StrictCharField
from apps.core.serializers import ComputedField
from apps.exercises.serializers import Widget
from apps.learning.serializers import HintsOut

# ---- instructors: authoring --------------------------------------------------------------------


class LateRuleIn(serializers.Serializer[Any]):
    until = serializers.DateTimeField(help_text="Until when (with its time zone) this credit applies.")
    credit = serializers.FloatField(min_value=0, max_value=100, help_text="Percent of the points.")


class LateRuleOut(serializers.Serializer[Any]):
    until = serializers.CharField(help_text="ISO date and time.")
    credit = serializers.FloatField()


class QuestionIn(serializers.Serializer[Any]):
    position = serializers.IntegerField(min_value=1, max_value=1000)
    zone = serializers.CharField(max_length=80, required=False, allow_blank=True, default="")
    points = serializers.FloatField(min_value=0, max_value=10000, required=False, default=1.0)
    choose = serializers.IntegerField(
        min_value=1, max_value=100, required=False, default=1, help_text="How many of the pool each learner gets."
    )
    pool = serializers.ListField(
        child=StrictCharField(max_length=200),
        min_length=1,
        max_length=200,
        help_text='Exercises as "<workbook-slug>/<exercise-number>", e.g. "transformer-math/1.1".',
    )
    verdicts = serializers.ChoiceField(
        choices=[("", "As the assessment says"), *Verdicts.choices], required=False, default=""
    )


class QuestionOut(serializers.Serializer[Any]):
    position = serializers.IntegerField()
    zone = serializers.CharField()
    points = serializers.FloatField()
    choose = serializers.IntegerField()
    pool = serializers.ListField(child=serializers.CharField(), help_text='"<workbook-slug>/<exercise-number>"')
    verdicts = serializers.CharField(help_text="Blank: as the assessment says.")


class AssessmentIn(serializers.Serializer[Any]):
    slug = serializers.SlugField(max_length=80)
    title = StrictCharField(max_length=200)
    kind = serializers.ChoiceField(choices=Kind.choices, required=False, default=Kind.HOMEWORK)
    instructions = serializers.CharField(max_length=10000, required=False, allow_blank=True, default="")
    opens_at = serializers.DateTimeField()
    due_at = serializers.DateTimeField(required=False, allow_null=True, default=None)
    closes_at = serializers.DateTimeField()
    late_rules = LateRuleIn(many=True, required=False, default=list)
    time_limit_minutes = serializers.IntegerField(
        min_value=1, max_value=60 * 24 * 14, required=False, allow_null=True, default=None
    )
    max_attempts = serializers.IntegerField(min_value=1, max_value=1000, required=False, allow_null=True, default=None)
    attempt_credit = serializers.ListField(
        child=serializers.FloatField(min_value=0, max_value=100), max_length=50, required=False, default=list
    )
    verdicts = serializers.ChoiceField(choices=Verdicts.choices, required=False, default=Verdicts.LIVE)
    hints = serializers.BooleanField(required=False, default=True)
    questions = serializers.ListField(child=QuestionIn(), min_length=1, max_length=200)


class AssessmentNestedIn(serializers.Serializer[Any]):
    """A PATCH's nested lists, read whole (a partial body would skip their items' defaults)."""

    late_rules = LateRuleIn(many=True, required=False)
    questions = serializers.ListField(child=QuestionIn(), min_length=1, max_length=200, required=False)


class AssessmentOut(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    cohort_id = serializers.IntegerField()
    slug = serializers.CharField()
    title = serializers.CharField()
    kind = serializers.ChoiceField(choices=Kind.choices)
    instructions = serializers.CharField()
    opens_at = serializers.DateTimeField()
    due_at = serializers.DateTimeField(allow_null=True)
    closes_at = serializers.DateTimeField()
    late_rules = LateRuleOut(many=True)
    time_limit_minutes = serializers.IntegerField(allow_null=True)
    max_attempts = serializers.IntegerField(allow_null=True)
    attempt_credit = serializers.ListField(child=serializers.FloatField())
    verdicts = serializers.ChoiceField(choices=Verdicts.choices)
    hints = serializers.BooleanField()
    points = serializers.FloatField(help_text="Points possible (each question's points × how many it draws).")
    questions = QuestionOut(many=True)
    instances = serializers.IntegerField(help_text="Learners who have an instance (opened, or graded by hand).")
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


# ---- instructors: overrides, gradebook, scores, live -------------------------------------------


class OverrideIn(serializers.Serializer[Any]):
    user_id = serializers.IntegerField(min_value=1, required=False, help_text="The learner (or give `username`).")
    username = StrictCharField(max_length=150, required=False)
    due_at = serializers.DateTimeField(required=False, allow_null=True, default=None)
    closes_at = serializers.DateTimeField(required=False, allow_null=True, default=None)
    time_factor = serializers.FloatField(
        min_value=1, max_value=10, required=False, allow_null=True, default=None, help_text="Time limit × this."
    )
    extra_attempts = serializers.IntegerField(min_value=0, max_value=100, required=False, default=0)
    reason = StrictCharField(max_length=2000, help_text="Why (required; kept with the override).")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if ("user_id" in attrs) == ("username" in attrs):
            raise serializers.ValidationError("Name the learner by exactly one of user_id or username.")
        return attrs


class OverrideOut(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    user_id = serializers.IntegerField()
    username = serializers.CharField(source="user.username")
    due_at = serializers.DateTimeField(allow_null=True)
    closes_at = serializers.DateTimeField(allow_null=True)
    time_factor = serializers.FloatField(allow_null=True)
    extra_attempts = serializers.IntegerField()
    reason = serializers.CharField()
    granted_by = serializers.CharField(source="granted_by.username")
    granted_at = serializers.DateTimeField()
    revoked_at = serializers.DateTimeField(allow_null=True)
    revoked_by = serializers.CharField(source="revoked_by.username", allow_null=True, default=None)
    in_force = serializers.BooleanField()


class OverrideSummaryOut(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    due_at = serializers.DateTimeField(allow_null=True)
    closes_at = serializers.DateTimeField(allow_null=True)
    time_factor = serializers.FloatField(allow_null=True)
    extra_attempts = serializers.IntegerField()
    reason = serializers.CharField()


class GradebookAssessmentOut(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    slug = serializers.CharField()
    title = serializers.CharField()
    kind = serializers.ChoiceField(choices=Kind.choices)
    points = serializers.FloatField()
    opens_at = serializers.DateTimeField()
    due_at = serializers.DateTimeField(allow_null=True)
    closes_at = serializers.DateTimeField()


class GradebookCellOut(serializers.Serializer[Any]):
    assessment_id = serializers.IntegerField()
    score = serializers.FloatField(allow_null=True, help_text="The final score (the override when there is one).")
    computed_score = serializers.FloatField(allow_null=True, help_text="Points earned, credit applied.")
    override_score = serializers.FloatField(allow_null=True, help_text="Set by an instructor, with a reason.")
    max_score = serializers.FloatField()
    late = serializers.BooleanField()
    started_at = serializers.DateTimeField(allow_null=True)
    submitted_at = serializers.DateTimeField(allow_null=True)
    override = OverrideSummaryOut(allow_null=True, help_text="The override in force for this learner, if any.")


class GradebookLearnerOut(serializers.Serializer[Any]):
    user_id = serializers.IntegerField()
    username = serializers.CharField()
    email = serializers.CharField()
    total = serializers.FloatField()
    cells = GradebookCellOut(many=True)


class GradebookOut(serializers.Serializer[Any]):
    cohort_id = serializers.IntegerField()
    points = serializers.FloatField()
    assessments = GradebookAssessmentOut(many=True)
    learners = GradebookLearnerOut(many=True)


class ScoreIn(serializers.Serializer[Any]):
    score = serializers.FloatField(
        min_value=0, max_value=1_000_000, allow_null=True, help_text="Points; null removes the override."
    )
    reason = StrictCharField(max_length=2000, help_text="Why (required; kept in the history).")


class ScoreChangeOut(serializers.Serializer[Any]):
    by = serializers.CharField(source="by.username")
    at = serializers.DateTimeField()
    previous = serializers.FloatField(allow_null=True)
    score = serializers.FloatField(allow_null=True, help_text="null: the override was removed.")
    reason = serializers.CharField()


class ScoreOut(serializers.Serializer[Any]):
    user_id = serializers.IntegerField()
    username = serializers.CharField()
    score = serializers.FloatField(allow_null=True, help_text="The final score; null when nothing was taken.")
    computed_score = serializers.FloatField(allow_null=True)
    override_score = serializers.FloatField(allow_null=True)
    max_score = serializers.FloatField()
    history = ScoreChangeOut(many=True, help_text="Newest first.")


class LiveLearnerOut(serializers.Serializer[Any]):
    user_id = serializers.IntegerField()
    username = serializers.CharField()
    started_at = serializers.DateTimeField(allow_null=True)
    deadline = serializers.DateTimeField(allow_null=True)
    time_left_s = serializers.IntegerField(
        allow_null=True, help_text="Seconds until their answers stop; null: not started."
    )
    submitted_at = serializers.DateTimeField(allow_null=True)
    closed = serializers.BooleanField()
    answered = serializers.IntegerField(help_text="Questions with at least one graded answer.")
    questions = serializers.IntegerField()
    score = serializers.FloatField(allow_null=True, help_text="Points so far.")
    max_score = serializers.FloatField()


class LiveOut(serializers.Serializer[Any]):
    assessment_id = serializers.IntegerField()
    now = serializers.DateTimeField()
    learners = LiveLearnerOut(many=True)


# ---- learners ----------------------------------------------------------------------------------

STATES = [
    ("not_started", "Not started"),
    ("open", "Open"),
    ("submitted", "Submitted"),
    ("closed", "Closed"),
]


class MyAssessmentOut(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    cohort_id = serializers.IntegerField()
    title = serializers.CharField()
    kind = serializers.ChoiceField(choices=Kind.choices)
    opens_at = serializers.DateTimeField()
    due_at = serializers.DateTimeField(allow_null=True, help_text="Yours (with any extension).")
    closes_at = serializers.DateTimeField(help_text="Yours (with any extension).")
    time_limit_minutes = serializers.FloatField(allow_null=True, help_text="Yours (with any extension).")
    state = serializers.ChoiceField(choices=STATES)
    time_left_s = serializers.IntegerField(allow_null=True, help_text="While open: seconds until answers stop.")
    score = serializers.FloatField(allow_null=True, help_text="null while hidden or not started.")
    max_score = serializers.FloatField()


class SubmissionOut(serializers.Serializer[Any]):
    status = serializers.ChoiceField(
        choices=[("graded", "Graded, verdict shown"), ("saved", "Saved; verdicts are shown after the close")]
    )
    at = serializers.DateTimeField()
    position = serializers.IntegerField()
    attempts_used = serializers.IntegerField()
    attempts_left = serializers.IntegerField(allow_null=True, help_text="null: unlimited.")
    correct = serializers.BooleanField(allow_null=True)
    points = serializers.FloatField(allow_null=True)
    credit = serializers.FloatField(allow_null=True, help_text="Percent of the points this answer could earn.")
    late = serializers.BooleanField()
    feedback_html = serializers.CharField(allow_null=True)


class ItemOut(serializers.Serializer[Any]):
    position = serializers.IntegerField()
    zone = serializers.CharField()
    points = serializers.FloatField()
    title = serializers.CharField()
    format = serializers.CharField()
    prompt_html = serializers.CharField(help_text="The prompt on your own numbers.")
    widget = ComputedField(help_text="The answer widget (as the practice API gives it).")
    hints = HintsOut(help_text="Hints taken so far (homework that offers hints).")
    attempts_used = serializers.IntegerField()
    attempts_left = serializers.IntegerField(allow_null=True, help_text="null: unlimited.")
    verdicts_visible = serializers.BooleanField()
    best = serializers.FloatField(allow_null=True, help_text="Points earned; null while verdicts are hidden.")
    answers = SubmissionOut(many=True, help_text="Your graded answers, oldest first.")

    @extend_schema_field(Widget)
    def get_widget(self, row: dict[str, Any]) -> dict[str, Any]:
        return dict(row["widget"])


class InstanceOut(serializers.Serializer[Any]):
    assessment_id = serializers.IntegerField()
    title = serializers.CharField()
    kind = serializers.ChoiceField(choices=Kind.choices)
    instructions = serializers.CharField()
    state = serializers.ChoiceField(choices=STATES)
    started_at = serializers.DateTimeField(allow_null=True)
    deadline = serializers.DateTimeField(allow_null=True, help_text="The time limit's end (with any extension).")
    due_at = serializers.DateTimeField(allow_null=True)
    closes_at = serializers.DateTimeField()
    submitted_at = serializers.DateTimeField(allow_null=True)
    closed = serializers.BooleanField()
    time_left_s = serializers.IntegerField(allow_null=True, help_text="Seconds until answers stop (server time).")
    score_visible = serializers.BooleanField()
    score = serializers.FloatField(allow_null=True, help_text="null while hidden.")
    max_score = serializers.FloatField()
    questions = ItemOut(many=True)
