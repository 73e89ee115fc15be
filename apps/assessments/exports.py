"""The gradebook as a CSV file, shared by the admin and the API so both download the same file.

Wide, in the shape spreadsheets and LMS gradebooks import: one row per learner (username, email),
one column per assessment named "Title [N pts]" holding the final score (an instructor's override
when there is one; blank when the learner did not take it), then the total. Cells a spreadsheet
would run as a formula (CSV injection) are quoted as ``apps.progress.exports`` does."""

from __future__ import annotations

import csv
import io

from apps.assessments import selectors
from apps.assessments.models import Instance
from apps.progress.exports import _cell


def _points(value: float) -> str:
    """ "10" rather than "10.0", "7.5" as it is."""
    return f"{round(value, 4):g}"


def taken(instance: Instance | selectors.Taken | None) -> bool:
    """A score to show: the learner opened it, or an instructor entered one for them."""
    return instance is not None and (instance.started_at is not None or instance.score_override is not None)


def gradebook_header(book: selectors.Gradebook) -> list[str]:
    columns = [f"{a.title} [{_points(book.possible.get(a.pk, 0.0))} pts]" for a in book.assessments]
    total = sum(book.possible.get(a.pk, 0.0) for a in book.assessments)
    return ["username", "email", *columns, f"Total [{_points(total)} pts]"]


def gradebook_rows(book: selectors.Gradebook) -> list[list[str]]:
    rows = []
    for learner in book.learners:
        scores: list[str] = []
        total = 0.0
        for assessment in book.assessments:
            instance = book.cell(learner.pk, assessment.pk).instance
            if instance is not None and taken(instance):
                total += instance.final_score
                scores.append(_points(instance.final_score))
            else:
                scores.append("")
        rows.append([learner.username, learner.email, *scores, _points(total)])
    return rows


def gradebook_filename(book: selectors.Gradebook) -> str:
    return f"cohort-{book.cohort.pk}-gradebook.csv"


def gradebook_csv(book: selectors.Gradebook) -> str:
    """``selectors.gradebook`` as CSV text (header included; every cell formula-safe)."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow([_cell(v) for v in gradebook_header(book)])
    for row in gradebook_rows(book):
        writer.writerow([_cell(v) for v in row])
    return out.getvalue()
