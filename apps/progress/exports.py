"""The cohort CSV files: one builder per table, shared by the admin pages and the API, so both
download the same file."""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from django.http import HttpResponse

from apps.accounts.models import User
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


def stuck_table(overview: selectors.CohortOverview) -> Table:
    """``selectors.cohort_overview``'s stuck points, in its order."""
    header = [
        "workbook", "exercise", "title", "kind", "learners", "solved", "revealed before solving", "stuck",
        "attempts", "attempts per solve", "median minutes to solve",
    ]  # fmt: skip
    body = [
        [
            s.workbook,
            s.number,
            s.title,
            s.kind,
            s.learners,
            s.solved,
            s.reveals,
            s.stuck,
            s.attempts,
            "" if s.attempts_per_solve is None else s.attempts_per_solve,
            "" if s.median_minutes_to_solve is None else s.median_minutes_to_solve,
        ]
        for s in overview.stuck_points
    ]
    return Table(f"cohort-{overview.cohort.pk}-stuck-points.csv", header, body)


def exercises_table(cohort: Cohort, slug: str, stats: list[selectors.ExerciseStats]) -> Table:
    """``selectors.exercise_stats`` for one workbook."""
    header = [
        "exercise", "title", "kind", "attempts", "learners", "solved", "solve rate",
        "median attempts to solve", "revealed share", "most common wrong answers",
        "solved only with a unit note",
    ]  # fmt: skip
    body = [
        [
            s.number,
            s.title,
            s.kind,
            s.attempts,
            s.learners,
            s.solved,
            _ratio(s.solve_rate),
            "" if s.median_attempts is None else s.median_attempts,
            _ratio(s.reveal_share),
            "; ".join(f"{a} ×{n}" for a, n in s.wrong_answers),
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
            a.feedback,
        ]
        for a in attempts
    )
    return Table(f"cohort-{cohort.pk}-learner-{learner.pk}-attempts.csv", header, body)


def _answer_cell(shown: selectors.AnswerShown) -> str:
    return shown.code if shown.code is not None else shown.text


def _ratio(value: float | None) -> str:
    return "" if value is None else f"{value:.3f}"


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
