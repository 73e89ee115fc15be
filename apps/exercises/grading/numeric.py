"""Reading numbers as people type them, and grading them against a computed answer.

Accepted: ``12.9B``, ``1.29e10``, ``12,910,000,000``, ``12.9 billion``, ``512 MiB``, ``0.5 GB``,
``3.2 ms``, ``171k tokens/s``, ``$256``, ``75%``, ``1.29 × 10^10``. A bare number is read in
the question's input unit (``124.3`` in a "M params" field is 124.3 million parameters), except
where that reading is absurd: in a field whose unit is a magnitude prefix (k, M, G, T, Ki, Gi…),
a bare number at least as large as the prefix itself (``2147483648`` in a GB field) is read in
base units. The rule looks at the input and the field's unit only, never at the answer, so the
preview can say which reading applies before anything is submitted, and ``interpret`` is the one
place that decides it: preview, verdict, stored attempt and statistics all show its reading.
A trailing ``B`` means bytes when the question is about bytes and billion otherwise; the
feedback always says which reading was taken.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from apps.exercises.grading.base import GradeResult, InvalidAnswer
from apps.exercises.grading.units import (
    DIMENSIONLESS,
    MAGNITUDES,
    Dim,
    Unit,
    UnitError,
    lookup_atom,
    magnitude_label,
    parse_unit,
)

MAX_INPUT_LENGTH = 120

_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
_NUMBER_RE = re.compile(
    r"""^(?P<sign>[-+])?\s*
    (?P<mant>\d{1,3}(?:,\d{3})+(?:\.\d*)?|\d{1,3}(?:[ ]\d{3})+(?:\.\d*)?|\d+(?:\.\d*)?|\.\d+)
    (?:[eE](?P<e>[-+]?\d+)
        |\s*[x×*·⋅]\s*10\s*(?:\^|\*\*)\s*(?P<pow>[-+]?\d+)
        |\s*[x×*·⋅]?\s*(?<![\d.])10(?P<sup>[⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺]+))?""",
    re.VERBOSE,
)
_LEADING_NOISE = re.compile(r"^(?:~|≈|about\s+|approx\.?\s+|approximately\s+|=)\s*", re.IGNORECASE)


@dataclass
class Reading:
    """What we read from the learner's text, before it is put in a question's context."""

    number: float
    magnitude: float = 1.0
    unit: Unit | None = None  # an explicit unit the learner typed
    notes: list[str] = field(default_factory=list)
    text: str = ""  # normalized echo of the input

    @property
    def bare(self) -> bool:
        return self.unit is None and self.magnitude == 1.0


def _normalize(raw: str) -> str:
    text = raw.strip().replace("\u2212", "-").replace("\u00a0", " ").replace("\u2009", " ").replace("\u202f", " ")
    text = re.sub(r"(?<=\d)_(?=\d)", "", text)
    text = _LEADING_NOISE.sub("", text)
    return text.strip()


def read(raw: str, *, expected: Dim) -> Reading:
    """Read a learner's input. Raises InvalidAnswer('unparseable') with what we understood."""
    if not isinstance(raw, str) or not raw.strip():
        raise InvalidAnswer("empty_answer", "Type a number, for example 124.3M or 8.59 GB.")
    if len(raw) > MAX_INPUT_LENGTH:
        raise InvalidAnswer("unparseable", f"That answer is longer than {MAX_INPUT_LENGTH} characters.")
    text = _normalize(raw)
    dollar_prefix = False
    if text.startswith("$"):
        dollar_prefix = True
        text = text[1:].lstrip()
    sign_first = re.match(r"^-\s*\$", raw.strip())
    if sign_first:  # "-$5"
        dollar_prefix, text = True, "-" + _normalize(raw).lstrip("-").lstrip().lstrip("$")
    m = _NUMBER_RE.match(text)
    if not m:
        raise InvalidAnswer(
            "unparseable",
            f"We could not find a number at the start of '{raw.strip()}'. Try a form like 124.3M, 8.59 GB or 1.29e10.",
        )
    mant = m.group("mant")
    rest = text[m.end() :].strip()
    if re.match(r"^,\d", rest) or (("," in mant) and re.match(r"^0,", mant)):
        raise InvalidAnswer(
            "unparseable", "Use a dot for decimals (0.844), commas only between groups of three digits."
        )
    number = float(mant.replace(",", "").replace(" ", ""))
    if m.group("sign") == "-":
        number = -number
    exp_text = m.group("e") or m.group("pow") or (m.group("sup") or "").translate(_SUPERSCRIPTS)
    sup = re.match(r"^[⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺]+", rest)
    if sup and mant == "10" and not exp_text:  # "10¹²" written on its own
        number, exp_text, rest = 1.0, sup.group(0).translate(_SUPERSCRIPTS), rest[sup.end() :].strip()
    if exp_text:
        exponent = int(exp_text)
        if abs(exponent) > 300:
            raise InvalidAnswer("unparseable", "That exponent is out of range.")
        number *= 10.0**exponent
    if not math.isfinite(number):
        raise InvalidAnswer("unparseable", "That number is out of range.")

    reading = Reading(number=number)
    if dollar_prefix:
        reading.unit = lookup_atom("$").unit
    _read_rest(rest, reading, expected)
    reading.text = _echo(raw)
    return reading


