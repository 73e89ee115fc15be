"""A number with a unit: "12.9B", "8.59 GB", "148 tok/s"; graded within a relative tolerance."""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

from rest_framework import serializers

from apps.core.fields import StrictCharField
from apps.exercises.choices import ExerciseKind
from apps.exercises.formats.base import Format, SolutionOut, WidgetOut, payload_field
from apps.exercises.grading import numeric
from apps.exercises.grading.base import GradeResult, InvalidAnswer
from apps.exercises.grading.numeric import NumericTarget, base_threshold, format_number

if TYPE_CHECKING:
    from django.http import QueryDict

    from apps.exercises.content.cache import Rendered
    from apps.exercises.content.resolve import ResolvedExercise
    from apps.exercises.content.schema import ExerciseSpec
    from apps.exercises.models import Attempt, Exercise, ExerciseVersion


class NumericAnswerIn(serializers.Serializer[Any]):
    answer = StrictCharField(max_length=200, help_text="A number with an optional unit: 12.9B, 8.59 GB, 148 tok/s.")


class NumericWidget(WidgetOut):
    input_unit = serializers.CharField(help_text="How a bare number is read.")
    bare_in_base_from = serializers.FloatField(
        allow_null=True,
        help_text="A bare number at least this large is read in base units (`unit`'s base), not in `input_unit`: "
        "2147483648 in a GB field is bytes. Null: a bare number is always read in `input_unit`.",
    )
    base_unit = serializers.CharField(help_text="The base unit a large bare number is read in (bytes, params...).")
    unit = serializers.CharField()
    quantity = serializers.CharField(help_text="What kind of quantity is asked for.")
    sig_figs = serializers.IntegerField()
    unit_note = serializers.CharField(
        help_text="How the field reads a number, in words: 'a bare number is read in GB; units welcome'."
    )


class AlternateOut(serializers.Serializer[Any]):
    text = serializers.CharField()
    feedback = serializers.CharField()


class NumericAnswerOut(serializers.Serializer[Any]):
    text = serializers.CharField(help_text="The answer in the question's input unit.")
    value = serializers.FloatField(help_text="In base units.")
    unit = serializers.CharField()
    tolerance = serializers.FloatField(help_text="Relative.")
    alternates = AlternateOut(many=True)


class NumericSolution(SolutionOut):
    answer = NumericAnswerOut()


def unit_note(target: NumericTarget) -> str:
    """How a field reads what is typed, as its label says it (the one source of that phrase).

    A unitless field (a count, a ratio) has no unit to read a bare number in: it says so, rather
    than "read in ; units welcome"."""
    label = target.input_unit.label
    if not label:
        return "no unit needed; 25% reads as 0.25"
    note = f"a bare number is read in {label}"
    threshold = base_threshold(target.input_unit)
    if threshold is not None:
        note += f", or in {target.dim.label()} from {threshold:,.0f} up"
    return note + "; units welcome"


# A unit phrase with its unit missing: "read in ;", "a number in (", "in plain units" is fine.
_EMPTY_UNIT_PHRASE = re.compile(r"\b(?:in|as|per)\s*(?:[;,.:)(]|$)")


def empty_unit_phrase(note: str) -> bool:
    """Whether a rendered unit note names no unit where it says it reads one ("read in ; units")."""
    return bool(_EMPTY_UNIT_PHRASE.search(note))


def check_target(target: NumericTarget, where: str) -> list[str]:
    """A numeric answer (exercise, table cell or part) is sound: the answer rounded to the figures
    asked is accepted, a bare number is read in the unit asked, and every known mistake can be
    reported."""
    problems: list[str] = []
    if not math.isfinite(target.value):
        return [f"{where} is not finite"]
    note = unit_note(target)
    if empty_unit_phrase(note):
        problems.append(f"{where}: the field's unit note names no unit: {note!r}")
    sig_figs = target.sig_figs
    in_input = target.value / target.input_unit.scale
    rounded = float(f"{in_input:.{sig_figs}g}")
    typed = f"{rounded:.{sig_figs}g} {target.input_unit.label}"
    try:
        result = numeric.grade(typed, target)
        if not result.correct:
            problems.append(
                f"{where}: the answer rounded to {sig_figs} figures ({typed}) is rejected; "
                f"raise the tolerance ({target.tolerance}) or ask for more figures"
            )
    except InvalidAnswer as exc:
        problems.append(f"{where}: the answer written as {typed!r} does not parse: {exc.message}")
    threshold = numeric.base_threshold(target.input_unit)
    if threshold is not None and abs(in_input) >= threshold:
        problems.append(
            f"{where}: the answer is {in_input:.4g} {target.input_unit.label}, but a bare number of "
            f"{threshold:g} or more in this field is read in {target.dim.label()}; choose a larger input_unit"
        )
    for i, mistake in enumerate(target.mistakes):
        if numeric.agrees(mistake.value, target):
            problems.append(
                f"{where}.mistakes[{i}] is within the tolerance of the answer (or equal to it at the figures asked), "
                "so it can never be reported"
            )
    for i, alt in enumerate(target.alternates):
        for j, mistake in enumerate(target.mistakes):
            if numeric.close(mistake.value, alt.value, alt.tolerance):
                problems.append(f"{where}.mistakes[{j}] coincides with alternates[{i}]")
    return problems


