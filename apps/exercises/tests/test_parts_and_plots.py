"""Multi-part answers (credit per part) and the roofline plot, from a spec as authors write it."""

from __future__ import annotations

import math
import re
from typing import Any

import pytest
from pydantic import ValidationError

from apps.exercises.content.checks import check_exercise
from apps.exercises.content.resolve import resolve
from apps.exercises.content.schema import ExerciseSpec
from apps.exercises.grading.base import InvalidAnswer
from apps.exercises.grading.structured import grade_parts
from apps.exercises.presentation import part_labels
from apps.exercises.roofline import PlotError, draw


def spec(**over: Any) -> ExerciseSpec:
    raw: dict[str, Any] = {
        "number": "q9",
        "id": "int8-matmul",
        "title": "int8 matmul",
        "kind": "derive",
        "format": "parts",
        "givens": {"B": 256, "D": 4096, "F": 4096, "peak": 1979e12, "bw": 3.35e12},
        "derived": {"crit": "peak / bw"},
        "prompt": "An int8 matmul, batch {{B}}, D = {{D}}, F = {{F}}, on {{peak/1e12}} TOPS and {{bw/1e12}} TB/s.",
        "explanation": "Bytes {{B*D + D*F + B*F}}; intensity about B.",
        "parts": [
            {
                "key": "bytes",
                "label": "Bytes moved",
                "answer": {
                    "value": "B*D + D*F + B*F",
                    "unit": "bytes",
                    "input_unit": "MB",
                    "sig_figs": 3,
                    "mistakes": [{"value": "2*(B*D + D*F + B*F)", "feedback": "int8 is one byte per element."}],
                },
            },
            {
                "key": "intensity",
                "label": "Intensity as a formula",
                "expression": {
                    "value": "2*B*D*F/(B*D + D*F + B*F)",
                    "symbols": {"B": "batch", "D": "model width", "F": "hidden width"},
                    "approximate": {"small": ["B"], "accept": True},
                },
            },
            {"key": "b_crit", "label": "Critical batch", "answer": {"value": "crit / 2", "unit": "", "sig_figs": 3}},
        ],
        "plot": {
            "title": "H100, int8",
            "x": {"label": "Batch size", "min": 1, "max": 100000},
            "curves": [
                {
                    "label": "D = F = 4096",
                    "peak": "peak",
                    "bandwidth": "bw",
                    "intensity": "2*x*D*F/(x*D + D*F + x*F)",
                }
            ],
            "marks": [{"part": "b_crit", "label": "crossover"}, {"x": "B", "label": "this batch"}],
        },
    }
    raw.update(over)
    return ExerciseSpec.model_validate(raw)


def test_a_sound_parts_exercise_passes_the_content_checks() -> None:
    assert check_exercise(spec()) == []


def test_each_part_is_graded_on_its_own_with_credit_per_part() -> None:
    s = spec()
    r = resolve(s)
    labels = part_labels(s)
    right = grade_parts(r.parts, labels, {"bytes": "18.9 MB", "intensity": "2*B", "b_crit": "295"})
    assert right.correct and right.score == 1.0
    assert "All 3 parts correct." in right.feedback

    partial = grade_parts(r.parts, labels, {"bytes": "37.7 MB", "intensity": "4*B", "b_crit": ""})
    assert not partial.correct
    assert partial.score == 0.0
    cells = partial.details["cells"]
    assert cells["bytes"]["feedback"] == "int8 is one byte per element."
    assert cells["b_crit"]["answered"] is False
    assert "**Bytes moved**: ✗ int8 is one byte per element." in partial.feedback

    one = grade_parts(r.parts, labels, {"intensity": "B*D*F*2/(B*D+D*F+B*F)"})
    assert one.score == pytest.approx(1 / 3)
    assert one.details["cells"]["intensity"]["correct"]


def test_an_unreadable_part_names_itself_and_costs_nothing() -> None:
    s = spec()
    r = resolve(s)
    with pytest.raises(InvalidAnswer) as err:
        grade_parts(r.parts, part_labels(s), {"bytes": "50.3 MB", "intensity": "2BDF"})
    assert err.value.message.startswith("Intensity as a formula: Write multiplication with *")
    with pytest.raises(InvalidAnswer, match=r"Bytes moved: .*asks for"):
        grade_parts(r.parts, part_labels(s), {"bytes": "3 seconds"})
    with pytest.raises(InvalidAnswer, match="Answer at least one part"):
        grade_parts(r.parts, part_labels(s), {"bytes": " "})
    with pytest.raises(InvalidAnswer, match="Unknown parts: nope"):
        grade_parts(r.parts, part_labels(s), {"nope": "1"})


