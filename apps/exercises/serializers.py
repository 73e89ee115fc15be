"""API bodies. Output serializers render dicts built by ``presentation`` (which alone decides
what a learner may see); the per-format classes (``apps.exercises.formats``: each format's
answer, widget and solution) exist so the OpenAPI schema documents every body exactly."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema_field
from rest_framework import serializers

from apps.core.fields import StrictCharField
from apps.exercises import formats
from apps.exercises.choices import AnswerFormat, AttemptPart, AttemptStatus, CodeOutcome, ExerciseKind, Verdict

# ---- answer inputs, widgets and solutions: one of each per format (apps.exercises.formats) ----

AttemptRequest = PolymorphicProxySerializer(
    component_name="Attempt",
    serializers=[f.answer_in for f in formats.ALL],
    resource_type_field_name=None,
)


class PreviewIn(serializers.Serializer[Any]):
    answer = StrictCharField(max_length=200)
    field = StrictCharField(
        max_length=64,
        required=False,
        allow_blank=True,
        help_text="A numeric part's key or a table cell's id; leave out for a numeric exercise's one answer.",
    )


class PreviewOut(serializers.Serializer[Any]):
    understood = serializers.CharField(help_text='How we read the input: "512 MiB = 536,870,912 bytes".')
    value = serializers.FloatField(help_text="In base units.")
    unit = serializers.CharField()


# ---- widgets (what the learner answers with) and solutions (only after solving or revealing) ---

Widget = PolymorphicProxySerializer(
    component_name="Widget",
    serializers={f.name: f.widget_out for f in formats.ALL},
    resource_type_field_name="format",
)

Solution = PolymorphicProxySerializer(
    component_name="Solution",
    serializers={f.name: f.solution_out for f in formats.ALL},
    resource_type_field_name="format",
)

# ---- resources --------------------------------------------------------------------------------


class ProgressCountsOut(serializers.Serializer[Any]):
    solved = serializers.IntegerField()
    total = serializers.IntegerField()
    percent = serializers.IntegerField()


class WorkbookOut(serializers.Serializer[Any]):
    slug = serializers.CharField()
    title = serializers.CharField()
    summary = serializers.CharField()
    prerequisites = serializers.CharField()
    progress = ProgressCountsOut()
    url = serializers.CharField()


class ChapterOut(serializers.Serializer[Any]):
    number = serializers.IntegerField()
    title = serializers.CharField()
    progress = ProgressCountsOut()
    url = serializers.CharField()


class WorkbookDetailOut(WorkbookOut):
    chapters = ChapterOut(many=True)


class StateOut(serializers.Serializer[Any]):
    solved = serializers.BooleanField()
    revealed = serializers.BooleanField()
    attempts = serializers.IntegerField()
    hints_used = serializers.IntegerField()
    solved_at = serializers.DateTimeField(allow_null=True)
    revealed_at = serializers.DateTimeField(allow_null=True)
    solved_with_note = serializers.BooleanField(
        help_text="Solved only through an answer accepted with a unit note (the GiB figure labelled GB); "
        "a correct answer in the unit asked clears it."
    )


class ExerciseSummaryOut(serializers.Serializer[Any]):
    number = serializers.CharField()
    title = serializers.CharField()
    kind = serializers.ChoiceField(choices=ExerciseKind.choices)
    format = serializers.ChoiceField(choices=AnswerFormat.choices)
    difficulty = serializers.IntegerField()
    chapter = serializers.IntegerField()
    state = StateOut()
    url = serializers.CharField()


class ChapterDetailOut(ChapterOut):
    intro_html = serializers.CharField()
    exercises = ExerciseSummaryOut(many=True)


class HintsOut(serializers.Serializer[Any]):
    total = serializers.IntegerField()
    shown = serializers.ListField(child=serializers.CharField(), help_text="HTML of the hints revealed so far.")


class ChapterRefOut(serializers.Serializer[Any]):
    number = serializers.IntegerField()
    title = serializers.CharField()


class PlotPointOut(serializers.Serializer[Any]):
    n = serializers.IntegerField(help_text="The number beside the mark in the SVG.")
    label = serializers.CharField()  # type: ignore[assignment]  # a field named like Field.label
    kind = serializers.ChoiceField(choices=["yours", "answer", "fixed"])
    curve = serializers.IntegerField()
    curve_label = serializers.CharField()
    x = serializers.FloatField()
    y = serializers.FloatField(help_text="Attainable FLOP/s at x on its curve.")
    x_text = serializers.CharField()
    y_text = serializers.CharField()


class PlotOut(serializers.Serializer[Any]):
    title = serializers.CharField()
    svg = serializers.CharField(help_text="The roofline as SVG, drawn on the server.")
    curves = serializers.ListField(child=serializers.CharField())
    points = PlotPointOut(many=True)


class ExerciseDetailOut(ExerciseSummaryOut):
    workbook = serializers.CharField()
    chapter_info = ChapterRefOut()
    version = serializers.IntegerField()
    prompt_html = serializers.CharField()
    widget = serializers.SerializerMethodField()
    hints = HintsOut()
    solution = serializers.SerializerMethodField()
    plot = PlotOut(allow_null=True, help_text="A roofline with your values, once solved or revealed.")
    previous = serializers.CharField(allow_null=True)
    next = serializers.CharField(allow_null=True)

    @extend_schema_field(Widget)
    def get_widget(self, obj: dict[str, Any]) -> dict[str, Any]:
        return obj["widget"]  # type: ignore[no-any-return]

    @extend_schema_field(PolymorphicProxySerializer(
        component_name="OptionalSolution", serializers=Solution.serializers, resource_type_field_name="format",
        many=False,
    ))  # fmt: skip
    def get_solution(self, obj: dict[str, Any]) -> dict[str, Any] | None:
        return obj["solution"]  # type: ignore[no-any-return]


class RunOut(serializers.Serializer[Any]):
    """A code attempt's sandbox run, as far as it has gone: what a page following it shows."""

    time_limit_s = serializers.FloatField(
        allow_null=True, help_text="The run's time limit in seconds, set when a worker claims it; null while queued."
    )
    memory_mb = serializers.IntegerField(allow_null=True, help_text="The run's memory limit; null while queued.")
    started_at = serializers.DateTimeField(allow_null=True, help_text="When a worker claimed it; null while queued.")
    elapsed_s = serializers.FloatField(
        allow_null=True,
        help_text="Seconds since it started (running) or from start to verdict (final); null while queued.",
    )


