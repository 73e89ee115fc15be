"""Roofline plots, drawn on the server as SVG: attainable FLOP/s = min(peak, bandwidth × intensity).

Log-log axes, one line per curve (colour *and* dash pattern, with a legend), the ridge of each
curve, and marks: the learner's values (filled) beside the answer (a ring), or fixed points the
author names (a triangle), each numbered as in the table under the figure. The title and
description say every mark in words, and the table repeats them, so the picture is never the
only way to read it. The plot is only built for the solution block, i.e. after the learner
solved or revealed the exercise.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from django.template.loader import render_to_string

from apps.exercises.content.schema import PlotSpec
from apps.exercises.grading.formula import FormulaError, Number, evaluate

WIDTH, HEIGHT = 640, 400
LEFT, RIGHT, TOP, BOTTOM = 78, 24, 20, 62
SAMPLES = 160
_DASHES = ("", "7 4", "2 3", "10 3 2 3", "4 4", "1 2")
_SI = ((1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))
Box = tuple[float, float, float, float]  # left, top, right, bottom in SVG units
_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


class PlotError(ValueError):
    """A plot whose formulas do not give positive finite numbers over its range."""


@dataclass(frozen=True)
class Curve:
    label: str
    peak: float
    bandwidth: float
    intensity: str | None
    scope: Mapping[str, Number]

    def intensity_at(self, x: float) -> float:
        if self.intensity is None:
            return x
        return float(evaluate(self.intensity, {**self.scope, "x": x}))

    def at(self, x: float) -> float:
        return min(self.peak, self.bandwidth * self.intensity_at(x))


@dataclass(frozen=True)
class Point:
    x: float
    y: float
    curve: int
    label: str
    kind: str  # "yours", "answer", "fixed"


@dataclass(frozen=True)
class Figure:
    svg: str
    points: tuple[Point, ...]
    curves: tuple[str, ...]


def si(value: float) -> str:
    """1.97e15 → '1.97 P': compact tick and mark labels."""
    for scale, prefix in _SI:
        if abs(value) >= scale:
            return f"{value / scale:.3g} {prefix}"
    return f"{value:.3g}"


def _decade(exponent: int) -> str:
    return "1" if exponent == 0 else f"10{str(exponent).translate(_SUPERSCRIPT)}"


def curves_of(spec: PlotSpec, scope: Mapping[str, Number]) -> list[Curve]:
    out = []
    for i, c in enumerate(spec.curves):
        try:
            peak, bandwidth = float(evaluate(c.peak, scope)), float(evaluate(c.bandwidth, scope))
        except FormulaError as exc:
            raise PlotError(f"plot.curves[{i}]: {exc}") from None
        if not (peak > 0 and bandwidth > 0 and math.isfinite(peak) and math.isfinite(bandwidth)):
            raise PlotError(f"plot.curves[{i}]: peak and bandwidth must be positive")
        out.append(Curve(c.label, peak, bandwidth, c.intensity, scope))
    return out


def fixed_marks(spec: PlotSpec, scope: Mapping[str, Number]) -> list[tuple[int, float, str]]:
    out = []
    for i, m in enumerate(spec.marks):
        if m.x is not None:
            try:
                out.append((m.curve, float(evaluate(m.x, scope)), m.label))
            except FormulaError as exc:
                raise PlotError(f"plot.marks[{i}].x: {exc}") from None
    return out


@dataclass(frozen=True)
class Tick:
    """A decade on an axis: its grid line at ``at`` (an x on the x axis, a y on the y axis) and
    its label's anchor."""

    at: float
    label: str
    label_x: float
    label_y: float


@dataclass(frozen=True)
class Line:
    """One curve as drawn: its samples in SVG units and its dash pattern ("" for solid)."""

    index: int
    points: tuple[tuple[float, float], ...]
    dash: str


@dataclass(frozen=True)
class Mark:
    """A point where it is drawn, and where the number keying it to the table goes."""

    number: int
    point: Point
    x: float
    y: float
    apex_y: float  # a fixed point's triangle: its top vertex
    key_x: float
    key_y: float
    description: str


