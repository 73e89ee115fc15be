import pytest

from apps.exercises.content.render import RenderError, format_value, render, substitute, unrendered_math


def test_placeholders_are_computed_from_givens() -> None:
    scope = {"d": 768, "L": 12}
    assert substitute("{{12*L*d**2}} ≈ {{12*L*d**2/1e6 | sig4}}M", scope) == "84,934,656 ≈ 84.93M"


@pytest.mark.parametrize(
    ("value", "flt", "text"),
    [
        (124320000, None, "124,320,000"),
        (6.7384156, None, "6.738"),
        (124320000, "sig3", "124,000,000"),
        (81937, "sig2", "82,000"),
        (0.012345, "sig2", "0.012"),
        (5.88e21, "sci", "5.88×10²¹"),
        (0.992, "pct", "99.2%"),
        (0.17697, ".3f", "0.177"),
        (1234.5, "int", "1,234"),
    ],
)
def test_filters(value: float, flt: str | None, text: str) -> None:
    assert format_value(value, flt) == text


def test_bad_placeholders_are_errors() -> None:
    with pytest.raises(RenderError, match="unknown name"):
        substitute("{{ missing * 2 }}", {})
    with pytest.raises(RenderError, match="unknown filter"):
        substitute("{{ 2 | shout }}", {})


def test_markdown_math_tables_and_no_raw_html() -> None:
    html = render("$d = {{d}}$ and <script>alert(1)</script>\n\n| a | b |\n|---|---|\n| 1 | 2 |", {"d": 4096})
    assert "<mn>4,096</mn>" in html  # one number, not 4 and 096 joined by a comma
    assert "<math" in html
    assert "<table>" in html
    assert "<script>" not in html
    assert "&lt;script&gt;" in html


def test_money_is_not_math() -> None:
    html = render("It rents for $3/hour, $72/day; that is $12Ld^2$ money.", {})
    assert "$3/hour" in html
    assert "$72/day" in html
    assert "<msup>" in html  # $12Ld^2$ is still math


def test_unrendered_math_is_detected() -> None:
    assert unrendered_math(render("bad $ x^2 $ math", {})) == ["$ x^2 $"]
    assert unrendered_math(render("good $x^2$ math", {})) == []
