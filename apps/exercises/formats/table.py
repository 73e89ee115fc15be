"""A table of cells: given columns shown, answer columns filled in; each cell graded as a number."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rest_framework import serializers

from apps.core.fields import StrictCharField
from apps.exercises.choices import ExerciseKind
from apps.exercises.content import cache
from apps.exercises.formats.base import (
    AnswerShown,
    Format,
    ShownItem,
    SolutionOut,
    WidgetOut,
    payload_field,
    prefixed,
)
from apps.exercises.formats.numeric import check_target
from apps.exercises.grading.base import GradeResult
from apps.exercises.grading.structured import grade_table

if TYPE_CHECKING:
    from django.http import QueryDict

    from apps.exercises.content.cache import Rendered
    from apps.exercises.content.resolve import ResolvedExercise
    from apps.exercises.content.schema import ExerciseSpec
    from apps.exercises.grading.numeric import NumericTarget
    from apps.exercises.models import Attempt, Exercise, ExerciseVersion


def cell_id(row_key: str, col_key: str) -> str:
    return f"{row_key}.{col_key}"


def table_labels(spec: ExerciseSpec) -> dict[str, str]:
    labels: dict[str, str] = {}
    columns = {c.key: c for c in spec.columns or []}
    first = next(iter(columns.values()), None)
    for row in spec.rows or []:
        name = str(row.values.get(first.key, row.key)) if first and first.value is None else row.key
        for col in columns.values():
            if col.value is not None:
                labels[cell_id(row.key, col.key)] = f"{name} · {col.label}"
    return labels


def fields_shown(
    given: dict[str, Any],
    labels: dict[str, str],
    verdicts: object = None,
    html: Callable[[str, str], str] | None = None,
) -> AnswerShown:
    """Separately graded fields (cells, parts) by their labels, in the page's order, each with how
    the grader read it and its verdict (``verdicts``: the attempt's ``details["cells"]``) and, if
    ``html`` makes one from (key, value), the value as HTML."""
    keys = [k for k in labels if k in given] + sorted(k for k in given if k not in labels)
    by_key: dict[str, Any] = verdicts if isinstance(verdicts, dict) else {}
    items = []
    for k in keys:
        value = str(given[k].get("value", "")) if isinstance(given[k], dict) else str(given[k])
        found = by_key.get(k)
        verdict: dict[str, Any] = found if isinstance(found, dict) else {}
        items.append(
            ShownItem(
                labels.get(k) or k,
                value,
                html(k, value) if html is not None else "",
                str(verdict.get("understood") or ""),
                bool(verdict["correct"]) if "correct" in verdict else None,
                bool(verdict.get("noted")),
            )
        )
    return AnswerShown("; ".join(f"{item.label}: {item.value}" for item in items), items)


class TableAnswerIn(serializers.Serializer[Any]):
    cells = serializers.DictField(child=StrictCharField(max_length=200, allow_blank=True), help_text="Cell id → value.")


class TableColumnOut(serializers.Serializer[Any]):
    key = serializers.CharField()
    label = serializers.CharField()  # type: ignore[assignment]  # a field named like Field.label
    is_answer = serializers.BooleanField()
    input_unit = serializers.CharField(allow_null=True)


class TableCellOut(serializers.Serializer[Any]):
    answer_id = serializers.CharField(allow_null=True, help_text="Set on cells the learner fills in.")
    value = serializers.JSONField(allow_null=True, help_text="Shown value of a given cell.")


class TableRowOut(serializers.Serializer[Any]):
    key = serializers.CharField()
    cells = serializers.DictField(child=TableCellOut())


class TableWidget(WidgetOut):
    columns = TableColumnOut(many=True)
    rows = TableRowOut(many=True)


class YourCellOut(serializers.Serializer[Any]):
    value = serializers.CharField(allow_blank=True, help_text="As the learner typed it.")
    correct = serializers.BooleanField()


class TableSolution(SolutionOut):
    cells = serializers.DictField(child=serializers.CharField())
    yours = serializers.DictField(
        child=YourCellOut(),
        allow_null=True,
        help_text="The learner's latest answer on these numbers, by cell id; null: none (revealed first).",
    )


class Table(Format):
    name = "table"
    answer_in = TableAnswerIn
    widget_out = TableWidget
    solution_out = TableSolution
    required = ("columns", "rows")
    kinds = frozenset({ExerciseKind.DERIVE})
    givens_in_prompt = False  # table givens are per row and shown in the grid

    def form_payload(self, data: QueryDict) -> dict[str, Any]:
        return {"cells": prefixed(data, "cell:")}

    def grade(self, version: ExerciseVersion, r: ResolvedExercise, payload: dict[str, Any]) -> GradeResult:
        cells = payload_field(payload, "cells", dict)
        return grade_table(r.cells, table_labels(r.spec), {str(k): str(v) for k, v in cells.items()})

    def widget(self, version: ExerciseVersion, r: ResolvedExercise, html: Rendered, user_id: int) -> dict[str, Any]:
        columns = r.spec.columns or []
        rows = []
        for row in r.spec.rows or []:
            cells: dict[str, Any] = {}
            for col in columns:
                if col.value is not None:
                    cells[col.key] = {"answer_id": cell_id(row.key, col.key), "value": None}
                else:
                    cells[col.key] = {"answer_id": None, "value": row.values.get(col.key)}
            rows.append({"key": row.key, "cells": cells})
        return {
            "columns": [
                {"key": c.key, "label": c.label, "is_answer": c.value is not None, "input_unit": c.input_unit or c.unit}
                for c in columns
            ],
            "rows": rows,
        }

    def solution(self, version: ExerciseVersion, r: ResolvedExercise, html: Rendered) -> dict[str, Any]:
        return {"cells": {cid: t.text() for cid, t in r.cells.items()}}

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
        if last is None:
            return {"yours": None}
        given = (last.parsed or {}).get("cells")
        verdicts = (last.details or {}).get("cells")
        if not isinstance(given, dict) or not isinstance(verdicts, dict):
            return {"yours": None}
        yours: dict[str, dict[str, Any]] = {}
        for cid in r.cells:
            typed, verdict = given.get(cid), verdicts.get(cid)
            value = typed.get("value") if isinstance(typed, dict) else typed
            if value is not None and isinstance(verdict, dict):
                yours[cid] = {"value": str(value), "correct": bool(verdict.get("correct"))}
        return {"yours": yours}

    def field_labels(self, spec: ExerciseSpec) -> dict[str, str]:
        return table_labels(spec)

    def preview_targets(self, r: ResolvedExercise) -> dict[str, NumericTarget]:
        return dict(r.cells)

    def check(self, spec: ExerciseSpec, r: ResolvedExercise) -> list[str]:
        problems: list[str] = []
        columns = {c.key: c for c in spec.columns or []}
        for row in spec.rows or []:
            for col in columns.values():
                if col.value is None and col.key not in row.values:
                    problems.append(f"row {row.key} has no value for column {col.key}")
            for key in row.values:
                if key not in columns and not isinstance(row.values[key], (int, float)):
                    problems.append(f"row {row.key}: {key} is not a column")
        for cid, target in r.cells.items():
            problems += check_target(target, f"cell {cid}")
        return problems

    def export(self, spec: ExerciseSpec, r: ResolvedExercise) -> dict[str, Any]:
        if not r.cells:
            return {}
        return {
            "cells": {
                cid: {"answer": t.value, "unit": t.dim.label(), "tolerance": t.tolerance} for cid, t in r.cells.items()
            }
        }

    def preview_rows(self, r: ResolvedExercise) -> list[tuple[str, str]]:
        return [(f"Cell {cid}", target.text()) for cid, target in r.cells.items()]

    def answer_label(self, exercise: Exercise, parsed: dict[str, Any]) -> str:
        # The cells by their labels on the page (row name · column), not their ids.
        if "cells" in parsed:
            spec = cache.resolved(exercise.current_version).spec if exercise.current_version else None
            return fields_shown(parsed["cells"] or {}, table_labels(spec) if spec is not None else {}).text
        return "(other)"

    def answer_shown(self, attempt: Attempt, spec: ExerciseSpec, parsed: dict[str, Any]) -> AnswerShown | None:
        if "cells" not in parsed:
            return None
        return fields_shown(parsed.get("cells") or {}, table_labels(spec), (attempt.details or {}).get("cells"))
