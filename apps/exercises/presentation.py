"""What a learner sees of an exercise — the one place that decides it.

The widget for each answer format is built here, with opaque option/step ids (an HMAC of the
version and the author's index, so ids reveal nothing about authoring order) shuffled per
learner with a stable seed. The solution block — answers, alternates, derivations, correct
options, buggy lines, reference code — is only built when the learner has solved or revealed
the exercise. Hidden test data is never built at all.
"""

from __future__ import annotations

import hashlib
import hmac
import random
from collections.abc import Sequence
from typing import Any

from django.conf import settings

from apps.exercises import parts, roofline, selectors
from apps.exercises.choices import AnswerFormat, AttemptPart
from apps.exercises.content import cache
from apps.exercises.content.resolve import ResolvedExercise
from apps.exercises.content.schema import CodeSpec, ExerciseSpec, PartSpec
from apps.exercises.grading.base import InvalidAnswer
from apps.exercises.grading.numeric import NumericTarget, base_threshold
from apps.exercises.grading.symbolic import SymbolicTarget
from apps.exercises.models import ExerciseVersion
from apps.progress.models import ExerciseProgress
from apps.sandbox import selectors as sandbox_selectors


def _opaque(version: ExerciseVersion, kind: str, key: str) -> str:
    msg = f"{version.pk}:{version.grading_hash}:{kind}:{key}".encode()
    return hmac.new(settings.SECRET_KEY.encode(), msg, hashlib.sha256).hexdigest()[:12]


def option_ids(version: ExerciseVersion, count: int) -> list[str]:
    return [_opaque(version, "option", str(i)) for i in range(count)]


def step_ids(version: ExerciseVersion, spec: ExerciseSpec) -> dict[str, str]:
    """Author step id -> opaque id."""
    return {s.id: _opaque(version, "step", s.id) for s in spec.steps or []}


def learner_order(user_id: int, version: ExerciseVersion, n: int, *, avoid_identity: bool = False) -> list[int]:
    """A stable per-learner permutation of range(n). Orders never start out already solved."""
    rng = random.Random(f"{user_id}:{version.exercise_id}:{version.grading_hash}")  # noqa: S311 - not security
    order = list(range(n))
    for _ in range(20):
        rng.shuffle(order)
        if not avoid_identity or order != sorted(order) or n < 2:
            break
    if avoid_identity and order == sorted(order) and n >= 2:
        order = order[1:] + order[:1]
    return order


def cell_id(row_key: str, col_key: str) -> str:
    return f"{row_key}.{col_key}"


def widget(version: ExerciseVersion, user_id: int) -> dict[str, Any]:
    """The answer widget's data for ``user_id``: no answers in it, ever."""
    r = cache.resolved(version)
    spec = r.spec
    html = cache.rendered(version)
    fmt = spec.format
    if fmt == AnswerFormat.NUMERIC:
        assert spec.answer is not None and r.numeric is not None
        return {
            "format": fmt,
            "input_unit": spec.answer.input_unit or spec.answer.unit,
            "bare_in_base_from": base_threshold(r.numeric.input_unit),
            "base_unit": r.numeric.dim.label(),
            "unit": spec.answer.unit,
            "quantity": r.numeric.dim.describe(),
            "sig_figs": spec.answer.sig_figs,
        }
    if fmt == AnswerFormat.CHOICE:
        ids = option_ids(version, len(spec.options or []))
        order = learner_order(user_id, version, len(ids))
        return {
            "format": fmt,
            "multiple": spec.multiple,
            "options": [{"id": ids[i], "html": html.options_html[i]} for i in order],
        }
    if fmt == AnswerFormat.ORDER:
        steps = spec.steps or []
        opaque = step_ids(version, spec)
        order = learner_order(user_id, version, len(steps), avoid_identity=True)
        return {
            "format": fmt,
            "steps": [{"id": opaque[steps[i].id], "html": html.steps_html[steps[i].id]} for i in order],
        }
    if fmt == AnswerFormat.LINES:
        assert spec.code is not None
        lines = spec.code.starter.splitlines()
        widget: dict[str, Any] = {
            "format": fmt,
            "language": "python",
            "lines": [{"number": i + 1, "text": t} for i, t in enumerate(lines)],
            "fix": None,
        }
        if AttemptPart.CODE in parts.parts(spec):
            # The second part of a Debug: submit the fixed code, graded in the sandbox.
            widget["fix"] = _code_widget(spec.code)
        return widget
    if fmt == AnswerFormat.TABLE:
        return {"format": fmt, **_table(spec, r)}
    if fmt == AnswerFormat.PARTS:
        return {"format": fmt, "parts": [_part(p, r) for p in spec.parts or []]}
    assert spec.code is not None
    return {"format": fmt, **_code_widget(spec.code)}


def _code_widget(code: CodeSpec) -> dict[str, Any]:
    return {
        "language": "python",
        "entry": code.entry,
        "starter": code.starter,
        "sandbox_available": sandbox_selectors.available(),
    }


def _table(spec: ExerciseSpec, r: ResolvedExercise) -> dict[str, Any]:
    columns = spec.columns or []
    rows = []
    for row in spec.rows or []:
        cells: dict[str, Any] = {}
        for col in columns:
            if col.value is not None:
                cells[col.key] = {"answer_id": cell_id(row.key, col.key), "value": None}
            else:
                value = row.values.get(col.key)
                cells[col.key] = {"answer_id": None, "value": value}
        rows.append({"key": row.key, "cells": cells})
    return {
        "columns": [
            {"key": c.key, "label": c.label, "is_answer": c.value is not None, "input_unit": c.input_unit or c.unit}
            for c in columns
        ],
        "rows": rows,
    }


