"""Select the buggy lines of a snippet. A Debug whose snippet comes with tests has a second part:
the fixed code, graded in the sandbox (``code`` instead of ``lines``)."""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING, Any

from rest_framework import serializers

from apps.core.fields import StrictCharField
from apps.exercises.choices import AttemptPart, ExerciseKind
from apps.exercises.formats.base import (
    AnswerShown,
    CodeFixOut,
    Format,
    ShownItem,
    SolutionOut,
    WidgetOut,
    payload_field,
)
from apps.exercises.formats.code import code_widget
from apps.exercises.grading.base import GradeResult, InvalidAnswer
from apps.exercises.grading.structured import grade_lines

if TYPE_CHECKING:
    from django.http import QueryDict

    from apps.exercises.content.cache import Rendered
    from apps.exercises.content.resolve import ResolvedExercise
    from apps.exercises.content.schema import ExerciseSpec
    from apps.exercises.models import Attempt, Exercise, ExerciseVersion


class LinesAnswerIn(serializers.Serializer[Any]):
    """A Debug exercise: either the buggy lines (graded instantly) or the fixed code (sandbox)."""

    lines = serializers.ListField(
        child=serializers.IntegerField(min_value=1), max_length=500, required=False, help_text="1-based lines."
    )
    code = StrictCharField(
        max_length=100_000, trim_whitespace=False, required=False,
        help_text="The fixed code, graded in the sandbox (when the widget has `fix`).",
    )  # fmt: skip

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if ("lines" in attrs) == ("code" in attrs):
            raise serializers.ValidationError("Send either `lines` (the buggy lines) or `code` (the fix).")
        return attrs


class CodeLineOut(serializers.Serializer[Any]):
    number = serializers.IntegerField()
    text = serializers.CharField(allow_blank=True)


class LinesWidget(WidgetOut):
    language = serializers.CharField()
    lines = CodeLineOut(many=True)
    fix = CodeFixOut(allow_null=True, help_text="A Debug's second part: submit the fixed code as `code`.")


class SolutionLineOut(CodeLineOut):
    buggy = serializers.BooleanField()


class LinesSolution(SolutionOut):
    buggy_lines = serializers.ListField(child=serializers.IntegerField())
    fixed_code = serializers.CharField()
    lines = SolutionLineOut(many=True, help_text="The snippet, its buggy lines marked.")
    yours = serializers.ListField(
        child=serializers.IntegerField(),
        allow_null=True,
        help_text="The lines of the learner's latest pick; null: none (revealed first).",
    )


def changed_lines(before: str, after: str) -> set[int]:
    """1-based lines of ``before`` that ``after`` replaces or deletes."""
    out: set[int] = set()
    matcher = difflib.SequenceMatcher(a=before.splitlines(), b=after.splitlines(), autojunk=False)
    for tag, i1, i2, _, _ in matcher.get_opcodes():
        if tag in ("replace", "delete"):
            out.update(range(i1 + 1, i2 + 1))
    return out


