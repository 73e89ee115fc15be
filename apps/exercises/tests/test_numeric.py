"""Reading numbers as people type them, and grading them by dimension."""

import pytest

from apps.exercises.grading import numeric
from apps.exercises.grading.base import InvalidAnswer
from apps.exercises.grading.numeric import Candidate, NumericTarget
from apps.exercises.grading.units import DIMENSIONLESS, Dim, unit

PARAMS = Dim.of("param")
BYTES = Dim.of("byte")
SECONDS = Dim.of("second")


def value_of(text: str, expected: Dim, input_unit: str) -> float:
    reading = numeric.read(text, expected=expected)
    return numeric.interpret(reading, expected=expected, input_unit=unit(input_unit)).value


@pytest.mark.parametrize(
    ("text", "expected", "input_unit", "value"),
    [
        # the forms the issue names
        ("12.9B", PARAMS, "B params", 12.9e9),
        ("1.29e10", PARAMS, "params", 1.29e10),
        ("12,910,000,000", PARAMS, "params", 12.91e9),
        ("12.9 billion", PARAMS, "params", 12.9e9),
        ("512 MiB", BYTES, "GB", 512 * 2**20),
        ("0.5 GB", BYTES, "GB", 0.5e9),
        ("3.2 ms", SECONDS, "s", 3.2e-3),
        ("171k tokens/s", unit("tokens/s").dim, "tokens/s", 171e3),
        ("$256", Dim.of("dollar"), "$", 256),
        ("75%", DIMENSIONLESS, "", 0.75),
        # more of what people type
        ("12.9", PARAMS, "B params", 12.9e9),
        ("124.3", PARAMS, "M params", 124.3e6),
        ("~124.3M", PARAMS, "M params", 124.3e6),
        ("≈ 6.74 B params", PARAMS, "M params", 6.74e9),
        ("1.29 × 10^10", PARAMS, "params", 1.29e10),
        ("1.29x10**10", PARAMS, "params", 1.29e10),
        ("1.5×10¹² FLOP", Dim.of("FLOP"), "FLOP", 1.5e12),
        ("10¹²", PARAMS, "params", 1e12),
        ("12 910 000 000", PARAMS, "params", 12.91e9),
        ("1_000_000", PARAMS, "params", 1e6),
        ("8", BYTES, "GB", 8e9),
        ("8 GiB", BYTES, "GB", 8 * 2**30),
        ("8 gb", BYTES, "GB", 8e9),
        ("64 Gb", BYTES, "GB", 8e9),
        ("4096 bits", BYTES, "B", 512),
        ("12.9B", BYTES, "GB", 12.9),  # B is bytes when the question is about bytes
        ("2 TB/s", unit("bytes/s").dim, "TB/s", 2e12),
        ("312 TFLOPS", unit("FLOP/s").dim, "TFLOP/s", 312e12),
        ("312 TFLOP/s", unit("FLOP/s").dim, "TFLOP/s", 312e12),
        ("5.88e21 FLOPs", Dim.of("FLOP"), "FLOP", 5.88e21),
        ("5.88e9 TFLOP", Dim.of("FLOP"), "FLOP", 5.88e21),
        ("5.88 ZFLOP", Dim.of("FLOP"), "FLOP", 5.88e21),
        ("6.35 yottaFLOP", Dim.of("FLOP"), "FLOP", 6.35e24),
        ("6.35 yflop", Dim.of("FLOP"), "FLOP", 6.35e24),
        ("1.2 ZB", BYTES, "GB", 1.2e21),
        ("148 tok/s", unit("tokens/s").dim, "tokens/s", 148),
        ("148 tokens per second", unit("tokens/s").dim, "tokens/s", 148),
        ("56.3 tokens/s/user", unit("tokens/s").dim, "tokens/s", 56.3),
        ("$1.44/1M tokens", unit("$/token").dim, "$/1M tokens", 1.44e-6),
        ("$1.44 per million tokens", unit("$/token").dim, "$/1M tokens", 1.44e-6),
        ("1.44", unit("$/token").dim, "$/1M tokens", 1.44e-6),
        ("$3/hr", unit("$/h").dim, "$/h", 3 / 3600),
        ("177 ms", SECONDS, "ms", 0.177),
        ("0.177 s", SECONDS, "ms", 0.177),
        ("43 µs", SECONDS, "ms", 43e-6),
        ("43 us", SECONDS, "ms", 43e-6),
        ("7.4 days", SECONDS, "h", 7.4 * 86400),
        ("178 hours", SECONDS, "h", 178 * 3600),
        ("4 GPUs", DIMENSIONLESS, "", 4),
        ("4 H100s", DIMENSIONLESS, "", 4),
        ("8x", DIMENSIONLESS, "", 8),
        ("-3.5", DIMENSIONLESS, "", -3.5),
        ("512 KiB", BYTES, "KiB", 512 * 1024),
        ("524.3 KB per token", unit("bytes/token").dim, "KiB/token", 524.3e3),
    ],
)
def test_reads_what_people_type(text: str, expected: Dim, input_unit: str, value: float) -> None:
    assert value_of(text, expected, input_unit) == pytest.approx(value, rel=1e-12)


