"""The number reader over arbitrary and generated input (hypothesis), and ``**`` refused as ``^``
is, in the preview and the grading alike."""

from __future__ import annotations

import math

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from rest_framework.test import APIClient

from apps.accounts.models import User
from apps.exercises.grading import numeric
from apps.exercises.grading.base import InvalidAnswer
from apps.exercises.grading.units import DIMENSIONLESS, Dim, unit
from apps.exercises.models import Attempt

BYTES = Dim.of("byte")
DIMS = [BYTES, Dim.of("param"), Dim.of("second"), Dim.of("FLOP"), unit("tokens/s").dim, DIMENSIONLESS]
FAST = settings(max_examples=300, deadline=None)

# What people type around numbers, so arbitrary text often gets past the number and into units.
ALPHABET = st.sampled_from(
    [*"0123456789.,eE+-*^/ xX×·$%~≈kKMGTBbiIs_()[]{}\\\"'\x00µ⁰¹²³⁻", "GB", "MiB", "tokens", "per", "**", "10^"]
)


@FAST
@given(text=st.one_of(st.text(max_size=40), st.lists(ALPHABET, max_size=15).map("".join)), dim=st.sampled_from(DIMS))
@example(text="5 GB/0 s", dim=BYTES)  # a unit of zero size divided by: found by this test (ZeroDivisionError)
@example(text="3 tokens/0", dim=DIMENSIONLESS)
def test_any_text_is_read_or_explained_never_an_unexpected_exception(text: str, dim: Dim) -> None:
    try:
        reading = numeric.read(text, expected=dim)
    except InvalidAnswer as exc:
        refusal: InvalidAnswer | None = exc
    else:
        refusal = None
        assert math.isfinite(reading.number)
    if refusal is not None:
        assert refusal.code in ("unparseable", "empty_answer") and refusal.message


# (typed unit, its scale in base units, its dimension)
UNITS = [("B", 1.0, BYTES), ("GB", 1e9, BYTES), ("MiB", 2.0**20, BYTES), ("ms", 1e-3, Dim.of("second")),
         ("params", 1.0, Dim.of("param")), ("TFLOP", 1e12, Dim.of("FLOP")), ("tokens/s", 1.0, unit("tokens/s").dim)]  # fmt: skip


@FAST
@given(
    mantissa=st.floats(min_value=1e-6, max_value=1e12, allow_nan=False, allow_infinity=False),
    style=st.sampled_from(["plain", "e", "x10"]),
    spec=st.sampled_from(UNITS),
)
def test_well_formed_numbers_with_units_round_trip(mantissa: float, style: str, spec: tuple[str, float, Dim]) -> None:
    label, scale, dim = spec
    if style == "plain":
        text, value = f"{mantissa:.6g} {label}", float(f"{mantissa:.6g}")
    elif style == "e":
        text, value = f"{mantissa:.4e} {label}", float(f"{mantissa:.4e}")
    else:
        exp = math.floor(math.log10(mantissa))
        mant = round(mantissa / 10**exp, 4)
        text, value = f"{mant} × 10^{exp} {label}", mant * 10.0**exp
    reading = numeric.read(text, expected=dim)
    got = numeric.interpret(reading, expected=dim, input_unit=unit(label)).value
    assert got == pytest.approx(value * scale, rel=1e-9), text


@pytest.mark.parametrize("text", ["2**30 B", "2 ** 30 B", "10**9", "2**30"])
def test_double_star_is_refused_like_a_caret(text: str) -> None:
    with pytest.raises(InvalidAnswer) as starred:
        numeric.read(text, expected=BYTES)
    with pytest.raises(InvalidAnswer) as caret:
        numeric.read(text.replace("**", "^"), expected=BYTES)
    assert starred.value.code == caret.value.code == "unparseable"
    assert starred.value.message == caret.value.message.replace("^", "**")
    assert "'**' must follow a unit" in starred.value.message


def test_double_star_after_a_unit_or_in_scientific_notation_is_a_power() -> None:
    assert numeric.read("1.29x10**10", expected=DIMENSIONLESS).number == 1.29e10
    squared = numeric.read("2 GB**2", expected=BYTES * BYTES).unit
    assert squared is not None and squared.scale == 1e18 and squared.dim == BYTES * BYTES


@pytest.mark.django_db
def test_double_star_costs_no_attempt_in_preview_or_grading(api: APIClient, student: User) -> None:
    url = "/api/v1/workbooks/transformer-math/exercises/4.1/"
    preview = api.post(url + "preview/", {"answer": "2**30 B"})
    answer = api.post(url + "attempts/", {"answer": "2**30 B"})
    for response in (preview, answer):
        assert response.status_code == 400, response.content
        assert response.json()["error"]["code"] == "unparseable"
        assert "'**' must follow a unit" in response.json()["error"]["message"]
    assert not Attempt.objects.filter(user=student).exists()