class Lines(Format):
    name = "lines"
    answer_in = LinesAnswerIn
    widget_out = LinesWidget
    solution_out = LinesSolution
    required = ("code", "buggy_lines")
    kinds = frozenset({ExerciseKind.DEBUG})
    buggy_code = True
    reviewable = False  # its fix runs in the sandbox

    def parts(self, spec: ExerciseSpec) -> tuple[AttemptPart, ...]:
        if spec.code is not None and spec.code.cases:
            return (AttemptPart.LINES, AttemptPart.CODE)
        return (AttemptPart.WHOLE,)

    def form_payload(self, data: QueryDict) -> dict[str, Any]:
        lines = []
        for raw in data.getlist("lines"):
            try:
                lines.append(int(raw))
            except ValueError:
                continue
        return {"lines": lines}

    def grade(self, version: ExerciseVersion, r: ResolvedExercise, payload: dict[str, Any]) -> GradeResult | None:
        if "code" in payload:
            return None  # the fix: graded in the sandbox
        spec = r.spec
        assert spec.code is not None
        lines = payload_field(payload, "lines", list)
        if not all(isinstance(n, int) and not isinstance(n, bool) for n in lines):
            raise InvalidAnswer("bad_payload", "Lines are given by their numbers.")
        return grade_lines(spec.buggy_lines or [], lines, line_count=len(spec.code.starter.splitlines()))

    def widget(self, version: ExerciseVersion, r: ResolvedExercise, html: Rendered, user_id: int) -> dict[str, Any]:
        spec = r.spec
        assert spec.code is not None
        return {
            "language": "python",
            "lines": [{"number": i + 1, "text": t} for i, t in enumerate(spec.code.starter.splitlines())],
            # The second part of a Debug: submit the fixed code, graded in the sandbox.
            "fix": code_widget(spec.code) if AttemptPart.CODE in self.parts(spec) else None,
        }

    def solution(self, version: ExerciseVersion, r: ResolvedExercise, html: Rendered) -> dict[str, Any]:
        if r.spec.code is None:
            return {}
        buggy = list(r.spec.buggy_lines or [])
        return {
            "buggy_lines": buggy,
            "fixed_code": r.spec.code.solution,
            "lines": [
                {"number": i + 1, "text": t, "buggy": i + 1 in buggy}
                for i, t in enumerate(r.spec.code.starter.splitlines())
            ],
        }

    shows_beside = True

    def beside(
        self,
        version: ExerciseVersion,
        r: ResolvedExercise,
        html: Rendered,
        *,
        user_id: int | None,
        last: Attempt | None,
    ) -> dict[str, Any]:
        picked = (last.parsed or {}).get("lines") if last is not None else None
        if not isinstance(picked, list):
            return {"yours": None}
        return {"yours": [n for n in picked if isinstance(n, int) and not isinstance(n, bool)]}

    def check(self, spec: ExerciseSpec, r: ResolvedExercise) -> list[str]:
        assert spec.code is not None and spec.buggy_lines is not None
        n = len(spec.code.starter.splitlines())
        problems = [f"buggy line {b} is outside the snippet (1–{n})" for b in spec.buggy_lines if not 1 <= b <= n]
        changed = changed_lines(spec.code.starter, spec.code.solution)
        if changed != set(spec.buggy_lines):
            problems.append(
                f"buggy_lines {sorted(spec.buggy_lines)} differ from the lines the fix changes {sorted(changed)}"
            )
        return problems

    def export(self, spec: ExerciseSpec, r: ResolvedExercise) -> dict[str, Any]:
        return {"buggy_lines": spec.buggy_lines} if spec.buggy_lines else {}

    def preview_rows(self, r: ResolvedExercise) -> list[tuple[str, str]]:
        return [("Buggy lines", ", ".join(map(str, r.spec.buggy_lines)))] if r.spec.buggy_lines else []

    def answer_label(self, exercise: Exercise, parsed: dict[str, Any]) -> str:
        if "lines" in parsed:
            return "lines " + ", ".join(map(str, parsed["lines"]))
        return "(other)"

    def answer_shown(self, attempt: Attempt, spec: ExerciseSpec, parsed: dict[str, Any]) -> AnswerShown | None:
        if "lines" not in parsed:
            return None
        starter = spec.code.starter if spec.code else ""
        code_lines = starter.splitlines()
        picked = [n for n in parsed["lines"] if isinstance(n, int)]
        items = [ShownItem(f"line {n}", code_lines[n - 1] if 0 < n <= len(code_lines) else "") for n in picked]
        text = "lines " + ", ".join(str(n) for n in picked)
        # The whole snippet with the picked lines marked, as the learner picked them.
        return AnswerShown(
            text, items, snippet=starter or None, marked=tuple(n for n in picked if 0 < n <= len(code_lines))
        )
