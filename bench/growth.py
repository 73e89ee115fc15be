"""How each read's cost grows with the number of learners: bench/leaderboard.py at several sizes,
then one chart of every read's p95 against the learners.

    DATABASE_URL=... REDIS_URL=... .venv/bin/python bench/growth.py [--sizes 10000,100000,999999] [--chart-only]

For each size (learners; 50 graded attempts per learner, 12 review cards per learner at least),
runs ``bench/leaderboard.py --learners N --attempts 50N --keep`` (a database generated before with
the same sizes is reused: at 999,999 learners the generation alone takes ~20 minutes), which
writes ``bench/results/leaderboard-<N>.json``. ``--chart-only`` runs nothing and charts the result
files already there. Extra arguments after ``--`` go to every leaderboard run (``-- --rounds 300``).

The chart, ``docs/growth.svg`` (committed; the README embeds it), is hand-written SVG: learners on
a log-scale x axis, p95 in ms on a log-scale y axis, one line per read, from the phase measured
under the write burst (the reads alone where a run had no burst), with the primary-key lookup
of the same runs as the baseline (dashed) and the 300 ms target of the overview and gradebook.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
from html import escape
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
CHART = ROOT / "docs" / "growth.svg"
SIZES = [10_000, 100_000, 999_999]
ATTEMPTS_PER_LEARNER = 50

# The reads charted, with their labels; colours from a palette readable on white.
READS = {
    "pk_lookup": "primary-key lookup (baseline)",
    "top50": "top 50, all-time",
    "my_rank": "my rank, all-time",
    "my_rank_tied": "my rank, all-time, last of the largest tie",
    "my_rank_week": "my rank, this week",
    "my_rank_week_tied": "my rank, this week, last of the largest tie",
    "streak": "streak",
    "due_reviews": "due reviews",
    "overview": "cohort overview (500 learners)",
    "gradebook": "gradebook (500 learners × 20 assessments)",
}
COLOURS = ["#555555", "#1f77b4", "#ff7f0e", "#d62728", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22"]
TARGET_MS = 300.0


def run(sizes: list[int], extra: list[str]) -> None:
    for learners in sizes:
        command = [
            sys.executable,
            str(ROOT / "bench" / "leaderboard.py"),
            "--learners",
            str(learners),
            "--attempts",
            str(ATTEMPTS_PER_LEARNER * learners),
            "--keep",
            *extra,
        ]
        print("$ " + " ".join(command[1:]), flush=True)
        subprocess.run(command, cwd=ROOT, check=True)


def load(sizes: list[int] | None, results: Path = RESULTS) -> list[dict[str, Any]]:
    """The result files, one per size, smallest first (those of ``sizes`` if given)."""
    found = []
    for path in sorted(results.glob("leaderboard-*.json")):
        report = json.loads(path.read_text())
        if "phases" not in report or (sizes and report["sizes"]["learners"] not in sizes):
            continue
        found.append(report)
    return sorted(found, key=lambda r: r["sizes"]["learners"])


def series(reports: list[dict[str, Any]]) -> tuple[dict[str, list[tuple[int, float]]], list[str]]:
    """p95 (ms) per read per size, under the burst where measured; and which phase each size used."""
    lines: dict[str, list[tuple[int, float]]] = {read: [] for read in READS}
    used = []
    for report in reports:
        phase = "burst" if "burst" in report["phases"] else "alone"
        used.append(phase)
        stats = report["phases"][phase]["stats"]
        for read in READS:
            if read in stats:
                lines[read].append((report["sizes"]["learners"], stats[read]["p95_ms"]))
    return {read: points for read, points in lines.items() if points}, used


def _ticks(lo: float, hi: float) -> list[float]:
    """1-2-5 ticks of a log axis between lo and hi."""
    ticks = []
    for exponent in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1):
        for mantissa in (1, 2, 5):
            value = mantissa * 10.0**exponent
            if lo <= value <= hi:
                ticks.append(value)
    return ticks


def _label(value: float) -> str:
    if value >= 1000:
        return f"{value / 1000:g}k" if value < 1_000_000 else f"{value / 1_000_000:g}M"
    return f"{value:g}"


def svg(reports: list[dict[str, Any]]) -> str:
    lines, used = series(reports)
    if not lines:
        raise SystemExit("no bench/results/leaderboard-<learners>.json with per-phase results: run the sizes first")
    width, height = 920, 520
    left, right, top, bottom = 70, 330, 40, 60  # the legend goes on the right
    plot_w, plot_h = width - left - right, height - top - bottom
    xs = [x for points in lines.values() for x, _ in points]
    ys = [y for points in lines.values() for _, y in points] + [TARGET_MS]
    x_lo, x_hi = min(xs) / 1.5, max(xs) * 1.5
    y_lo, y_hi = 10 ** math.floor(math.log10(min(ys))), 10 ** math.ceil(math.log10(max(ys) * 1.2))

    def px(x: float) -> float:
        return left + plot_w * (math.log10(x) - math.log10(x_lo)) / (math.log10(x_hi) - math.log10(x_lo))

    def py(y: float) -> float:
        return top + plot_h * (1 - (math.log10(y) - math.log10(y_lo)) / (math.log10(y_hi) - math.log10(y_lo)))

    phases = sorted(set(used))
    title = "p95 of each read against learners, " + " and ".join(
        "under a deadline burst of solves" if p == "burst" else "reads alone" for p in phases
    )
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        'font-family="Helvetica, Arial, sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
        f'<text x="{left}" y="22" font-size="14" font-weight="bold">{escape(title)}</text>',
    ]
    for y in _ticks(y_lo, y_hi):
        out.append(
            f'<line x1="{left}" y1="{py(y):.1f}" x2="{left + plot_w}" y2="{py(y):.1f}" stroke="#e5e5e5"/>'
            f'<text x="{left - 6}" y="{py(y) + 4:.1f}" text-anchor="end">{_label(y)}</text>'
        )
    for x in sorted(set(xs)):
        out.append(
            f'<line x1="{px(x):.1f}" y1="{top}" x2="{px(x):.1f}" y2="{top + plot_h}" stroke="#e5e5e5"/>'
            f'<text x="{px(x):.1f}" y="{top + plot_h + 16}" text-anchor="middle">{x:,}</text>'
        )
    out += [
        f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#333333"/>',
        f'<text x="{left + plot_w / 2:.1f}" y="{height - 18}" text-anchor="middle">learners (log scale)</text>',
        f'<text transform="translate(18 {top + plot_h / 2:.1f}) rotate(-90)" text-anchor="middle">'
        "p95, ms (log scale)</text>",
        f'<line x1="{left}" y1="{py(TARGET_MS):.1f}" x2="{left + plot_w}" y2="{py(TARGET_MS):.1f}" '
        'stroke="#d62728" stroke-dasharray="2 3"/>',
        f'<text x="{left + plot_w - 4}" y="{py(TARGET_MS) - 4:.1f}" text-anchor="end" fill="#d62728">'
        "300 ms: overview and gradebook target</text>",
    ]
    if "pk_lookup" in lines:  # the 2x target of the other reads, from the baseline of the same runs
        twice = " ".join(
            f"{'M' if k == 0 else 'L'}{px(x):.1f},{py(2 * y):.1f}" for k, (x, y) in enumerate(lines["pk_lookup"])
        )
        x_first, y_first = lines["pk_lookup"][0]
        out.append(f'<path d="{twice}" fill="none" stroke="#555555" stroke-width="1" stroke-dasharray="2 3"/>')
        out.append(
            f'<text x="{px(x_first) + 4:.1f}" y="{py(2 * y_first) + 14:.1f}" fill="#555555">'
            "2× the lookup: the other reads' target</text>"
        )
    for i, (read, points) in enumerate(lines.items()):
        colour = COLOURS[i % len(COLOURS)]
        dash = ' stroke-dasharray="6 4"' if read == "pk_lookup" else ""
        path = " ".join(f"{'M' if k == 0 else 'L'}{px(x):.1f},{py(y):.1f}" for k, (x, y) in enumerate(points))
        out.append(f'<path d="{path}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>')
        for x, y in points:
            out.append(
                f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="{colour}"><title>{escape(READS[read])}: '
                f"{y:.2f} ms at {x:,} learners</title></circle>"
            )
        ly = top + 10 + 20 * i
        lx = left + plot_w + 16
        out.append(
            f'<line x1="{lx}" y1="{ly}" x2="{lx + 24}" y2="{ly}" stroke="{colour}" stroke-width="2"{dash}/>'
            f'<text x="{lx + 30}" y="{ly + 4}">{escape(READS[read])}</text>'
        )
    note = "; ".join(
        f"{r['sizes']['learners']:,}: {r['sizes']['attempts'] / 1e6:g}M attempts"
        + (f", {r['burst']['solves_per_s']:.0f} solves/s" if r.get("burst") else "")
        for r in reports
    )
    note = f"bench/leaderboard.py ({reports[-1]['code']}): {note}"
    out.append(f'<text x="{left}" y="{height - 2}" font-size="10" fill="#666666">{escape(note)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="learners per run, comma-separated")
    parser.add_argument("--chart-only", action="store_true", help="chart the result files already written")
    parser.add_argument("--out", type=Path, default=CHART)
    parser.add_argument("--results", type=Path, default=RESULTS, help="where the leaderboard-<N>.json files are")
    parser.add_argument("extra", nargs="*", help="after --: arguments for every bench/leaderboard.py run")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    if not args.chart_only:
        if not os.environ.get("DATABASE_URL") or not os.environ.get("REDIS_URL"):
            print("DATABASE_URL and REDIS_URL must point at PostgreSQL and Redis", file=sys.stderr)
            return 2
        run(sizes, args.extra)
    reports = load(None if args.chart_only else sizes, args.results)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(svg(reports))
    print(f"wrote {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}")
    for report in reports:
        phase = "burst" if "burst" in report["phases"] else "alone"
        stats = report["phases"][phase]["stats"]
        cells = ", ".join(f"{read} {stats[read]['p95_ms']:.2f}" for read in READS if read in stats)
        print(f"{report['sizes']['learners']:>9,} learners ({phase}) p95 ms: {cells}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
