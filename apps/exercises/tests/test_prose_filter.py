"""Wrong-answer labels on the instructor's statistics page: content math rendered, typed text literal."""

from apps.exercises.templatetags.prose import with_math


def test_content_math_is_rendered_and_everything_else_stays_literal() -> None:
    assert "<math" in with_math("option 2: $2 \\cdot N \\cdot d^2$ FLOPs")
    assert with_math("2*N*d") == "2*N*d"  # no emphasis from a typed expression
    assert with_math("<script>alert(1)</script>") == "&lt;script&gt;alert(1)&lt;/script&gt;"
    assert "<script" not in with_math("$x$ <script>alert(1)</script>")
