"""Whether a text a learner reads before solving states an answer, in any way a number is written.

``leaks(text, answers)`` reads every number in a piece of learner-visible text (Markdown, or HTML
with MathML as our renderer writes it) and reports each answer it states. A number is read as
people and our renderer write it: plain or with thousands separators (``524,288``, ``524 288``,
thin and no-break spaces, ``<mn>524,288</mn>``); in scientific notation (``5.24e5``,
``5.24×10⁵``, ``5.24 × 10^5``, ``$5.24 \\times 10^{5}$`` as MathML, ``2^{30}``); with a magnitude
(``12.9B``, ``171k``); and with a unit, read by the grader's own unit table, so an answer of
524,288 bytes is found as ``512 KiB``, ``0.5 MiB``, ``524 kB`` or ``524,288 bytes per token``.

What counts as stating an answer, and what is chance (the false-positive rules):

- **With a unit of the answer's dimension** (bytes, FLOP, tokens/s, $…): the number equals the
  answer exactly in that unit, at any precision (``0.5 MiB``, ``2 GiB``); or the grader would
  accept it as the answer (``about 1 FLOP/byte`` for 0.9995 within 0.5%); or it is the answer
  rounded to the figures written, when at least two are written or the prompt asks for one
  (``524 kB``, ``2.1 GB`` for 2.147 GB). One written figure that is neither (``about 2 GB`` for
  2.15 GB, ``0.5 MB`` for 0.524 MB) narrows nothing the prompt asks for.
- **A unit of another dimension** is another quantity: ``1.50 ms`` never states 1.497 GB, nor
  ``0.5 MiB/s`` (a bandwidth) half a MiB. Only a per-item denominator may be dropped, as answers
  are often asked that way: ``524,288 bytes per token`` states a per-token cache asked in bytes.
- **A plain number** (no unit word, perhaps a magnitude: ``524,288``, ``12.9B``), read in the
  answer's base unit, its unit or its input unit: with four significant figures written, or
  three with decimals (``2.94`` in a table whose header names the unit). A three-figure integer
  without its unit is chance: ``512`` as a head dimension is not a 512 KiB answer, nor ``128``
  heads a count of 128; ``2`` GPUs and ``32`` layers are everywhere.
- **Counts and ratios** (a dimensionless answer, written with ``%``, ``×`` or a counted noun such
  as ``GPUs``): an exact value with at least two real figures (``75.0%`` for 0.75, ``39 GPUs``),
  or a rounding to at least the figures the prompt asks for (``39.1%``). Round values with one
  real figure (``60.0%`` for 0.6, ``4×``, ``8 GPUs``) and coarse roundings (``about 1.2×`` for
  1.155) are everywhere, so one-figure counts are not checked: read such exercises yourself.
- **Givens are public.** A number in the text that is itself one of the reader's givens states
  the given (a chapter intro's utilisation ``u = 0.6`` shown as ``60.0%``, whatever an exercise's
  answer happens to be); an answer equal to one of its own exercise's givens is no secret at all
  (1.4's variance is the given d_k = 128). The givens are plain numbers, so a number written
  with a unit is public only when its value in base units is a given.
- **What an exercise shows before it is solved**: its title, prompt, hints, option texts, the
  feedback of wrong options and of known mistakes (given after a wrong attempt), step texts, part
  labels and symbols, table labels and row texts. Not read: its explanation, accepted alternates'
  feedback, the correct option's feedback and its plot, all shown only once solved or revealed,
  where the answer belongs.
- **Earlier exercises.** A learner may open 4.6 before solving 4.5, so a later exercise must not
  state an earlier one's answer either, with two exceptions. A chain that hands an earlier result
  on as a starting point is deliberate when the text that states it names the exercise it comes
  from ("320 KiB per token, the result of 5.1"): the learner is told whose answer it is. And a
  choice's option texts are candidates, not statements: a distractor may be another exercise's
  number.

``exercise_leaks`` checks an exercise against its own answers; ``chapter_leaks`` a chapter's intro
against every answer in the chapter, and each exercise against the answers of the exercises
before it. ``check_content`` runs both.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator
from contextlib import suppress
from dataclasses import dataclass
from functools import lru_cache
from html.parser import HTMLParser

from apps.exercises.content.render import RenderError, markdown_html, render
from apps.exercises.content.resolve import ContentError, ResolvedExercise, resolve
from apps.exercises.content.schema import ChapterSpec, ExerciseSpec
from apps.exercises.content.texts import slots
from apps.exercises.content.variants import variant
from apps.exercises.grading.formula import FormulaError, Number, scope_of
from apps.exercises.grading.numeric import NumericTarget, close
from apps.exercises.grading.units import DIMENSIONLESS, Dim, Unit, UnitError, lookup_atom, parse_unit, unit

# A plain number needs this many significant figures before it can be told from chance; one
# fewer when it has decimals ("2.94" is a computed value rounded, "512" an everyday size).
BARE_FIGURES = 4
EXACTLY = "exactly"
ACCEPTED = "which the grader accepts"
# Two numbers are equal when they differ by no more than this, relatively (float noise only).
_EXACT = 1e-9


@dataclass(frozen=True)
class Answer:
    """One number that must stay secret: an answer, a numeric part or a table cell."""

    where: str  # "answer", "parts[a]", "cells[r1.kv]"
    value: float  # in base units
    dim: Dim
    sig_figs: int  # the figures the prompt asks for
    tolerance: float  # relative: the grader accepts anything this close
    # Units a plain number may be written in, as scales: base units, the answer's unit, its input unit.
    scales: tuple[float, ...]
    text: str  # as the platform writes it: "512 KiB"

    @classmethod
    def of(cls, where: str, target: NumericTarget, unit_text: str | None = None) -> Answer:
        """A grading target as a secret; ``unit_text`` is the answer's unit when it is not the input unit."""
        scales = [1.0, target.input_unit.scale]
        if unit_text:
            with suppress(UnitError):  # resolve() has refused it already
                scales.append(unit(unit_text).scale)
        figures, tolerance = target.sig_figs, target.tolerance
        return cls(where, target.value, target.dim, figures, tolerance, tuple(dict.fromkeys(scales)), target.text())


