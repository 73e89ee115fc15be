"""Rendering prose: numbers from givens, then Markdown with math as MathML.

A prompt says ``d = {{d}}`` and ``{{12*L*d**2 | sig4}}``; each ``{{ … }}`` is a formula evaluated
by the safe evaluator over the exercise's givens and derived values, so the text and the answer
come from the same numbers and cannot disagree. Filters: none (integers with separators, others
4 significant figures), ``sigN``, ``int``, ``sci`` (5.88×10²¹), ``pct`` (99.2%), or a Python
format spec such as ``.2f`` or ``,.0f``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from functools import lru_cache
from xml.etree.ElementTree import tostring

from latex2mathml.converter import convert_to_element
from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from mdit_py_plugins.dollarmath import dollarmath_plugin

from apps.core.html import sanitize, text_html
from apps.exercises.grading.formula import FormulaError, Number, evaluate

PLACEHOLDER = re.compile(r"\{\{\s*(?P<expr>.+?)\s*(?:\|\s*(?P<filter>[^}]+?)\s*)?\}\}")
_SPEC = re.compile(r"^[<>^=+\- #0]*\d*[,_]?(?:\.\d+)?[eEfFgG%n]?$")
_SUP = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


class RenderError(ValueError):
    """A placeholder that does not evaluate or format."""


def format_value(value: Number, flt: str | None = None) -> str:
    if flt is None:
        if isinstance(value, int) or (float(value).is_integer() and abs(value) < 1e15):
            return f"{int(value):,}"
        return _sig(value, 4)
    if flt.startswith("sig") and flt[3:].isdigit():
        return _sig(value, int(flt[3:]))
    if flt == "int":
        return f"{round(value):,}"
    if flt == "sci":
        if value == 0:
            return "0"
        exp = math.floor(math.log10(abs(value)))
        mant = value / 10**exp
        return f"{mant:.3g}×10{str(exp).translate(_SUP)}"
    if flt == "pct":
        return _sig(value * 100, 3) + "%"
    if _SPEC.match(flt):
        try:
            return format(float(value) if "f" in flt or "e" in flt or "%" in flt else value, flt)
        except ValueError as exc:
            raise RenderError(f"bad format {flt!r}: {exc}") from None
    raise RenderError(f"unknown filter {flt!r}")


def _sig(value: Number, sig: int) -> str:
    """``sig`` significant figures with separators: 81937 → 82,000 (sig2); 0.0123 → 0.012."""
    if value == 0:
        return "0"
    exp = math.floor(math.log10(abs(value)))
    decimals = sig - 1 - exp
    rounded = round(float(value), decimals)
    if decimals <= 0:
        return f"{round(rounded):,}"
    return f"{rounded:,.{decimals}f}"


def substitute(text: str, scope: Mapping[str, Number]) -> str:
    """Replace every ``{{ formula | filter }}`` in ``text``. Raises RenderError.

    A number that is an element of a bracketed list — a shape ``[{{s}}, {{d_k}}]``, an index
    ``x[{{i}}]``, a tuple ``({{a}}, {{b}})`` — is written without thousands separators, whatever
    its filter: ``[8,192, 256]`` would read as three numbers.
    """
    masked = PLACEHOLDER.sub(lambda m: "0" * len(m.group(0)), text)

    def repl(m: re.Match[str]) -> str:
        try:
            value = evaluate(m.group("expr"), scope)
        except FormulaError as exc:
            raise RenderError(f"in {m.group(0)!r}: {exc}") from None
        out = format_value(value, m.group("filter"))
        if _in_list(masked, m.start(), m.end()):
            out = _SEPARATOR.sub("", out)
        return out

    return PLACEHOLDER.sub(repl, text)


_SEPARATOR = re.compile(r"(?<=\d),(?=\d{3})")
_CLOSES = {"[": "]", "(": ")"}


def _in_list(masked: str, start: int, end: int) -> bool:
    """Whether ``masked[start:end]`` (a placeholder) is an element of a bracketed list: between its
    bracket or a comma and a comma or the closing bracket, inside ``[…]`` or a ``(…, …)`` tuple."""
    before, after = masked[:start].rstrip(), masked[end:].lstrip()
    if not before or not after or before[-1] not in "[(," or after[0] not in "]),":
        return False
    depth, opener, i = 0, -1, start - 1
    while i >= max(0, start - 200):  # the enclosing bracket, on the same line
        c = masked[i]
        if c == "\n":
            break
        if c in ")]":
            depth += 1
        elif c in "([":
            if depth == 0:
                opener = i
                break
            depth -= 1
        i -= 1
    if opener < 0:
        return False
    closing = masked.find(_CLOSES[masked[opener]], end)
    if closing < 0:
        return False
    if masked[opener] == "(":  # a tuple, not a parenthesis: it holds a comma
        return "," in masked[opener:closing].replace(masked[start:end], "")
    return True


def placeholders(text: str) -> list[str]:
    return [m.group("expr") for m in PLACEHOLDER.finditer(text)]


def _math_inline(self: RendererHTML, tokens: list[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    return _mathml(tokens[idx].content, display=False)


def _math_block(self: RendererHTML, tokens: list[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    return _mathml(tokens[idx].content, display=True) + "\n"


# latex2mathml stores symbols as character references ("&#x0003C;") in element text; serialized, they
# come out as "&amp;#x0003C;". Its own convert() then unescapes the whole document, which also turns
# the text of \text{…} back into live markup; we restore only the character references.
_CHAR_REF = re.compile(r"&amp;(#x[0-9A-Fa-f]+;)")
_MN_GROUP = re.compile(r"<mn>([\d,.]+)</mn><mo>&#x0002C;</mo><mn>(\d{3}(?:[.,]\d+)?)</mn>")


@lru_cache(maxsize=8192)  # pure: a formula with no learner number is the same for everyone
def _mathml(latex: str, *, display: bool) -> str:
    try:
        element = convert_to_element(latex, display="block" if display else "inline")
        out = _CHAR_REF.sub(r"&\1", tostring(element, encoding="unicode"))
    except Exception:  # noqa: BLE001 - latex2mathml raises many types; show the source instead
        return f'<code class="math-error">{_escape(latex)}</code>'
    # "4,096" in math is a number with a thousands separator, not 4 and 096 joined by a comma.
    while True:
        merged = _MN_GROUP.sub(r"<mn>\1,\2</mn>", out)
        if merged == out:
            return out
        out = merged


def math_html(latex: str) -> str:
    """LaTeX as inline MathML, as the learner's pages render ``$…$`` (the source, if it does not convert)."""
    return sanitize(_mathml(latex, display=False))


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _markdown() -> MarkdownIt:
    # Raw HTML off: prose is Markdown only, and the output is safe to mark as such in templates.
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable("table")
    # No space inside the dollars and no digit outside them: "$3/hour and $72/day" stays money,
    # "$12Ld^2$" is math.
    md.use(dollarmath_plugin, allow_space=False, allow_digits=False, double_inline=True)
    md.add_render_rule("math_inline", _math_inline)
    md.add_render_rule("math_inline_double", _math_block)
    md.add_render_rule("math_block", _math_block)
    md.add_render_rule("math_block_label", _math_block)
    return md


_MD = _markdown()


@lru_cache(maxsize=2048)
def markdown_html(text: str) -> str:
    """Markdown with math as HTML, through the one sanitizer (apps/core/html.py)."""
    return sanitize(str(_MD.render(text)))


_UNRENDERED_MATH = re.compile(r"\$[^$<>]*[\\^_{}][^$<>]*\$")


def unrendered_math(html: str) -> list[str]:
    """Dollar-delimited TeX that survived rendering (usually a space just inside the dollars)."""
    return _UNRENDERED_MATH.findall(html)


def render(text: str, scope: Mapping[str, Number]) -> str:
    """Numbers from the scope, then Markdown to HTML."""
    return markdown_html(substitute(text, scope))


def feedback_html(feedback: str, *, from_code: bool) -> str:
    """An attempt's feedback as HTML. A code run's carries what the learner's program said
    (exception messages, output, test names): plain text, never Markdown or math. Any other's
    is our own Markdown with the learner's answer in it (escaped, and sanitized as all prose)."""
    if not feedback:
        return ""
    return text_html(feedback) if from_code else markdown_html(feedback)
