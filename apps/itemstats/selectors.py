"""Item analysis: how one exercise behaves over a set of learners, and over each of its variants.

Who may read it (``analysis_scope``): a cohort's instructor (or a superuser) over that cohort's
members, on a workbook the cohort was assigned (``progress.selectors.workbook_readable``; anything
else is the 404 the cohort APIs give); authors and superusers also over every learner (no cohort).
Learners are refused (403) whatever they name. Only aggregates leave here: no learner's name,
answer or attempt.

The figures, over the *engaged* learners (a counted attempt, a solve or a reveal; as
``progress.selectors.figures``), from each learner's progress row, whose first-solve history a
workbook reset keeps:

- **solved**: solved without revealing the answer first; **solved first try**: solved, and the
  first counted attempt did it (``attempts_to_solve == 1``); **revealed**: revealed before the
  first solve (``forfeited``). Rates are of the engaged learners.
- **attempts to solve**: mean and median of ``attempts_to_solve`` over the solved learners.
- **discrimination**: the point-biserial correlation (Pearson's r, PostgreSQL's ``corr``) of
  *solved* (0/1) with the learner's *rest score*: the exercises solved (same definition) in the
  scope's workbooks (the cohort's assigned ones and this exercise's; every learner: this
  exercise's workbook), this one excluded, so the item does not correlate with itself. Null when
  either side does not vary (everyone solved it, or everyone has the same total).

By variant, each learner counts once, on the numbers of their *first* counted attempt (the first
recorded: the lowest id): until a learner solves or reveals an exercise they cannot ask for new
numbers, so their first exposure, its solve, its attempts to solve and its reveal all happened on
those numbers, and the variants' rows add up to the whole. A variant is the givens its attempts
recorded (``details["variant"]``, written when the attempt was graded:
``exercises.content.variants.record``), less the ones the exercise lists as ``implicit`` (not
shown; "new numbers" compares rounds the same way), with the preset rows' names; an attempt with
none recorded answered the seed's numbers (a fixed exercise, round 0, code). Later rounds (new numbers, spaced
reviews) count in each variant's *attempts* and *correct* (every counted attempt on those numbers)
and in its known mistakes (``details["mistake_index"]``, which the numeric and integer graders
write when a wrong answer matches one of the author's ``mistakes``).

Two set-based queries over the attempts and progress (their number does not grow with learners,
attempts or variants), in one transaction with PostgreSQL's JIT off, and one for the versions that
name the mistakes: ``bench/item_analysis.py`` (100,000 attempts, 64 variants).
"""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from django.db import connection, transaction
from django.db.models import Count, Q
from django.http import Http404

from apps.accounts.models import Role, User
from apps.core.exceptions import ApplicationError
from apps.exercises.choices import AttemptStatus, Verdict
from apps.exercises.content import cache
from apps.exercises.content.resolve import ContentError
from apps.exercises.models import Attempt, Exercise, ExerciseVersion
from apps.progress import selectors as progress_selectors
from apps.progress.models import Cohort, ExerciseProgress, Membership

TOP_MISTAKES = 3

_ATTEMPT = Attempt._meta.db_table
_PROGRESS = ExerciseProgress._meta.db_table
_EXERCISE = Exercise._meta.db_table
_MEMBERSHIP = Membership._meta.db_table

# The numbers an attempt answered, as a grouping key: its recorded givens without the ones this
# exercise does not show (a scenario's others), and the preset rows' names; {} is the seed's.
_GIVENS = "COALESCE((a.details -> 'variant' -> 'givens') - %(hidden)s::text[], '{}'::jsonb)"
_LABELS = "COALESCE(a.details -> 'variant' -> 'labels', '{}'::jsonb)"

