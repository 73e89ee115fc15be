"""What a learner sees of an exercise — the one place that decides it.

The widget for each answer format is built by its format (``apps.exercises.formats``), with
opaque option/step ids (an HMAC of the version and the author's index, so ids reveal nothing
about authoring order) shuffled per learner with a stable seed. The solution block — answers,
alternates, derivations, correct options, buggy lines, reference code — is only built when the
learner has solved or revealed the exercise. Hidden test data is never built at all.
"""

from __future__ import annotations

from typing import Any

from apps.exercises import formats, roofline, selectors
from apps.exercises.content import cache
from apps.exercises.content.schema import ExerciseSpec
from apps.exercises.content.variants import Variant
from apps.exercises.formats.base import learner_order, map_ids
from apps.exercises.formats.choice import option_ids
from apps.exercises.formats.order import step_ids
from apps.exercises.formats.parts import part_labels
from apps.exercises.formats.table import cell_id, table_labels
from apps.exercises.grading.numeric import NumericTarget
from apps.exercises.models import Attempt, ExerciseVersion

# Helpers that moved to their formats, still importable from here.
__all__ = [
    "cell_id",
    "field_labels",
    "hints",
    "learner_order",
    "map_ids",
    "option_ids",
    "part_labels",
    "plot",
    "solution",
    "step_ids",
    "table_labels",
    "widget",
]


def widget(version: ExerciseVersion, user_id: int, variant: Variant | None = None) -> dict[str, Any]:
    """The answer widget's data for ``user_id`` (on ``variant``'s numbers): no answers in it, ever."""
    r = cache.resolved(version, variant)
    fmt = formats.get(r.spec.format)
    return {"format": r.spec.format, **fmt.widget(version, r, cache.rendered(version, variant), user_id)}


def field_labels(spec: ExerciseSpec) -> dict[str, str]:
    """Labels of the separately graded fields: table cells or parts."""
    return formats.get(spec.format).field_labels(spec)


def hints(version: ExerciseVersion, used: int, variant: Variant | None = None) -> dict[str, Any]:
    html = cache.rendered(version, variant)
    return {"total": len(html.hints_html), "shown": html.hints_html[:used]}


def solution(
    version: ExerciseVersion,
    *,
    answer_visible: bool,
    variant: Variant | None = None,
    user_id: int | None = None,
    last: Attempt | None = None,
) -> dict[str, Any] | None:
    """Answers and derivation — only once the learner solved or revealed the exercise.

    With ``user_id``, beside the learner's own latest answer on these numbers (``last`` if the
    caller has it, else read): their choice, order, lines or cells next to the correct ones.
    """
    if not answer_visible:
        return None
    r = cache.resolved(version, variant)
    spec = r.spec
    html = cache.rendered(version, variant)
    fmt = formats.get(spec.format)
    out: dict[str, Any] = {"format": spec.format, "explanation_html": html.explanation_html}
    out.update(fmt.solution(version, r, html))
    if fmt.shows_beside:
        if last is None and user_id is not None:
            rnd = variant.round if variant is not None else 0
            last = selectors.last_answer(user_id=user_id, version=version, round=rnd)
        out.update(fmt.beside(version, r, html, user_id=user_id, last=last))
    return out


def plot(
    version: ExerciseVersion, user_id: int, *, answer_visible: bool, variant: Variant | None = None
) -> dict[str, Any] | None:
    """The roofline with the learner's own values on it — only once the answer is visible."""
    r = cache.resolved(version, variant)
    spec = r.spec
    if spec.plot is None or not answer_visible:
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