def _read_rest(rest: str, reading: Reading, expected: Dim) -> None:
    if not rest:
        return
    # Attached or spaced magnitude: "12.9B", "171k tokens/s", "12.9 billion params".
    word_match = re.match(r"^([A-Za-z]+)(.*)$", rest)
    if word_match:
        word, after = word_match.group(1), word_match.group(2).strip()
        if word == "m" and expected.has("second"):
            raise InvalidAnswer("unparseable", "'m' is ambiguous here: write min for minutes or ms for milliseconds.")
        if word in MAGNITUDES:
            takes_magnitude = _magnitude_wins(word, after, expected)
            if takes_magnitude:
                reading.magnitude = MAGNITUDES[word]
                label = magnitude_label(reading.magnitude)
                if word in ("B", "b"):
                    reading.notes.append(f"read '{word}' as billion")
                elif label and word not in (label, label + "s"):
                    reading.notes.append(f"read '{word}' as {label}")
                rest = after
    if not rest:
        return
    # "**" is a power as "^" is, never two multiplications ("2**30 B" is not 2 × 30 B): the unit
    # reader sees "^", and its message shows what the learner typed.
    power = "**" if "**" in rest else "^"
    try:
        unit_reading = parse_unit(rest.replace("**", "^"))
    except UnitError as exc:
        said = str(exc) if power == "^" else str(exc).replace("^", "**")
        raise InvalidAnswer(
            "unparseable", f"We read the number {_fmt(reading.number)} but not the unit: {said}."
        ) from None
    unit = unit_reading.unit
    reading.notes.extend(unit_reading.notes)
    if unit_reading.ambiguous_flops:
        rate = Dim.of("FLOP") / Dim.of("second")
        if (reading.unit.dim if reading.unit else DIMENSIONLESS) * unit.dim / Dim.of("second") == expected:
            unit = unit / Unit(1.0, Dim.of("second"), "s")
            reading.notes.append("read FLOPS as a rate, FLOP per second")
        elif expected == rate:
            pass
        else:
            reading.notes.append("read FLOPs as a count of operations")
    reading.unit = reading.unit * unit if reading.unit else unit


def _magnitude_wins(word: str, after: str, expected: Dim) -> bool:
    """Whether a word like B/M/k after a number is a magnitude (billion) or a unit (bytes)."""
    next_is_unit = bool(after) and re.match(r"^[A-Za-zµμ$%×¢]", after) is not None
    if word == "B":
        return next_is_unit or not expected.has("byte")
    if word == "b":
        if expected.has("byte") and not next_is_unit:
            raise InvalidAnswer("unparseable", "'b' is ambiguous here: write B or bytes for bytes, bits for bits.")
        return True
    return True


def _echo(raw: str) -> str:
    return re.sub(r"\s+", " ", raw.strip())


# ---------------------------------------------------------------------------------------------
# Formatting
# ---------------------------------------------------------------------------------------------


def _fmt(value: float, sig: int = 6) -> str:
    """Readable number: thousands separators for ordinary sizes, ×10ⁿ for very large/small."""
    if value == 0:
        return "0"
    mag = abs(value)
    if mag >= 1e15 or mag < 1e-4:
        exp = math.floor(math.log10(mag))
        mant = value / 10**exp
        mant_text = f"{mant:.{sig}g}"  # sig significant figures, as below (".{sig - 1}g" gave one fewer)
        return f"{mant_text}×10^{exp}"
    if float(value).is_integer():
        return f"{int(value):,}"
    rounded = float(f"{value:.{sig}g}")
    if rounded == int(rounded):
        return f"{int(rounded):,}"
    decimals = max(0, sig - 1 - math.floor(math.log10(mag)))
    return f"{rounded:,.{decimals}f}".rstrip("0").rstrip(".")


