"""Several named answers, each a number with a unit or a symbolic expression; credit per part."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

from rest_framework import serializers

from apps.core.fields import StrictCharField
from apps.exercises.choices import ExerciseKind
from apps.exercises.content import cache
from apps.exercises.content.plain import tex_plain
from apps.exercises.content.render import math_html
from apps.exercises.formats.base import AnswerShown, Format, SolutionOut, WidgetOut, payload_field, prefixed
from apps.exercises.formats.numeric import check_target, unit_note
from apps.exercises.formats.table import fields_shown
from apps.exercises.grading import symbolic
from apps.exercises.grading.base import GradeResult, InvalidAnswer
from apps.exercises.grading.numeric import NumericTarget
from apps.exercises.grading.structured import grade_parts
from apps.exercises.grading.symbolic import SymbolicTarget

if TYPE_CHECKING:
    from django.http import QueryDict

    from apps.exercises.content.cache import Rendered
    from apps.exercises.content.resolve import ResolvedExercise
    from apps.exercises.content.schema import ExerciseSpec, PartSpec
    from apps.exercises.models import Attempt, Exercise, ExerciseVersion


def part_labels(spec: ExerciseSpec) -> dict[str, str]:
    return {p.key: p.label for p in spec.parts or []}


class PartsAnswerIn(serializers.Serializer[Any]):
    parts = serializers.DictField(
        child=StrictCharField(max_length=400, allow_blank=True),
        help_text="Part key → a number with its unit, or an expression. Parts may be left out.",
    )


class SymbolOut(serializers.Serializer[Any]):
    name = serializers.CharField()
    meaning = serializers.CharField()


class PartOut(serializers.Serializer[Any]):
    key = serializers.CharField()
    label = serializers.CharField()  # type: ignore[assignment]  # a field named like Field.label
    kind = serializers.ChoiceField(choices=["numeric", "expression"])
    input_unit = serializers.CharField(allow_null=True, help_text="numeric: how a bare number is read.")
    quantity = serializers.CharField(allow_null=True, help_text="numeric: what kind of quantity is asked for.")
    unit_note = serializers.CharField(allow_null=True, help_text="numeric: how the field reads a number, in words.")
    symbols = SymbolOut(many=True, help_text="expression: the names it may use.")


class PartsWidget(WidgetOut):
    parts = PartOut(many=True)


class PartAnswerOut(serializers.Serializer[Any]):
    key = serializers.CharField()
    label = serializers.CharField()  # type: ignore[assignment]  # a field named like Field.label
    text = serializers.CharField(help_text="A number in the part's input unit, or the expression.")


class PartsSolution(SolutionOut):
    parts = PartAnswerOut(many=True)


def _part_widget(part: PartSpec, r: ResolvedExercise) -> dict[str, Any]:
    if part.answer is not None:
        target = r.parts[part.key]
        assert isinstance(target, NumericTarget)
        return {
            "key": part.key,
            "label": part.label,
            "kind": "numeric",
            "input_unit": part.answer.input_unit or part.answer.unit,
            "quantity": target.dim.describe(),
            "unit_note": unit_note(target),
            "symbols": [],
        }
    assert part.expression is not None
    return {
        "key": part.key,
        "label": part.label,
        "kind": "expression",
        "input_unit": None,
        "quantity": None,
        "unit_note": None,
        "symbols": [{"name": n, "meaning": m} for n, m in part.expression.symbols.items()],
    }


def _part_answer(target: NumericTarget | SymbolicTarget) -> str:
    return target.text if isinstance(target, SymbolicTarget) else target.text()


def _part_export(target: NumericTarget | SymbolicTarget, value: float | None) -> dict[str, Any]:
    if isinstance(target, SymbolicTarget):
        return {"expression": target.text, "symbols": list(target.symbols), "small": list(target.small)}
    return {"answer": value, "unit": target.dim.label(), "answer_text": target.text(), "tolerance": target.tolerance}


class Parts(Format):
    name = "parts"
    answer_in = PartsAnswerIn
    widget_out = PartsWidget
    solution_out = PartsSolution
    required = ("parts",)
    optional = frozenset({"plot"})
    kinds = frozenset({ExerciseKind.DERIVE, ExerciseKind.TRACE, ExerciseKind.DESIGN})

    def form_payload(self, data: QueryDict) -> dict[str, Any]:
        return {"parts": prefixed(data, "part:")}

    def grade(self, version: ExerciseVersion, r: ResolvedExercise, payload: dict[str, Any]) -> GradeResult:
        answers = payload_field(payload, "parts", dict)
        # Labels in their plain reading: an unreadable part's message is shown as text.
        labels = {k: tex_plain(v) for k, v in part_labels(r.spec).items()}
        return grade_parts(r.parts, labels, {str(k): str(v) for k, v in answers.items()})

    def widget(self, version: ExerciseVersion, r: ResolvedExercise, html: Rendered, user_id: int) -> dict[str, Any]:
        return {"parts": [_part_widget(p, r) for p in r.spec.parts or []]}

    def solution(self, version: ExerciseVersion, r: ResolvedExercise, html: Rendered) -> dict[str, Any]:
        return {
            "parts": [
                {"key": p.key, "label": p.label, "text": _part_answer(r.parts[p.key])} for p in r.spec.parts or []
            ]
        }

    def field_labels(self, spec: ExerciseSpec) -> dict[str, str]:
        return part_labels(spec)

    def preview_targets(self, r: ResolvedExercise) -> dict[str, NumericTarget]:
        return {k: t for k, t in r.parts.items() if isinstance(t, NumericTarget)}

    def preview_expressions(self, r: ResolvedExercise) -> dict[str, SymbolicTarget]:
        return {k: t for k, t in r.parts.items() if isinstance(t, SymbolicTarget)}

    def check(self, spec: ExerciseSpec, r: ResolvedExercise) -> list[str]:
        problems: list[str] = []
        for key, target in r.parts.items():
            where = f"part {key}"
            if isinstance(target, NumericTarget):
                problems += check_target(target, where)
                continue
            names = list(target.symbols)
            try:
                if not symbolic.grade(target.text, target).correct:
                    problems.append(f"{where}: the expected expression is not graded correct")
            except InvalidAnswer as exc:
                problems.append(f"{where}: the expected expression does not parse for learners: {exc.message}")
            for i, mistake in enumerate(target.mistakes):
                if symbolic.equivalent(mistake.expr, target.expr, names):
                    problems.append(f"{where}.mistakes[{i}] is equivalent to the answer, so it can never be reported")
                elif target.accept_approximate and symbolic.equal_in_limit(
                    mistake.expr, target.expr, names, target.small
                ):
                    problems.append(f"{where}.mistakes[{i}] equals the answer under the accepted approximation")
        return problems

    def export(self, spec: ExerciseSpec, r: ResolvedExercise) -> dict[str, Any]:
        if not r.parts:
            return {}
        return {"parts": {key: _part_export(t, r.part_values.get(key)) for key, t in r.parts.items()}}

    def answer_label(self, exercise: Exercise, parsed: dict[str, Any]) -> str:
        # The parts by their labels, each as typed (a number with its unit, an expression).
        if "parts" in parsed:
            spec = cache.resolved(exercise.current_version).spec if exercise.current_version else None
            return fields_shown(parsed["parts"] or {}, part_labels(spec) if spec is not None else {}).text
        return "(other)"

    def answer_shown(self, attempt: Attempt, spec: ExerciseSpec, parsed: dict[str, Any]) -> AnswerShown | None:
        if "parts" not in parsed:
            return None
        symbols = {p.key: tuple(p.expression.symbols) for p in spec.parts or [] if p.expression is not None}

        def html(key: str, value: str) -> str:  # an expression as math; a number as typed
            return expression_html(value, symbols[key]) if key in symbols else ""

        return fields_shown(parsed.get("parts") or {}, part_labels(spec), (attempt.details or {}).get("cells"), html)


@lru_cache(maxsize=2048)
def expression_html(text: str, names: tuple[str, ...]) -> str:
    """A learner's expression as the math it means (MathML); empty if it does not parse."""
    latex = symbolic.as_latex(text, names)
    return math_html(latex) if latex is not None else ""
