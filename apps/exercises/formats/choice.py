"""Single or multiple choice. Options carry opaque ids and are shuffled per learner."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rest_framework import serializers

from apps.core.fields import StrictCharField
from apps.exercises.choices import ExerciseKind
from apps.exercises.content import cache
from apps.exercises.content.render import substitute
from apps.exercises.content.tells import choice_tell
from apps.exercises.formats.base import (
    AnswerShown,
    Format,
    OptionOut,
    ShownItem,
    SolutionOut,
    WidgetOut,
    inline_html,
    learner_order,
    map_ids,
    opaque,
    payload_field,
)
from apps.exercises.grading.base import GradeResult
from apps.exercises.grading.structured import grade_choice

if TYPE_CHECKING:
    from collections.abc import Iterable

    from django.http import QueryDict

    from apps.exercises.content.cache import Rendered
    from apps.exercises.content.resolve import ResolvedExercise
    from apps.exercises.content.schema import ExerciseSpec
    from apps.exercises.models import Attempt, Exercise, ExerciseVersion


def option_ids(version: ExerciseVersion, count: int) -> list[str]:
    return [opaque(version, "option", str(i)) for i in range(count)]


class ChoiceAnswerIn(serializers.Serializer[Any]):
    choices = serializers.ListField(child=StrictCharField(max_length=32), max_length=50, help_text="Option ids.")


class ChoiceWidget(WidgetOut):
    multiple = serializers.BooleanField()
    options = OptionOut(many=True, help_text="Shuffled per learner, stable across visits.")


class OptionSolutionOut(serializers.Serializer[Any]):
    id = serializers.CharField()
    html = serializers.CharField(help_text="The option's text, as the widget shows it.")
    correct = serializers.BooleanField()
    feedback_html = serializers.CharField(help_text="Why this option is right or wrong.")


class ChoiceSolution(SolutionOut):
    options = OptionSolutionOut(many=True, help_text="In the order the learner saw them.")
    yours = serializers.ListField(
        child=serializers.CharField(),
        allow_null=True,
        help_text="The option ids of the learner's latest answer on these numbers; null: none (revealed first).",
    )


def _solution_options(
    version: ExerciseVersion, r: ResolvedExercise, html: Rendered, order: Iterable[int]
) -> list[dict[str, Any]]:
    options = r.spec.options or []
    ids = option_ids(version, len(options))
    return [
        {
            "id": ids[i],
            "html": html.options_html[i],
            "correct": options[i].correct,
            "feedback_html": html.options_feedback_html[i],
        }
        for i in order
    ]


class Choice(Format):
    name = "choice"
    answer_in = ChoiceAnswerIn
    widget_out = ChoiceWidget
    solution_out = ChoiceSolution
    required = ("options",)
    kinds = frozenset({ExerciseKind.TRACE, ExerciseKind.DESIGN})
    # Stored versions from before may lack one and must still load; check_content requires it.
    explanation_required = False

    def form_payload(self, data: QueryDict) -> dict[str, Any]:
        return {"choices": data.getlist("choices")}

    def grade(self, version: ExerciseVersion, r: ResolvedExercise, payload: dict[str, Any]) -> GradeResult:
        spec = r.spec
        ids = option_ids(version, len(spec.options or []))
        chosen = map_ids(payload_field(payload, "choices", list), {v: i for i, v in enumerate(ids)}, "option")
        return grade_choice(spec.options or [], chosen, multiple=spec.multiple)

    def widget(self, version: ExerciseVersion, r: ResolvedExercise, html: Rendered, user_id: int) -> dict[str, Any]:
        ids = option_ids(version, len(r.spec.options or []))
        order = learner_order(user_id, version, len(ids))
        return {
            "multiple": r.spec.multiple,
            "options": [{"id": ids[i], "html": html.options_html[i]} for i in order],
        }

    shows_beside = True

    def solution(self, version: ExerciseVersion, r: ResolvedExercise, html: Rendered) -> dict[str, Any]:
        return {"options": _solution_options(version, r, html, range(len(r.spec.options or [])))}

    def beside(
        self,
        version: ExerciseVersion,
        r: ResolvedExercise,
        html: Rendered,
        *,
        user_id: int | None,
        last: Attempt | None,
    ) -> dict[str, Any]:
        n = len(r.spec.options or [])
        ids = option_ids(version, n)
        chosen = (last.parsed or {}).get("choices") if last is not None else None
        out: dict[str, Any] = {
            "yours": [ids[i] for i in chosen if isinstance(i, int) and 0 <= i < n] if isinstance(chosen, list) else None
        }
        if user_id is not None:  # the options in the order this learner saw them
            out["options"] = _solution_options(version, r, html, learner_order(user_id, version, n))
        return out

    def check(self, spec: ExerciseSpec, r: ResolvedExercise) -> list[str]:
        texts = [o.text.strip() for o in spec.options or []]
        problems = ["two options have the same text"] if len(set(texts)) != len(texts) else []
        tell = choice_tell(r.spec)
        return problems + (tell.problems if tell else [])

    def export(self, spec: ExerciseSpec, r: ResolvedExercise) -> dict[str, Any]:
        if not spec.options:
            return {}
        return {"correct_options": [substitute(o.text, r.scope) for o in spec.options if o.correct]}

    def preview_rows(self, r: ResolvedExercise) -> list[tuple[str, str]]:
        # Rendered text, as learners read it (ResolvedExercise.spec).
        return [
            ("Correct option" if o.correct else "Distractor", f"{o.text} — feedback: {o.feedback}")
            for o in r.spec.options or []
        ]

    def answer_label(self, exercise: Exercise, parsed: dict[str, Any]) -> str:
        spec = cache.resolved(exercise.current_version).spec if exercise.current_version else None
        if "choices" in parsed and spec is not None and spec.options:
            options = spec.options
            return " + ".join(options[i].text for i in parsed["choices"] if i < len(options))
        return "(other)"

    def answer_shown(self, attempt: Attempt, spec: ExerciseSpec, parsed: dict[str, Any]) -> AnswerShown | None:
        if "choices" not in parsed:
            return None
        options = spec.options or []
        shown = learner_order(attempt.user_id, attempt.version, len(options))
        picked = set(parsed["choices"])
        items = [
            ShownItem(f"option {pos + 1}", options[i].text, inline_html(options[i].text))
            for pos, i in enumerate(shown)
            if i in picked
        ]
        return AnswerShown(" + ".join(item.value for item in items), items)