# One row per variant (the learners' first numbers) and one for the whole (GROUPING(...) = 1).
_LEARNERS_SQL = f"""
WITH p AS (
    SELECT ep.user_id, ep.forfeited, (NOT ep.forfeited AND ep.first_solved_at IS NOT NULL) AS solved,
           ep.attempts_to_solve
    FROM {_PROGRESS} ep
    WHERE ep.exercise_id = %(exercise)s
      AND (ep.attempts > 0 OR ep.first_solved_at IS NOT NULL OR ep.revealed_at IS NOT NULL OR ep.forfeited)
      /*scope_p*/
), first AS (
    -- Each learner's first counted attempt, in the order attempts were recorded (ids): a hash
    -- aggregate of integers, then one row each by primary key; sorting the exercise's attempts by
    -- (learner, time) instead was the costliest step at 100,000 attempts (bench/item_analysis.py).
    SELECT f.user_id, {_GIVENS} AS givens, {_LABELS} AS labels
    FROM (
        SELECT a.user_id, min(a.id) AS id FROM {_ATTEMPT} a
        WHERE a.exercise_id = %(exercise)s AND a.status = %(graded)s AND a.counted /*scope_a*/
        GROUP BY a.user_id
    ) f JOIN {_ATTEMPT} a ON a.id = f.id
), totals AS (
    SELECT t.user_id, count(*) AS total
    FROM {_PROGRESS} t JOIN {_EXERCISE} e ON e.id = t.exercise_id
    WHERE t.workbook_id = ANY(%(workbooks)s) AND t.exercise_id <> %(exercise)s AND e.is_active
      AND NOT t.forfeited AND t.first_solved_at IS NOT NULL
      AND t.user_id IN (SELECT user_id FROM p)
    GROUP BY t.user_id
)
SELECT GROUPING(f.givens, f.labels) AS whole, f.user_id IS NOT NULL AS attempted, f.givens, f.labels,
       count(*) AS learners,
       count(*) FILTER (WHERE p.solved) AS solved,
       count(*) FILTER (WHERE p.solved AND p.attempts_to_solve = 1) AS first_try,
       count(*) FILTER (WHERE p.forfeited) AS revealed,
       avg(p.attempts_to_solve) FILTER (WHERE p.solved) AS mean_to_solve,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY p.attempts_to_solve) FILTER (WHERE p.solved) AS median_to_solve,
       corr(p.solved::int, COALESCE(t.total, 0)) AS discrimination
FROM p LEFT JOIN first f ON f.user_id = p.user_id LEFT JOIN totals t ON t.user_id = p.user_id
GROUP BY GROUPING SETS ((f.user_id IS NOT NULL, f.givens, f.labels), ())
"""  # noqa: S608 - table and column names are ours, values are parameters

# Every counted attempt by variant, version and known mistake matched (null: none matched).
_ATTEMPTS_SQL = f"""
SELECT {_GIVENS} AS givens, {_LABELS} AS labels, a.version_id, a.details ->> 'mistake_index' AS mistake,
       count(*) AS attempts, count(*) FILTER (WHERE a.verdict = %(correct)s) AS correct
FROM {_ATTEMPT} a
WHERE a.exercise_id = %(exercise)s AND a.status = %(graded)s AND a.counted /*scope_a*/
GROUP BY 1, 2, 3, 4
"""  # noqa: S608


@dataclass(frozen=True)
class Figures:
    """One exercise's (or one variant's) figures: see the module's docstring."""

    learners: int = 0
    solved: int = 0
    first_try: int = 0
    revealed: int = 0
    mean_attempts_to_solve: float | None = None
    median_attempts_to_solve: float | None = None
    discrimination: float | None = None
    attempts: int = 0  # every counted attempt (later rounds too)
    correct: int = 0

    def _share(self, n: int) -> float | None:
        return round(n / self.learners, 4) if self.learners else None

    @property
    def solve_rate(self) -> float | None:
        return self._share(self.solved)

    @property
    def first_try_rate(self) -> float | None:
        return self._share(self.first_try)

    @property
    def reveal_rate(self) -> float | None:
        return self._share(self.revealed)

    @property
    def accuracy(self) -> float | None:
        """The share of counted attempts that were right."""
        return round(self.correct / self.attempts, 4) if self.attempts else None


@dataclass(frozen=True)
class MistakeCount:
    """How often wrong answers matched one of the author's known mistakes (of one version)."""

    version: int
    index: int
    value: str
    feedback: str
    count: int
    share_of_wrong: float | None = None


@dataclass(frozen=True)
class VariantFigures:
    givens: dict[str, Any]
    labels: dict[str, str]
    figures: Figures
    mistakes: list[MistakeCount] = field(default_factory=list)

    @property
    def seed(self) -> bool:
        """The seed's numbers: nothing recorded, or nothing this exercise shows differs."""
        return not self.givens

    @property
    def label(self) -> str:
        if self.seed and not self.labels:
            return "the seed's numbers"
        shown = [f"{k}: {v}" for k, v in sorted(self.labels.items())]
        shown += [f"{k} = {_number(v)}" for k, v in sorted(self.givens.items())]
        return ", ".join(shown) or "the seed's numbers"


