"""The progress page's pictures, as geometry for templates to draw as SVG.

Pure functions of data the selectors read (no queries, no markup): the calendar heatmap of
solves per day, the "solves per week" column chart and the per-chapter bar chart. Templates
(``templates/progress/_heatmap.html``, ``_weekly.html``, ``_bars.html``) turn the numbers into
SVG, so every text they show, titles and labels included, goes through template autoescaping.

Colour is never the only signal: every cell and column carries its number as text (a
``<title>``, a label or a table), and levels have a legend.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, timedelta

from apps.progress.selectors import Activity, Day, Mastery

WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def day_label(day: date) -> str:
    """``Mon 2 Nov 2026``: fixed English names, whatever the server's locale."""
    return f"{WEEKDAYS[day.weekday()]} {day.day} {MONTHS[day.month - 1]} {day.year}"


def short_label(day: date) -> str:
    """``2 Nov``."""
    return f"{day.day} {MONTHS[day.month - 1]}"


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


# ---------------------------------------------------------------------------------------------
# Calendar heatmap
# ---------------------------------------------------------------------------------------------

# Level n (1-4) starts at LEVELS[n - 1] solves a day. Fixed buckets rather than quantiles of
# the learner's own maximum, so a colour means the same thing every week and the legend can
# name its range.
LEVELS = (1, 2, 4, 7)
LEVEL_NAMES = ("No solves", "1 solve", "2–3 solves", "4–6 solves", "7 or more solves")

CELL = 11  # side of a day's square, in SVG user units
STEP = 13  # cell plus gap
LEFT = 30  # room for the weekday labels
TOP = 16  # room for the month labels
RIGHT = 10  # room for a month name that starts over the last column


def level(solves: int) -> int:
    """0 for no solves, else 1-4 by the fixed buckets of ``LEVELS``."""
    return sum(1 for threshold in LEVELS if solves >= threshold)


@dataclass(frozen=True)
class Cell:
    day: date
    solves: int
    level: int
    x: int
    y: int
    title: str
    today: bool


@dataclass(frozen=True)
class Label:
    text: str
    x: int
    y: int


@dataclass(frozen=True)
class ActiveDay:
    day: date
    label: str
    solves: int
    points: int


@dataclass(frozen=True)
class Key:
    level: int
    name: str
    x: int


@dataclass(frozen=True)
class Heatmap:
    weeks: int
    width: int
    height: int
    cell: int
    cells: list[Cell]
    months: list[Label]
    weekdays: list[Label]
    legend: list[Key]  # each level and what it means, for "Less □□□□□ More"
    legend_width: int
    summary: str  # the SVG's accessible name
    solves: int
    active: list[ActiveDay]  # newest first, for the table screen readers get