def format_number(value: float) -> str:
    """A number as the feedback writes it: 2,147,483,648; 1.2346×10^18."""
    return _fmt(value)


def format_base(value: float, dim: Dim) -> str:
    label = dim.label()
    if label == "$":
        return f"${_fmt(value)}"
    return f"{_fmt(value)} {label}".rstrip()


def _figures(value: float, sig: int) -> str:
    """Exactly ``sig`` significant figures, trailing zeros kept: 0.9995 → 1.00, 1024 → 1,020."""
    if value == 0:
        return "0"
    rounded = float(f"{value:.{sig}g}")
    mag = abs(rounded)
    if mag >= 1e15 or mag < 1e-4:  # as _fmt writes them: 2.50×10^-5
        exp = math.floor(math.log10(mag))
        return f"{rounded / 10**exp:.{sig - 1}f}×10^{exp}"
    decimals = max(0, sig - 1 - math.floor(math.log10(mag)))
    return f"{rounded:,.{decimals}f}"


def format_in(value: float, unit: Unit, sig: int = 4, *, exact: bool = False) -> str:
    """A base-unit value written in ``unit`` (``8.59 GB``, ``124.3 M params``). ``exact``: with
    exactly ``sig`` figures (a shown answer), else to at most ``sig`` (trailing zeros dropped)."""
    number = _figures(value / unit.scale, sig) if exact else _fmt(value / unit.scale, sig)
    if unit.label.startswith("$"):
        return f"${number}{unit.label[1:]}"
    return f"{number} {unit.label}".rstrip()


# ---------------------------------------------------------------------------------------------
# Quantities in a question's context, and grading
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Interpretation:
    value: float  # base units
    dim: Dim
    understood: str  # "512 MiB = 536,870,912 bytes"
    notes: tuple[str, ...]
    reading_of_bare: str | None  # which unit a bare number was read in


def _is_magnitude(scale: float) -> bool:
    """A scale that is a decimal or binary prefix: 10³ᵏ or 2¹⁰ᵏ for k ≥ 1."""
    for base in (1e3, 1024.0):
        k = round(math.log(scale, base)) if scale > 1 else 0
        if k >= 1 and math.isclose(scale, base**k, rel_tol=1e-12):
            return True
    return False


def base_threshold(input_unit: Unit) -> float | None:
    """From which size a bare number is read in base units rather than in ``input_unit``.

    Only for a prefixed unit: a bare number of at least one prefix (10⁹ in a GB field) would, in
    the field's unit, be 10⁹ GB — a reading nobody means. None: always the field's unit. Content
    checks make sure no answer, written in its field's unit, reaches this size.
    """
    return input_unit.scale if _is_magnitude(input_unit.scale) else None


def interpret(reading: Reading, *, expected: Dim, input_unit: Unit) -> Interpretation:
    """Put a reading in the question's context: which value, in base units, it stands for.

    The one place that decides how an input reads; it never looks at the answer.
    """
    notes = tuple(reading.notes)
    threshold = base_threshold(input_unit)
    if reading.unit is not None:
        value = reading.number * reading.magnitude * reading.unit.scale
        dim = reading.unit.dim
        bare_as = None
    elif reading.magnitude != 1.0:
        value, dim, bare_as = reading.number * reading.magnitude, expected, None
    elif threshold is not None and abs(reading.number) >= threshold:
        base = input_unit.dim.label()
        value, dim, bare_as = reading.number, input_unit.dim, base
        notes += (f"a bare number of {_fmt(threshold)} or more is read in {base}, not {input_unit.label}",)
    else:
        value, dim, bare_as = reading.number * input_unit.scale, input_unit.dim, input_unit.label
    if dim != expected:
        raise InvalidAnswer(
            "wrong_dimension",
            f"We read '{reading.text}' as {dim.describe()}, but this question asks for {expected.describe()}."
            + (f" ({'; '.join(notes)})" if notes else ""),
            understood=_understood(reading, value, dim, bare_as, notes, input_unit),
        )
    return Interpretation(value, dim, _understood(reading, value, dim, bare_as, notes, input_unit), notes, bare_as)


def _understood(
    reading: Reading, value: float, dim: Dim, bare_as: str | None, notes: tuple[str, ...], input_unit: Unit
) -> str:
    shown = reading.text if bare_as is None else f"{reading.text} {bare_as}".strip()
    # Simple quantities read back in base units (536,870,912 bytes); rates in the question's unit.
    simple = sum(abs(e) for e in dim.exps) <= 1
    base = format_base(value, dim) if simple or dim != input_unit.dim else format_in(value, input_unit, sig=6)
    text = shown if base.replace(" ", "") == shown.replace(" ", "") else f"{shown} = {base}"
    if notes:
        text += f" ({'; '.join(notes)})"
    return text