@dataclass(frozen=True)
class ValueFigures:
    """One value of one given, over every variant that drew it (counts add; means do not, so none)."""

    value: str
    figures: Figures


@dataclass(frozen=True)
class GivenSplit:
    """One given (or preset) that varies, value by value: which of its values make the item harder,
    whatever the other givens drew (64 variants of a few learners each say less than this)."""

    name: str
    values: list[ValueFigures]
    # First-try rate of its easiest value minus its hardest (None: a value with no learners).
    spread: float | None


@dataclass(frozen=True)
class ItemAnalysis:
    exercise: Exercise
    cohort: Cohort | None
    varies: bool
    figures: Figures
    variants: list[VariantFigures]
    mistakes: list[MistakeCount]
    # Engaged learners with no counted attempt (revealed without answering): in no variant.
    without_attempt: int = 0
    # Each varying given's values, widest spread first.
    by_given: list[GivenSplit] = field(default_factory=list)


@dataclass(frozen=True)
class Scope:
    """Whose work an analysis reads: a cohort's members, or (``cohort`` None) every learner."""

    cohort: Cohort | None
    workbook_ids: list[int]


def may_analyse(user: Any) -> bool:
    """Instructors, authors and superusers (active): anyone else is refused whatever they name."""
    if not isinstance(user, User) or not user.is_active:
        return False
    return user.is_superuser or user.role in (Role.INSTRUCTOR, Role.AUTHOR)


def sees_everyone(user: User) -> bool:
    """Authors and superusers may read an exercise over every learner (no cohort)."""
    return user.is_superuser or user.role == Role.AUTHOR


def analysis_scope(*, viewer: User, exercise: Exercise, cohort_id: int | None) -> Scope:
    """The learners ``viewer`` may analyse ``exercise`` over: a cohort's (which they teach, with the
    exercise's workbook assigned: else a 404), or every learner's (authors and superusers). A
    learner is refused with a 403 first, so the refusal says nothing about which cohorts exist."""
    if not may_analyse(viewer):
        raise ApplicationError(
            "Only instructors and authors see item analysis.", code="permission_denied", status_code=403
        )
    if cohort_id is None:
        if not sees_everyone(viewer):
            raise ApplicationError(
                "Name one of your cohorts (`cohort`): instructors see their own learners.",
                code="cohort_required",
                status_code=400,
            )
        return Scope(cohort=None, workbook_ids=[exercise.workbook_id])
    cohort = progress_selectors.cohort_taught(user=viewer, cohort_id=cohort_id)
    progress_selectors.workbook_readable(viewer=viewer, cohort=cohort, workbook=exercise.workbook)
    assigned = [a.workbook_id for a in progress_selectors.assignments(cohort=cohort)]
    return Scope(cohort=cohort, workbook_ids=sorted({*assigned, exercise.workbook_id}))


def cohorts_for(*, viewer: User, exercise: Exercise) -> list[Cohort]:
    """The cohorts ``viewer`` may analyse ``exercise`` over (the admin page's choice)."""
    if not may_analyse(viewer):
        return []
    taught = progress_selectors.cohorts_taught(user=viewer).order_by("name", "id")
    if viewer.is_superuser:
        return list(taught)
    return list(taught.filter(assignments__workbook_id=exercise.workbook_id).distinct())


def exercise_for_analysis(*, viewer: User, exercise_id: int) -> Exercise:
    """An exercise (active or retired) for the admin page; a learner gets the 403 first."""
    if not may_analyse(viewer):
        raise ApplicationError(
            "Only instructors and authors see item analysis.", code="permission_denied", status_code=403
        )
    found = Exercise.objects.select_related("workbook", "current_version").filter(pk=exercise_id).first()
    if found is None:
        raise Http404("No such exercise.")
    return found


def item_analysis(*, viewer: User, exercise: Exercise, cohort_id: int | None = None) -> ItemAnalysis:
    """The exercise's figures over the learners ``viewer`` may see (``analysis_scope``), whole and
    by variant, with the known mistakes most often matched."""
    scope = analysis_scope(viewer=viewer, exercise=exercise, cohort_id=cohort_id)
    return analyse(exercise=exercise, scope=scope)