@dataclass(frozen=True)
class Reading:
    """One way to read a number in a text: its value in base units, in a unit of ``scale``."""

    value: float
    dim: Dim
    scale: float  # the written unit's size in base units, magnitude included (kB: 1000)
    unit: bool  # written with a unit word, not merely as a plain number or with a magnitude
    written: str  # the number with the words read as its unit


@dataclass(frozen=True)
class Mention:
    """A number as written in a text, and every way it can be read."""

    number: float  # the written number, exponent applied, before magnitude and unit
    figures: int  # significant figures written
    decimal: bool  # written with a decimal point: "2.94", not "512"
    exact_only: bool  # a power such as 2³⁰: equal or not, never "rounded"
    readings: tuple[Reading, ...]


@dataclass(frozen=True)
class Leak:
    answer: Answer
    written: str
    how: str  # EXACTLY, ACCEPTED or "to 3 figures"

    def __str__(self) -> str:
        return f"{self.answer.where} ({self.answer.text}) as {self.written!r}, {self.how}"


# ---- text ---------------------------------------------------------------------------------------

_HTML_TAG = re.compile(r"</?[a-zA-Z][^>]*>")
_BLOCKS = frozenset(
    {"p", "div", "li", "ul", "ol", "table", "thead", "tbody", "tr", "td", "th", "br", "hr", "blockquote", "pre"}
    | {"h1", "h2", "h3", "h4", "h5", "h6", "mtable", "mtr", "mtd"}
)
_VOID = frozenset({"br", "hr", "img", "input", "mspace", "mprescripts", "none"})
# Written between a MathML element's children: a power, a subscript, a fraction.
_BETWEEN = {"msup": {2: "^"}, "msub": {2: "_"}, "msubsup": {2: "_", 3: "^"}, "mfrac": {2: " / "}, "mroot": {2: " "}}


@dataclass
class _Open:
    tag: str
    children: int = 0