@dataclass(frozen=True)
class Candidate:
    """An accepted alternate or a known mistake: a value in base units with its feedback.

    A ``convention`` alternate is the answer under another unit convention (the GiB figure
    labelled GB, a million read as 2²⁰): accepted, with a note that names the difference.
    """

    value: float
    feedback: str
    tolerance: float
    convention: bool = False


# Ratios between readings of one quantity under the binary and decimal prefix conventions.
_CONVENTION_RATIOS = tuple((2**10 / 1e3) ** k for k in range(1, 6))


def is_convention_ratio(ratio: float) -> bool:
    """Whether two values differ exactly as a binary and a decimal prefix do (1.024ᵏ, either way)."""
    return any(
        math.isclose(ratio, r, rel_tol=1e-6) or math.isclose(ratio, 1 / r, rel_tol=1e-6) for r in _CONVENTION_RATIOS
    )


CONVENTION_NOTE = (
    "Accepted with a unit note: this is the answer under the other unit convention. "
    "It counts as solved, marked with the note until you answer in the unit asked."
)


@dataclass(frozen=True)
class NumericTarget:
    value: float
    dim: Dim
    input_unit: Unit
    tolerance: float
    alternates: tuple[Candidate, ...] = ()
    mistakes: tuple[Candidate, ...] = ()
    sig_figs: int = 3  # the figures the prompt asks for

    def text(self, value: float | None = None) -> str:
        """A value (default: the answer) as we show it: in the input unit, rounded to the figures
        the prompt asks for (never more: "4.295 GB" answers no question asking for three)."""
        return format_in(self.value if value is None else value, self.input_unit, sig=self.sig_figs, exact=True)


def close(value: float, target: float, tolerance: float) -> bool:
    slack = 1e-9 * max(1.0, abs(target))
    return abs(value - target) <= tolerance * abs(target) + slack


def agrees(value: float, target: NumericTarget) -> bool:
    """``value`` is the answer: within the tolerance, or the answer rounded to the figures asked.

    The prompt promises that the answer rounded to ``sig_figs`` figures is accepted, on every
    learner's numbers: 2,250 TFLOP/s x 0.50 = 1,125 TFLOP/s rounds to 1,130 (or, half to even,
    1,120), 0.44% off, outside a 0.3% tolerance. So either rounding, in the unit asked, is accepted
    too (not anything near it: 1,128 is not an answer to three figures). An exact answer
    (tolerance 0: a count of GPUs) stays exact.
    """
    if close(value, target.value, target.tolerance):
        return True
    scale = target.input_unit.scale
    exact = target.value / scale
    if target.tolerance <= 0 or exact == 0 or not math.isfinite(exact):
        return False
    step = 10.0 ** (math.floor(math.log10(abs(exact))) - target.sig_figs + 1)
    below = math.floor(exact / step) * step
    typed = value / scale
    return any(
        abs(rounded - exact) <= step / 2 * (1 + 1e-9) and close(typed, rounded, 1e-9)
        for rounded in (below, below + step)
    )


# Exact factors that betray a unit slip rather than a wrong method.
_FACTORS: tuple[tuple[float, str], ...] = (
    (1e3, "a factor of 1,000 — check the unit prefix (k/M/G/T)"),
    (1e6, "a factor of 10⁶ — check the unit prefix"),
    (1e9, "a factor of 10⁹ — check the unit prefix"),
    (1e12, "a factor of 10¹² — check the unit prefix"),
    (8.0, "a factor of 8 — bits versus bytes?"),
    (2**10 / 1e3, "the ratio between binary and decimal prefixes (KiB vs kB)"),
    (2**20 / 1e6, "the ratio between binary and decimal prefixes (MiB vs MB)"),
    (2**30 / 1e9, "the ratio between binary and decimal prefixes (GiB vs GB)"),
    (2**40 / 1e12, "the ratio between binary and decimal prefixes (TiB vs TB)"),
    (100.0, "a factor of 100 — a percentage written as a fraction, or the reverse?"),
    (2.0, "a factor of 2 — a multiply-add counted once, or K and V counted once?"),
)
# The binary-over-decimal factors by prefix power: 2¹⁰ᵏ/10³ᵏ is the slip of reading a k-th prefix
# (k, M, G, T) in the other convention.
_PREFIX_POWER = {2 ** (10 * k) / 10 ** (3 * k): k for k in range(1, 5)}

