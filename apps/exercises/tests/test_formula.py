import pytest

from apps.exercises.grading.formula import FormulaError, evaluate, evaluate_all, names


def test_integer_arithmetic_stays_exact() -> None:
    value = evaluate("12*L*d**2 + V*d", {"d": 12288, "L": 96, "V": 50257})
    assert value == 174_563_733_504
    assert isinstance(value, int)


def test_functions_constants_and_units() -> None:
    assert evaluate("ceil(1120 / 80)", {}) == 14
    assert evaluate("max(ceil(274.2/80), ceil(30/12.2))", {}) == 4
    assert evaluate("kv / GiB * GB", {"kv": 2**31}) == pytest.approx(2e9)
    assert evaluate("2*pi*10000**(510/512)", {}) == pytest.approx(60611.48, rel=1e-6)
    assert evaluate("round(2.567, 1)", {}) == pytest.approx(2.6)


def test_evaluate_all_follows_dependencies_not_key_order() -> None:
    # jsonb returns keys sorted by length, so "layers" can come back before "per_layer".
    out = evaluate_all({"layers": "L*per_layer", "per_layer": "12*d**2"}, {"d": 2, "L": 3})
    assert out == {"per_layer": 48, "layers": 144}
    with pytest.raises(FormulaError, match="cycle"):
        evaluate_all({"a": "b + 1", "b": "a + 1"}, {})
    with pytest.raises(FormulaError, match="unknown name 'c'"):
        evaluate_all({"a": "c + 1"}, {})


def test_conditions_are_one_or_zero() -> None:
    """A variant's `require` and an option's `correct_if` read as conditions."""
    scope = {"d": 768, "h": 12, "L": 12}
    assert evaluate("d % h == 0 and L * d**2 < 1e12", scope) == 1
    assert evaluate("d % 7 == 0 or h > 12", scope) == 0
    assert evaluate("not (d > 1024)", scope) == 1
    assert evaluate("1 < h <= 12 != d", scope) == 1
    assert evaluate("(d > 512) * 10", scope) == 10


def test_names_excludes_functions_and_constants() -> None:
    assert names("ceil(a / GB) + max(b, pi)") == {"a", "b"}


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("__import__('os').system('true')", "unknown function"),
        ("().__class__", "not allowed"),
        ("d.real", "not allowed"),
        ("[1, 2][0]", "not allowed"),
        ("lambda: 1", "not allowed"),
        ("open('/etc/passwd')", "unknown function"),
        ("'a' * 3", "only numbers"),
        ("True + 1", "only numbers"),
        ("1 if d else 2", "not allowed"),
        ("d is 3", "only <, <="),
        ("d in 3", "only <, <="),
        ("max(d, key=abs)", "keyword"),
        ("9**9**9", "too large"),
        ("10.0**400", "cannot evaluate"),
        ("1/0", "division by zero"),
        ("x + 1", "unknown name"),
        ("", "empty"),
        ("1 +", "cannot parse"),
        ("1" + "+1" * 300, "more than"),
        ("(-8)**0.5", "complex"),
    ],
)
def test_unsafe_or_broken_formulas_are_refused(source: str, message: str) -> None:
    with pytest.raises(FormulaError, match=message):
        evaluate(source, {"d": 4})
