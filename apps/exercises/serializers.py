"""The content's own API bodies: answer inputs, and the per-format widgets and solutions
(``apps.exercises.formats``: each format's answer, widget and solution, which ``presentation``
builds and which exist so the OpenAPI schema documents every body exactly), progress counts,
and the authors' export. Learner-facing bodies that use them are in apps.learning.serializers."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import PolymorphicProxySerializer
from rest_framework import serializers

from apps.core.fields import StrictCharField
from apps.exercises import formats
from apps.exercises.choices import AnswerFormat, ExerciseKind

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
        help_text="A part's key (a number or an expression) or a table cell's id; leave out for a numeric "
        "exercise's one answer.",
    )


class PreviewOut(serializers.Serializer[Any]):
    understood = serializers.CharField(
        help_text='How we read the input: "512 MiB = 536,870,912 bytes", or an expression as parsed: "2*B*D*F/(B*D + B*F + D*F)".'
    )
    value = serializers.FloatField(allow_null=True, help_text="In base units; null for an expression.")
    unit = serializers.CharField(allow_blank=True, help_text="The base unit; empty for an expression.")


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

# ---- progress counts (a selectors.Counts) ------------------------------------------------------


class ProgressCountsOut(serializers.Serializer[Any]):
    solved = serializers.IntegerField()
    total = serializers.IntegerField()
    percent = serializers.IntegerField()


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