def analyse(*, exercise: Exercise, scope: Scope) -> ItemAnalysis:
    """``item_analysis`` for a scope already decided (the benchmark and the admin call it too)."""
    hidden, varies = _hidden(exercise)
    params: dict[str, Any] = {
        "exercise": exercise.pk,
        "hidden": hidden,
        "graded": AttemptStatus.GRADED.value,
        "correct": Verdict.CORRECT.value,
        "workbooks": scope.workbook_ids,
    }
    scope_a = scope_p = ""
    if scope.cohort is not None:
        params["cohort"] = scope.cohort.pk
        members = f"(SELECT m.user_id FROM {_MEMBERSHIP} m WHERE m.cohort_id = %(cohort)s)"  # noqa: S608
        scope_a, scope_p = f"AND a.user_id IN {members}", f"AND ep.user_id IN {members}"
    if connection.vendor != "postgresql":  # the embedded default (SQLite): the same rows, in Python
        learner_rows, attempt_rows = _rows_portable(exercise=exercise, scope=scope, hidden=hidden)
    else:
        with transaction.atomic(), connection.cursor() as cursor:
            # These plans cost enough for PostgreSQL's JIT (on by default), whose compiling took a
            # second of the 1.3 s the query took at 100,000 attempts, where the query itself runs in
            # ~0.2 s (bench/item_analysis.py): off for this transaction only.
            cursor.execute("SET LOCAL jit = off")
            cursor.execute(_LEARNERS_SQL.replace("/*scope_p*/", scope_p).replace("/*scope_a*/", scope_a), params)
            learner_rows = cursor.fetchall()
            cursor.execute(_ATTEMPTS_SQL.replace("/*scope_a*/", scope_a), params)
            attempt_rows = cursor.fetchall()

    whole = Figures()
    without_attempt = 0
    by_variant: dict[str, dict[str, Any]] = {}

    def slot(givens: Any, labels: Any) -> dict[str, Any]:
        g, lab = _json(givens), _json(labels)
        key = json.dumps([g, lab], sort_keys=True)
        if key not in by_variant:
            by_variant[key] = {"givens": g, "labels": lab, "figures": Figures(), "attempts": 0, "correct": 0,
                               "mistakes": defaultdict(int)}  # fmt: skip
        return by_variant[key]

    for is_whole, attempted, givens, labels, *numbers in learner_rows:
        figures = _figures(numbers)
        if is_whole:
            whole = figures
        elif not attempted:
            without_attempt = figures.learners
        else:
            slot(givens, labels)["figures"] = figures

    mistakes: dict[tuple[int, int], int] = defaultdict(int)
    attempts = correct = 0
    for givens, labels, version_id, mistake, n, n_correct in attempt_rows:
        s = slot(givens, labels)
        s["attempts"] += n
        s["correct"] += n_correct
        attempts, correct = attempts + n, correct + n_correct
        if mistake is not None and str(mistake).isdigit():
            s["mistakes"][(version_id, int(mistake))] += n
            mistakes[(version_id, int(mistake))] += n

    named = _mistake_names({v for v, _ in mistakes})
    wrong = attempts - correct
    variant_list = [
        VariantFigures(
            givens=s["givens"],
            labels=s["labels"],
            figures=_with_attempts(s["figures"], s["attempts"], s["correct"]),
            mistakes=_mistakes(s["mistakes"], named, s["attempts"] - s["correct"])[:TOP_MISTAKES],
        )
        for s in by_variant.values()
    ]
    variant_list.sort(key=_hardest_first)
    return ItemAnalysis(
        by_given=_by_given(variant_list),
        exercise=exercise,
        cohort=scope.cohort,
        varies=varies,
        figures=_with_attempts(whole, attempts, correct),
        variants=variant_list,
        mistakes=_mistakes(mistakes, named, wrong),
        without_attempt=without_attempt,
    )


