"""Every piece of prose in an exercise that someone reads, and its rendering — in one place.

A learner reads far more than the prompt: option texts and the feedback each option gives, step
texts (quoted back when a step is misplaced), part labels, table headers and row names, the
feedback of known mistakes and accepted alternates, symbol meanings, hints, plot labels. Any of
them may hold ``{{ formula | filter }}`` placeholders. ``slots`` lists them all with where they
sit and the scope their placeholders are evaluated in; ``render_spec`` substitutes every one, so
the resolved spec that grading, the page, the API, the admin and the instructor's statistics
read holds only rendered text, and no reader can forget a step. ``leftovers`` finds placeholder
syntax that survived (a typo such as ``{ {x}}``), which ``check_content`` refuses.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from apps.exercises.content.render import RenderError, substitute
from apps.exercises.grading.formula import FormulaError, Number, evaluate


class TextError(ValueError):
    """A placeholder that does not render, with the field it sits in."""


@dataclass(frozen=True)
class Slot:
    """One string in a spec's JSON: ``holder[key]``, rendered in ``scope``."""

    where: str
    holder: Any  # the dict or list that holds the string
    key: str | int
    scope: Mapping[str, Number]

    @property
    def text(self) -> str:
        return str(self.holder[self.key])


def slots(data: dict[str, Any], scope: Mapping[str, Number]) -> Iterator[Slot]:
    """Every prose string of an exercise spec (as JSON), with the scope it renders in.

    Candidates' feedback may name ``answer`` (their answer's value in its unit); a table row's
    strings may name the row's own numbers.
    """
    for key in ("title", "prompt", "explanation"):
        yield Slot(key, data, key, scope)
    for i in range(len(data.get("hints") or [])):
        yield Slot(f"hints[{i}]", data["hints"], i, scope)
    for i, option in enumerate(data.get("options") or []):
        yield Slot(f"options[{i}].text", option, "text", scope)
        yield Slot(f"options[{i}].feedback", option, "feedback", scope)
    for step in data.get("steps") or []:
        yield Slot(f"steps[{step['id']}]", step, "text", scope)
    answers = [("answer", data.get("answer"))]
    for part in data.get("parts") or []:
        where = f"parts[{part['key']}]"
        yield Slot(f"{where}.label", part, "label", scope)
        answers.append((where, part.get("answer")))
        expression = part.get("expression")
        if expression is not None:
            for name in expression.get("symbols") or {}:
                yield Slot(f"{where}.expression.symbols[{name}]", expression["symbols"], name, scope)
            for i, mistake in enumerate(expression.get("mistakes") or []):
                yield Slot(f"{where}.expression.mistakes[{i}].feedback", mistake, "feedback", scope)
            if expression.get("approximate"):
                yield Slot(f"{where}.expression.approximate.feedback", expression["approximate"], "feedback", scope)
    for where, answer in answers:
        if not answer:
            continue
        answer_scope = _with_answer(answer["value"], scope, where)
        for kind in ("alternates", "mistakes"):
            for i, candidate in enumerate(answer.get(kind) or []):
                yield Slot(f"{where}.{kind}[{i}].feedback", candidate, "feedback", answer_scope)
    for column in data.get("columns") or []:
        yield Slot(f"columns[{column['key']}].label", column, "label", scope)
    for row in data.get("rows") or []:
        values = row.get("values") or {}
        row_scope = {**scope, **{k: v for k, v in values.items() if not isinstance(v, str)}}
        for key, value in values.items():
            if isinstance(value, str):
                yield Slot(f"rows[{row['key']}].{key}", values, key, row_scope)
    plot = data.get("plot")
    if plot:
        yield Slot("plot.title", plot, "title", scope)
        for axis in ("x", "y"):
            if plot.get(axis):
                yield Slot(f"plot.{axis}.label", plot[axis], "label", scope)
        for i, curve in enumerate(plot.get("curves") or []):
            yield Slot(f"plot.curves[{i}].label", curve, "label", scope)
        for i, mark in enumerate(plot.get("marks") or []):
            yield Slot(f"plot.marks[{i}].label", mark, "label", scope)


def _with_answer(formula: str, scope: Mapping[str, Number], where: str) -> Mapping[str, Number]:
    try:
        return {**scope, "answer": evaluate(formula, scope)}
    except FormulaError as exc:
        raise TextError(f"{where}.value: {exc}") from None


def render_spec(data: dict[str, Any], scope: Mapping[str, Number]) -> dict[str, Any]:
    """A copy of a spec's JSON with every prose string's placeholders substituted.

    Markdown stays Markdown (it is rendered to HTML where it is shown). Raises TextError naming
    the field whose placeholder fails.
    """
    out: dict[str, Any] = _copy(data)
    for slot in list(slots(out, scope)):
        try:
            rendered = substitute(slot.text, slot.scope)
        except RenderError as exc:
            raise TextError(f"{slot.where}: {exc}") from None
        slot.holder[slot.key] = rendered
    return out


def _copy(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _copy(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_copy(v) for v in node]
    return node


# Placeholder syntax that survived substitution: the opening braces of a (malformed) placeholder,
# or one of our filters. A lone "}}" is no sign: TeX writes \frac{1}{\sqrt{d}}.
_LEFTOVER = re.compile(r"\{\{|\{%|\|\s*(?:sig\d+|int|sci|pct)\b")


def leftovers(text: str) -> list[str]:
    """Unrendered template syntax in a string that should be fully rendered."""
    return [m.group(0) for m in _LEFTOVER.finditer(text)]


def unrendered(data: dict[str, Any], scope: Mapping[str, Number]) -> list[str]:
    """Every prose field of a rendered spec that still holds template syntax."""
    return [
        f"{s.where}: unrendered {', '.join(map(repr, leftovers(s.text)))}"
        for s in slots(data, scope)
        if leftovers(s.text)
    ]
