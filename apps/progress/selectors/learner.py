"""The learner's rows and counts beside the content: solved/total per workbook and chapter, the
progress rows of the exercises on a page, and where to continue."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from typing import Any, NamedTuple

from django.db import connection
from django.db.models import Case, Count, Exists, IntegerField, OuterRef, Q, Value, When

from apps.accounts.models import User
from apps.exercises.choices import AttemptStatus
from apps.exercises.models import Attempt, Chapter, Exercise, Workbook
from apps.exercises.selectors import Counts
from apps.progress.models import Cohort, CohortWorkbook, ExerciseProgress, Membership


def workbook_list(*, user: User | None) -> list[tuple[Workbook, Counts]]:
    """Published workbooks with the caller's solved/total counts (two queries)."""
    workbooks = list(
        Workbook.objects.filter(is_published=True)
        .annotate(total=Count("exercises", filter=Q(exercises__is_active=True)))
        .order_by("position", "slug")  # Meta.ordering does not apply to an aggregating query
    )
    solved = _solved_by(user, "workbook_id")
    return [(w, Counts(w.total, solved.get(w.pk, 0))) for w in workbooks]


def _solved_by(user: User | None, key: str, **filters: object) -> dict[int, int]:
    if user is None or not user.is_authenticated:
        return {}
    field = {"workbook_id": "workbook_id", "chapter_id": "exercise__chapter_id"}[key]
    rows = (
        ExerciseProgress.objects.filter(user=user, solved_at__isnull=False, exercise__is_active=True, **filters)
        .values(field)
        .annotate(n=Count("id"))
    )
    return {row[field]: row["n"] for row in rows}


def chapter_list(*, workbook: Workbook, user: User | None) -> list[tuple[Chapter, Counts]]:
    chapters = list(
        workbook.chapters.annotate(total=Count("exercises", filter=Q(exercises__is_active=True))).order_by("number")
    )
    solved = _solved_by(user, "chapter_id", workbook_id=workbook.pk)
    return [(c, Counts(c.total, solved.get(c.pk, 0))) for c in chapters]


def progress_map(*, user: User | None, exercises: list[Exercise]) -> dict[int, ExerciseProgress]:
    """The caller's progress rows for these exercises, in one query."""
    if user is None or not user.is_authenticated or not exercises:
        return {}
    rows = ExerciseProgress.objects.filter(user=user, exercise_id__in=[e.pk for e in exercises])
    return {p.exercise_id: p for p in rows}


def progress_get(*, user: User | None, exercise: Exercise) -> ExerciseProgress | None:
    return progress_map(user=user, exercises=[exercise]).get(exercise.pk)


def continue_point(*, user: User) -> Exercise | None:
    """Where the learner should go next: two queries, whatever the content's size.

    From the exercise of the learner's latest graded attempt: that exercise if it is unsolved,
    else the next unsolved one after it in its workbook (chapter number, then position: the
    order of ``exercise_list``), else the first unsolved exercise of any workbook (in workbook
    order); None once everything is solved. A learner without attempts starts at the first
    exercise of the first workbook. The exercise comes with its workbook and chapter, annotated
    ``resumed``: whether the learner has a graded attempt at all ("Continue" or "Start here").
    """
    latest = (
        Attempt.objects.filter(user=user, status=AttemptStatus.GRADED)
        .order_by("-created_at", "-id")
        .values_list("exercise_id", "exercise__workbook_id", "exercise__chapter__number", "exercise__position")
        .first()
    )
    solved = ExerciseProgress.objects.filter(user=user, exercise=OuterRef("pk"), solved_at__isnull=False)
    unsolved = (
        Exercise.objects.filter(~Exists(solved), is_active=True, workbook__is_published=True)
        .select_related("workbook", "chapter")
        .defer("workbook__summary", "workbook__prerequisites", "chapter__intro", "chapter__givens", "chapter__derived")
    )
    order = ["workbook__position", "workbook__slug", "chapter__number", "position", "pk"]
    if latest is None:
        return unsolved.annotate(resumed=Value(False)).order_by(*order).first()
    pk, workbook_id, chapter, position = latest
    # The latest exercise itself or any after it in its workbook come first; a retired exercise
    # still marks the place.
    here_or_after = Q(workbook_id=workbook_id) & (
        Q(chapter__number__gt=chapter)
        | Q(chapter__number=chapter, position__gt=position)
        | Q(chapter__number=chapter, position=position, pk__gte=pk)
    )
    ranked = unsolved.annotate(
        resumed=Value(True),
        after=Case(When(here_or_after, then=Value(0)), default=Value(1), output_field=IntegerField()),
    )
    return ranked.order_by("after", *order).first()


def _seed(user_id: int, shared: int | None) -> tuple[str, int]:
    return (f"cohort:{shared}", -1) if shared is not None else (f"learner:{user_id}", 0)


def numbers_seed(*, user_id: int, workbook_id: int) -> tuple[str, int]:
    """Whose numbers a learner gets in a workbook, and the offset of their rounds.

    A learner in a cohort that shares numbers (and is assigned this workbook) gets the cohort's,
    from the seed's own numbers on (their round 1 is round 0); anyone else their own.
    """
    with connection.cursor() as cursor:
        cursor.execute(_SHARED_SQL, [user_id, Cohort.Numbers.SHARED.value, workbook_id])
        row = cursor.fetchone()
    return _seed(user_id, row[0] if row is not None else None)