def _by_given(variants: list[VariantFigures]) -> list[GivenSplit]:
    """Each given (and preset) with two or more values among the variants, its values' figures
    pooled over the variants that drew them, the given whose values differ most first."""
    pooled: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0] * 6))
    for v in variants:
        named = {**{k: str(x) for k, x in v.labels.items()}, **{k: _number(x) for k, x in v.givens.items()}}
        f = v.figures
        for name, value in named.items():
            sums = pooled[name][value]
            for i, n in enumerate((f.learners, f.solved, f.first_try, f.revealed, f.attempts, f.correct)):
                sums[i] += n
    out = []
    for name, values in pooled.items():
        if len(values) < 2:
            continue
        rows = [
            ValueFigures(
                value=value,
                figures=Figures(learners=n[0], solved=n[1], first_try=n[2], revealed=n[3], attempts=n[4], correct=n[5]),
            )
            for value, n in values.items()
        ]
        rows.sort(key=lambda r: _value_order(r.value))
        rates = [r.figures.first_try_rate for r in rows]
        known = [x for x in rates if x is not None]
        spread = round(max(known) - min(known), 4) if len(known) == len(rates) else None
        out.append(GivenSplit(name=name, values=rows, spread=spread))
    out.sort(key=lambda g: (-(g.spread or 0.0), g.name))
    return out


def _value_order(value: str) -> tuple[int, float, str]:
    """Numbers in numeric order, names after them in alphabetical order."""
    try:
        return (0, float(value), "")
    except ValueError:
        return (1, 0.0, value)