class _TextOf(HTMLParser):
    """HTML with MathML as plain text: ``<msup><mn>10</mn><mn>5</mn></msup>`` reads ``10^5``,
    ``<mspace/>`` a thin space, and block elements a line break, so table cells never run together."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.open: list[_Open] = []

    def _child(self, tag: str) -> None:
        if self.open:
            parent = self.open[-1]
            parent.children += 1
            self.out.append(_BETWEEN.get(parent.tag, {}).get(parent.children, ""))
        self.out.append("\u2009" if tag == "mspace" else "\n" if tag in _BLOCKS else "")

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._child(tag)
        if tag not in _VOID:
            self.open.append(_Open(tag))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._child(tag)

    def handle_endtag(self, tag: str) -> None:
        while self.open and self.open.pop().tag != tag:
            continue
        if tag in _BLOCKS:
            self.out.append("\n")

    def handle_data(self, data: str) -> None:
        self.out.append(data)


def plain_text(text: str) -> str:
    """What a reader sees of ``text``: HTML as it is, anything else rendered as Markdown first."""
    parser = _TextOf()
    parser.feed(text if _HTML_TAG.search(text) else markdown_html(text))
    parser.close()
    return "".join(parser.out).replace("\u2212", "-")


# ---- numbers ------------------------------------------------------------------------------------

_SPACES = "\u00a0\u2009\u202f"
_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
_NUMBER = re.compile(
    rf"""(?<![\w.,^_/\u2009\u202f])        # not inside a word (H100, FP32), a number or an exponent
    (?P<mant>\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?
        |\d{{1,3}}(?:[ {_SPACES}]\d{{3}})+(?:\.\d+)?(?![\d\-])
        |\d+(?:\.\d+)?
        |\.\d+)
    (?!\d)
    (?:[eE](?P<e>[-+]?\d+)(?!\w)
        |\s*[x×*·⋅]\s*10\s*(?:\^|\*\*)\s*\(?(?P<pow>[-+]?\d+)\)?
        |\s*[x×*·⋅]\s*10(?P<sup>[⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺]+)
        |(?P<alone>[⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺]+)
        |\s*(?:\^|\*\*)\s*\(?(?P<power>-?\d{{1,3}})\)?)?""",
    re.VERBOSE,
)
_TAIL_TOKEN = re.compile(
    rf"[ {_SPACES}]*(?:(?P<op>/|\bper\b)|(?P<word>[A-Za-zµμ%×¢][A-Za-z0-9µμ]*)|(?P<num>\d+(?:\.\d+)?(?=\s*[A-Za-z])))"
)
# Magnitudes a plain number may carry ("12.9B", "171k"); lower-case m and b are too ambiguous.
_MAGNITUDES = {"k": 1e3, "K": 1e3, "thousand": 1e3, "M": 1e6, "million": 1e6, "mn": 1e6, "B": 1e9, "bn": 1e9}
_MAGNITUDES |= {"billion": 1e9, "T": 1e12, "trillion": 1e12, "quadrillion": 1e15}
_MAX_UNIT_WORDS = 5
_PER_ITEM = (Dim.of("token"), Dim.of("param"), DIMENSIONLESS)


def _figures(mant: str) -> int:
    digits = re.sub(rf"[, {_SPACES}]", "", mant)
    if "." in digits:
        return max(1, len(digits.replace(".", "").lstrip("0")))
    return max(1, len(digits.lstrip("0").rstrip("0")))  # 82,000: two figures


@lru_cache(maxsize=4096)
def _units(words: str) -> tuple[Unit, ...]:
    """The units ``words`` spell, as the grader reads them; "FLOPS" is a count or a rate."""
    try:
        reading = parse_unit(words)
    except UnitError:
        return ()
    if reading.ambiguous_flops:
        return (reading.unit, reading.unit / Unit(1.0, Dim.of("second"), "s"))
    return (reading.unit,)


@lru_cache(maxsize=4096)
def _is_unit_word(token: str) -> bool:
    if token in _MAGNITUDES:
        return True
    try:
        lookup_atom(token)
    except UnitError:
        return False
    return True


def _tail(text: str, pos: int) -> list[tuple[str, int]]:
    """The unit words right after a number, each with where it ends; stops at any other word."""
    tokens: list[tuple[str, int]] = []
    while len(tokens) < _MAX_UNIT_WORDS:
        m = _TAIL_TOKEN.match(text, pos)
        if not m:
            break
        kind = m.lastgroup or ""
        value = m.group(kind)
        if kind == "word" and not _is_unit_word(value):
            break
        if kind == "num" and not (tokens and tokens[-1][0] == "/"):
            break  # "/1M tokens" only
        tokens.append((value, m.end()))
        pos = m.end()
    return tokens


def mentions(text: str) -> list[Mention]:
    """Every number in a text as a reader sees it (see ``plain_text``), with its readings."""
    plain = plain_text(text)
    found: list[Mention] = []
    for m in _NUMBER.finditer(plain):
        mant = m.group("mant")
        number = float(re.sub(rf"[, {_SPACES}]", "", mant))
        figures, exact_only = _figures(mant), False
        exponent = m.group("e") or m.group("pow") or (m.group("sup") or "").translate(_SUPERSCRIPTS)
        if m.group("alone"):
            if mant != "10":
                continue  # "4096²" is a square, not a number anyone reads off
            number, exponent, figures = 1.0, m.group("alone").translate(_SUPERSCRIPTS), 1
        try:
            if exponent:
                number *= 10.0 ** int(exponent)
            elif m.group("power"):
                if number > 1e6 or abs(int(m.group("power"))) > 64:
                    continue
                number, figures, exact_only = number ** int(m.group("power")), 1, True
        except (ValueError, OverflowError):
            continue
        if not math.isfinite(number):
            continue
        dollar = plain[max(0, m.start() - 2) : m.start()].rstrip(" ").endswith("$")
        readings = sorted(set(_readings(plain, m.start(), m.end(), number, dollar)), key=_preferred)
        found.append(Mention(number, figures, "." in mant, exact_only, tuple(readings)))
    return found


def _preferred(reading: Reading) -> tuple[bool, int]:
    # Unit readings first, the shortest first: "524,288 bytes", not "524,288 bytes per".
    return (not reading.unit, len(reading.written))


def _may_end_before(rest: list[tuple[str, int]]) -> bool:
    """Whether a unit may end before the words ``rest``: at the end, or before a per-item
    denominator ("bytes per token", "/param", "per GPU": answers are often asked per item). Never
    before a time or another quantity ("0.5 MiB/s" is a bandwidth, not half a MiB), nor before a
    scaled one ("$1.44/1M tokens" is not $1.44)."""
    if not rest or rest[0][0] not in ("/", "per"):
        return True
    if len(rest) < 2 or rest[1][0][:1].isdigit() or rest[1][0] in _MAGNITUDES:
        return False
    units = _units(rest[1][0])
    return bool(units) and all(u.dim in _PER_ITEM and u.scale == 1 for u in units)


def _readings(plain: str, start: int, end: int, number: float, dollar: bool) -> list[Reading]:
    """A number with a unit is read in that unit only ("1.50 ms" is not a plain 1.50); one with
    a magnitude letter either way ("7B": seven billion, or seven bytes)."""
    tokens = _tail(plain, end)
    prefix = unit("$") if dollar else None
    written = ("$" if dollar else "") + plain[start:end].strip()
    found: list[Reading] = []
    if prefix is not None and _may_end_before(tokens):
        found.append(Reading(number, prefix.dim, 1.0, True, written))
    magnitude = _MAGNITUDES.get(tokens[0][0]) if tokens else None
    for first in (0, 1) if magnitude else (0,):
        if first < len(tokens) and tokens[first][0] in ("/", "per") and prefix is None:
            continue  # "524,288 per token": what the number is counted against, not its unit
        scale = magnitude if first and magnitude else 1.0
        for k in range(first + 1, len(tokens) + 1):
            if tokens[k - 1][0][:1].isdigit() or not _may_end_before(tokens[k:]):
                continue  # "$1.44/1" is half of "$1.44/1M tokens"
            for u in _units(" ".join(t for t, _ in tokens[first:k])):
                full = prefix * u if prefix else u
                words = ("$" if dollar else "") + plain[start : tokens[k - 1][1]].strip()
                found.append(Reading(number * scale * full.scale, full.dim, scale * full.scale, True, words))
    if magnitude and prefix is None:
        found.append(Reading(number * magnitude, DIMENSIONLESS, magnitude, False, plain[start : tokens[0][1]]))
    if not found:
        found.append(Reading(number, DIMENSIONLESS, 1.0, False, written))
    return found


# ---- matching -----------------------------------------------------------------------------------


def _round(value: float, figures: int) -> float:
    return float(f"{value:.{figures - 1}e}")


def _equal(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=_EXACT, abs_tol=0.0)


def _intrinsic(value: float) -> int:
    """The significant figures a value really has: 0.75 has two, 0.6 one, 1/3 as many as a float."""
    for figures in range(1, 16):
        if _equal(_round(value, figures), value):
            return figures
    return 16


def _how(mention: Mention, written_in: float, answer: Answer) -> str | None:
    """How the mention states the answer when written in a unit of ``written_in`` base units:
    exactly, as a number the grader accepts, or rounded to the figures written."""
    target = abs(answer.value / written_in)
    number = abs(mention.number)
    if _equal(number, target):
        return EXACTLY
    if close(number, target, answer.tolerance):
        return ACCEPTED
    if not mention.exact_only and _equal(number, _round(target, mention.figures)):
        return f"to {mention.figures} figure{'s' if mention.figures > 1 else ''}"
    return None


def _states(mention: Mention, reading: Reading, answer: Answer) -> str | None:
    """How ``reading`` of ``mention`` states ``answer``, under the rules of the module docstring."""
    if not reading.unit:
        if mention.figures < BARE_FIGURES - mention.decimal:
            return None
        return next(filter(None, (_how(mention, s * reading.scale, answer) for s in answer.scales)), None)
    if reading.dim != answer.dim:
        return None
    how = _how(mention, reading.scale, answer)
    if how is None:
        return None
    if answer.dim == DIMENSIONLESS:
        if how == EXACTLY:
            return how if _intrinsic(answer.value / reading.scale) >= 2 else None
        return how if mention.figures >= max(2, answer.sig_figs) else None
    if how not in (EXACTLY, ACCEPTED) and mention.figures < min(2, answer.sig_figs):
        return None
    return how


def _is_given(mention: Mention, reading: Reading, givens: list[float]) -> bool:
    values = [reading.value]
    if not reading.unit or reading.dim == DIMENSIONLESS:
        values.append(mention.number)  # givens are plain numbers: d_k = 128, u = 0.6
    return any(_equal(v, g) for v in values for g in givens)


def _plain_numbers(values: Iterable[object]) -> list[float]:
    return [float(v) for v in values if isinstance(v, int | float) and not isinstance(v, bool)]


def leaks(text: str, answers: Iterable[Answer], public: Iterable[Number] = ()) -> list[Leak]:
    """Every answer that ``text`` states, with how. Pure: no database, no I/O.

    ``public``: the givens the reader has here; a number that is one of them states the given,
    not an answer that happens to equal it.
    """
    answers = [a for a in answers if a.value != 0]  # zero is written everywhere
    givens = _plain_numbers(public)
    found: list[Leak] = []
    seen: set[tuple[str, str]] = set()
    for mention in mentions(text):
        readings = [r for r in mention.readings if not _is_given(mention, r, givens)]
        for answer in answers:
            for reading in readings:
                how = _states(mention, reading, answer)
                if how and (answer.where, reading.written) not in seen:
                    seen.add((answer.where, reading.written))
                    found.append(Leak(answer, reading.written, how))
                    break
    return found


def is_public(answer: Answer, givens: Iterable[Number]) -> bool:
    """Whether the answer equals one of ``givens``, in base units, its unit or its input unit."""
    values = _plain_numbers(givens)
    return any(_equal(answer.value / scale, g) for scale in answer.scales for g in values)


# ---- exercises and chapters ---------------------------------------------------------------------


def answers_of(resolved: ResolvedExercise) -> list[Answer]:
    """Every number an exercise asks for: its answer, each numeric part, each table cell."""
    spec = resolved.spec
    found: list[Answer] = []
    if resolved.numeric is not None:
        found.append(Answer.of("answer", resolved.numeric, spec.answer.unit if spec.answer else None))
    part_units = {p.key: p.answer.unit for p in spec.parts or [] if p.answer is not None}
    for key, target in resolved.parts.items():
        if isinstance(target, NumericTarget):
            found.append(Answer.of(f"parts[{key}]", target, part_units.get(key)))
    column_units = {c.key: c.unit for c in spec.columns or []}
    for cell, target in resolved.cells.items():
        found.append(Answer.of(f"cells[{cell}]", target, column_units.get(cell.split(".", 1)[-1])))
    return found


def givens_of(spec: ExerciseSpec) -> list[float]:
    """The numbers an exercise gives its reader: its givens (shown, or implicit: known) and its table's rows."""
    values = _plain_numbers(spec.givens.values())
    for row in spec.rows or []:
        values += _plain_numbers(row.values.values())
    return values