# Whose numbers, as plain statements: composing the ORM queries (two subqueries, three joins) cost
# ~2 ms of Python on every graded answer to a varying exercise and every visit to one, more than
# PostgreSQL's work on them (bench/grading_api.py, bench/pages.py). Portable SQL (SQLite too).
_ROUND_SQL = (
    f"SELECT ep.round FROM {ExerciseProgress._meta.db_table} ep WHERE ep.user_id = %s AND ep.exercise_id = %s LIMIT 1"  # noqa: S608
)
_SHARED_SQL = f"""SELECT m.cohort_id FROM {Membership._meta.db_table} m
     JOIN {Cohort._meta.db_table} c ON c.id = m.cohort_id
     JOIN {CohortWorkbook._meta.db_table} a ON a.cohort_id = c.id
   WHERE m.user_id = %s AND c.numbers = %s AND a.workbook_id = %s
   ORDER BY m.cohort_id LIMIT 1"""  # noqa: S608 - table names are ours, values are parameters
_LEARNER_NUMBERS_SQL = f"SELECT\n  ({_ROUND_SQL}),\n  ({_SHARED_SQL})\n"


class LearnerNumbers(NamedTuple):
    """Which numbers a learner is on in an exercise: ``learner_numbers`` and the cohort behind it."""

    round: int  # 1 if never tried
    seed: str
    offset: int
    cohort: int | None  # the cohort whose numbers they share, None: their own


def _numbers_params(user_id: int, exercise: Exercise) -> list[Any]:
    return [user_id, exercise.pk, user_id, Cohort.Numbers.SHARED.value, exercise.workbook_id]


def learner_numbers_now(*, user_id: int, exercise: Exercise) -> LearnerNumbers:
    """``learner_numbers`` with the cohort it comes from, in one query."""
    with connection.cursor() as cursor:
        cursor.execute(_LEARNER_NUMBERS_SQL, _numbers_params(user_id, exercise))
        round_, shared = cursor.fetchone() or (None, None)
    return LearnerNumbers(1 if round_ is None else round_, *_seed(user_id, shared), shared)


def learner_numbers(*, user_id: int, exercise: Exercise) -> tuple[int, str, int]:
    """The learner's round on an exercise (1 if never tried) and ``numbers_seed``, in one query:
    the grading path reads it before an answer to a varying exercise (unless it remembers them,
    see ``learner_numbers_remembered``)."""
    numbers = learner_numbers_now(user_id=user_id, exercise=exercise)
    return numbers.round, numbers.seed, numbers.offset


def learner_numbers_unchanged(*, user_id: int, exercise: Exercise, numbers: LearnerNumbers) -> tuple[str, list[Any]]:
    """An SQL condition (and its parameters) that holds exactly when ``learner_numbers_now`` would
    read ``numbers`` now. The grading path puts it in the attempt's own statement, so numbers
    remembered from an earlier answer are checked in the same round trip as the write."""
    params = _numbers_params(user_id, exercise)
    condition = f"COALESCE(({_ROUND_SQL}), 1) = %s AND ({_SHARED_SQL}) IS NOT DISTINCT FROM %s"
    return condition, [*params[:2], numbers.round, *params[2:], numbers.cohort]


# The numbers each learner answered on last, per exercise, in this process: a hint that spares the
# read on the next answer. Never trusted on its own: the write that uses it carries
# ``learner_numbers_unchanged`` and records nothing when they moved (new numbers, a reset, a
# cohort joined or left, in any process), and the caller then reads them and grades again.
_REMEMBERED_MAX = 50_000
_remembered: OrderedDict[tuple[int, int], LearnerNumbers] = OrderedDict()


def learner_numbers_remembered(*, user_id: int, exercise_id: int) -> LearnerNumbers | None:
    return _remembered.get((user_id, exercise_id))


def learner_numbers_remember(*, user_id: int, exercise_id: int, numbers: LearnerNumbers | None) -> None:
    """Keep (or, with None, forget) the numbers a learner answered on."""
    key = (user_id, exercise_id)
    if numbers is None:
        _remembered.pop(key, None)
        return
    _remembered[key] = numbers
    _remembered.move_to_end(key)
    if len(_remembered) > _REMEMBERED_MAX:
        _remembered.popitem(last=False)


def finished_rounds(*, user_id: int, workbook_id: int, keys: Iterable[str]) -> dict[str, tuple[str, int]]:
    """Of the exercises ``keys`` names, the ones the learner solved or revealed: key -> (number, the
    round of numbers they did it on)."""
    rows = ExerciseProgress.objects.filter(
        Q(solved_at__isnull=False) | Q(revealed_at__isnull=False),
        user_id=user_id,
        workbook_id=workbook_id,
        exercise__key__in=list(keys),
    ).values_list("exercise__key", "exercise__number", "round")
    return {key: (number, round_) for key, number, round_ in rows}
