"""Code: a Build's whole file, graded against hidden tests in the sandbox (not here)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rest_framework import serializers

from apps.core.fields import StrictCharField
from apps.exercises.choices import AttemptPart, ExerciseKind
from apps.exercises.formats.base import CodeFixOut, Format, SolutionOut, WidgetOut
from apps.exercises.jobs import examples
from apps.sandbox import selectors as sandbox_selectors

if TYPE_CHECKING:
    from django.http import QueryDict

    from apps.exercises.content.cache import Rendered
    from apps.exercises.content.resolve import ResolvedExercise
    from apps.exercises.content.schema import CodeSpec, ExerciseSpec
    from apps.exercises.grading.base import GradeResult
    from apps.exercises.models import ExerciseVersion


def code_widget(code: CodeSpec) -> dict[str, Any]:
    """What a learner writes code with: the entry point, the starter, and whether it can run now."""
    return {
        "language": "python",
        "entry": code.entry,
        "starter": code.starter,
        "sandbox_available": sandbox_selectors.available(),
        "examples": examples(code),
    }


class CodeAnswerIn(serializers.Serializer[Any]):
    code = StrictCharField(max_length=100_000, trim_whitespace=False)


class CodeWidget(WidgetOut, CodeFixOut):
    pass


class CodeSolution(SolutionOut):
    reference_solution = serializers.CharField()


class Code(Format):
    name = "code"
    answer_in = CodeAnswerIn
    widget_out = CodeWidget
    solution_out = CodeSolution
    required = ("code",)
    kinds = frozenset({ExerciseKind.BUILD, ExerciseKind.DEBUG})
    submit_label = "Run the tests"
    prechecks = True
    reviewable = False  # a sandbox run is no quick review
    graded_here = False

    def parts(self, spec: ExerciseSpec) -> tuple[AttemptPart, ...]:
        return (AttemptPart.CODE,)

    def part_of(self, spec: ExerciseSpec, payload: dict[str, Any]) -> AttemptPart:
        return AttemptPart.CODE

    def form_payload(self, data: QueryDict) -> dict[str, Any]:
        return {"code": data.get("code", "")}

    def grade(self, version: ExerciseVersion, r: ResolvedExercise, payload: dict[str, Any]) -> GradeResult | None:
        return None  # graded in the sandbox

    def widget(self, version: ExerciseVersion, r: ResolvedExercise, html: Rendered, user_id: int) -> dict[str, Any]:
        assert r.spec.code is not None
        return code_widget(r.spec.code)

    def solution(self, version: ExerciseVersion, r: ResolvedExercise, html: Rendered) -> dict[str, Any]:
        return {"reference_solution": r.spec.code.solution} if r.spec.code is not None else {}