def _rows_portable(*, exercise: Exercise, scope: Scope, hidden: list[str]) -> tuple[list[Any], list[Any]]:
    """The rows ``_LEARNERS_SQL`` and ``_ATTEMPTS_SQL`` give, computed in Python from plain ORM reads,
    for a database without PostgreSQL's aggregates (the embedded default's SQLite, a class-sized
    dataset). ``test_the_portable_path_gives_what_postgresql_gives`` holds the two to the same result."""
    progress = ExerciseProgress.objects.filter(exercise=exercise).filter(
        Q(attempts__gt=0) | Q(first_solved_at__isnull=False) | Q(revealed_at__isnull=False) | Q(forfeited=True)
    )
    attempts = Attempt.objects.filter(exercise=exercise, status=AttemptStatus.GRADED, counted=True)
    if scope.cohort is not None:
        members = Membership.objects.filter(cohort=scope.cohort).values("user_id")
        progress, attempts = progress.filter(user_id__in=members), attempts.filter(user_id__in=members)
    engaged = [
        (user_id, forfeited, not forfeited and solved_at is not None, to_solve)
        for user_id, forfeited, solved_at, to_solve in progress.values_list(
            "user_id", "forfeited", "first_solved_at", "attempts_to_solve"
        )
    ]
    totals = dict(
        ExerciseProgress.objects.filter(
            workbook_id__in=scope.workbook_ids,
            exercise__is_active=True,
            forfeited=False,
            first_solved_at__isnull=False,
            user_id__in=[row[0] for row in engaged],
        )
        .exclude(exercise=exercise)
        .values("user_id")
        .annotate(n=Count("id"))
        .values_list("user_id", "n")
    )

    def numbers(details: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        variant = (details or {}).get("variant") or {}
        givens = {k: v for k, v in (variant.get("givens") or {}).items() if k not in hidden}
        return givens, variant.get("labels") or {}

    first: dict[int, tuple[int, Any]] = {}
    attempt_counts: dict[tuple[str, str, int, str | None], list[int]] = defaultdict(lambda: [0, 0])
    for pk, user_id, details, version_id, verdict in attempts.values_list(
        "pk", "user_id", "details", "version_id", "verdict"
    ):
        if user_id not in first or pk < first[user_id][0]:
            first[user_id] = (pk, details)
        givens, labels = numbers(details)
        mistake = (details or {}).get("mistake_index")
        key = (_key(givens), _key(labels), version_id, None if mistake is None else str(mistake))
        attempt_counts[key][0] += 1
        attempt_counts[key][1] += verdict == Verdict.CORRECT
    groups: dict[tuple[bool, str, str], list[tuple[bool, bool, int | None, int]]] = defaultdict(list)
    everyone = []
    for user_id, forfeited, solved, to_solve in engaged:
        row = (forfeited, solved, to_solve, totals.get(user_id, 0))
        everyone.append(row)
        if user_id in first:
            givens, labels = numbers(first[user_id][1])
            groups[(True, _key(givens), _key(labels))].append(row)
        else:
            groups[(False, "{}", "{}")].append(row)
    learner_rows: list[Any] = [(1, True, None, None, *_aggregate(everyone))] if everyone else []
    learner_rows += [
        (0, attempted, givens, labels, *_aggregate(rows)) for (attempted, givens, labels), rows in groups.items()
    ]
    attempt_rows = [(g, lab, version, mistake, n, ok) for (g, lab, version, mistake), (n, ok) in attempt_counts.items()]
    return learner_rows, attempt_rows


def _key(value: dict[str, Any]) -> str:
    return json.dumps(value, sort_keys=True)


def _aggregate(rows: list[tuple[bool, bool, int | None, int]]) -> tuple[Any, ...]:
    """learners, solved, first try, revealed, mean and median attempts to solve, and the Pearson
    correlation of solved with the rest score (None where either side does not vary), as the SQL."""
    solved_counts = [to_solve for _, solved, to_solve, _ in rows if solved and to_solve is not None]
    xs = [float(solved) for _, solved, _, _ in rows]
    ys = [float(total) for *_, total in rows]
    try:
        r: float | None = statistics.correlation(xs, ys)
    except statistics.StatisticsError:  # fewer than two, or a side that does not vary
        r = None
    return (
        len(rows),
        sum(1 for _, solved, _, _ in rows if solved),
        sum(1 for _, solved, to_solve, _ in rows if solved and to_solve == 1),
        sum(1 for forfeited, *_ in rows if forfeited),
        statistics.fmean(solved_counts) if solved_counts else None,
        statistics.median(solved_counts) if solved_counts else None,
        r,
    )


def _hidden(exercise: Exercise) -> tuple[list[str], bool]:
    """The givens this exercise does not show (a scenario's others: not its variant), and whether
    it varies at all (its current version)."""
    version = exercise.current_version
    if version is None:
        return [], False
    try:
        spec = cache.resolved(version).spec
    except ContentError:
        return [], False
    return sorted(spec.implicit), spec.vary is not None


def _json(value: Any) -> Any:
    # Django's psycopg 3 backend hands jsonb back as text (JSONField decodes it): so do we.
    return json.loads(value) if isinstance(value, str | bytes) else (value or {})


def _number(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _figures(numbers: list[Any]) -> Figures:
    learners, solved, first_try, revealed, mean, median, r = numbers
    return Figures(
        learners=learners,
        solved=solved,
        first_try=first_try,
        revealed=revealed,
        mean_attempts_to_solve=None if mean is None else round(float(mean), 3),
        median_attempts_to_solve=None if median is None else float(median),
        discrimination=None if r is None else round(float(r), 4),
    )


def _with_attempts(figures: Figures, attempts: int, correct: int) -> Figures:
    return Figures(**{**figures.__dict__, "attempts": attempts, "correct": correct})


def _hardest_first(v: VariantFigures) -> tuple[float, float, int, str]:
    f = v.figures
    first = f.first_try_rate if f.first_try_rate is not None else 2.0
    accuracy = f.accuracy if f.accuracy is not None else 2.0
    return first, accuracy, -f.learners, v.label


def _mistake_names(version_ids: set[int]) -> dict[tuple[int, int], tuple[int, str, str]]:
    """(version id, index) → (version number, the mistake's formula, its feedback), from the
    versions' specs as stored (the graders' ``mistake_index`` indexes ``answer.mistakes``)."""
    if not version_ids:
        return {}
    found: dict[tuple[int, int], tuple[int, str, str]] = {}
    for pk, number, spec in ExerciseVersion.objects.filter(pk__in=version_ids).values_list("pk", "version", "spec"):
        answer = spec.get("answer") if isinstance(spec, dict) else None
        listed = answer.get("mistakes") if isinstance(answer, dict) else None
        for i, mistake in enumerate(listed or []):
            if isinstance(mistake, dict):
                found[(pk, i)] = (number, str(mistake.get("value", "")), str(mistake.get("feedback", "")))
    return found


def _mistakes(
    counts: dict[tuple[int, int], int], named: dict[tuple[int, int], tuple[int, str, str]], wrong: int
) -> list[MistakeCount]:
    out = []
    for (version_id, index), n in counts.items():
        number, value, feedback = named.get((version_id, index), (0, "", ""))
        out.append(
            MistakeCount(
                version=number,
                index=index,
                value=value,
                feedback=feedback,
                count=n,
                share_of_wrong=round(n / wrong, 4) if wrong else None,
            )
        )
    out.sort(key=lambda m: (-m.count, m.version, m.index))
    return out