def heatmap(activity: Activity, *, current_streak: int, best_streak: int) -> Heatmap:
    """A GitHub-style year: one column per week from ``activity.start`` (a Monday) to the week
    holding ``activity.today`` (the last column), one row per weekday (Monday on top). Days
    after today are not drawn."""
    start, today = activity.start, activity.today
    assert start.weekday() == 0, "weeks start on Monday"
    weeks = (today - start).days // 7 + 1
    cells = []
    for offset in range((today - start).days + 1):
        day = start + timedelta(days=offset)
        solves = activity.days.get(day, Day(0, 0)).solves
        what = f"{plural(solves, 'solve')} on" if solves else "No solves on"
        cells.append(
            Cell(
                day=day,
                solves=solves,
                level=level(solves),
                x=LEFT + (offset // 7) * STEP,
                y=TOP + day.weekday() * STEP,
                title=f"{what} {day_label(day)}",
                today=day == today,
            )
        )
    active = [
        ActiveDay(day, day_label(day), d.solves, d.points)
        for day, d in sorted(activity.days.items(), reverse=True)
        if d.solves and start <= day <= today
    ]
    total = sum(a.solves for a in active)
    if total:
        summary = f"{plural(total, 'solve')} on {plural(len(active), 'day')} in the last year"
    else:
        summary = "No solves in the last year"
    summary += f"; current streak {plural(current_streak, 'day')}, best {best_streak}"
    return Heatmap(
        weeks=weeks,
        width=LEFT + weeks * STEP - (STEP - CELL) + RIGHT,
        height=TOP + 7 * STEP - (STEP - CELL),
        cell=CELL,
        cells=cells,
        months=_month_labels(start, weeks),
        weekdays=[Label(WEEKDAYS[row], LEFT - 5, TOP + row * STEP + CELL - 2) for row in (0, 2, 4)],
        legend=[Key(n, name, n * STEP) for n, name in enumerate(LEVEL_NAMES)],
        legend_width=len(LEVEL_NAMES) * STEP - (STEP - CELL),
        summary=summary,
        solves=total,
        active=active,
    )


def _month_labels(start: date, weeks: int) -> list[Label]:
    """A month's name over the first week whose Monday is in it; the first, partial month's
    only when the next name is far enough away not to overlap it."""
    found: list[tuple[int, int]] = []  # (column, month)
    for column in range(weeks):
        monday = start + timedelta(weeks=column)
        if column == 0 or monday.month != found[-1][1]:
            found.append((column, monday.month))
    if len(found) > 1 and found[1][0] - found[0][0] < 3:
        found.pop(0)
    return [Label(MONTHS[month - 1], LEFT + column * STEP, TOP - 5) for column, month in found]


# ---------------------------------------------------------------------------------------------
# Solves per week
# ---------------------------------------------------------------------------------------------

COL_WIDTH = 30  # per week, in SVG user units (the viewBox is as wide as a phone)
BAR_WIDTH = 20
PLOT_TOP = 22  # room for the tallest column's number
PLOT_HEIGHT = 90
AXIS_ROOM = 20  # week labels under the baseline
SIDE = 8  # so the outer columns' labels are not clipped


@dataclass(frozen=True)
class Column:
    monday: date
    solves: int
    x: int  # the bar's left edge
    y: float  # the bar's top
    height: float
    label: str  # "2 Nov", under every other column (the last one always)
    title: str
    current: bool

    @property
    def middle(self) -> float:
        return self.x + BAR_WIDTH / 2

    @property
    def value_y(self) -> float:
        """The baseline of the number written above the bar."""
        return round(self.y - 5, 1)

    @property
    def week(self) -> str:
        return day_label(self.monday)


@dataclass(frozen=True)
class ColumnChart:
    width: int
    height: int
    baseline: int
    bar_width: int
    columns: list[Column]
    summary: str
    solves: int

    @property
    def axis_y(self) -> float:
        return self.baseline + 0.5  # a crisp 1-unit line just under the bars

    @property
    def label_y(self) -> int:
        return self.height - 5


def weekly(activity: Activity, *, weeks: int = 12) -> ColumnChart:
    """Solves per week (Monday to Sunday) for the last ``weeks`` weeks, this one last, from the
    same rows as the heatmap."""
    this_monday = activity.today - timedelta(days=activity.today.weekday())
    first = this_monday - timedelta(weeks=weeks - 1)
    totals = [0] * weeks
    for day, d in activity.days.items():
        if first <= day <= activity.today:
            totals[(day - first).days // 7] += d.solves
    top = max(max(totals), 1)
    baseline = PLOT_TOP + PLOT_HEIGHT
    columns = []
    for i, solves in enumerate(totals):
        monday = first + timedelta(weeks=i)
        # A zero week keeps a 1-unit stub on the baseline, so "nothing" is drawn, not missing.
        height = max(PLOT_HEIGHT * solves / top, 1.0)
        labelled = (weeks - 1 - i) % 2 == 0
        columns.append(
            Column(
                monday=monday,
                solves=solves,
                x=SIDE + i * COL_WIDTH + (COL_WIDTH - BAR_WIDTH) // 2,
                y=round(baseline - height, 1),
                height=round(height, 1),
                label=short_label(monday) if labelled else "",
                title=f"{plural(solves, 'solve')} in the week of {day_label(monday)}"
                + (" (this week)" if monday == this_monday else ""),
                current=monday == this_monday,
            )
        )
    total = sum(totals)
    busiest = max(columns, key=lambda c: (c.solves, c.monday))
    summary = f"Solves per week over the last {weeks} weeks: {total} in all"
    if total:
        summary += f"; the most, {busiest.solves}, in the week of {short_label(busiest.monday)}"
    summary += f"; {plural(totals[-1], 'solve')} so far this week"
    return ColumnChart(
        width=weeks * COL_WIDTH + 2 * SIDE,
        height=baseline + AXIS_ROOM,
        baseline=baseline,
        bar_width=BAR_WIDTH,
        columns=columns,
        summary=summary,
        solves=total,
    )


# ---------------------------------------------------------------------------------------------
# Solved per chapter
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Bar:
    label: str
    solved: int
    total: int
    percent: int
    width: float  # of 100: the filled share of the track

    @property
    def complete(self) -> bool:
        return self.total > 0 and self.solved >= self.total


def bars(rows: Iterable[tuple[str, int, int]]) -> list[Bar]:
    """One horizontal bar per (label, solved, total); the numbers travel with the bar as text."""
    out = []
    for label, solved, total in rows:
        share = solved / total if total else 0.0
        out.append(Bar(label, solved, total, round(100 * share), round(100 * share, 2)))
    return out


def chapter_bars(book: Mastery) -> list[Bar]:
    """A workbook's chapters as bars labelled ``3. KV cache``."""
    return bars((f"{c.key}. {c.title}", c.tally.solved, c.tally.total) for c in book.chapters)