def test_understood_says_what_was_read() -> None:
    reading = numeric.read("512 MiB", expected=BYTES)
    assert numeric.interpret(reading, expected=BYTES, input_unit=unit("GB")).understood == "512 MiB = 536,870,912 bytes"
    reading = numeric.read("12.9B", expected=PARAMS)
    understood = numeric.interpret(reading, expected=PARAMS, input_unit=unit("B params")).understood
    assert understood == "12.9B = 12,900,000,000 params (read 'B' as billion)"
    reading = numeric.read("124.3", expected=PARAMS)
    assert (
        numeric.interpret(reading, expected=PARAMS, input_unit=unit("M params")).understood
        == "124.3 M params = 124,300,000 params"
    )
    reading = numeric.read("312 TFLOPS", expected=unit("FLOP/s").dim)
    assert (
        "read FLOPS as a rate"
        in numeric.interpret(reading, expected=unit("FLOP/s").dim, input_unit=unit("TFLOP/s")).understood
    )


@pytest.mark.parametrize(
    ("text", "expected", "code", "fragment"),
    [
        (
            "8 GB",
            unit("tokens/s").dim,
            "wrong_dimension",
            "We read '8 GB' as an amount of memory or data (bytes), but this question asks for a throughput (tokens/s)",
        ),
        ("124.3 GB", PARAMS, "wrong_dimension", "asks for a number of parameters"),
        ("3 ms", BYTES, "wrong_dimension", "as a time"),
        ("75%", PARAMS, "wrong_dimension", "a plain number"),
        ("abc", PARAMS, "unparseable", "could not find a number"),
        ("12 furlongs", PARAMS, "unparseable", "unknown unit 'furlongs'"),
        ("0,844", DIMENSIONLESS, "unparseable", "Use a dot for decimals"),
        ("1,23", DIMENSIONLESS, "unparseable", "Use a dot for decimals"),
        ("", PARAMS, "empty_answer", "Type a number"),
        ("5 m", SECONDS, "unparseable", "'m' is ambiguous"),
        ("8 b", BYTES, "unparseable", "'b' is ambiguous"),
        ("1" * 200, PARAMS, "unparseable", "longer than"),
        ("1e999", PARAMS, "unparseable", "out of range"),
        ("3 GB/", BYTES, "unparseable", "ends with a division"),
    ],
)
def test_input_we_cannot_grade_is_explained(text: str, expected: Dim, code: str, fragment: str) -> None:
    input_unit = unit("params") if expected == PARAMS else unit("s")
    with pytest.raises(InvalidAnswer) as info:
        numeric.interpret(numeric.read(text, expected=expected), expected=expected, input_unit=input_unit)
    assert info.value.code == code
    assert fragment in info.value.message


def test_wrong_dimension_carries_what_was_understood() -> None:
    with pytest.raises(InvalidAnswer) as info:
        numeric.grade("8 GB", NumericTarget(148, unit("tokens/s").dim, unit("tokens/s"), 0.01))
    assert info.value.understood == "8 GB = 8,000,000,000 bytes"


KV = NumericTarget(
    value=2**31,
    dim=BYTES,
    input_unit=unit("GB"),
    tolerance=0.005,
    alternates=(Candidate(2e9, "That is the GiB figure.", 0.005, convention=True),),
    mistakes=(Candidate(2**30, "You counted K but not V.", 0.005),),
)


@pytest.mark.parametrize(
    ("text", "correct", "feedback"),
    [
        ("2.147", True, "Correct."),
        ("2.15 GB", True, "Correct."),
        ("2 GiB", True, "Correct."),  # exact in binary units
        ("2147483648", True, "Correct."),  # the full count in a GB field: read in bytes
        ("2", True, "Accepted with a unit note"),
        ("2.0 GB", True, "That is the GiB figure."),
        ("1.07", False, "You counted K but not V."),
        ("2147.5", False, "too large by a factor of 1,000"),
        ("17.18", False, "too large by a factor of 8 — bits versus bytes?"),
        ("3", False, "Not quite."),
    ],
)
def test_grading_with_alternates_mistakes_and_factor_hints(text: str, correct: bool, feedback: str) -> None:
    result = numeric.grade(text, KV)
    assert result.correct is correct
    assert feedback in result.feedback