class AttemptOut(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    workbook = serializers.CharField()
    exercise = serializers.CharField(help_text="The exercise number.")
    version = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    submitted = serializers.JSONField(help_text="The body as submitted.")
    part = serializers.ChoiceField(choices=AttemptPart.choices, allow_blank=True)
    status = serializers.ChoiceField(
        choices=AttemptStatus.choices,
        help_text="queued/running: poll `url`. graded: final. not_graded: a platform fault; not counted.",
    )
    verdict = serializers.ChoiceField(choices=Verdict.choices, allow_blank=True, help_text="Empty until graded.")
    outcome = serializers.ChoiceField(
        choices=CodeOutcome.choices, allow_blank=True, help_text="Code: how the run ended."
    )
    correct = serializers.BooleanField()
    accepted_with_note = serializers.BooleanField(
        help_text="Correct only under another unit convention (the GiB figure labelled GB): it solves the "
        "exercise, and the feedback names the difference."
    )
    counted = serializers.BooleanField(
        help_text="Whether this counts as an attempt. A multi-part answer with parts left for later and the "
        "answered ones right does not."
    )
    score = serializers.FloatField()
    feedback = serializers.CharField(allow_blank=True)
    feedback_html = serializers.CharField(allow_blank=True)
    understood = serializers.CharField(
        allow_null=True, help_text="How a numeric answer was read: the reading the preview showed and the grader took."
    )
    details = serializers.DictField(help_text="Per-format detail: per-cell verdicts, the first misplaced step...")
    run = RunOut(allow_null=True, help_text="Code: the sandbox run (limits, start, elapsed time); null otherwise.")
    url = serializers.CharField()


class AttemptResultOut(AttemptOut):
    state = StateOut()
    solution = serializers.SerializerMethodField(help_text="Present when this attempt solved the exercise.")

    @extend_schema_field(PolymorphicProxySerializer(
        component_name="AttemptSolution", serializers=Solution.serializers, resource_type_field_name="format",
        many=False,
    ))  # fmt: skip
    def get_solution(self, obj: dict[str, Any]) -> dict[str, Any] | None:
        return obj["solution"]  # type: ignore[no-any-return]


class RevealOut(serializers.Serializer[Any]):
    state = StateOut()
    solution = serializers.SerializerMethodField()

    @extend_schema_field(Solution)
    def get_solution(self, obj: dict[str, Any]) -> dict[str, Any]:
        return obj["solution"]  # type: ignore[no-any-return]


class HintRevealOut(serializers.Serializer[Any]):
    hints = HintsOut()
    state = StateOut()


# ---- content export, for authors --------------------------------------------------------------


class ExportedCellOut(serializers.Serializer[Any]):
    answer = serializers.FloatField()
    unit = serializers.CharField(allow_blank=True)
    tolerance = serializers.FloatField()


class ExportedPartOut(serializers.Serializer[Any]):
    """A numeric part (answer, unit, answer_text, tolerance) or an expression (expression, symbols, small)."""

    answer = serializers.FloatField(required=False, allow_null=True)
    unit = serializers.CharField(required=False, allow_blank=True)
    answer_text = serializers.CharField(required=False)
    tolerance = serializers.FloatField(required=False)
    expression = serializers.CharField(required=False)
    symbols = serializers.ListField(child=serializers.CharField(), required=False)
    small = serializers.ListField(child=serializers.CharField(), required=False)


class ExportedExerciseOut(serializers.Serializer[Any]):
    """One exercise as ``manage.py export_content`` prints it: keys only where the format has them."""

    number = serializers.CharField()
    chapter = serializers.IntegerField()
    title = serializers.CharField()
    kind = serializers.ChoiceField(choices=ExerciseKind.choices)
    format = serializers.ChoiceField(choices=AnswerFormat.choices)
    answer = serializers.FloatField(required=False, help_text="Numeric: the answer in `unit`.")
    unit = serializers.CharField(required=False, allow_blank=True)
    answer_text = serializers.CharField(required=False, allow_null=True)
    tolerance = serializers.FloatField(required=False, allow_null=True)
    alternates = serializers.ListField(child=serializers.FloatField(), required=False)
    correct_options = serializers.ListField(child=serializers.CharField(), required=False)
    order = serializers.ListField(child=serializers.CharField(), required=False, help_text="Step ids, in order.")
    constraints = serializers.ListField(
        child=serializers.ListField(child=serializers.CharField(), min_length=2, max_length=2), required=False
    )
    buggy_lines = serializers.ListField(child=serializers.IntegerField(), required=False)
    cells = serializers.DictField(child=ExportedCellOut(), required=False, help_text="By cell id (row.column).")
    parts = serializers.DictField(child=ExportedPartOut(), required=False, help_text="By part key.")
    skills = serializers.ListField(child=serializers.CharField(), required=False)
    entry = serializers.CharField(required=False, help_text="Code: the function the tests call.")
    tests = serializers.IntegerField(required=False, help_text="Code: how many test cases.")


class ExportedSkillOut(serializers.Serializer[Any]):
    key = serializers.CharField()
    text = serializers.CharField()
    chapter = serializers.IntegerField()
    exercises = serializers.ListField(child=serializers.CharField())


class WorkbookExportOut(serializers.Serializer[Any]):
    workbook = serializers.SlugField()
    title = serializers.CharField()
    count = serializers.IntegerField()
    exercises = ExportedExerciseOut(many=True)
    skills = ExportedSkillOut(many=True, required=False, help_text="The skills checklist, when it has one.")
