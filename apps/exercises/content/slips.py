"""The small slips a learner notices on a page, each found wherever it occurs (``check_content``).

- **Labels with raw markup.** Part labels, table headers and row names, and symbol meanings are
  shown with their ``$…$`` math rendered (the ``with_math`` filter); titles and plot labels are
  plain text everywhere (``<title>``, lists, CSV files, LTI, an SVG), so they may hold no markup.
  After rendering, no TeX (``$N``, ``\\text``, ``x^2``, ``T_math``), backticks or ``**`` may remain.
  A function name written as a call (``count_pairs()``) is the plain reading of code, not markup.
- **Grouped digits in shapes.** ``[8,192, 256]`` reads as three numbers; shapes and indices are
  written without thousands separators (``render.substitute`` leaves them out inside a bracketed
  list), and any grouped number left in one is reported.
- **More figures than asked.** When a prompt asks for N significant figures ("to three
  significant figures", "four sig figs", "2 s.f."), the answer it asks for is graded and shown to
  N figures: the target's ``sig_figs`` must be N, and the shown answer carries no more.
"""

from __future__ import annotations

import re
from html import unescape

from django.utils.html import escape

from apps.exercises.content.resolve import ResolvedExercise
from apps.exercises.formats.base import inline_html
from apps.exercises.grading.numeric import NumericTarget

# ---- labels ---------------------------------------------------------------------------------

# What rendering should have consumed: a dollar opening TeX ("$N", "$\\", "${"), a TeX command,
# a superscript or subscript written as TeX (x^2, ^*, T_math, d_{ff}), backticks, bold or
# underline markers.
_MARKUP = re.compile(
    r"\$[A-Za-z\\{(^_]"
    r"|\\[A-Za-z]+"
    r"|[A-Za-z0-9)}]\^|\^[A-Za-z0-9{*(]"
    r"|\b[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9{]"
    r"|`|\*\*"
    # Underscores emphasise only as a pair that opens and closes (CommonMark's flanking rules, in
    # short): "__bold__" or "__init__", not a name such as __xss( that merely starts with them.
    r"|(?<![A-Za-z0-9])__(?=\S)(?:(?!__).)+?(?<=\S)__(?![A-Za-z0-9])"
)
_RENDERED = re.compile(r"<math\b.*?</math>|<code>.*?</code>", re.DOTALL)
_TAG = re.compile(r"<[^>]+>")
_CALL = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\(\)")  # a function named as code: count_pairs()


def label_html(text: str) -> str:
    """A label as the learner's page shows it: its ``$…$`` math rendered, the rest as text
    (``apps.exercises.templatetags.prose.with_math``)."""
    return inline_html(text) if "$" in text else str(escape(text))


def markup_left(html: str) -> list[str]:
    """Markup or TeX left in a label's rendered HTML (what a learner would read raw)."""
    text = unescape(_TAG.sub("", _RENDERED.sub(" ", html)))
    return [m.group(0) for m in _MARKUP.finditer(_CALL.sub(" ", text))]


def label_slots(r: ResolvedExercise) -> list[tuple[str, str, bool]]:
    """Every label a learner reads, rendered (where, text, shown with math rendered)."""
    spec = r.spec
    out: list[tuple[str, str, bool]] = [("title", spec.title, False)]
    for part in spec.parts or []:
        out.append((f"parts[{part.key}].label", part.label, True))
        if part.expression is not None:
            out += [(f"parts[{part.key}].symbols[{n}]", m, True) for n, m in part.expression.symbols.items()]
    out += [(f"columns[{c.key}].label", c.label, True) for c in spec.columns or []]
    for row in spec.rows or []:
        out += [(f"rows[{row.key}].{k}", v, True) for k, v in row.values.items() if isinstance(v, str)]
    if spec.plot is not None:
        plot = spec.plot
        out += [("plot.title", plot.title, False), ("plot.x.label", plot.x.label, False)]
        out += [("plot.y.label", plot.y.label, False)]
        out += [(f"plot.curves[{i}].label", c.label, False) for i, c in enumerate(plot.curves)]
        out += [(f"plot.marks[{i}].label", m.label, False) for i, m in enumerate(plot.marks)]
    return out


def label_problems(r: ResolvedExercise) -> list[str]:
    problems = []
    for where, text, rendered in label_slots(r):
        left = markup_left(label_html(text) if rendered else str(escape(text)))
        if left:
            how = "after its math is rendered" if rendered else "(plain text: it is shown where no math renders)"
            problems.append(f"{where}: raw markup {', '.join(map(repr, left))} in {text!r} {how}")
    return problems