def test_checks_catch_a_mistake_equal_to_the_answer_and_a_bad_expression() -> None:
    parts = spec().model_dump()["parts"]
    parts[1]["expression"]["mistakes"] = [{"value": "2*B", "feedback": "x"}]
    assert any("equals the answer under the accepted approximation" in p for p in check_exercise(spec(parts=parts)))
    parts[1]["expression"]["mistakes"] = []
    parts[1]["expression"]["value"] = "2*B*D*Q"
    assert any("Unknown name “Q”" in p for p in check_exercise(spec(parts=parts)))


def test_schema_rejects_ill_formed_parts_and_plots() -> None:
    parts = spec().model_dump()["parts"]
    with pytest.raises(ValidationError, match="exactly one of `answer`"):
        spec(parts=[{**parts[0], "expression": parts[1]["expression"]}])
    with pytest.raises(ValidationError, match="distinct keys"):
        spec(parts=[parts[0], parts[0]])
    plot = spec().model_dump(exclude_none=True)["plot"]
    with pytest.raises(ValidationError, match="names curve 3"):
        spec(plot={**plot, "marks": [{"x": "1", "label": "a", "curve": 3}]})
    with pytest.raises(ValidationError, match="unknown numeric parts"):
        spec(plot={**plot, "marks": [{"part": "intensity", "label": "a"}]})
    with pytest.raises(ValidationError, match="does not belong"):
        spec(format="choice", parts=None, options=[{"text": "a", "correct": True, "feedback": "f"}] * 2)


def test_the_roofline_marks_the_answer_and_the_learners_value() -> None:
    s = spec()
    r = resolve(s)
    assert s.plot is not None
    answers = dict(r.part_values)
    figure = draw(s.plot, r.scope, answers, {"b_crit": 280.0})
    kinds = {p.kind: p for p in figure.points}
    assert set(kinds) == {"fixed", "answer", "yours"}
    # The answer's mark sits at the crossover: bandwidth-bound and compute-bound agree there.
    crit = answers["b_crit"]
    assert kinds["answer"].x == pytest.approx(crit)
    assert kinds["yours"].x == 280.0 and kinds["yours"].y < 1979e12
    assert kinds["fixed"].x == 256
    svg = figure.svg
    assert svg.startswith("<svg") and 'role="img"' in svg
    assert '<title id="roofline-title">H100, int8</title>' in svg
    assert "crossover (yours)" in svg and "crossover (answer)" in svg
    assert len(re.findall(r"<polyline", svg)) == 1
    # Without a learner's value only the answer is marked.
    assert {p.kind for p in draw(s.plot, r.scope, answers, {}).points} == {"fixed", "answer"}


MARK = re.compile(
    r'<g><title>[^<]*</title>(?:<circle class="mark [^"]*" cx="([\d.]+)" cy="([\d.]+)"[^>]*/>'
    r'|<path class="mark fixed[^"]*" d="M([\d.]+) ([\d.]+) [^"]*"/>)'
    r'<text class="mark-key" x="([\d.]+)" y="([\d.]+)">(\d+)</text></g>'
)


def test_each_mark_is_numbered_as_in_the_table_and_its_number_sits_nearest_to_it() -> None:
    s = spec()
    r = resolve(s)
    assert s.plot is not None
    # Three marks within a few pixels of each other: the crossover, the learner's 255 and B = 256.
    figure = draw(s.plot, r.scope, r.plot_answers, {"b_crit": 255.0})
    marks, keys = [], []
    for cx, cy, fx, fy, kx, ky, n in MARK.findall(figure.svg):
        marks.append((float(cx), float(cy)) if cx else (float(fx), float(fy) + 7))
        width = 7.0 * len(n) + 4
        keys.append((int(n), (float(kx) + width / 2, float(ky) - 6.5)))
    assert [n for n, _ in keys] == list(range(1, len(figure.points) + 1)) and len(keys) == 3
    for (n, centre), own in zip(keys, marks, strict=True):
        others = [m for m in marks if math.dist(m, own) > 1]
        assert all(math.dist(centre, own) < math.dist(centre, m) for m in others), (n, centre, own, marks)
    centres = [c for _, c in keys]
    assert all(math.dist(a, b) >= 11 for i, a in enumerate(centres) for b in centres[i + 1 :]), centres


def test_a_plot_that_cannot_be_drawn_is_a_content_error() -> None:
    plot = spec().model_dump(exclude_none=True)["plot"]
    bad = spec(plot={**plot, "curves": [{**plot["curves"][0], "intensity": "x - 10"}]})
    r = resolve(bad)
    assert bad.plot is not None
    with pytest.raises(PlotError, match="positive"):
        draw(bad.plot, r.scope, dict(r.part_values), {})
    assert any("plot.curves[0]" in p for p in check_exercise(bad))
    outside = spec(plot={**plot, "x": {"label": "B", "min": 1, "max": 100}})
    assert any("falls outside the x axis" in p for p in check_exercise(outside))