def secret_answers(resolved: ResolvedExercise) -> list[Answer]:
    """An exercise's answers, less those equal to one of its givens (its prompt shows them)."""
    givens = givens_of(resolved.spec)
    return [a for a in answers_of(resolved) if not is_public(a, givens)]


_AFTER_SOLVING = re.compile(r"^(?:explanation|plot\..*|.*\.alternates\[\d+\]\.feedback)$")
_OPTION = re.compile(r"^options\[(\d+)\]\.(text|feedback)$")


def shown_before_solving(resolved: ResolvedExercise) -> Iterator[tuple[str, str]]:
    """Every rendered text of an exercise that a learner can read before solving it, with where it is."""
    data = resolved.spec.model_dump(mode="json")
    options = data.get("options") or []
    for slot in slots(data, resolved.scope):
        option = _OPTION.match(slot.where)
        if _AFTER_SOLVING.match(slot.where) or (
            option and option.group(2) == "feedback" and options[int(option.group(1))].get("correct")
        ):
            continue
        if slot.text.strip():
            yield slot.where, slot.text


def exercise_leaks(resolved: ResolvedExercise) -> list[str]:
    """Where an exercise states one of its own answers before it is solved."""
    answers = secret_answers(resolved)
    if not answers:
        return []
    givens = givens_of(resolved.spec)
    return [
        f"{where}: states the answer: {leak}"
        for where, text in shown_before_solving(resolved)
        for leak in leaks(text, answers, givens)
    ]


