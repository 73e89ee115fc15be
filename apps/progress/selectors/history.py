"""A member's attempt history for the cohort's instructor, as the learner saw it, by exercise.

Each attempt shows its answer in the words of the page (``answer_shown``: option and step texts
on the numbers this learner had, lines with their code, cells and parts by their labels,
expressions as math), how the grader read it, the verdict and the feedback rendered as the
learner's page renders it, code highlighted with its per-test results, and the numbers of a
varying exercise's round. Reveals and hints live on the progress row, not on an attempt: each
exercise says whether, and when, the learner revealed the answer, and how many hints they used.

A fixed number of queries whatever the history's length: the member, the attempts with their
exercises, the versions they were graded on, and the learner's progress rows. Specs are resolved
once per (version, numbers) by the content cache.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db.models import Q
from django.urls import reverse
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

from apps.accounts.models import User
from apps.core.html import sanitize
from apps.exercises.choices import AttemptPart, AttemptStatus, Verdict
from apps.exercises.content import cache, variants
from apps.exercises.content.render import PLACEHOLDER, RenderError, format_value, substitute
from apps.exercises.content.render import feedback_html as render_feedback
from apps.exercises.formats import AnswerShown
from apps.exercises.models import Attempt, Exercise
from apps.progress.models import Cohort, ExerciseProgress
from apps.progress.selectors.cohorts import answer_shown, member_get, resolved_for, workbooks_readable
from apps.sandbox.verdict import instructor_rows

_LEXER = PythonLexer()
_FORMATTER_OPTIONS: dict[str, Any] = {"cssclass": "highlight", "wrapcode": True}


def code_html(source: str, *, marked: tuple[int, ...] = (), numbered: bool = False) -> str:
    """Python source highlighted with Pygments' classes (static/css/admin-attempts.css styles them:
    the CSP allows no inline style); ``marked`` lines get a background, as the learner's selection."""
    formatter = HtmlFormatter(**_FORMATTER_OPTIONS, hl_lines=list(marked), linenos="inline" if numbered else False)
    return sanitize(str(highlight(source, _LEXER, formatter)))


def feedback_html(text: str, attempt: Attempt) -> str:
    """The feedback as the learner's page renders it (Markdown with math). Feedback is stored with
    its numbers filled in; one that still holds a ``{{ formula }}`` gets the attempt's numbers."""
    if not text:
        return ""
    if PLACEHOLDER.search(text):
        try:
            text = substitute(text, resolved_for(attempt).scope)
        except RenderError:
            text = PLACEHOLDER.sub(lambda m: m.group("expr"), text)
    return render_feedback(text, from_code=attempt.part == AttemptPart.CODE)


@dataclass(frozen=True)
class HistoryAttempt:
    attempt: Attempt
    answer: AnswerShown
    # How the grader read a one-value answer ("0.5 GiB = 536,870,912 B"), when it says more than the answer.
    reading: str
    verdict: str
    feedback_html: str
    code_html: str
    # A Debug's snippet with the lines the learner picked marked.
    snippet_html: str
    # Code: the run as the learner's page shows it (tests, traceback, output); None otherwise.
    run: dict[str, Any] | None
    # A varying exercise: the numbers this attempt answered ("d = 1,024", "model = GPT-2 medium").
    givens: list[str]
    flags: list[str]

    @property
    def correct(self) -> bool:
        return self.attempt.verdict == Verdict.CORRECT


@dataclass(frozen=True)
class HistoryRow:
    """One line of an exercise's timeline: an attempt, or the moment the answer was revealed."""

    at: datetime
    attempt: HistoryAttempt | None = None

    @property
    def is_reveal(self) -> bool:
        return self.attempt is None


@dataclass(frozen=True)
class ExerciseHistory:
    exercise: Exercise
    url: str  # the learner-facing page; "" for a retired exercise
    rows: list[HistoryRow]  # newest first
    revealed_at: datetime | None = None
    hints_used: int = 0
    hints_total: int = 0
    solved_at: datetime | None = None
    solved_with_note: bool = False
    forfeited: bool = False
    flags: list[str] = field(default_factory=list)

    @property
    def latest(self) -> datetime:
        return self.rows[0].at


@dataclass(frozen=True)
class LearnerHistory:
    learner: User
    exercises: list[ExerciseHistory]  # the latest activity first
    attempts: int
    truncated: bool  # more attempts than ``limit``: the oldest are left out


def learner_history(*, viewer: User, cohort: Cohort, user_id: int, limit: int = 500) -> LearnerHistory:
    """A member's newest ``limit`` attempts grouped by exercise, with reveals and hints, in the
    workbooks the viewer may read (``workbooks_readable``; 404 for anyone not in the cohort)."""
    learner = member_get(cohort=cohort, user_id=user_id)
    scope = workbooks_readable(viewer=viewer, cohort=cohort)
    fetched = list(
        Attempt.objects.filter(user=learner)
        .filter(Q() if scope is None else Q(exercise__workbook_id__in=scope))
        .select_related("exercise__workbook")
        # One query each for the distinct versions and current versions (specs are large).
        .prefetch_related("version", "exercise__current_version")
        .order_by("-created_at", "-id")[: limit + 1]
    )
    truncated = len(fetched) > limit
    attempts = fetched[:limit]
    exercise_ids = {a.exercise_id for a in attempts}
    progress = {
        p.exercise_id: p
        for p in ExerciseProgress.objects.filter(user=learner)
        .filter(Q() if scope is None else Q(workbook_id__in=scope))
        .filter(Q(exercise_id__in=exercise_ids) | Q(revealed_at__isnull=False))
        .select_related("exercise__workbook", "exercise__current_version")
    }
    by_exercise: dict[int, list[Attempt]] = {}
    exercises: dict[int, Exercise] = {}
    for a in attempts:
        by_exercise.setdefault(a.exercise_id, []).append(a)
        exercises.setdefault(a.exercise_id, a.exercise)
    for p in progress.values():
        exercises.setdefault(p.exercise_id, p.exercise)
    groups = []
    for exercise_id, exercise in exercises.items():
        group = _exercise_history(exercise, by_exercise.get(exercise_id, []), progress.get(exercise_id))
        if group is not None:
            groups.append(group)
    groups.sort(key=lambda g: g.latest, reverse=True)
    return LearnerHistory(learner, groups, len(attempts), truncated)


