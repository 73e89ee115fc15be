"""One story per learner, as content: scenarios drawn once for a chain, references that show an
answer only once its exercise is finished, rounds that never repeat, and the checks that find
fixed text quoting varying numbers, givens a chain draws apart, leaks and impossible draws."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from apps.exercises.content import variants
from apps.exercises.content.consistency import (
    chapter_cross_leaks,
    check_consistency,
    draw_stats,
    implicit_problems,
    literal_problems,
    scenario_problems,
)
from apps.exercises.content.loader import LoadError, load_workbook
from apps.exercises.content.refs import choose, refs_in
from apps.exercises.content.resolve import resolve
from apps.exercises.content.schema import ChapterSpec, ExerciseSpec
from apps.exercises.content.variants import variant
from apps.exercises.tests import scenario_content
from apps.exercises.tests.test_variants_content import spec as kv_spec


def chapter(tmp_path: Path, data: dict[str, Any] | None = None) -> ChapterSpec:
    return load_workbook(scenario_content.write(tmp_path, data), compute_expected=False).chapters[0]


def by_number(ch: ChapterSpec) -> dict[str, ExerciseSpec]:
    return {e.number: e for e in ch.exercises}


SHARED = ("rps", "out_len", "tps")


def test_a_scenario_is_drawn_once_per_learner_and_round_for_every_exercise_in_it(tmp_path: Path) -> None:
    ex = by_number(chapter(tmp_path))
    seen_traffic = set()
    for i in range(40):
        for round_ in (1, 2, 3):
            drawn = {n: dict(variant(ex[n], seed=f"learner:{i}", chapter=1, round=round_).values) for n in ex}
            traffic = {tuple(drawn[n][g] for g in SHARED) for n in ("1.1", "1.2", "1.3")}
            assert len(traffic) == 1, (i, round_, drawn)  # one draw for the whole chain
            seen_traffic |= traffic
            assert set(drawn["1.2"]) == {*SHARED, "price"} and set(drawn["1.3"]) == {*SHARED, "share"}
            assert set(drawn["1.4"]) == {"a"}  # outside the scenario: its own
            # the scenario's `require` holds on every draw
            assert drawn["1.1"]["rps"] * drawn["1.1"]["out_len"] >= 10 * drawn["1.1"]["tps"]
    assert len(seen_traffic) > 60
    # Round 0 is the seed's numbers everywhere; the scenario's seed givens are every member's.
    assert ex["1.2"].givens == {"rps": 400, "out_len": 250, "tps": 1500, "price": 3.0, "hours": 720}
    seed_answer = resolve(ex["1.1"]).numeric
    assert seed_answer is not None and seed_answer.value == 67


def test_new_rounds_never_repeat_until_every_valid_draw_was_used() -> None:
    s = kv_spec()  # L in 3 values x d in 7: 21 combinations
    for learner in range(5):
        rounds = [variant(s, seed=f"learner:{learner}", chapter=1, round=r).values for r in range(1, 43)]
        assert len(set(rounds[:21])) == 21  # every combination once
        assert rounds[21:] == rounds[:21]  # then the same order again
    # Another learner walks the space in another order.
    assert [variant(s, seed="a", chapter=1, round=r).values for r in (1, 2, 3)] != [
        variant(s, seed="b", chapter=1, round=r).values for r in (1, 2, 3)
    ]


def test_a_draw_does_not_depend_on_what_the_process_computed_before() -> None:
    s = kv_spec(vary={"givens": {"L": {"values": [2, 3, 4, 5]}, "d": {"range": [256, 4096], "step": 128}},
                      "require": ["L * d < 6000"]})  # fmt: skip
    asked = [(f"learner:{i}", r) for i in range(30) for r in (3, 1, 2)]
    first = [variant(s, seed=seed, chapter=2, round=r) for seed, r in asked]
    variants._walks.clear()
    variants._valid.clear()
    again = [variant(s, seed=seed, chapter=2, round=r) for seed, r in reversed(asked)]
    assert first == list(reversed(again))
    assert all(v.drawn and dict(v.values)["L"] * dict(v.values)["d"] < 6000 for v in first)


def test_references_take_their_branch_from_what_the_learner_finished(tmp_path: Path) -> None:
    ex = by_number(chapter(tmp_path))
    bill = ex["1.2"]
    assert refs_in(bill.prompt) == ["fleet-size"]
    for i in range(10):
        numbers = variant(bill, seed=f"learner:{i}", chapter=1, round=1)
        gpus = resolve(ex["1.1"], variant(ex["1.1"], seed=f"learner:{i}", chapter=1, round=1)).numeric
        assert gpus is not None
        pending = resolve(bill, numbers).spec.prompt
        known = resolve(bill, numbers.knowing(["fleet-size"])).spec.prompt
        assert "solve it first" in pending and f"{gpus.value:g} GPUs" not in pending
        assert f"the fleet of 1.1, {gpus.value:g} GPUs," in known and "solve it first" not in known
    assert choose("a {% ref x %}b{% end %} c", ()) == "a  c"  # no else: nothing until finished


def test_the_loader_names_a_missing_scenario_and_a_given_defined_twice(tmp_path: Path) -> None:
    data = copy.deepcopy(scenario_content.CHAPTER)
    data["exercises"][0]["scenario"] = "fleat"
    with pytest.raises(LoadError, match="no scenario 'fleat'"):
        chapter(tmp_path / "a", data)
    data = copy.deepcopy(scenario_content.CHAPTER)
    data["exercises"][1]["givens"]["tps"] = 900
    with pytest.raises(LoadError, match=r"\['tps'\] belong to scenario 'fleet'"):
        chapter(tmp_path / "b", data)


def test_the_checks_pass_a_sound_chapter(tmp_path: Path) -> None:
    ch = chapter(tmp_path)
    assert literal_problems(ch) == []
    assert scenario_problems(ch) == []
    for seed in (None, *(f"leaks-{i}" for i in range(32))):
        assert chapter_cross_leaks(ch, seed=seed) == []
    stats = {e.number: draw_stats(e, chapter=1) for e in ch.exercises}
    assert all(s.draws == 1000 and s.failed == 0 and s.repeats == 0 for s in stats.values())
    assert stats["1.1"].distinct > 100 and stats["1.1"].collision < 0.02


def test_fixed_text_quoting_a_varying_number_or_name_is_found(tmp_path: Path) -> None:
    data = copy.deepcopy(scenario_content.CHAPTER)
    # 1.3 quotes 1.1's seed traffic in fixed text; 1.4's title names its varying seed value.
    data["exercises"][2]["prompt"] = (
        "As in 1.1, traffic is 400 requests per second of 250 tokens. " + data["exercises"][2]["prompt"]
    )
    data["exercises"][3]["title"] = "Twelve rows: 12 of them"
    problems = literal_problems(chapter(tmp_path, data))
    assert any("1.3 prompt: fixed text quotes '400', the round-0 value of rps" in p for p in problems), problems
    assert any("1.3 prompt: fixed text quotes '250', the round-0 value of out_len" in p for p in problems)
    assert any("1.4 title: fixed text quotes '12', the round-0 value of a" in p for p in problems)


def test_a_given_varying_in_two_exercises_outside_a_scenario_is_found(tmp_path: Path) -> None:
    data = copy.deepcopy(scenario_content.CHAPTER)
    twin = copy.deepcopy(data["exercises"][3])
    twin.update(number="1.5", id="alone-too")
    data["exercises"].append(twin)
    problems = scenario_problems(chapter(tmp_path, data))
    assert problems == [
        "chapter 1: given 'a' varies in 1.4, 1.5 outside a scenario, so each draws its own: declare it in a "
        "chapter scenario they share (or rename it where the exercises are unrelated)"
    ]


def test_a_prompt_stating_another_exercises_answer_before_it_is_solved_is_found(tmp_path: Path) -> None:
    data = copy.deepcopy(scenario_content.CHAPTER)
    # 1.2 copies 1.1's answer instead of referring to it.
    data["exercises"][1]["prompt"] = (
        "Rent the fleet of {{gpus}} GPUs at \\${{price | .2f}} per GPU-hour for {{hours}} hours. The bill in dollars?"
    )
    ch = chapter(tmp_path, data)
    found = chapter_cross_leaks(ch, seed="leaks-0")
    assert found and found[0].startswith("1.2 prompt: states 1.1's answer"), found
    assert found[0].endswith("while 1.1 is unsolved")
    # A reference to an exercise outside the scenario, and one that is never closed, are named.
    data = copy.deepcopy(scenario_content.CHAPTER)
    data["exercises"][2]["prompt"] += " {% ref alone %}x{% else %}y{% end %} {% ref fleet-size %}open"
    problems = scenario_problems(chapter(tmp_path / "b", data))
    assert (
        "1.3: refers to 1.4's answer, but they do not share a scenario: the number it shows would not be the learner's"
        in problems
    )
    assert any(p.startswith("1.3 prompt: a reference is not closed") for p in problems)


def test_impossible_premises_narrow_spaces_and_collisions_are_reported(tmp_path: Path) -> None:
    data = copy.deepcopy(scenario_content.CHAPTER)
    # 1.4 can never meet its constraint; the scenario narrowed to two draws makes learners meet.
    data["exercises"][3]["vary"]["require"] = ["a > 100"]
    data["scenarios"]["fleet"]["vary"]["givens"] = {"rps": {"values": [400, 500]}}
    report = check_consistency(
        load_workbook(scenario_content.write(tmp_path, data), compute_expected=False), learners=100, leak_learners=2
    )
    assert any(p.startswith("1.4: 200 of 200 draws met no `require`") for p in report.problems), report.problems
    assert any("1.1 Size the fleet: only 2 distinct variants" in w for w in report.warnings), report.warnings
    assert report.collision > 0.10
    assert any(p.startswith("two learners share numbers on") for p in report.problems)


def test_an_answer_reading_a_varying_given_the_learner_is_not_shown_is_found(tmp_path: Path) -> None:
    data = copy.deepcopy(scenario_content.CHAPTER)
    tokens = data["exercises"][2]
    tokens["prompt"] = "Of the traffic of 1.1 ({{out_len}}-token answers), a share of {{share | pct}} goes to the "
    tokens["prompt"] += "large model. How many million tokens per hour does it produce?"
    tokens["implicit"] = ["rps"]  # "known": but every learner has their own
    ex = by_number(chapter(tmp_path, data))
    assert implicit_problems(ex["1.3"]) == [
        "1.3: the answer reads rps, listed as implicit (known to the learner), but it varies: show it in the prompt"
    ]
    assert implicit_problems(by_number(chapter(tmp_path / "sound"))["1.3"]) == []