# How a wrong number relates to the learner's own answer, for instructors' statistics pooled
# over learners with different numbers: the factor, written as the slip it suggests.
_RELATIONS: tuple[tuple[float, str], ...] = (
    (2**30 / 1e9, "2³⁰/10⁹ (GiB vs GB)"),
    (2**20 / 1e6, "2²⁰/10⁶ (MiB vs MB)"),
    (2**40 / 1e12, "2⁴⁰/10¹² (TiB vs TB)"),
    (1.024, "1.024 (KiB vs kB)"),
    *((10.0**k, f"10{str(k).translate(str.maketrans('0123456789', '⁰¹²³⁴⁵⁶⁷⁸⁹'))}") for k in (3, 6, 9, 12, 2, 1)),
    *((float(2**k), str(2**k)) for k in (1, 2, 3, 4, 8, 16)),
)


def relation(value: float, answer: float, tolerance: float) -> str:
    """``value`` against the learner's own ``answer``: "×2", "÷10³", "×2³⁰/10⁹ (GiB vs GB)", "−answer",
    or "other"."""
    if answer == 0 or value == 0:
        return "other"
    ratio = value / answer
    slack = max(tolerance, 1e-6)
    if close(ratio, -1.0, slack):
        return "−answer (sign)"
    for factor, text in _RELATIONS:
        if close(ratio, factor, slack):
            return f"×{text}"
        if close(ratio, 1 / factor, slack):
            return f"÷{text}"
    return "other"


def _prefix_plausible(power: int, *values: float) -> bool:
    """A slip between the k-th binary and decimal prefix (GiB vs GB for k = 3) is plausible only
    for a quantity of that magnitude: one of the values is between 10³ᵏ and 10³⁽ᵏ⁺¹⁾ base units.
    A 1.0486 ratio between two figures of 65 GB is no MiB-vs-MB slip (that would be 1.0737);
    another cause (a different parameter count) explains it better, so it is not named."""
    return any(v != 0 and math.floor(math.log(abs(v), 1000) + 1e-9) == power for v in values)


def factor_hint(value: float, target: float, tolerance: float) -> str | None:
    """The unit slip a wrong number betrays, or None when none explains it better than a wrong method.

    A factor is named only when the ratio is within tolerance of it AND nearer to it than to any
    other known factor; a binary-vs-decimal prefix factor, only where the quantity's magnitude
    makes that prefix the one in play (``_prefix_plausible``). Otherwise we say nothing rather
    than something wrong.
    """
    if target == 0 or value == 0:
        return None
    ratio = value / target
    if ratio < 0:
        return None
    slack = max(tolerance, 1e-6)
    candidates = [
        (f, direction, text)
        for factor, text in _FACTORS
        for f, direction in ((factor, "too large"), (1 / factor, "too small"))
    ]
    nearest = min(candidates, key=lambda c: abs(math.log(ratio / c[0])))
    factor, direction, text = nearest
    if not close(ratio, factor, slack):
        return None
    power = _PREFIX_POWER.get(max(factor, 1 / factor))
    if power is not None and not _prefix_plausible(power, value, target):
        return None
    return f"Your answer is {direction} by {text}" + ("" if text.endswith("?") else ".")


def grade(raw: str, target: NumericTarget) -> GradeResult:
    """Grade the one reading ``interpret`` gives (the one the preview showed)."""
    reading = read(raw, expected=target.dim)
    interpretation = interpret(reading, expected=target.dim, input_unit=target.input_unit)
    value = interpretation.value
    parsed = {"value": value, "unit": target.dim.label(), "understood": interpretation.understood}
    if agrees(value, target):
        return GradeResult(True, "Correct.", parsed=parsed)
    for alt in target.alternates:
        if close(value, alt.value, alt.tolerance):
            if alt.convention:
                return GradeResult(True, f"{CONVENTION_NOTE} {alt.feedback}", parsed=parsed, noted=True)
            return GradeResult(True, f"Accepted. {alt.feedback}", parsed=parsed)
    for i, mistake in enumerate(target.mistakes):
        if close(value, mistake.value, mistake.tolerance):
            return GradeResult(False, mistake.feedback, parsed=parsed, details={"mistake": True, "mistake_index": i})
    hint = factor_hint(value, target.value, target.tolerance)
    return GradeResult(False, hint or "Not quite. Check each step against the givens.", parsed=parsed)
