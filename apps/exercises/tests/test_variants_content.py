"""Variants as content: drawing, constraints, presets, and the checks on every sampled variant."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from apps.exercises.content.checks import VARIANT_SAMPLES, check_exercise
from apps.exercises.content.loader import LoadError, load_workbook
from apps.exercises.content.resolve import resolve
from apps.exercises.content.schema import ExerciseSpec
from apps.exercises.content.variants import coverage, samples, variant
from apps.exercises.tests import content


def spec(**overrides: Any) -> ExerciseSpec:
    data: dict[str, Any] = {
        "number": "1.1",
        "id": "kv-bytes",
        "title": "KV cache bytes",
        "kind": "derive",
        "format": "numeric",
        "givens": {"L": 4, "d": 512, "b": 2},
        "derived": {"kv": "2 * L * d * b"},
        "prompt": "A model with $L = {{L}}$ layers and $d = {{d}}$ stores K and V in {{b}} bytes each. "
        "How much per token (KiB, 3 figures)?",
        "answer": {
            "value": "kv / KiB",
            "unit": "KiB",
            "mistakes": [{"value": "kv / 2 / KiB", "feedback": "Only K: V takes as much again."}],
        },
        "explanation": "$2 \\cdot {{L}} \\cdot {{d}} \\cdot {{b}}$ = {{answer}} KiB.",
        "vary": {"givens": {"L": {"values": [2, 3, 4]}, "d": {"range": [256, 1024], "step": 128}}},
    }
    data.update(overrides)
    return ExerciseSpec.model_validate(data)


def test_a_variant_is_a_pure_function_of_who_chapter_and_round() -> None:
    s = spec()
    one = variant(s, seed="learner:7", chapter=3, round=1)
    assert one == variant(s, seed="learner:7", chapter=3, round=1)
    assert variant(s, seed="learner:7", chapter=3, round=0).is_seed  # round 0: the seed's numbers
    drawn = {variant(s, seed=f"learner:{i}", chapter=3, round=1).values for i in range(40)}
    assert len(drawn) > 10
    rounds = {variant(s, seed="learner:7", chapter=3, round=r).values for r in range(1, 20)}
    assert len(rounds) > 5
    for v in samples(s, chapter=0, n=50):
        givens = v.givens(s)
        assert givens["L"] in (2, 3, 4) and givens["d"] in range(256, 1025, 128) and givens["b"] == 2


def test_chapter_mates_outside_a_scenario_draw_their_own_numbers() -> None:
    """Sharing is declared (a chapter scenario: test_scenarios.py), never implied by a name."""
    first, second = spec(), spec(id="kv-other", number="1.2")
    pairs = [
        (
            variant(first, seed=f"learner:{i}", chapter=1, round=1).values,
            variant(second, seed=f"learner:{i}", chapter=1, round=1).values,
        )
        for i in range(20)
    ]
    assert sum(a != b for a, b in pairs) > 10


def test_require_excludes_draws_and_comparisons_read_as_conditions() -> None:
    s = spec(vary={"givens": {"L": {"values": [2, 3, 4, 5]}}, "require": ["L != 3", "L * d < 2500"]})
    for v in samples(s, chapter=0, n=VARIANT_SAMPLES):
        assert dict(v.values)["L"] in (2, 4)
        assert dict(v.values)["L"] * 512 < 2500
    impossible = spec(vary={"givens": {"L": {"values": [2, 4]}}, "require": ["L == 3"]})
    assert not variant(impossible, seed="x", chapter=0, round=1).drawn
    assert check_exercise(impossible) == [
        "vary: no draw of sample 0 met `require` in the tries allowed; widen the ranges"
    ]


def test_the_checks_run_on_every_variant_and_name_the_first_bad_ones_givens() -> None:
    # A mistake that divides by the bytes per value is the answer itself when that is 1.
    bad = spec(
        answer={
            "value": "kv / KiB",
            "unit": "KiB",
            "mistakes": [{"value": "kv / b / KiB", "feedback": "Forgot the bytes per value."}],
        },
        givens={"L": 4, "d": 512, "b": 2},
        vary={"givens": {"b": {"values": [2, 1]}}},
    )
    problems = check_exercise(bad)
    assert len(problems) == 1 and problems[0].startswith("variant b=1: answer.mistakes[0] is within the tolerance")
    pointless = spec(vary={"givens": {"b": {"values": [2, 2.0]}}})
    assert check_exercise(pointless) == [
        f"vary: all {VARIANT_SAMPLES} sampled variants have the same answer; vary a given the answer depends on"
    ]
    assert check_exercise(spec()) == []


def test_a_choice_whose_answer_depends_on_the_numbers_is_computed() -> None:
    s = ExerciseSpec.model_validate(
        {
            "number": "1.3",
            "id": "bound",
            "title": "Which roof",
            "kind": "trace",
            "format": "choice",
            "givens": {"intensity": 100, "ridge": 295},
            "prompt": "A kernel does {{intensity}} FLOP per byte on a chip whose ridge is {{ridge}}. Which bound?",
            "options": [
                {"text": "Memory-bound", "correct_if": "intensity < ridge", "feedback": "Below the ridge."},
                {"text": "Compute-bound", "correct_if": "intensity >= ridge", "feedback": "At or above the ridge."},
            ],
            "vary": {"givens": {"intensity": {"values": [50, 100, 400, 800]}}},
            "explanation": "A kernel below the ridge point waits on memory; at or above it, on compute.",
        }
    )
    correct = {}
    for v in samples(s, chapter=0, n=VARIANT_SAMPLES):
        r = resolve(s, v)
        correct[dict(v.values)["intensity"]] = [o.text for o in r.spec.options or [] if o.correct]
    assert correct == {50: ["Memory-bound"], 100: ["Memory-bound"], 400: ["Compute-bound"], 800: ["Compute-bound"]}
    assert check_exercise(s) == []


def test_a_variant_does_not_depend_on_the_stored_specs_key_order() -> None:
    """PostgreSQL's jsonb reorders keys: a spec read back from the database draws the same numbers."""
    folder = content.workbook("transformer-math")
    # The first exercise that draws a preset row of its own, and the first whose scenario does.
    with_presets = [
        e for c in folder.chapters for e in c.exercises if e.vary is not None and e.vary.presets and not e.vary.scenario
    ][:1] + [
        e
        for c in folder.chapters
        for e in c.exercises
        if e.vary is not None and e.vary.scenario and e.vary.scenario.presets
    ][:1]
    assert len(with_presets) == 2
    for exercise in with_presets:
        _same_draws_whatever_the_key_order(exercise)