def number_relation(r: ResolvedExercise, seed: ResolvedExercise, attempt: Attempt) -> str | None:
    """A one-number answer's relation to the learner's own (``Format.relation_label``)."""
    value = (attempt.parsed or {}).get("value")
    if r.numeric is None or seed.numeric is None or not isinstance(value, (int, float)):
        return None
    index = (attempt.details or {}).get("mistake_index")
    if isinstance(index, int) and index < len(seed.numeric.mistakes):
        first = seed.numeric.mistakes[index].feedback.split(". ")[0].rstrip(".")
        return f"mistake: {first}"
    return numeric.relation(float(value), r.numeric.value, r.numeric.tolerance)


class Numeric(Format):
    name = "numeric"
    answer_in = NumericAnswerIn
    widget_out = NumericWidget
    solution_out = NumericSolution
    required = ("answer",)
    optional = frozenset({"plot"})
    kinds = frozenset({ExerciseKind.DERIVE, ExerciseKind.DESIGN})
    one_number = True

    def form_payload(self, data: QueryDict) -> dict[str, Any]:
        return {"answer": data.get("answer", "")}

    def grade(self, version: ExerciseVersion, r: ResolvedExercise, payload: dict[str, Any]) -> GradeResult:
        assert r.numeric is not None
        return numeric.grade(payload_field(payload, "answer", str), r.numeric)

    def widget(self, version: ExerciseVersion, r: ResolvedExercise, html: Rendered, user_id: int) -> dict[str, Any]:
        spec = r.spec
        assert spec.answer is not None and r.numeric is not None
        return {
            "input_unit": spec.answer.input_unit or spec.answer.unit,
            "bare_in_base_from": base_threshold(r.numeric.input_unit),
            "base_unit": r.numeric.dim.label(),
            "unit": spec.answer.unit,
            "quantity": r.numeric.dim.describe(),
            "sig_figs": spec.answer.sig_figs,
            "unit_note": unit_note(r.numeric),
        }

    def solution(self, version: ExerciseVersion, r: ResolvedExercise, html: Rendered) -> dict[str, Any]:
        if r.numeric is None or r.spec.answer is None:
            return {}
        return {
            "answer": {
                "text": r.answer_text,
                "value": r.numeric.value,
                "unit": r.numeric.dim.label(),
                "tolerance": r.numeric.tolerance,
                "alternates": [{"text": r.numeric.text(a.value), "feedback": a.feedback} for a in r.numeric.alternates],
            }
        }

    def preview_targets(self, r: ResolvedExercise) -> dict[str, NumericTarget]:
        return {"": r.numeric} if r.numeric is not None else {}

    def check(self, spec: ExerciseSpec, r: ResolvedExercise) -> list[str]:
        assert spec.answer is not None and r.numeric is not None
        problems = check_target(r.numeric, "answer")
        threshold = base_threshold(r.numeric.input_unit)
        if threshold is not None and 0 < abs(r.numeric.value) < threshold:
            # The full count typed bare ("250945664" bytes) must read as base units, as the
            # preview and the grader read a bare number that large; below it, it reads as GB.
            problems.append(
                f"answer: {r.numeric.value:.6g} {r.numeric.dim.label()} typed bare would be read in "
                f"{r.numeric.input_unit.label} (only {threshold:g} or more reads as {r.numeric.dim.label()}); "
                "choose a smaller input_unit, or keep the answer at or above it"
            )
        return problems

    def export(self, spec: ExerciseSpec, r: ResolvedExercise) -> dict[str, Any]:
        if r.numeric is None or spec.answer is None:
            return {}
        answer = r.scope["answer"]
        return {
            "answer": answer,
            "unit": spec.answer.unit,
            "answer_text": r.answer_text,
            "tolerance": spec.answer.tolerance,
            "alternates": [a.value / (r.numeric.value / answer) if answer else a.value for a in r.numeric.alternates],
        }

    def preview_rows(self, r: ResolvedExercise) -> list[tuple[str, str]]:
        rows: list[tuple[str, str]] = []
        if r.answer_text:
            rows.append(("Answer", r.answer_text))
            if r.numeric:
                rows += [
                    (
                        "Accepted with a unit note" if a.convention else "Accepted alternate",
                        f"{r.numeric.text(a.value)} — {a.feedback}",
                    )
                    for a in r.numeric.alternates
                ]
                rows += [("Known mistake", f"{r.numeric.text(m.value)} — {m.feedback}") for m in r.numeric.mistakes]
        return rows

    def relation_label(self, r: ResolvedExercise, seed: ResolvedExercise, attempt: Attempt) -> str | None:
        return number_relation(r, seed, attempt)

    def answer_label(self, exercise: Exercise, parsed: dict[str, Any]) -> str:
        if "value" in parsed:  # the value the grader read (the reading the preview showed)
            return f"{format_number(parsed['value'])} {parsed.get('unit', '')}".strip()
        return "(other)"