def _part(part: PartSpec, r: ResolvedExercise) -> dict[str, Any]:
    if part.answer is not None:
        target = r.parts[part.key]
        assert isinstance(target, NumericTarget)
        return {
            "key": part.key,
            "label": part.label,
            "kind": "numeric",
            "input_unit": part.answer.input_unit or part.answer.unit,
            "quantity": target.dim.describe(),
            "symbols": [],
        }
    assert part.expression is not None
    return {
        "key": part.key,
        "label": part.label,
        "kind": "expression",
        "input_unit": None,
        "quantity": None,
        "symbols": [{"name": n, "meaning": m} for n, m in part.expression.symbols.items()],
    }


def part_labels(spec: ExerciseSpec) -> dict[str, str]:
    return {p.key: p.label for p in spec.parts or []}


def field_labels(spec: ExerciseSpec) -> dict[str, str]:
    """Labels of the separately graded fields: table cells or parts."""
    return part_labels(spec) if spec.format == AnswerFormat.PARTS else table_labels(spec)


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


def hints(version: ExerciseVersion, used: int) -> dict[str, Any]:
    html = cache.rendered(version)
    return {"total": len(html.hints_html), "shown": html.hints_html[:used]}


def solution(version: ExerciseVersion, progress: ExerciseProgress | None) -> dict[str, Any] | None:
    """Answers and derivation — only once the learner solved or revealed the exercise."""
    if progress is None or not progress.answer_visible:
        return None
    r = cache.resolved(version)
    spec = r.spec
    html = cache.rendered(version)
    out: dict[str, Any] = {"format": spec.format, "explanation_html": html.explanation_html}
    if spec.format == AnswerFormat.NUMERIC and r.numeric is not None and spec.answer is not None:
        out["answer"] = {
            "text": r.answer_text,
            "value": r.numeric.value,
            "unit": r.numeric.dim.label(),
            "tolerance": r.numeric.tolerance,
            "alternates": [{"text": r.numeric.text(a.value), "feedback": a.feedback} for a in r.numeric.alternates],
        }
    elif spec.format == AnswerFormat.CHOICE:
        ids = option_ids(version, len(spec.options or []))
        out["options"] = [
            {"id": ids[i], "correct": o.correct, "feedback_html": html.options_feedback_html[i]}
            for i, o in enumerate(spec.options or [])
        ]
    elif spec.format == AnswerFormat.ORDER:
        opaque = step_ids(version, spec)
        out["order"] = [opaque[s.id] for s in spec.steps or []]
        out["constraints"] = [[opaque[a], opaque[b]] for a, b in spec.constraints or []]
    elif spec.format == AnswerFormat.LINES and spec.code is not None:
        out["buggy_lines"] = list(spec.buggy_lines or [])
        out["fixed_code"] = spec.code.solution
    elif spec.format == AnswerFormat.TABLE:
        out["cells"] = {cid: t.text() for cid, t in r.cells.items()}
    elif spec.format == AnswerFormat.PARTS:
        out["parts"] = [
            {"key": p.key, "label": p.label, "text": _part_answer(r.parts[p.key])} for p in spec.parts or []
        ]
    elif spec.format == AnswerFormat.CODE and spec.code is not None:
        out["reference_solution"] = spec.code.solution
    return out


def plot(version: ExerciseVersion, progress: ExerciseProgress | None, user_id: int) -> dict[str, Any] | None:
    """The roofline with the learner's own values on it — only once the answer is visible."""
    r = cache.resolved(version)
    spec = r.spec
    if spec.plot is None or progress is None or not progress.answer_visible:
        return None
    answers = r.plot_answers
    targets: dict[str, NumericTarget] = {k: t for k, t in r.parts.items() if isinstance(t, NumericTarget)}
    if r.numeric is not None:
        targets["answer"] = r.numeric
    yours: dict[str, float | None] = {}
    for key, base in selectors.latest_values(user_id=user_id, version=version).items():
        target = targets.get(key)
        if target is not None and answers.get(key):
            yours[key] = base / (target.value / answers[key])  # base units → the answer's unit
    figure = roofline.draw(spec.plot, r.scope, answers, yours)
    return {
        "title": spec.plot.title,
        "svg": figure.svg,
        "curves": list(figure.curves),
        "points": [
            {
                "n": n,
                "label": p.label,
                "kind": p.kind,
                "curve": p.curve,
                "curve_label": figure.curves[p.curve],
                "x": p.x,
                "y": p.y,
                "x_text": roofline.si(p.x),
                "y_text": roofline.si(p.y) + "FLOP/s",
            }
            for n, p in enumerate(figure.points, start=1)
        ],
    }


def _part_answer(target: NumericTarget | SymbolicTarget) -> str:
    return target.text if isinstance(target, SymbolicTarget) else target.text()


def map_ids(given: Sequence[Any], mapping: dict[str, Any], what: str) -> list[Any]:
    """Opaque ids from the learner back to author indices; unknown ids are input errors."""
    out = []
    for item in given:
        if not isinstance(item, str) or item not in mapping:
            raise InvalidAnswer("bad_payload", f"Unknown {what} id {item!r}; reload the exercise.")
        out.append(mapping[item])
    return out