def _same_draws_whatever_the_key_order(exercise: ExerciseSpec) -> None:

    def shuffled(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: shuffled(node[k]) for k in reversed(list(node))}
        if isinstance(node, list):
            return [shuffled(v) for v in node]
        return node

    stored = ExerciseSpec.model_validate(shuffled(json.loads(json.dumps(exercise.model_dump(mode="json")))))
    for i in range(30):
        assert variant(exercise, seed=f"learner:{i}", chapter=9, round=1) == variant(
            stored, seed=f"learner:{i}", chapter=9, round=1
        )


def test_presets_fill_givens_and_labels_and_bad_tables_are_named(tmp_path: Path) -> None:
    book = tmp_path / "tiny"
    (book / "chapters").mkdir(parents=True)
    (book / "workbook.yaml").write_text(yaml.safe_dump({"slug": "tiny", "title": "Tiny", "summary": "s"}))
    presets: dict[str, Any] = {
        "chips": {
            "source": "vendor datasheets",
            "rows": {
                "h100": {"name": "H100 SXM", "bw": "3.35e12"},  # YAML reads 3.35e12 as text: taken as a number
                "a100": {"name": "A100 SXM", "bw": 2.039e12},
            },
        }
    }
    (book / "presets.yaml").write_text(yaml.safe_dump(presets))
    exercise = {
        "number": "0.1",
        "id": "read-time",
        "title": "Reading the weights",
        "kind": "derive",
        "format": "numeric",
        "givens": {"weights": 140e9},
        "prompt": "How long does the {{chip}} take to read {{weights / 1e9}} GB at {{bw / 1e12 | sig3}} TB/s (ms)?",
        "answer": {"value": "weights / bw * 1000", "unit": "ms"},
        "explanation": "{{weights}} / {{bw}}.",
        "vary": {"presets": [{"table": "chips", "seed": "h100", "set": {"bw": "bw"}, "label": "chip"}]},
    }
    (book / "chapters" / "00-one.yaml").write_text(
        yaml.safe_dump({"number": 0, "title": "One", "exercises": [exercise]})
    )
    loaded = load_workbook(book, compute_expected=False).chapters[0].exercises[0]
    assert loaded.givens["bw"] == 3.35e12  # filled from the seed row
    seed = resolve(loaded)
    assert "H100 SXM" in seed.spec.prompt and "3.35 TB/s" in seed.spec.prompt
    names = {resolve(loaded, v).spec.prompt.split(" take")[0] for v in samples(loaded, chapter=0, n=32)}
    assert names == {"How long does the H100 SXM", "How long does the A100 SXM"}
    assert check_exercise(loaded) == []

    presets["chips"]["rows"]["a100"]["bw"] = "fast"
    (book / "presets.yaml").write_text(yaml.safe_dump(presets))
    with pytest.raises(LoadError, match=r"chips.a100.bw is 'fast', not a number"):
        load_workbook(book, compute_expected=False)
    del presets["chips"]["source"]
    (book / "presets.yaml").write_text(yaml.safe_dump(presets))
    with pytest.raises(LoadError, match="needs a `source`"):
        load_workbook(book, compute_expected=False)


def test_coverage_meets_the_targets() -> None:
    """At least 80% of numeric Derive exercises and 50% of all auto-graded ones vary per learner."""
    total = coverage(e for slug in content.slugs() for c in content.workbook(slug).chapters for e in c.exercises)
    assert total.numeric_derive >= 100 and total.auto_graded >= 200
    assert total.numeric_derive_varying >= 0.8 * total.numeric_derive, total.text()
    assert total.auto_graded_varying >= 0.5 * total.auto_graded, total.text()
    for slug in content.slugs():
        mine = coverage(e for c in content.workbook(slug).chapters for e in c.exercises)
        assert mine.numeric_derive_varying >= 0.8 * mine.numeric_derive, (slug, mine.text())
