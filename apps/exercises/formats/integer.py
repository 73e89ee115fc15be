"""A whole number with no unit: "how many all-reduces per step?". Exact match.

The content reuses a numeric exercise's ``answer`` (a formula, with ``mistakes`` and their
feedback) with ``unit: ""``; the formula must come out a whole number.

What a learner may type: digits with an optional sign, and thousands grouped by commas or
underscores ("1,024", "1_024"). Everything else is an input error that costs nothing and says
why: "2.5" and "2.0" (a count has no decimal point; accepting "2.0" would invite "2.00001"),
"1e3" (written out: 1000; an exponent reads as an approximation), "ten" (digits, please),
"12 steps" (no unit) and "" (nothing to grade).
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

from rest_framework import serializers

from apps.core.fields import StrictCharField
from apps.exercises.choices import ExerciseKind
from apps.exercises.formats.base import Format, SolutionOut, WidgetOut, payload_field
from apps.exercises.formats.numeric import number_relation
from apps.exercises.grading.base import GradeResult, InvalidAnswer

if TYPE_CHECKING:
    from django.http import QueryDict

    from apps.exercises.content.cache import Rendered
    from apps.exercises.content.resolve import ResolvedExercise
    from apps.exercises.content.schema import ExerciseSpec
    from apps.exercises.models import Attempt, Exercise, ExerciseVersion

_WHOLE = re.compile(r"[+-]?(?:\d+|\d{1,3}(?:,\d{3})+|\d{1,3}(?:_\d{3})+)")
_DECIMAL = re.compile(r"[+-]?(?:\d[\d,_]*)?\.\d*|[+-]?\d[\d,_]*\.")
_EXPONENT = re.compile(r"[+-]?\d+(?:\.\d*)?[eE][+-]?\d+")
_LEADING_NUMBER = re.compile(r"[+-]?[\d.,_]*\d")


def read_integer(text: str) -> int:
    """The whole number ``text`` states; InvalidAnswer, saying why, for anything else."""
    raw = text.strip()
    if not raw:
        raise InvalidAnswer("empty_answer", "Enter a whole number.")
    if _WHOLE.fullmatch(raw):
        return int(raw.replace(",", "").replace("_", ""))
    if _EXPONENT.fullmatch(raw):
        value = float(raw)
        written = f" ({raw} is {int(value)})" if value.is_integer() and abs(value) < 1e18 else ""
        raise InvalidAnswer(
            "not_integer", f"Write the number out in digits{written}: this asks for an exact count.", understood=raw
        )
    if _DECIMAL.fullmatch(raw):
        raise InvalidAnswer(
            "not_integer", f"{raw} is not a whole number: this asks for a count, with no decimal point.", understood=raw
        )
    lead = _LEADING_NUMBER.match(raw)
    if lead and _WHOLE.fullmatch(lead.group(0)) and raw[lead.end() :].strip():
        raise InvalidAnswer(
            "unexpected_unit",
            f"Just the number: this answer has no unit ({raw[lead.end() :].strip()!r}).",
            understood=raw,
        )
    raise InvalidAnswer("not_a_number", f"Write a whole number in digits, like 12 (not {raw!r}).")


def whole(value: float) -> int | None:
    """``value`` as an int if it is a whole number (formulas give floats), else None."""
    if not math.isfinite(value) or abs(value - round(value)) > 1e-9 * max(1.0, abs(value)):
        return None
    return round(value)


class IntegerAnswerIn(serializers.Serializer[Any]):
    answer = StrictCharField(max_length=50, help_text="A whole number in digits: 12, -3, 1,024.")


class IntegerWidget(WidgetOut):
    pass


class IntegerSolution(SolutionOut):
    answer = serializers.IntegerField()


class Integer(Format):
    name = "integer"
    answer_in = IntegerAnswerIn
    widget_out = IntegerWidget
    solution_out = IntegerSolution
    required = ("answer",)
    kinds = frozenset({ExerciseKind.DERIVE, ExerciseKind.TRACE, ExerciseKind.DESIGN})
    one_number = True

    def _answer(self, r: ResolvedExercise) -> int:
        """The answer (``check`` proves the formula whole; rounded should it not be)."""
        assert r.numeric is not None
        value = whole(r.numeric.value)
        return value if value is not None else round(r.numeric.value)

    def form_payload(self, data: QueryDict) -> dict[str, Any]:
        return {"answer": data.get("answer", "")}

    def grade(self, version: ExerciseVersion, r: ResolvedExercise, payload: dict[str, Any]) -> GradeResult:
        given = read_integer(payload_field(payload, "answer", str))
        parsed = {"value": given, "understood": str(given)}
        if given == self._answer(r):
            return GradeResult(True, "Correct.", parsed=parsed)
        assert r.numeric is not None
        for i, mistake in enumerate(r.numeric.mistakes):
            if whole(mistake.value) == given:
                details = {"mistake": True, "mistake_index": i}
                return GradeResult(False, mistake.feedback, parsed=parsed, details=details)
        return GradeResult(False, "Not quite. Count again against the givens.", parsed=parsed)

    def widget(self, version: ExerciseVersion, r: ResolvedExercise, html: Rendered, user_id: int) -> dict[str, Any]:
        return {}

    def solution(self, version: ExerciseVersion, r: ResolvedExercise, html: Rendered) -> dict[str, Any]:
        return {"answer": self._answer(r)}

    def check(self, spec: ExerciseSpec, r: ResolvedExercise) -> list[str]:
        assert spec.answer is not None and r.numeric is not None
        answer = spec.answer
        problems = []
        if answer.unit or answer.input_unit:
            problems.append('an integer answer has no unit: write `unit: ""` and no input_unit')
        if answer.alternates:
            problems.append("an integer answer is matched exactly: no alternates (list mistakes with feedback)")
        value = whole(r.numeric.value)
        if value is None:
            problems.append(f"answer: {r.numeric.value!r} is not a whole number")
        for i, mistake in enumerate(r.numeric.mistakes):
            if whole(mistake.value) is None:
                problems.append(f"answer.mistakes[{i}]: {mistake.value!r} is not a whole number, so no one can type it")
            elif whole(mistake.value) == value:
                problems.append(f"answer.mistakes[{i}] equals the answer, so it can never be reported")
        return problems

    def export(self, spec: ExerciseSpec, r: ResolvedExercise) -> dict[str, Any]:
        return {"answer": self._answer(r)}

    def preview_rows(self, r: ResolvedExercise) -> list[tuple[str, str]]:
        assert r.numeric is not None
        mistakes = [("Known mistake", f"{whole(m.value)} — {m.feedback}") for m in r.numeric.mistakes]
        return [("Answer", str(self._answer(r))), *mistakes]

    def relation_label(self, r: ResolvedExercise, seed: ResolvedExercise, attempt: Attempt) -> str | None:
        return number_relation(r, seed, attempt)

    def answer_label(self, exercise: Exercise, parsed: dict[str, Any]) -> str:
        return str(parsed["value"]) if "value" in parsed else "(other)"