@dataclass(frozen=True)
class LegendEntry:
    """A curve's sample line and its label under the plot."""

    index: int
    label: str
    dash: str
    x1: float
    x2: float
    line_y: float
    text_x: float
    text_y: float


@dataclass(frozen=True)
class Geometry:
    """Everything the picture shows, computed: coordinates in SVG units and the texts; no markup."""

    title: str
    description: str
    width: int
    height: int
    left: int
    top: int
    plot_width: int
    plot_height: int
    plot_right: int
    plot_bottom: int
    x_ticks: tuple[Tick, ...]
    y_ticks: tuple[Tick, ...]
    x_label: str
    x_label_at: tuple[float, float]
    y_label: str
    y_label_at: tuple[float, float]  # the label is turned a quarter: its anchor before turning
    lines: tuple[Line, ...]
    marks: tuple[Mark, ...]
    legend: tuple[LegendEntry, ...]
    points: tuple[Point, ...]
    curves: tuple[str, ...]


def geometry(
    spec: PlotSpec,
    scope: Mapping[str, Number],
    answers: Mapping[str, float],
    yours: Mapping[str, float | None],
) -> Geometry:
    """The figure's geometry, with the answer and the learner's value for each part-mark (None:
    not given). Raises PlotError when the formulas do not draw over the x range."""
    curves = curves_of(spec, scope)
    points: list[Point] = []
    for curve_index, x, label in fixed_marks(spec, scope):
        points.append(Point(x, 0.0, curve_index, label, "fixed"))
    for m in spec.marks:
        if m.part is None:
            continue
        if m.part in answers:
            points.append(Point(answers[m.part], 0.0, m.curve, f"{m.label} (answer)", "answer"))
        mine = yours.get(m.part)
        if mine is not None and mine > 0:
            points.append(Point(mine, 0.0, m.curve, f"{m.label} (yours)", "yours"))
    xs = [p.x for p in points if p.x > 0]
    x_min = spec.x.min or (min(xs) / 30 if xs else 0.1)
    x_max = spec.x.max or (max(xs) * 30 if xs else 1e4)
    if not 0 < x_min < x_max:
        raise PlotError("plot.x: min must be below max")
    lx0, lx1 = math.log10(x_min), math.log10(x_max)
    grid = [10 ** (lx0 + (lx1 - lx0) * i / (SAMPLES - 1)) for i in range(SAMPLES)]
    samples: list[list[tuple[float, float]]] = []
    for i, c in enumerate(curves):
        try:
            ys = [(x, c.at(x)) for x in grid]
        except (FormulaError, ZeroDivisionError) as exc:
            raise PlotError(f"plot.curves[{i}].intensity: {exc}") from None
        if any(not (y > 0 and math.isfinite(y)) for _, y in ys):
            raise PlotError(f"plot.curves[{i}]: attainable FLOP/s must be positive over the x range")
        samples.append(ys)
    points = [Point(p.x, curves[p.curve].at(p.x), p.curve, p.label, p.kind) for p in points]
    all_y = [y for line in samples for _, y in line]
    y_min = spec.y.min or 10 ** math.floor(math.log10(min(all_y)))
    y_max = spec.y.max or 10 ** math.ceil(math.log10(max(c.peak for c in curves) * 1.5))
    ly0, ly1 = math.log10(y_min), math.log10(y_max)
    pw, ph = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def px(x: float) -> float:
        return LEFT + (math.log10(x) - lx0) / (lx1 - lx0) * pw

    def py(y: float) -> float:
        clamped = min(max(y, y_min), y_max)
        return TOP + (1 - (math.log10(clamped) - ly0) / (ly1 - ly0)) * ph

    x_ticks = tuple(
        Tick(x, _decade(e), x, TOP + ph + 16) for e in range(math.ceil(lx0), math.floor(lx1) + 1) for x in [px(10**e)]
    )
    y_ticks = tuple(
        Tick(y, si(10**e), LEFT - 6, y + 4) for e in range(math.ceil(ly0), math.floor(ly1) + 1) for y in [py(10**e)]
    )
    lines = tuple(Line(i, tuple((px(x), py(y)) for x, y in line), _DASHES[i]) for i, line in enumerate(samples))
    shown = [(n, p) for n, p in enumerate(points, start=1) if x_min <= p.x <= x_max]
    spots = [(px(p.x), py(p.y)) for _, p in shown]
    placed: list[Box] = []  # the mark numbers' boxes so far
    marks = []
    for (n, p), (x, y) in zip(shown, spots, strict=True):
        nx, ny = _key_position((x, y), len(str(n)), placed, spots, below=p.kind == "yours")
        marks.append(Mark(n, p, x, y, y - 7, nx, ny, _describe(p)))
    legend_y = HEIGHT - 6
    legend = tuple(
        LegendEntry(i, c.label, _DASHES[i], lx, lx + 24, legend_y - 4, lx + 30, legend_y)
        for i, c in enumerate(curves)
        for lx in [LEFT + i * (pw / max(1, len(curves)))]
    )
    description = "; ".join(
        [f"{c.label}: peak {si(c.peak)}FLOP/s, bandwidth {si(c.bandwidth)}B/s" for c in curves]
        + [_describe(p) for p in points]
    )
    return Geometry(
        title=spec.title,
        description=description,
        width=WIDTH,
        height=HEIGHT,
        left=LEFT,
        top=TOP,
        plot_width=pw,
        plot_height=ph,
        plot_right=LEFT + pw,
        plot_bottom=TOP + ph,
        x_ticks=x_ticks,
        y_ticks=y_ticks,
        x_label=spec.x.label,
        x_label_at=(LEFT + pw / 2, HEIGHT - 22),
        y_label=spec.y.label,
        y_label_at=(16, TOP + ph / 2),
        lines=lines,
        marks=tuple(marks),
        legend=legend,
        points=tuple(points),
        curves=tuple(c.label for c in curves),
    )