def test_tolerance_is_relative_and_exact_targets_need_exact_answers() -> None:
    gpus = NumericTarget(4, DIMENSIONLESS, unit(""), 0.0)
    assert numeric.grade("4", gpus).correct
    assert not numeric.grade("4.1", gpus).correct
    assert not numeric.grade("3", gpus).correct
    target = NumericTarget(124.32e6, PARAMS, unit("M params"), 0.001)
    assert numeric.grade("124.3", target).correct
    assert not numeric.grade("123.5", target).correct  # the method that forgets position embeddings


def test_parsed_value_and_unit_are_recorded() -> None:
    result = numeric.grade("2 GiB", KV)
    assert result.parsed == {"value": 2**31, "unit": "bytes", "understood": "2 GiB = 2,147,483,648 bytes"}


def test_a_convention_alternate_is_accepted_with_a_note_and_another_alternate_without() -> None:
    noted = numeric.grade("2 GB", KV)
    assert (noted.correct, noted.noted, noted.score) == (True, True, 1.0)
    assert noted.feedback.startswith("Accepted with a unit note") and "That is the GiB figure." in noted.feedback
    clean = numeric.grade("2 GiB", KV)
    assert (clean.correct, clean.noted) == (True, False)
    rounded_up = NumericTarget(6.5, DIMENSIONLESS, unit(""), 0.005, alternates=(Candidate(7, "Rounded up.", 0.005),))
    other = numeric.grade("7", rounded_up)
    assert (other.correct, other.noted, other.feedback) == (True, False, "Accepted. Rounded up.")


@pytest.mark.parametrize(
    ("ratio", "convention"),
    [(2**30 / 1e9, True), (1e9 / 2**30, True), (2**20 / 1e6, True), (1.024, True), (1.0, False), (1.08, False)],
)
def test_convention_ratios_are_the_binary_over_decimal_prefixes(ratio: float, convention: bool) -> None:
    assert numeric.is_convention_ratio(ratio) is convention


@pytest.mark.parametrize(
    ("text", "input_unit", "value", "note"),
    [
        ("2147483648", "GB", 2147483648, "read in bytes, not GB"),  # ≥ 10⁹: the full count
        ("999999999", "GB", 999999999e9, None),  # below one prefix: the field's unit
        ("524288", "KiB", 524288, "read in bytes, not KiB"),
        ("512", "KiB", 512 * 1024, None),
        ("124320000", "M params", 124320000, "read in params, not M params"),
        ("124.3", "M params", 124.3e6, None),
        ("7200", "h", 7200 * 3600, None),  # hours are not a prefix: always the field's unit
        ("0.39", "%", 0.0039, None),  # a percent field reads percent; "39%" or "0.39" as a fraction is a hint
    ],
)
def test_a_bare_number_has_one_reading_decided_without_the_answer(
    text: str, input_unit: str, value: float, note: str | None
) -> None:
    field = unit(input_unit)
    interpretation = numeric.interpret(numeric.read(text, expected=field.dim), expected=field.dim, input_unit=field)
    assert interpretation.value == pytest.approx(value)
    if note:
        assert note in interpretation.understood
    else:
        assert "not " + input_unit not in interpretation.understood
    # The grader takes that same reading, whatever the answer is.
    for answer in (value, value * 1e9, value / 1e9):
        graded = numeric.grade(text, NumericTarget(answer, field.dim, field, 0.005))
        assert graded.parsed["value"] == pytest.approx(value)
        assert graded.parsed["understood"] == interpretation.understood


@pytest.mark.parametrize(
    ("text", "correct"),
    [
        ("1130 TFLOP/s", True),  # 1,125 rounded half up to the three figures asked: 0.44% off, past the 0.3%
        ("1120", True),  # rounded half to even, as Python's format does
        ("1.13 PFLOP/s", True),  # the same three figures in another unit
        ("1125", True),
        ("1128", True),  # within the tolerance
        ("1134", False),  # neither within the tolerance nor a rounding to three figures
        ("1140", False),
        ("1110", False),
    ],
)
def test_the_answer_rounded_to_the_figures_asked_is_accepted_on_every_learners_numbers(
    text: str, correct: bool
) -> None:
    """lm-from-scratch 9.1 on a B200 at MFU 0.50: 2,250 x 0.50 = 1,125 TFLOP/s, asked to three figures
    with a 0.3% tolerance. The prompt promises the rounded answer is accepted, so it is."""
    target = NumericTarget(1125e12, unit("FLOP/s").dim, unit("TFLOP/s"), 0.003, sig_figs=3)
    assert numeric.grade(text, target).correct is correct, text


def test_an_exact_count_stays_exact_whatever_figures_it_names() -> None:
    gpus = NumericTarget(14, DIMENSIONLESS, unit(""), 0.0, sig_figs=1)
    assert numeric.grade("14", gpus).correct
    assert not numeric.grade("10", gpus).correct
    assert not numeric.grade("15", gpus).correct
