"""Issue 30's small slips, each fixed at its cause and each found wherever it occurs.

Unit tests of the causes (the unit note, shapes in ``substitute``, figures shown, the factor
diagnosis), and the checks ``check_content`` runs, over the five real workbooks: every label, every
shape on the seed's numbers and a few learners' rounds, every figure a prompt asks for.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from apps.exercises.content import checks, slips
from apps.exercises.content.render import substitute
from apps.exercises.content.resolve import ResolvedExercise, resolve
from apps.exercises.content.schema import ExerciseSpec
from apps.exercises.content.variants import variant
from apps.exercises.formats.numeric import empty_unit_phrase, unit_note
from apps.exercises.grading import numeric
from apps.exercises.grading.numeric import NumericTarget, factor_hint
from apps.exercises.grading.units import DIMENSIONLESS, unit
from apps.exercises.tests import content

BYTES = unit("bytes").dim


def all_exercises() -> list[tuple[str, ExerciseSpec]]:
    return [(slug, e) for slug in content.slugs() for e in content.exercises(slug)]


def find(slug: str, number: str) -> ExerciseSpec:
    return next(e for e in content.exercises(slug) if e.number == number)


# ---- a. the unit note ----------------------------------------------------------------------------


def test_a_unitless_field_says_how_it_reads_a_number_instead_of_an_empty_unit() -> None:
    count = NumericTarget(4, DIMENSIONLESS, unit(""), 0.005)
    assert unit_note(count) == "no unit needed; 25% reads as 0.25"
    assert not empty_unit_phrase(unit_note(count))
    gb = NumericTarget(2**31, BYTES, unit("GB"), 0.005)
    assert unit_note(gb) == "a bare number is read in GB, or in bytes from 1,000,000,000 up; units welcome"
    assert unit_note(NumericTarget(3.2, unit("ms").dim, unit("ms"), 0.005)) == (
        "a bare number is read in ms; units welcome"
    )
    # What 45 unitless exercises said before, and other shapes of the same slip.
    for broken in ("a bare number is read in ; units welcome", "A number in  (a count)", "read as"):
        assert empty_unit_phrase(broken), broken


def test_b_transformer_math_1_4_is_unitless_and_its_note_names_no_empty_unit() -> None:
    r = resolve(find("transformer-math", "1.4"))
    assert r.numeric is not None and r.numeric.input_unit.label == ""
    assert not empty_unit_phrase(unit_note(r.numeric))


# ---- b. labels -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("label", "left"),
    [
        ("$N^*$ as a formula in $C$", []),  # rendered: math
        ("$T_\\text{math}$ at the given sizes", []),
        ("Cost per 1M input tokens ($)", []),  # money, not TeX
        ("Implement count_pairs()", []),  # a function named as code
        ("T_math at the given sizes", ["T_m"]),
        ("d_k", ["d_k"]),
        ("N^* params", ["N^"]),
        ("the `x` array", ["`", "`"]),
        ("**bold** label", ["**", "**"]),
        ("$ N^* $ with spaces inside", ["N^"]),  # dollarmath refuses it: raw TeX left
        ("\\alpha decay", ["\\alpha"]),
    ],
)
def test_markup_left_in_a_rendered_label(label: str, left: list[str]) -> None:
    assert slips.markup_left(slips.label_html(label)) == left


def test_a_plain_text_slot_refuses_math_that_a_rendered_one_accepts() -> None:
    r = resolve(find("scaling-book", "5.4"))
    assert not slips.label_problems(r)  # "$N^*$ as a formula in $C$" is rendered on the page
    title = r.spec.model_copy(update={"title": "Chinchilla-optimal $N^*$"})
    problems = slips.label_problems(ResolvedExercise(spec=title, scope=r.scope, parts=r.parts))
    assert problems == [
        "title: raw markup '$N', '^*' in 'Chinchilla-optimal $N^*$' (plain text: it is shown where no math renders)"
    ]


def test_check_content_reports_a_raw_tex_part_label() -> None:
    spec = find("roofline", "q1")
    assert not slips.label_problems(resolve(spec))
    parts = [
        p.model_copy(update={"label": "T_math at the given sizes"}) if p.key == "t_math" else p
        for p in spec.parts or []
    ]
    broken = spec.model_copy(update={"parts": parts})
    assert "parts[t_math].label: raw markup 'T_m' in 'T_math at the given sizes' after its math is rendered" in (
        checks.check_exercise(broken)
    )


# ---- c. shapes and indices -----------------------------------------------------------------------


def test_numbers_in_shapes_indices_and_tuples_have_no_thousands_separators() -> None:
    scope = {"s": 8192, "d_k": 256, "i": 1024, "a": 1234.0, "b": 5}
    text = "$[{{s}}, {{d_k}}] \\times [{{d_k}}, {{s}}] \\to [{{s}}, {{s}}]$; x[{{i}}], ({{a | int}}, {{b}})"
    assert substitute(text, scope) == "$[8192, 256] \\times [256, 8192] \\to [8192, 8192]$; x[1024], (1234, 5)"
    # Elsewhere a number keeps its separators: prose, a parenthesis, a list of words.
    prose = "{{s}} tokens ({{s}}), (about {{s}} tokens, {{i}} more), [{{s}} tokens]"
    assert substitute(prose, scope) == "8,192 tokens (8,192), (about 8,192 tokens, 1,024 more), [8,192 tokens]"


def test_grouped_numbers_in_shapes_are_found() -> None:
    assert slips.grouped_in_shapes("$[8,192, 256] \\times [256, 8,192]$") == ["[8,192, 256]", "[256, 8,192]"]
    assert slips.grouped_in_shapes("x[1,024] and (1,024, 5)") == ["[1,024]", "(1,024, 5)"]
    assert slips.grouped_in_shapes("[8192, 256], (8,192 tokens), [1, 2, 3], (about 4,096, or more)") == []


# ---- d. figures ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "asked"),
    [
        ("in GB, to three significant figures?", {3}),
        ("Three significant figures.", {3}),
        ("to 4 sig figs", {4}),
        ("round to two figures", {2}),
        ("compare the two figures above", set()),
        ("to two decimal places", set()),
    ],
)
def test_asked_figures(text: str, asked: set[int]) -> None:
    assert slips.asked_figures(text) == asked


def test_the_shown_answer_has_the_figures_asked_and_no_more() -> None:
    target = NumericTarget(4.294967296e9, BYTES, unit("GB"), 0.005, sig_figs=3)
    assert target.text() == "4.29 GB"  # was "4.295 GB": one figure beyond the three asked
    assert NumericTarget(1024, DIMENSIONLESS, unit(""), 0.005, sig_figs=3).text() == "1,020"
    assert NumericTarget(133, DIMENSIONLESS, unit(""), 0.0, sig_figs=3).text() == "133"
    assert [slips.shown_figures(t) for t in ("4.295 GB", "0.0600", "8,190", "1,024 FLOP/byte", "$1.44/1M")] == [
        4,
        3,
        3,
        4,
        3,
    ]


def test_a_numbered_question_asks_its_figures_of_its_own_part() -> None:
    # scaling-book 7.3: part 1 "to two significant figures", part 2 "Three significant figures".
    r = resolve(find("scaling-book", "7.3"))
    assert {k: n for k, (n, _) in slips._asked_per_target(r).items()} == {"parts[alpha]": 2, "parts[speedup]": 3}
    assert not slips.figure_problems(r)


# ---- every workbook: the checks find nothing left (and the seed's and a few rounds' numbers) ------


def test_every_workbook_is_free_of_the_slips_on_the_seed_and_a_few_learners_numbers() -> None:
    problems: list[str] = []
    checked = 0
    for slug, spec in all_exercises():
        rounds = [None] + (
            [variant(spec, seed=f"slips-{k}", chapter=0, round=k) for k in (1, 2, 3)] if spec.vary else []
        )
        for numbers in rounds:
            r = resolve(spec, numbers)
            where = f"{slug} {spec.number}" + (f" round {rounds.index(numbers)}" if numbers else "")
            problems += [f"{where}: {p}" for p in slips.label_problems(r) + slips.figure_problems(r)]
            for place, text in checks.texts(r):
                problems += [f"{where} {place}: {b}" for b in slips.grouped_in_shapes(text)]
            targets = [r.numeric, *r.cells.values(), *r.parts.values()]
            for target in targets:
                if isinstance(target, NumericTarget):
                    checked += 1
                    assert not empty_unit_phrase(unit_note(target)), (where, unit_note(target))
    assert checked > 300  # every numeric field of five workbooks, on several rounds
    assert problems == []


# ---- e. the factor diagnosis ---------------------------------------------------------------------

GB = unit("GB")


@pytest.mark.parametrize("tolerance", [0.002, 0.005])
def test_a_wrong_parameter_count_is_not_called_a_binary_prefix_slip(tolerance: float) -> None:
    # transformer-math 9.2 as walked through: 64.83 GB (from 11.44B parameters) against 67.94 GB.
    # 67.94/64.83 = 1.048 is within tolerance of 2²⁰/10⁶, but a MiB-vs-MB slip on a figure of
    # 65 GB is implausible (GiB vs GB would be 1.0737): say nothing rather than something wrong.
    answer = 67.94e9
    assert factor_hint(64.83e9, answer, tolerance) is None
    target = NumericTarget(answer, BYTES, GB, tolerance)
    assert numeric.grade("64.83 GB", target).feedback == "Not quite. Check each step against the givens."
    # The slip it would be, on this magnitude, is still named.
    assert factor_hint(answer * 1e9 / 2**30, answer, tolerance) == (
        "Your answer is too small by the ratio between binary and decimal prefixes (GiB vs GB)."
    )
    assert (
        factor_hint(answer / 8, answer, tolerance) == "Your answer is too small by a factor of 8 — bits versus bytes?"
    )


_FACTOR_VALUES = [f for f, _ in numeric._FACTORS]


@given(
    answer=st.floats(min_value=1e-3, max_value=1e15),
    factor=st.sampled_from(_FACTOR_VALUES),
    up=st.booleans(),
    tolerance=st.sampled_from([0.001, 0.002, 0.005, 0.01]),
)
def test_an_exact_factor_is_named_unless_it_is_a_prefix_slip_the_magnitude_rules_out(
    answer: float, factor: float, up: bool, tolerance: float
) -> None:
    value = answer * factor if up else answer / factor
    hint = factor_hint(value, answer, tolerance)
    power = numeric._PREFIX_POWER.get(factor)
    if power is not None and not numeric._prefix_plausible(power, value, answer):
        assert hint is None
    else:
        assert hint is not None and ("too large" if up else "too small") in hint


@given(
    answer=st.floats(min_value=1e-3, max_value=1e15),
    ratio=st.floats(min_value=0.001, max_value=1e13),
    tolerance=st.sampled_from([0.001, 0.002, 0.005, 0.01]),
)
def test_a_hint_names_only_the_nearest_known_factor_within_tolerance(
    answer: float, ratio: float, tolerance: float
) -> None:
    hint = factor_hint(answer * ratio, answer, tolerance)
    if hint is None:
        return
    named = [
        (f, text)
        for f0, text in numeric._FACTORS
        for f in (f0, 1 / f0)
        if text in hint and (("too large" in hint) == (f > 1))
    ]
    assert len(named) == 1
    factor, _ = named[0]
    assert numeric.close(ratio, factor, tolerance)
    nearest = min((abs(math.log(ratio / f)) for f0, _ in numeric._FACTORS for f in (f0, 1 / f0)))
    assert abs(math.log(ratio / factor)) == nearest
    power = numeric._PREFIX_POWER.get(max(factor, 1 / factor))
    if power is not None:  # a binary-vs-decimal slip only at the magnitude of that prefix
        assert numeric._prefix_plausible(power, answer * ratio, answer)
