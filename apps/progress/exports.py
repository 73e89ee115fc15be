"""The cohort CSV files: one builder per table, shared by the admin pages and the API, so both
download the same file.

CSV cells carry text, not markup: content's TeX (a title's ``$N^*$``, an option's ``$\\times$``)
is written as its plain reading (``N*``, ``×``; ``apps.exercises.content.plain``)."""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from django.http import HttpResponse

from apps.accounts.models import User
from apps.exercises.choices import AttemptPart
from apps.exercises.content.plain import tex_plain
from apps.exercises.models import Attempt
from apps.progress import selectors
from apps.progress.models import Cohort, CohortWorkbook

CSV_TYPE = "text/csv; charset=utf-8"


@dataclass(frozen=True)
class Table:
    filename: str
    header: list[str]
    rows: Iterable[Sequence[Any]]


def progress_table(cohort: Cohort, assigned: list[CohortWorkbook], rows: list[selectors.LearnerRow]) -> Table:
    """``selectors.cohort_progress``'s table: learner × assigned workbook, streaks, overdue."""
    header = ["learner"] + [f"{a.workbook.slug} solved" for a in assigned]
    header += [f"{a.workbook.slug} total" for a in assigned]
    header += ["current streak", "best streak", "last active (UTC)", "overdue"]
    body = [
        [r.username]
        + [c.solved for c in r.cells]
        + [c.total for c in r.cells]
        + [
            r.current_streak,
            r.best_streak,
            r.last_active.isoformat() if r.last_active else "",
            " ".join(r.overdue),
        ]
        for r in rows
    ]
    return Table(f"cohort-{cohort.pk}-progress.csv", header, body)


def overview_table(overview: selectors.CohortOverview) -> Table:
    """``selectors.cohort_overview``'s learners, in its order, with mastery and the risk reasons."""
    assigned = overview.assigned
    header = ["learner"] + [f"{a.workbook.slug} solved" for a in assigned]
    header += [f"{a.workbook.slug} total" for a in assigned]
    header += [
        "mastery", "current streak", "last active (UTC)", "last solve day", "days since solve", "overdue",
        "at risk", "risks",
    ]  # fmt: skip
    body = [
        [r.username]
        + [c.solved for c in r.learner.cells]
        + [c.total for c in r.learner.cells]
        + [
            f"{r.mastery:.3f}",
            r.learner.current_streak,
            r.learner.last_active.isoformat() if r.learner.last_active else "",
            r.learner.last_solve_day.isoformat() if r.learner.last_solve_day else "",
            "" if r.days_since_solve is None else r.days_since_solve,
            " ".join(r.learner.overdue),
            "yes" if r.at_risk else "no",
            "; ".join(risk.detail for risk in r.risks),
        ]
        for r in overview.rows
    ]
    return Table(f"cohort-{overview.cohort.pk}-overview.csv", header, body)


# The per-exercise figures (selectors.figures), the same columns under the same names in every table.
FIGURES_HEADER = [
    "learners", "solved", "revealed before solving", "stuck", "solve rate", "revealed share", "attempts",
    "median attempts to solve", "median minutes to solve",
]  # fmt: skip


def _figures(f: selectors.ExerciseFigures) -> list[object]:
    return [
        f.learners,
        f.solved,
        f.revealed,
        f.stuck,
        _ratio(f.solve_rate),
        _ratio(f.reveal_share),
        f.attempts,
        _number(f.median_attempts_to_solve),
        _number(f.median_minutes_to_solve),
    ]


def stuck_table(overview: selectors.CohortOverview) -> Table:
    """``selectors.cohort_overview``'s stuck points, in its order."""
    header = ["workbook", "exercise", "title", "kind", *FIGURES_HEADER]
    body = [[s.workbook, s.number, tex_plain(s.title), s.kind, *_figures(s.figures)] for s in overview.stuck_points]
    return Table(f"cohort-{overview.cohort.pk}-stuck-points.csv", header, body)


def exercises_table(cohort: Cohort, slug: str, stats: list[selectors.ExerciseStats]) -> Table:
    """``selectors.exercise_stats`` for one workbook: the figures the stuck points give, and more."""
    header = [
        "exercise", "title", "kind", *FIGURES_HEADER, "most common wrong answers", "solved only with a unit note",
    ]  # fmt: skip
    body = [
        [
            s.number,
            tex_plain(s.title),
            s.kind,
            *_figures(s.figures),
            "; ".join(f"{tex_plain(a)} ×{n}" for a, n in s.wrong_answers),
            s.solved_with_note,
        ]
        for s in stats
    ]
    return Table(f"cohort-{cohort.pk}-{slug}-exercises.csv", header, body)


def attempts_table(cohort: Cohort, learner: User, attempts: Iterable[Attempt]) -> Table:
    """A learner's attempt history (``selectors.learner_attempts``), answers as they saw them."""
    header = [
        "when (UTC)", "workbook", "exercise", "version", "part", "status", "verdict", "outcome",
        "counted", "answer", "understood", "feedback",
    ]  # fmt: skip
    body = (
        [
            a.created_at.isoformat(),
            a.exercise.workbook.slug,
            a.exercise.number,
            a.version.version,
            a.part,
            a.status,
            a.verdict,
            a.outcome,
            a.counted,
            _answer_cell(selectors.answer_shown(a)),
            (a.parsed.get("understood") or "") if isinstance(a.parsed, dict) else "",
            _feedback_cell(a),
        ]
        for a in attempts
    )
    return Table(f"cohort-{cohort.pk}-learner-{learner.pk}-attempts.csv", header, body)


def _answer_cell(shown: selectors.AnswerShown) -> str:
    return shown.code if shown.code is not None else tex_plain(shown.text)


def _feedback_cell(attempt: Attempt) -> str:
    # A code run's feedback is what the learner's program said: text as it is, never read as math.
    return attempt.feedback if attempt.part == AttemptPart.CODE or _is_code(attempt) else tex_plain(attempt.feedback)


def _is_code(attempt: Attempt) -> bool:
    return isinstance(attempt.raw, dict) and "code" in attempt.raw


def _ratio(value: float | None) -> str:
    return "" if value is None else f"{value:.3f}"


def _number(value: float | None) -> str:
    """A median: "3" rather than "3.0", "2.5" as it is, "" for none."""
    return "" if value is None else f"{value:g}"


# Spreadsheets run cells that start with these as formulas (CSV injection): quote them.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _cell(value: object) -> object:
    return "'" + value if isinstance(value, str) and value.startswith(_FORMULA_START) else value


def csv_response(table: Table) -> HttpResponse:
    response = HttpResponse(content_type=CSV_TYPE)
    response["Content-Disposition"] = f'attachment; filename="{table.filename}"'
    writer = csv.writer(response)
    writer.writerow(table.header)
    for row in table.rows:
        writer.writerow([_cell(v) for v in row])
    return response
