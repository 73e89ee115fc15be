"""The precheck's API bodies. Output serializers read a ``records.Precheck``."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from apps.core.fields import StrictCharField
from apps.core.serializers import ComputedField
from apps.precheck.records import NOTE, Precheck, PrecheckStatus, TestKind


class PrecheckIn(serializers.Serializer[Any]):
    code = StrictCharField(max_length=100_000, trim_whitespace=False, help_text="The whole file, as text.")


class PrecheckTestOut(serializers.Serializer[Any]):
    # Reads a dict from services.precheck_test.
    id = serializers.CharField()
    kind = serializers.ChoiceField(
        choices=TestKind.choices,
        help_text="example: public, with `call`, `expected` and `got`. check: a structural check, shown by its "
        "`requirement` only (its `call`, `expected` and `got` are empty).",
    )
    passed = serializers.BooleanField()
    call = serializers.CharField(allow_blank=True)
    expected = serializers.CharField(allow_blank=True)
    got = serializers.CharField(allow_blank=True)
    requirement = serializers.CharField(allow_blank=True, help_text="A check's requirement, in plain words.")
    message = serializers.CharField(allow_blank=True, help_text="Why it failed; empty when it passed.")


_test = PrecheckTestOut()


class PrecheckOut(serializers.Serializer[Any]):
    id = serializers.CharField(help_text="The precheck's id (a UUID); it is kept for an hour.")
    workbook = serializers.CharField()
    exercise = serializers.CharField(source="number", help_text="The exercise number.")
    note = ComputedField(help_text=f'Always "{NOTE}".')
    graded = ComputedField(help_text="Always false: a precheck is not the grade and counts no attempt.")
    status = serializers.ChoiceField(
        choices=PrecheckStatus.choices,
        help_text="queued/running: poll `url`. checked: final, see `outcome`. not_run: the sandbox could not run "
        "it (never a pass); nothing was counted.",
    )
    outcome = serializers.CharField(
        allow_blank=True,
        help_text="Once checked: passed, failed, error, timeout, memory_limit, crash or output_limit. Empty otherwise.",
    )
    message = serializers.CharField(allow_blank=True, help_text="The result in a sentence; empty while pending.")
    tests = ComputedField(
        help_text="The examples and checks that ran: while running, those done so far; once checked, all of them. "
        "Hidden tests never run in a precheck."
    )
    tests_total = serializers.IntegerField(allow_null=True, help_text="How many examples and checks it runs.")
    traceback = serializers.CharField(allow_blank=True, help_text="Your code's own traceback, when it raised.")
    prints = serializers.CharField(allow_blank=True, help_text="What your code printed.")
    time_limit_s = serializers.FloatField(allow_null=True, help_text="The run's time limit; null while queued.")
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    elapsed_s = ComputedField(
        allow_null=True, help_text="Seconds since it started (running) or from start to result; null while queued."
    )
    url = ComputedField()

    @extend_schema_field(OpenApiTypes.STR)
    def get_note(self, p: Precheck) -> str:
        return NOTE

    @extend_schema_field(OpenApiTypes.BOOL)
    def get_graded(self, p: Precheck) -> bool:
        return False

    @extend_schema_field(PrecheckTestOut(many=True))
    def get_tests(self, p: Precheck) -> list[dict[str, Any]]:
        return [dict(_test.to_representation(t)) for t in p.tests]

    @extend_schema_field(OpenApiTypes.DOUBLE)
    def get_elapsed_s(self, p: Precheck) -> float | None:
        if p.started_at is None:
            return None
        end = p.finished_at or timezone.now()
        return round(max(0.0, (end - p.started_at).total_seconds()), 1)

    @extend_schema_field(OpenApiTypes.STR)
    def get_url(self, p: Precheck) -> str:
        return reverse("api:precheck-detail", kwargs={"precheck_id": p.id})