def _cites(text: str, number: str) -> bool:
    """Whether ``text`` names exercise ``number`` ("the result of 5.1", "Exercise 3.2"), not a
    quantity that happens to read the same ("5.1 GB")."""
    for m in re.finditer(rf"(?<![\w.,]){re.escape(number)}(?![\w]|[.,]\d)", text):
        after = _TAIL_TOKEN.match(text, m.end())
        if not (after and after.lastgroup == "word" and _is_unit_word(after.group("word"))):
            return True
    return False


def chapter_leaks(chapter: ChapterSpec, *, seed: str | None = None) -> list[str]:
    """Where a chapter's intro states an answer of one of its exercises, and where an exercise,
    before it is solved, states the answer of an earlier one in the chapter without naming it.

    With ``seed``, on the numbers that learner gets (round 1): chapter-mates share their numbers."""
    resolved: list[ResolvedExercise] = []
    for spec in chapter.exercises:
        try:
            numbers = None if seed is None else variant(spec, seed=seed, chapter=chapter.number, round=1)
            resolved.append(resolve(spec, numbers))
        except ContentError:
            continue  # check_exercise reports it
    secrets = [(r.spec.number, secret_answers(r)) for r in resolved]
    problems: list[str] = []
    try:
        intro = render(chapter.intro, scope_of(chapter.givens, chapter.derived)) if chapter.intro.strip() else ""
    except (FormulaError, RenderError):
        intro = ""  # check_chapter reports it
    if intro:
        givens = list(chapter.givens.values())
        for number, answers in secrets:
            problems += [
                f"chapter {chapter.number} intro: states {number}'s {leak}" for leak in leaks(intro, answers, givens)
            ]
    for i, later in enumerate(resolved):
        for where, text in shown_before_solving(later):
            if _OPTION.match(where) and where.endswith(".text"):
                continue  # a candidate, not a statement
            for number, answers in secrets[:i]:
                if answers and not _cites(text, number):
                    problems += [
                        f"{later.spec.number} {where}: states {number}'s {leak}" for leak in leaks(text, answers)
                    ]
    return problems