def _exercise_history(
    exercise: Exercise, attempts: list[Attempt], progress: ExerciseProgress | None
) -> ExerciseHistory | None:
    rows = [HistoryRow(a.created_at, history_attempt(a)) for a in attempts]
    revealed_at = progress.revealed_at if progress is not None else None
    if revealed_at is not None:
        rows.append(HistoryRow(revealed_at))
    if not rows:
        return None  # hints alone, with no attempt and no reveal: nothing happened to show
    rows.sort(key=lambda r: r.at, reverse=True)
    url = (
        reverse("web:exercise", kwargs={"slug": exercise.workbook.slug, "number": exercise.number})
        if exercise.is_active
        else ""
    )
    version = exercise.current_version or (attempts[0].version if attempts else None)
    hints_total = len(cache.resolved(version).spec.hints) if version is not None else 0
    hints_used = progress.hints_used if progress is not None else 0
    flags = []
    if revealed_at is not None:
        flags.append(f"revealed the answer at {revealed_at:%Y-%m-%d %H:%M} UTC")
    if hints_used:
        flags.append(f"used {hints_used} of {hints_total} hint{'' if hints_total == 1 else 's'}")
    solved_at = progress.solved_at if progress is not None else None
    with_note = bool(progress is not None and progress.solved and progress.solved_with_note)
    if with_note:
        flags.append("solved only with a unit note")
    if progress is not None and progress.solved_after_reveal:
        flags.append("solved after revealing the answer")
    return ExerciseHistory(
        exercise=exercise,
        url=url,
        rows=rows,
        revealed_at=revealed_at,
        hints_used=hints_used,
        hints_total=hints_total,
        solved_at=solved_at,
        solved_with_note=with_note,
        forfeited=bool(progress is not None and progress.forfeited),
        flags=flags,
    )


def history_attempt(a: Attempt) -> HistoryAttempt:
    """One attempt as the instructor's history shows it."""
    shown = answer_shown(a)
    parsed = a.parsed if isinstance(a.parsed, dict) else {}
    details = a.details if isinstance(a.details, dict) else {}
    understood = str(parsed.get("understood") or "")
    reading = understood if understood and understood != shown.text.strip() else ""
    run = details if a.part == AttemptPart.CODE and ("tests" in details or "traceback" in details) else None
    if run is not None and isinstance(run.get("tests"), list):
        # Every test in full (a hidden test's call, expected value and result too), failing first,
        # and the inputs drawn for its random tests with their seed (to draw them again).
        run = {**run, "tests": instructor_rows(run["tests"])}
        if isinstance(run.get("draw"), dict):
            run["draw_text"] = json.dumps(run["draw"].get("inputs", {}), indent=1)
    return HistoryAttempt(
        attempt=a,
        answer=shown,
        reading=reading,
        verdict=_verdict(a, details),
        feedback_html=feedback_html(a.feedback, a),
        code_html=code_html(shown.code, numbered=True) if shown.code else "",
        snippet_html=code_html(shown.snippet, marked=shown.marked, numbered=True) if shown.snippet else "",
        run=run,
        givens=_givens(details),
        flags=_flags(a, details),
    )


def _verdict(a: Attempt, details: dict[str, Any]) -> str:
    if a.status != AttemptStatus.GRADED:
        return str(a.get_status_display())
    verdict = "Accepted, with a unit note" if a.accepted_with_note else str(a.get_verdict_display())
    if a.part == AttemptPart.CODE:
        outcome = str(a.get_outcome_display()) if a.outcome else ""
        total = details.get("total")
        passed = f"{details.get('passed_count', 0)} of {total} tests passed" if total else ""
        verdict += f" — {', '.join(x for x in (outcome.lower(), passed) if x)}" if outcome or passed else ""
    elif 0 < a.score < 1:
        verdict += f" ({a.score:.0%} credit)"
    return verdict


def _givens(details: dict[str, Any]) -> list[str]:
    """The numbers an attempt on a varying exercise answered, as the prompt showed them."""
    variant = variants.recorded(details)
    if variant.is_seed:
        return []
    shown = [f"{label} = {name}" for label, name in variant.labels]
    return shown + [f"{name} = {format_value(value)}" for name, value in variant.values]


def _flags(a: Attempt, details: dict[str, Any]) -> list[str]:
    flags = []
    if a.accepted_with_note:
        flags.append("accepted with a unit note")
    if details.get("mistake"):
        flags.append("a known mistake")
    if details.get("approximate"):
        flags.append("equivalent only under the stated approximation")
    if a.status == AttemptStatus.GRADED and not a.counted:
        flags.append("not counted: parts left for later")
    if a.round:
        flags.append(f"numbers of round {a.round}")
    return flags