# ---- grouped digits in shapes and indices ----------------------------------------------------

# A bracketed list: [a, b, c] (any length) or a tuple (a, b) with at least one comma; elements are
# separated by a comma and a space, so the comma of "8,192" is a thousands separator.
_BRACKETS = re.compile(r"\[([^\[\]\n]{1,200})\]|\(([^()\n]{1,200},\s[^()\n]{0,200})\)")
_ELEMENT = re.compile(r"^[-+]?[\w.,′'*]+$")
_GROUPED = re.compile(r"(?<![\d.])\d{1,3}(?:,\d{3})+(?![\d])")


def grouped_in_shapes(text: str) -> list[str]:
    """Bracketed lists of numbers (shapes, indices, tuples) with a thousands-separated number."""
    found = []
    for m in _BRACKETS.finditer(text):
        inner = m.group(1) if m.group(1) is not None else m.group(2)
        elements = [e.strip() for e in re.split(r",\s+", inner)]
        if all(_ELEMENT.match(e) for e in elements) and any(_GROUPED.fullmatch(e) for e in elements):
            found.append(m.group(0))
    return found


# ---- figures asked and shown -----------------------------------------------------------------

_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8}
_N = r"(one|two|three|four|five|six|seven|eight|[1-8])"
# "three significant figures", "4 sig figs", "2 s.f."; a bare "figures" only as asked: "to three
# figures", "give four figures" (not "the two figures above").
_FIGURES = re.compile(
    rf"\b{_N}\s+(?:significant\s+figures?|sig\.?\s*figs?|s\.\s?f\.)|\b(?:to|give)\s+{_N}\s+figures?\b",
    re.IGNORECASE,
)
_ITEM = re.compile(r"(?m)^\s{0,3}\d+\.\s+")
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?|\.\d+")


def asked_figures(text: str) -> set[int]:
    """The significant figures a text asks for ("to three significant figures" → {3})."""
    found = (m.group(1) or m.group(2) for m in _FIGURES.finditer(text))
    return {_WORDS.get(n.lower()) or int(n) for n in found}


def shown_figures(text: str) -> int:
    """The significant figures of the first number in a shown answer ("4.295 GB" → 4; "8,190" → 3)."""
    m = _NUMBER.search(text)
    if m is None:
        return 0
    digits = m.group(0).replace(",", "")
    if "." in digits:
        return len(digits.replace(".", "").lstrip("0")) or 1
    return len(digits.lstrip("0").rstrip("0")) or 1


def _asked_per_target(r: ResolvedExercise) -> dict[str, tuple[int, NumericTarget]]:
    """Each numeric target whose figures the prompt states: a numbered question asked of a part
    (the n-th item of a list in the prompt, for the n-th part), else one N the whole prompt asks."""
    prompt = r.spec.prompt
    targets: dict[str, NumericTarget] = {}
    if r.numeric is not None:
        targets["answer"] = r.numeric
    targets.update({f"cells[{k}]": t for k, t in r.cells.items()})
    part_keys = [p.key for p in r.spec.parts or []]
    items = _ITEM.split(prompt)[1:]
    out: dict[str, tuple[int, NumericTarget]] = {}
    if part_keys and len(items) == len(part_keys):
        for key, item in zip(part_keys, items, strict=True):
            target = r.parts.get(key)
            asked = asked_figures(item)
            if isinstance(target, NumericTarget) and len(asked) == 1:
                out[f"parts[{key}]"] = (asked.pop(), target)
        return out
    targets.update({f"parts[{k}]": t for k, t in r.parts.items() if isinstance(t, NumericTarget)})
    asked = asked_figures(prompt)
    if len(asked) == 1:
        n = asked.pop()
        out.update({where: (n, t) for where, t in targets.items()})
    return out


def figure_problems(r: ResolvedExercise) -> list[str]:
    problems = []
    for where, (asked, target) in _asked_per_target(r).items():
        shown = target.text()
        if target.sig_figs != asked:
            problems.append(
                f"{where}: the prompt asks for {asked} significant figures but sig_figs is {target.sig_figs}"
            )
        elif shown_figures(shown) > asked:
            problems.append(f"{where}: the answer is shown as {shown!r}, more than the {asked} figures asked")
    return problems
