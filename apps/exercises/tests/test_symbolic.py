"""Symbolic answers: our own parser (no eval), equivalence by sympy, approximations, limits."""

from __future__ import annotations

import pytest

from apps.exercises.grading import symbolic
from apps.exercises.grading.base import InvalidAnswer
from apps.exercises.grading.symbolic import SymbolicMistake, SymbolicTarget, parse, parse_content

NAMES = ("B", "D", "F")
EXACT = "2*B*D*F/(2*B*D + 2*D*F + 2*B*F)"


def target(value: str = EXACT, *, small: tuple[str, ...] = ("B",), accept: bool = True) -> SymbolicTarget:
    return SymbolicTarget(
        expr=parse_content(value, NAMES),
        text=value,
        symbols=NAMES,
        small=small,
        accept_approximate=accept,
        mistakes=(
            SymbolicMistake(parse_content("B*D*F/(2*B*D + 2*D*F + 2*B*F)", NAMES), "A multiply-add is 2 FLOPs."),
        ),
    )


@pytest.mark.parametrize(
    "raw",
    [
        EXACT,
        "B*D*F/(B*D + D*F + B*F)",
        "1/(1/B + 1/D + 1/F)",
        "2 × B × D × F / (2·B·D + 2·D·F + 2·B·F)",
        "(B*D*F)/(D*F + B*(D + F))",
    ],
)
def test_equivalent_forms_are_correct(raw: str) -> None:
    result = symbolic.grade(raw, target())
    assert result.correct
    assert result.details.get("approximate") is None


def test_the_stated_approximation_is_accepted_and_said_to_be_one() -> None:
    result = symbolic.grade("B", target())
    assert result.correct
    assert result.details == {"approximate": True}
    assert "only under the stated approximation" in result.feedback
    assert "B much smaller" in result.feedback


def test_an_approximation_is_rejected_when_the_question_wants_the_exact_form() -> None:
    result = symbolic.grade("B", target(accept=False))
    assert not result.correct
    assert "asks for the exact expression" in result.feedback


def test_the_exact_form_is_accepted_when_the_approximation_is_asked_for() -> None:
    result = symbolic.grade(EXACT, target("B"))
    assert result.correct
    assert result.details == {"approximate": True}


def test_a_known_mistake_gets_its_feedback_and_a_constant_factor_is_named() -> None:
    assert symbolic.grade("B*D*F/(2*B*D + 2*D*F + 2*B*F)", target()).feedback == "A multiply-add is 2 FLOPs."
    off = symbolic.grade("4*B*D*F/(2*B*D + 2*D*F + 2*B*F)", target())
    assert not off.correct
    assert "constant factor" in off.feedback and "2 ×" in off.feedback


def test_a_wrong_expression_is_not_equivalent() -> None:
    for raw in ("D", "B*D/(B + D)", "B + D + F", "B**2"):
        result = symbolic.grade(raw, target(small=()))
        assert not result.correct, raw
        assert result.parsed["understood"]


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("2BDF", "Write multiplication with *"),
        ("x + 1", "Unknown name “x”"),
        ("b*D", "did you mean B?"),
        ("__import__('os').system('id')", "Only the functions sqrt, log"),
        ("B.__class__", "Only numbers, the names"),
        ("[B for B in range(10)]", "Only numbers, the names"),
        ("B**D", "Exponents must be numbers"),
        ("9**8**8**8", "Exponents must be numbers"),
        ("(10**8)**8", "too large"),
        ("B/0", "Division by zero"),
        ("log(0)", "positive argument"),
        ("B" + "+B" * 150, "limited to 200 characters"),
        ("", "Enter an expression"),
        ("B +", "not an expression we can read"),
        ("lambda: 1", "Only numbers, the names"),
        ("True*B", "Only numbers, names and arithmetic"),
        # Each of these made sympy search for an exact 10**25-th (or finer) root of a sample point:
        # minutes of the web process and ~12 GB. Refused before sympy builds anything.
        ("B**0.5*B**0.0000000000000000000000001", "too fine a fraction"),
        ("(B/6)**0.5*1.0000000000000000000000000001*B**0.0000000000000000000000001", "too fine a fraction"),
        ("((B**(1/999))**(1/998))**(1/997)", "too fine a fraction"),
        ("7**(1/997)*7**(1/991)*7**(1/983)*7**(1/977)", "too fine a fraction"),
        ("sqrt(sqrt(B**(1/999)))*B**(1/998)", "too fine a fraction"),
    ],
)
def test_unreadable_or_unsafe_input_is_explained_and_never_executed(raw: str, message: str) -> None:
    with pytest.raises(InvalidAnswer) as err:
        parse(raw, NAMES)
    assert message in err.value.message


def test_the_largest_accepted_inputs_still_get_a_verdict() -> None:
    # Near the size and exponent limits: graded by sampling, no simplify() to blow up.
    worst = "+".join(["(B+D+F)**8/(B*D*F+1)**7"] * 3)
    assert len(worst) <= symbolic.MAX_CHARS
    assert not symbolic.grade(worst, target()).correct
    assert symbolic.grade("((B*D*F)**8)**(1/8)/(B*D + D*F + B*F)", target()).correct
