"""Order the steps. Steps carry opaque ids and start shuffled (never already in order)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rest_framework import serializers

from apps.core.exceptions import ApplicationError
from apps.core.fields import StrictCharField
from apps.exercises.choices import ExerciseKind
from apps.exercises.content import cache
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
from apps.exercises.grading.structured import grade_order, order_constraints

if TYPE_CHECKING:
    from django.http import QueryDict

    from apps.exercises.content.cache import Rendered
    from apps.exercises.content.resolve import ResolvedExercise
    from apps.exercises.content.schema import ExerciseSpec, OrderStep
    from apps.exercises.models import Attempt, Exercise, ExerciseVersion


def step_ids(version: ExerciseVersion, spec: ExerciseSpec) -> dict[str, str]:
    """Author step id -> opaque id."""
    return {s.id: opaque(version, "step", s.id) for s in spec.steps or []}


class OrderAnswerIn(serializers.Serializer[Any]):
    order = serializers.ListField(child=StrictCharField(max_length=32), max_length=50, help_text="Step ids in order.")


class OrderWidget(WidgetOut):
    steps = OptionOut(many=True, help_text="Shuffled per learner; never already in order.")


class StepPlacedOut(OptionOut):
    in_place = serializers.BooleanField(
        help_text="Where it belongs: at its place in the listed order, or (with constraints) after every step "
        "it needs and before every step that needs it."
    )


class OrderSolution(SolutionOut):
    order = serializers.ListField(child=serializers.CharField())
    constraints = serializers.ListField(child=serializers.ListField(child=serializers.CharField()))
    steps = OptionOut(many=True, help_text="The steps in the listed order (with constraints: one order that works).")
    yours = StepPlacedOut(
        many=True,
        allow_null=True,
        help_text="The learner's latest order on these numbers; null: none (revealed first).",
    )


def misplaced(steps: list[OrderStep], constraints: list[tuple[str, str]] | None, order: list[str]) -> set[str]:
    """The steps of ``order`` (author ids) that are out of place. Without constraints only the
    listed order is right, so a step is out of place where its position differs from it; with
    constraints, both steps of every pair the order breaks."""
    if not constraints:
        return {step for step, listed in zip(order, steps, strict=True) if step != listed.id}
    position = {step: i for i, step in enumerate(order)}
    out: set[str] = set()
    for before, after in order_constraints(steps, constraints):
        if position[before] > position[after]:
            out |= {before, after}
    return out


class Order(Format):
    name = "order"
    answer_in = OrderAnswerIn
    widget_out = OrderWidget
    solution_out = OrderSolution
    required = ("steps",)
    optional = frozenset({"constraints"})
    kinds = frozenset({ExerciseKind.DESIGN})

    def form_payload(self, data: QueryDict) -> dict[str, Any]:
        # Without JavaScript each step has a position select; with it, hidden inputs in order.
        if data.getlist("order"):
            return {"order": data.getlist("order")}
        positions = []
        for key, value in data.items():
            if key.startswith("pos:"):
                try:
                    positions.append((int(str(value)), key.removeprefix("pos:")))
                except ValueError:
                    continue
        if len({p for p, _ in positions}) != len(positions):
            raise ApplicationError("Give each step a different position.", code="bad_payload")
        return {"order": [step for _, step in sorted(positions)]}

    def grade(self, version: ExerciseVersion, r: ResolvedExercise, payload: dict[str, Any]) -> GradeResult:
        spec = r.spec
        mapping = {v: k for k, v in step_ids(version, spec).items()}
        order = map_ids(payload_field(payload, "order", list), mapping, "step")
        return grade_order(spec.steps or [], spec.constraints, order)

    def widget(self, version: ExerciseVersion, r: ResolvedExercise, html: Rendered, user_id: int) -> dict[str, Any]:
        steps = r.spec.steps or []
        ids = step_ids(version, r.spec)
        order = learner_order(user_id, version, len(steps), avoid_identity=True)
        return {"steps": [{"id": ids[steps[i].id], "html": html.steps_html[steps[i].id]} for i in order]}

    def solution(self, version: ExerciseVersion, r: ResolvedExercise, html: Rendered) -> dict[str, Any]:
        ids = step_ids(version, r.spec)
        return {
            "order": [ids[s.id] for s in r.spec.steps or []],
            "constraints": [[ids[a], ids[b]] for a, b in r.spec.constraints or []],
            "steps": [{"id": ids[s.id], "html": html.steps_html[s.id]} for s in r.spec.steps or []],
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
        ids = step_ids(version, r.spec)
        order = (last.parsed or {}).get("order") if last is not None else None
        if not isinstance(order, list) or sorted(map(str, order)) != sorted(ids):
            return {"yours": None}
        placed = misplaced(r.spec.steps or [], r.spec.constraints, [str(step) for step in order])
        return {
            "yours": [
                {"id": ids[step], "html": html.steps_html[step], "in_place": step not in placed} for step in order
            ]
        }

    def check(self, spec: ExerciseSpec, r: ResolvedExercise) -> list[str]:
        steps = spec.steps or []
        position = {s.id: i for i, s in enumerate(steps)}
        return [
            f"the listed order breaks its own constraint ({before} before {after})"
            for before, after in order_constraints(steps, spec.constraints)
            if position[before] > position[after]
        ]

    def export(self, spec: ExerciseSpec, r: ResolvedExercise) -> dict[str, Any]:
        if not spec.steps:
            return {}
        out: dict[str, Any] = {"order": [s.id for s in spec.steps]}
        if spec.constraints:
            out["constraints"] = [list(c) for c in spec.constraints]
        return out

    def answer_label(self, exercise: Exercise, parsed: dict[str, Any]) -> str:
        # The steps' texts, as the learner read them (not the author's step ids).
        if "order" in parsed:
            spec = cache.resolved(exercise.current_version).spec if exercise.current_version else None
            texts = {s.id: s.text for s in spec.steps or []} if spec is not None else {}
            return " → ".join(texts.get(str(step), str(step)) for step in parsed["order"])
        return "(other)"

    def answer_shown(self, attempt: Attempt, spec: ExerciseSpec, parsed: dict[str, Any]) -> AnswerShown | None:
        if "order" not in parsed:
            return None
        texts = {s.id: s.text for s in spec.steps or []}
        items = [
            ShownItem(str(n), texts.get(step, step), inline_html(texts[step]) if step in texts else "")
            for n, step in enumerate(parsed["order"], start=1)
        ]
        return AnswerShown(" → ".join(item.value for item in items), items)