def svg(g: Geometry) -> str:
    """The figure as an SVG element: templates/exercises/roofline.svg."""
    return render_to_string("exercises/roofline.svg", {"g": g}).strip()


def draw(
    spec: PlotSpec,
    scope: Mapping[str, Number],
    answers: Mapping[str, float],
    yours: Mapping[str, float | None],
) -> Figure:
    """The figure, with the answer and the learner's value for each part-mark (None: not given)."""
    g = geometry(spec, scope, answers, yours)
    return Figure(svg=svg(g), points=g.points, curves=g.curves)


_KEY_OFFSETS = ((9, -9), (-9, -9), (9, 17), (-9, 17), (13, 4), (-13, 4), (0, -22), (0, 30), (20, -22), (-20, -22))


def _key_position(
    mark: tuple[float, float], digits: int, placed: list[Box], marks: list[tuple[float, float]], *, below: bool
) -> tuple[float, float]:
    """Where the number keying a mark to the table goes: beside its mark, clear of the numbers
    already placed, and nearer its own mark than any other (so it cannot be read as another's).
    A ring or triangle gets it above, a learner's dot below, so a value on the answer does not
    hide the answer's number. Appends the chosen box to ``placed``."""
    x, y = mark
    width, height = 7.0 * digits + 4, 13.0  # the glyphs' box at 11 px, with a gap
    offsets = sorted(_KEY_OFFSETS, key=lambda o: o[1] < 0) if below else _KEY_OFFSETS
    others = [m for m in marks if math.dist(m, mark) > 1]
    fallback: Box | None = None
    for dx, dy in offsets:
        left = x + dx if dx >= 0 else x + dx - width
        box = (left, y + dy - height, left + width, y + dy)
        centre = ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)
        if any(not (box[2] <= b[0] or b[2] <= box[0] or box[3] <= b[1] or b[3] <= box[1]) for b in placed):
            continue
        fallback = fallback or box
        if all(math.dist(centre, mark) < math.dist(centre, m) for m in others):
            break
    else:  # crowded: the first box clear of other numbers, else the first choice
        box = fallback or (x + 9, y - 9 - height, x + 9 + width, y - 9)
    placed.append(box)
    return box[0], box[3]


def _describe(p: Point) -> str:
    return f"{p.label}: x = {si(p.x)}, {si(p.y)}FLOP/s"
