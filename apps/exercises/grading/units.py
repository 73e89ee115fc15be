"""Units by dimension, for what people type: ``512 MiB``, ``171k tokens/s``, ``$1.44/1M tokens``.

Dimensions are vectors of exponents over our own base quantities. Bytes, FLOPs, parameters and
tokens are kept apart on purpose (pint would call them all dimensionless), so "8 GB" typed into a
tokens-per-second question is caught as the wrong kind of quantity rather than graded.
Bits are bytes scaled by 1/8. Counts of things (GPUs, users, heads) are dimensionless.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

BASES: tuple[str, ...] = ("byte", "FLOP", "param", "token", "second", "dollar")
_BASE_PLURALS = {"byte": "bytes", "FLOP": "FLOP", "param": "params", "token": "tokens", "second": "s", "dollar": "$"}


@dataclass(frozen=True)
class Dim:
    exps: tuple[int, ...] = (0,) * len(BASES)

    @classmethod
    def of(cls, base: str, power: int = 1) -> Dim:
        exps = [0] * len(BASES)
        exps[BASES.index(base)] = power
        return cls(tuple(exps))

    def __mul__(self, other: Dim) -> Dim:
        return Dim(tuple(a + b for a, b in zip(self.exps, other.exps, strict=True)))

    def __truediv__(self, other: Dim) -> Dim:
        return Dim(tuple(a - b for a, b in zip(self.exps, other.exps, strict=True)))

    def __pow__(self, power: int) -> Dim:
        return Dim(tuple(a * power for a in self.exps))

    @property
    def dimensionless(self) -> bool:
        return not any(self.exps)

    def has(self, base: str) -> bool:
        return self.exps[BASES.index(base)] != 0

    def label(self) -> str:
        """A unit label in base units: ``bytes``, ``tokens/s``, ``$/token``, ``count``."""
        num = [(b, e) for b, e in zip(BASES, self.exps, strict=True) if e > 0]
        den = [(b, -e) for b, e in zip(BASES, self.exps, strict=True) if e < 0]
        if not num and not den:
            return ""

        def part(items: list[tuple[str, int]], plural: bool) -> str:
            words = [(_BASE_PLURALS[b] if plural else ("s" if b == "second" else b)) for b, _ in items]
            return "·".join(w + (f"^{e}" if e != 1 else "") for w, (_, e) in zip(words, items, strict=True))

        top = part(num, plural=True) if num else "1"
        if den:
            # "$/token", not "$/tokens"; and "tokens/s", "FLOP/s".
            return f"{top}/{part(den, plural=False)}"
        return top

    def describe(self) -> str:
        """Plain-English name of the kind of quantity, for error messages."""
        names = {
            Dim.of("byte"): "an amount of memory or data (bytes)",
            Dim.of("FLOP"): "a number of floating-point operations (FLOP)",
            Dim.of("param"): "a number of parameters",
            Dim.of("token"): "a number of tokens",
            Dim.of("second"): "a time",
            Dim.of("dollar"): "an amount of money",
            Dim.of("FLOP") / Dim.of("second"): "a compute rate (FLOP/s)",
            Dim.of("byte") / Dim.of("second"): "a bandwidth (bytes/s)",
            Dim.of("token") / Dim.of("second"): "a throughput (tokens/s)",
            Dim.of("dollar") / Dim.of("token"): "a price per token ($/token)",
            Dim.of("dollar") / Dim.of("second"): "a cost rate ($ per time)",
            Dim.of("FLOP") / Dim.of("byte"): "an arithmetic intensity (FLOP/byte)",
            Dim.of("byte") / Dim.of("token"): "memory per token (bytes/token)",
            Dim.of("byte") / Dim.of("param"): "bytes per parameter",
            Dim.of("token") / Dim.of("param"): "tokens per parameter",
            Dim.of("second") ** -1: "a rate (per second)",
        }
        if self.dimensionless:
            return "a plain number (a count or ratio)"
        return names.get(self, f"a quantity in {self.label()}")


DIMENSIONLESS = Dim()


@dataclass(frozen=True)
class Unit:
    """A scale factor to base units and a dimension. ``label`` is how we write it back."""

    scale: float
    dim: Dim
    label: str

    def __mul__(self, other: Unit) -> Unit:
        return Unit(self.scale * other.scale, self.dim * other.dim, _join(self.label, "·", other.label))

    def __truediv__(self, other: Unit) -> Unit:
        return Unit(self.scale / other.scale, self.dim / other.dim, _join(self.label, "/", other.label))

    def __pow__(self, power: int) -> Unit:
        return Unit(self.scale**power, self.dim**power, f"{self.label}^{power}")


def _join(a: str, op: str, b: str) -> str:
    if not a:
        return f"1{op}{b}" if op == "/" else b
    if not b:
        return a
    return f"{a}{op}{b}"


ONE = Unit(1.0, DIMENSIONLESS, "")

# ---------------------------------------------------------------------------------------------
# The atom table: every unit word we understand, mapped to (scale, dimension, canonical label).
# ---------------------------------------------------------------------------------------------

_DECIMAL = {"k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18, "Z": 1e21, "Y": 1e24}
_BINARY = {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40, "Pi": 2.0**50, "Ei": 2.0**60}
_PREFIX_WORDS = {
    "kilo": ("k", 1e3),
    "mega": ("M", 1e6),
    "giga": ("G", 1e9),
    "tera": ("T", 1e12),
    "peta": ("P", 1e15),
    "exa": ("E", 1e18),
    "zetta": ("Z", 1e21),  # a frontier training run is ~10^25 FLOP: 10 YFLOP
    "yotta": ("Y", 1e24),
}
_BINARY_WORDS = {"kibi": "Ki", "mebi": "Mi", "gibi": "Gi", "tebi": "Ti", "pebi": "Pi"}

ATOMS: dict[str, Unit] = {}
# Words whose meaning depends on the question: resolved by the dimension the answer expects.
AMBIGUOUS_FLOPS = "FLOPS?"


def _add(names: str | list[str], scale: float, dim: Dim, label: str) -> None:
    for name in [names] if isinstance(names, str) else names:
        ATOMS[name] = Unit(scale, dim, label)


def _build_atoms() -> None:
    byte, bit = Dim.of("byte"), Dim.of("byte")
    _add(["B", "byte", "bytes", "Byte", "Bytes"], 1, byte, "B")
    _add(["bit", "bits"], 1 / 8, bit, "bit")
    for p, s in _DECIMAL.items():
        label = ("k" if p == "K" else p) + "B"
        _add(p + "B", s, byte, label)
        _add([p + "b", p + "bit"], s / 8, bit, ("k" if p == "K" else p) + "bit")
    for p, s in _BINARY.items():
        _add(p + "B", s, byte, p + "B")
        _add(p + "bit", s / 8, bit, p + "bit")
    for word, (p, s) in _PREFIX_WORDS.items():
        _add([word + "byte", word + "bytes"], s, byte, p + "B")
        _add([word + "bit", word + "bits"], s / 8, bit, p + "bit")
    for word, p in _BINARY_WORDS.items():
        _add([word + "byte", word + "bytes"], _BINARY[p], byte, p + "B")

    flop = Dim.of("FLOP")
    _add(["FLOP", "flop", "Flop"], 1, flop, "FLOP")
    for p, s in _DECIMAL.items():
        _add(p + "FLOP", s, flop, p + "FLOP")
    for word, (p, s) in _PREFIX_WORDS.items():
        _add([word + "flop", word + "FLOP", word + "flops", word + "FLOPs"], s, flop, p + "FLOP")

    param = Dim.of("param")
    _add(["param", "params", "parameter", "parameters", "weight", "weights"], 1, param, "params")
    token = Dim.of("token")
    _add(["token", "tokens", "tok", "toks"], 1, token, "tokens")
    for p, s in {"k": 1e3, "K": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}.items():
        _add([p + "tok", p + "tokens"], s, token, f"{p}tokens")
        _add([p + "params"], s, param, f"{p} params")

    sec = Dim.of("second")
    _add(["s", "sec", "secs", "second", "seconds"], 1, sec, "s")
    _add(["ms", "msec", "millisecond", "milliseconds"], 1e-3, sec, "ms")
    _add(["us", "µs", "μs", "usec", "microsecond", "microseconds"], 1e-6, sec, "µs")
    _add(["ns", "nanosecond", "nanoseconds"], 1e-9, sec, "ns")
    _add(["min", "mins", "minute", "minutes"], 60, sec, "min")
    _add(["h", "hr", "hrs", "hour", "hours"], 3600, sec, "h")
    _add(["d", "day", "days"], 86400, sec, "days")
    _add(["wk", "week", "weeks"], 7 * 86400, sec, "weeks")
    _add(["yr", "year", "years"], 365 * 86400, sec, "years")

    dollar = Dim.of("dollar")
    _add(["$", "USD", "usd", "dollar", "dollars"], 1, dollar, "$")
    _add(["cent", "cents", "¢"], 0.01, dollar, "¢")

    _add(["%", "percent", "pct"], 0.01, DIMENSIONLESS, "%")
    _add(["x", "×", "X", "times"], 1, DIMENSIONLESS, "×")
    for noun in (
        "GPU", "gpu", "H100", "A100", "B200", "TPU", "chip", "device", "node", "user", "head", "layer",
        "step", "request", "element", "position", "sequence", "expert", "group", "query", "copy",
        "replica", "worker", "example", "sample", "batch", "block", "page", "core",
    ):  # fmt: skip
        _add([noun, noun + "s", noun + "es"], 1, DIMENSIONLESS, "")
    _add(["copies", "queries", "replicas"], 1, DIMENSIONLESS, "")


_build_atoms()

# Magnitude words for bare counts: "12.9B", "171k", "12.9 billion".
MAGNITUDES: dict[str, float] = {
    "k": 1e3, "K": 1e3, "thousand": 1e3,
    "M": 1e6, "m": 1e6, "mn": 1e6, "mil": 1e6, "million": 1e6, "millions": 1e6,
    "B": 1e9, "b": 1e9, "bn": 1e9, "G": 1e9, "billion": 1e9, "billions": 1e9,
    "T": 1e12, "t": 1e12, "tn": 1e12, "trillion": 1e12, "trillions": 1e12,
    "P": 1e15, "quadrillion": 1e15,
}  # fmt: skip
_MAGNITUDE_LABELS = {1e3: "thousand", 1e6: "million", 1e9: "billion", 1e12: "trillion", 1e15: "quadrillion"}


class UnitError(ValueError):
    """Input we could not read as a unit; the message says what was understood."""


# Lower-case spellings people type, read with a note so the learner sees our reading.
_CASE_NOTES = {
    "kb": "kB", "mb": "MB", "gb": "GB", "tb": "TB", "pb": "PB",
    "kib": "KiB", "mib": "MiB", "gib": "GiB", "tib": "TiB", "pib": "PiB",
    "kflop": "kFLOP", "mflop": "MFLOP", "gflop": "GFLOP", "tflop": "TFLOP", "pflop": "PFLOP", "eflop": "EFLOP",
    "zflop": "ZFLOP", "yflop": "YFLOP",
}  # fmt: skip

_FLOPS_RE = re.compile(r"^([kKMGTPEZY]?)(flops|FLOPS|FLOPs|Flops)$")


@dataclass(frozen=True)
class AtomReading:
    unit: Unit
    note: str | None = None
    ambiguous_flops: bool = False


def lookup_atom(word: str) -> AtomReading:
    """Resolve one unit word. Raises UnitError for words we do not know."""
    if word in ATOMS:
        return AtomReading(ATOMS[word])
    m = _FLOPS_RE.match(word)
    if m:
        scale = _DECIMAL.get(m.group(1), 1.0)
        # "FLOPS" is used for both a count and a rate; the question's dimension decides.
        return AtomReading(Unit(scale, Dim.of("FLOP"), f"{m.group(1)}FLOP"), ambiguous_flops=True)
    lower = word.lower()
    if lower in _CASE_NOTES:
        canonical = _CASE_NOTES[lower]
        return AtomReading(ATOMS[canonical], note=f"read '{word}' as {canonical}")
    if lower in ATOMS and lower not in ("b", "mb", "m"):
        return AtomReading(ATOMS[lower])
    raise UnitError(f"unknown unit '{word}'")


# ---------------------------------------------------------------------------------------------
# Unit expressions: "tokens/s", "$/1M tokens", "GB per user", "FLOP/byte", "s^-1".
# ---------------------------------------------------------------------------------------------

_TOKEN_RE = re.compile(
    r"\s*(?:(?P<op>/|\*|·|⋅|\^|\bper\b)|(?P<num>\d+(?:\.\d+)?)|(?P<word>[A-Za-zµμ$%×¢][A-Za-z0-9µμ$%×¢]*)|(?P<neg>-\d+))"
)


@dataclass
class UnitReading:
    unit: Unit
    notes: list[str]
    ambiguous_flops: bool = False


def _tokenize(text: str) -> list[tuple[str, str]]:
    tokens: list[tuple[str, str]] = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN_RE.match(text, pos)
        if not m or m.end() == pos:
            raise UnitError(f"cannot read '{text[pos:].strip()}'")
        kind = m.lastgroup
        assert kind is not None
        tokens.append((kind, m.group(kind)))
        pos = m.end()
        while pos < len(text) and text[pos].isspace():
            pos += 1
    return tokens


def parse_unit(text: str) -> UnitReading:
    """Parse a unit expression (no leading number). Empty text is the dimensionless unit."""
    tokens = _tokenize(text)
    unit = ONE
    notes: list[str] = []
    ambiguous = False
    i = 0
    divide_next = False
    while i < len(tokens):
        kind, value = tokens[i]
        if kind == "op":
            if value in ("/", "per"):
                if divide_next:
                    raise UnitError(f"two divisions in a row in '{text}'")
                divide_next = True
            elif value == "^":
                raise UnitError(f"'^' must follow a unit in '{text}'")
            i += 1
            continue
        # A factor: [number] [magnitude] atom [^int]  — e.g. "1M tokens", "million tokens".
        factor = ONE
        if kind == "num":
            if float(value) == 0:  # "GB/0 s": a unit with no size reads as nothing
                raise UnitError(f"a unit cannot be {value} of something, in '{text}'")
            factor = Unit(float(value), DIMENSIONLESS, value)
            i += 1
            kind, value = tokens[i] if i < len(tokens) else ("end", "")
        if kind == "word" and value in MAGNITUDES:
            # "B params" is a billion parameters; a lone "B" (or "B/s") stays bytes.
            nxt = tokens[i + 1] if i + 1 < len(tokens) else ("end", "")
            if nxt[0] == "word":
                factor = factor * Unit(MAGNITUDES[value], DIMENSIONLESS, value)
                i += 1
                kind, value = nxt
        if kind == "word":
            reading = lookup_atom(value)
            if reading.note:
                notes.append(reading.note)
            ambiguous = ambiguous or reading.ambiguous_flops
            factor = factor * reading.unit
            i += 1
            if i + 1 < len(tokens) and tokens[i] == ("op", "^"):
                exp_kind, exp_value = tokens[i + 1]
                if exp_kind not in ("num", "neg") or "." in exp_value:
                    raise UnitError(f"'^' must be followed by a whole number in '{text}'")
                factor = factor ** int(exp_value)
                i += 2
        elif factor is ONE:
            raise UnitError(f"cannot read '{value}' in '{text}'")
        unit = unit / factor if divide_next else unit * factor
        divide_next = False
    if divide_next:
        raise UnitError(f"'{text}' ends with a division")
    return UnitReading(unit, notes, ambiguous)


@lru_cache(maxsize=1024)
def unit(text: str) -> Unit:
    """A unit from an author's spelling (``GB``, ``M params``, ``tokens/s``). Cached."""
    reading = parse_unit(text)
    if reading.ambiguous_flops:
        raise UnitError(f"'{text}': write FLOP for a count or FLOP/s for a rate")
    return Unit(reading.unit.scale, reading.unit.dim, text.strip())


def magnitude_label(scale: float) -> str | None:
    return _MAGNITUDE_LABELS.get(scale)
