r"""Content text as plain text, for what shows no HTML (the instructors' CSV files): each ``$…$``
of TeX is read as a person would type it, the rest of the text is left exactly as written.

    $N^*$ → N*      $2 \times 3$ → 2 × 3      $10^{9}$ → 10⁹      $x_1$ → x₁
    $T_{\text{math}}$ → T_math      $\frac{a+b}{c}$ → (a + b)/c      $\sqrt{d}$ → √d

The math is found as the learner's page finds it (``render._markdown``: no space just inside the
dollars, no digit just outside them, ``$$…$$`` too, so "$3/hour and $72/day" stays money) and
read through the MathML the page shows, so the plain reading and the page cannot disagree on
what is math. Text outside the dollars is not Markdown-rendered: a typed ``2*N*d`` stays as it is.
"""

from __future__ import annotations

import re
from html import unescape
from xml.etree.ElementTree import Element

from latex2mathml.converter import convert_to_element

# dollarmath (allow_space=False, allow_digits=False, double_inline=True), as render._markdown uses it.
_MATH = re.compile(
    r"\$\$(?P<double>.+?)\$\$"
    r"|(?<![\\\d$])\$(?![\s$])(?P<single>(?:\\.|[^$\\])+?)(?<![\s\\])\$(?!\d)",
    re.DOTALL,
)
_SUPERSCRIPT = dict(zip("0123456789+-−=()niT⊤", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁻⁼⁽⁾ⁿⁱᵀᵀ", strict=True))
_SUBSCRIPT = dict(zip("0123456789+-−=()", "₀₁₂₃₄₅₆₇₈₉₊₋₋₌₍₎", strict=True))
_AS_WRITTEN = {"*", "′", "″", "'", "†", "‡", "∗"}  # N^*, f^\prime: written after the base as they are
# Written with a space either side between two operands (not a leading minus: "-1").
_BINARY = set("=≈≠≤≥<>→←↔⇒⇔×÷±∓+−-∼≃≅∝≡·⋅∈∉⊂⊆∪∩")
_ACCENT = {"^": "\u0302", "ˆ": "\u0302", "~": "\u0303", "˜": "\u0303", "¯": "\u0304", "‾": "\u0304", "→": "\u20d7"}
_INVISIBLE = str.maketrans({"\u2061": "", "\u2062": "", "\u2063": "", "\u2064": "", "\u00a0": " "})
_NEEDS_PARENS = re.compile(r"[\s+\-−×·/=<>≈]")


def tex_plain(text: str) -> str:
    """``text`` with each of its ``$…$`` math spans replaced by its plain reading."""
    if "$" not in text:
        return text
    return _MATH.sub(lambda m: math_plain(m.group("double") or m.group("single")), text)


def math_plain(latex: str) -> str:
    """One TeX formula as plain text (its source, if it does not convert)."""
    try:
        element = convert_to_element(latex)
    except Exception:  # noqa: BLE001 - latex2mathml raises many types; the page shows the source too
        return latex
    out = re.sub(r" {2,}", " ", _read(element, compact=False)).strip()
    return out.replace("−", "-")


def _tag(element: Element) -> str:
    return element.tag.rpartition("}")[2]


def _text(element: Element) -> str:
    return unescape(element.text or "").translate(_INVISIBLE)


def _read(element: Element, *, compact: bool) -> str:
    tag, kids = _tag(element), list(element)
    if tag in ("mi", "mn", "mtext", "ms"):
        return _text(element)
    if tag == "mo":
        return _text(element)
    if tag == "mspace":
        return " "
    if tag in ("msup", "msub", "msubsup") and len(kids) >= 2:
        base = _read(kids[0], compact=compact)
        if tag == "msup":
            return base + _script(kids[1], up=True)
        tail = _script(kids[2], up=True) if tag == "msubsup" and len(kids) > 2 else ""
        return base + _script(kids[1], up=False) + tail
    if tag == "mfrac" and len(kids) == 2:
        return f"{_group(kids[0])}/{_group(kids[1])}"
    if tag == "msqrt":
        return "√" + _group(Element("mrow"), kids)
    if tag == "mroot" and len(kids) == 2:
        return _script(kids[1], up=True) + "√" + _group(kids[0])
    if tag in ("mover", "munder", "munderover") and len(kids) >= 2:
        base, mark = _read(kids[0], compact=compact), _read(kids[1], compact=True)
        if tag == "mover" and mark in _ACCENT:
            return base + _ACCENT[mark]
        if tag == "munderover" and len(kids) > 2:
            return base + _script(kids[1], up=False) + _script(kids[2], up=True)
        return base + _script(kids[1], up=tag == "mover")
    if tag == "mtable":
        return "; ".join(", ".join(_read(cell, compact=compact) for cell in row) for row in kids)
    return _row(kids, compact=compact)


def _row(kids: list[Element], *, compact: bool) -> str:
    """Children side by side; a binary operator or relation between two operands spaced out."""
    parts: list[str] = []
    for i, kid in enumerate(kids):
        piece = _read(kid, compact=compact)
        if not compact and _tag(kid) == "mo" and piece.strip() in _BINARY and 0 < i < len(kids) - 1:
            piece = f" {piece.strip()} "
        parts.append(piece)
    return "".join(parts)


def _script(element: Element, *, up: bool) -> str:
    """A superscript or subscript: in Unicode script characters when every one has one (10⁹, x₁),
    as written for N* and f′, else ``^``/``_`` and the text, in parentheses when it is not one word."""
    text = _read(element, compact=True).strip()
    if not text:
        return ""
    table = _SUPERSCRIPT if up else _SUBSCRIPT
    if all(c in table for c in text):
        return "".join(table[c] for c in text)
    if up and text in _AS_WRITTEN:
        return text
    mark = "^" if up else "_"
    return mark + (f"({text})" if _NEEDS_PARENS.search(text) else text)


def _group(element: Element, kids: list[Element] | None = None) -> str:
    """A fraction's numerator or denominator, a root's radicand: in parentheses unless one term."""
    text = (_row(kids, compact=False) if kids is not None else _read(element, compact=False)).strip()
    return f"({text})" if _NEEDS_PARENS.search(text) else text
