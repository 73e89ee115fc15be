"""Reads for learner-facing bodies: where one body needs several objects, a small frozen bundle of
them that the output serializers (apps.learning.serializers) read directly."""

from __future__ import annotations

import time as time_module
from dataclasses import dataclass
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

from django.db import connection
from django.utils import timezone

from apps.accounts.models import User
from apps.exercises import selectors as exercise_selectors
from apps.exercises.content import cache, variants
from apps.exercises.content.variants import Variant
from apps.exercises.models import Attempt, Chapter, Exercise, ExerciseVersion, Verdict, Workbook
from apps.exercises.selectors import Counts
from apps.progress import selectors as progress_selectors
from apps.progress import services as progress_services
from apps.progress.models import Cohort, CohortWorkbook, ExerciseProgress, Membership
from apps.progress.selectors.cohorts import workbook_cell
from apps.progress.selectors.due import Due


def state_of(progress: ExerciseProgress | None) -> ExerciseProgress:
    """The learner's progress on an exercise; one never tried reads as a fresh (unsaved) row."""
    return progress if progress is not None else ExerciseProgress()


@dataclass(frozen=True)
class WorkbookRow:
    workbook: Workbook
    counts: Counts


@dataclass(frozen=True)
class ChapterRow:
    workbook: Workbook
    chapter: Chapter
    counts: Counts


@dataclass(frozen=True)
class WorkbookPage(WorkbookRow):
    chapters: list[ChapterRow]


@dataclass(frozen=True)
class ExerciseRow:
    exercise: Exercise
    progress: ExerciseProgress


@dataclass(frozen=True)
class ChapterPage(ChapterRow):
    exercises: list[ExerciseRow]


@dataclass(frozen=True)
class ExercisePage(ExerciseRow):
    """An exercise as its learner sees it: the current version, their progress, its neighbours."""

    version: ExerciseVersion
    previous: str | None
    next: str | None
    user_id: int
    variant: Variant = variants.SEED
    # The learner's own latest code submission here (a Build's code, a Debug's fix), whatever came
    # of it: the editor opens on it rather than on the starter. None without one, or without code.
    last_code: Attempt | None = None
    # The exercises (numbers) that moved to new numbers with this one (a new-numbers response).
    moved: tuple[str, ...] = ()


@dataclass(frozen=True)
class AttemptResult:
    """A graded (or queued) attempt with the progress it left; the solution once it solved."""

    attempt: Attempt
    progress: ExerciseProgress
    variant: Variant = variants.SEED

    @property
    def solved(self) -> bool:
        return self.attempt.verdict == Verdict.CORRECT and self.progress.solved


@dataclass(frozen=True)
class ProgressOnVersion:
    """A reveal's or a hint's outcome: the learner's progress on an exercise's current version."""

    version: ExerciseVersion
    progress: ExerciseProgress
    variant: Variant = variants.SEED


def learner_variant(*, user_id: int, exercise: Exercise, version: ExerciseVersion, round: int) -> Variant:  # noqa: A002
    """The numbers ``user_id`` sees on round ``round`` of their progress (1 at first), and which
    exercises its references point to they have finished."""
    spec = cache.resolved(version).spec
    if spec.vary is None:
        return _knowing(variants.SEED, user_id=user_id, exercise=exercise, version=version, round=round)
    seed, offset = progress_selectors.numbers_seed(user_id=user_id, workbook_id=exercise.workbook_id)
    found = cache.drawn(version, seed=seed, chapter=exercise.chapter_id, round=max(0, round + offset))
    return _knowing(found, user_id=user_id, exercise=exercise, version=version, round=round)


def _knowing(variant: Variant, *, user_id: int, exercise: Exercise, version: ExerciseVersion, round: int) -> Variant:  # noqa: A002
    """``variant`` with the referenced exercises this learner has finished (one query, and only for
    an exercise whose text refers to another's answer)."""
    ids = cache.references(version)
    if not ids:
        return variant
    finished = progress_selectors.finished_rounds(user_id=user_id, workbook_id=exercise.workbook_id, keys=ids)
    return variant.knowing(finished, [number for number, r in finished.values() if r != round])


def progress_on_version(exercise: Exercise, progress: ExerciseProgress) -> ProgressOnVersion:
    version = exercise.current_version
    assert version is not None
    variant = learner_variant(user_id=progress.user_id, exercise=exercise, version=version, round=progress.round)
    return ProgressOnVersion(version, progress, variant)


def current_variant(*, user_id: int, exercise: Exercise, version: ExerciseVersion) -> Variant:
    """The numbers the learner is on now, in one query (none for an exercise that does not vary)."""
    spec = cache.resolved(version).spec
    if spec.vary is None:
        return variants.SEED
    round_, seed, offset = progress_selectors.learner_numbers(user_id=user_id, exercise=exercise)
    found = cache.drawn(version, seed=seed, chapter=exercise.chapter_id, round=max(0, round_ + offset))
    return _knowing(found, user_id=user_id, exercise=exercise, version=version, round=round_)


def attempt_variant(attempt: Attempt) -> Variant:
    """The numbers an attempt answered, as recorded with it (its learner may have moved on)."""
    return variants.recorded(attempt.details)


def end_of_day(user: User, at: datetime) -> datetime:
    """The end of the learner's local day containing ``at``: reviews due today are due before it."""
    return _day_end(at, progress_services.effective_time_zone(user))


def _day_end(at: datetime, zone: str) -> datetime:
    tz = ZoneInfo(zone)
    return datetime.combine(at.astimezone(tz).date() + timedelta(days=1), time.min, tzinfo=tz)


@dataclass(frozen=True)
class ReviewPage:
    queue: progress_selectors.ReviewQueue
    until: datetime
    at: datetime


def review_page(*, user: User, at: datetime) -> ReviewPage:
    until = end_of_day(user, at)
    return ReviewPage(progress_selectors.reviews_due(user=user, until=until), until, at)


def reviews_due_count(*, user: User, at: datetime) -> int:
    return progress_selectors.reviews_due_count(user=user, until=end_of_day(user, at))


# Cohort time zones the navigation's count used, per process: (user id) → (zone, read at).
_NAV_ZONES: dict[int, tuple[str, float]] = {}
_NAV_ZONE_TTL_S = 60.0


def nav_reviews_due(*, user: User, at: datetime) -> int:
    """The due-review count every page's navigation shows, in one indexed query.

    The day ends in the learner's own time zone; one who set none has their first cohort's, read
    at most once a minute per process (joining a cohort moves the boundary within a minute)."""
    zone = user.time_zone
    if not zone:
        now = time_module.monotonic()
        cached = _NAV_ZONES.get(user.pk)
        if cached is None or now - cached[1] > _NAV_ZONE_TTL_S:
            if len(_NAV_ZONES) > 10_000:
                _NAV_ZONES.clear()
            cached = _NAV_ZONES[user.pk] = (progress_services.effective_time_zone(user), now)
        zone = cached[0]
    return progress_selectors.reviews_due_count(user=user, until=_day_end(at, zone))


def workbook_rows(*, user: User | None) -> list[WorkbookRow]:
    return [WorkbookRow(w, c) for w, c in progress_selectors.workbook_list(user=user)]


def workbook_page(*, user: User | None, workbook: Workbook) -> WorkbookPage:
    chapters = progress_selectors.chapter_list(workbook=workbook, user=user)
    total = Counts(sum(c.total for _, c in chapters), sum(c.solved for _, c in chapters))
    return WorkbookPage(workbook, total, [ChapterRow(workbook, ch, c) for ch, c in chapters])


def exercise_rows(*, user: User | None, exercises: list[Exercise]) -> list[ExerciseRow]:
    progress = progress_selectors.progress_map(user=user, exercises=exercises)
    return [ExerciseRow(e, state_of(progress.get(e.pk))) for e in exercises]


def scenario_members(page: ExercisePage) -> list[str]:
    """The numbers of the other exercises sharing this one's scenario (its chain's givens)."""
    vary = cache.resolved(page.version).spec.vary
    if vary is None or vary.scenario is None:
        return []
    return [n for n in vary.scenario.members if n != page.exercise.number]


def moved_numbers(page: ExercisePage, asked: str) -> tuple[str, ...]:
    members = scenario_members(page)
    return tuple(n for n in asked.split(",") if n in members)


def chapter_page(*, user: User | None, workbook: Workbook, chapter: Chapter) -> ChapterPage:
    exercises = list(exercise_selectors.exercise_list(workbook=workbook, chapter=chapter))
    rows = exercise_rows(user=user, exercises=exercises)
    solved = sum(1 for r in rows if r.progress.solved)
    return ChapterPage(workbook, chapter, Counts(len(rows), solved), rows)


def exercise_page(*, user: User, exercise: Exercise) -> ExercisePage:
    version = exercise.current_version
    assert version is not None
    progress = state_of(progress_row(user_id=user.pk, exercise_id=exercise.pk))
    previous, following = _neighbours(exercise)
    variant = learner_variant(user_id=user.pk, exercise=exercise, version=version, round=progress.round)
    last_code = (
        exercise_selectors.last_code_attempt(user=user, exercise=exercise)
        if cache.resolved(version).spec.code is not None
        else None
    )
    return ExercisePage(exercise, progress, version, previous, following, user.pk, variant, last_code)


# ---- the reads of the two pages learners load most (bench/pages.py) ------------------------------
# Composing each of these with the ORM cost more Python than PostgreSQL's work on them (1-2 ms a
# query on the exercise and workbook pages): they are plain statements, mapped by ``raw()`` (which
# applies the fields' converters, so SQLite reads them alike) or read as plain values.

_PROGRESS = ExerciseProgress._meta.db_table


def progress_row(*, user_id: int, exercise_id: int) -> ExerciseProgress | None:
    """The learner's progress row on an exercise, or None (one query)."""
    sql = f"SELECT * FROM {_PROGRESS} WHERE user_id = %s AND exercise_id = %s"  # noqa: S608 - our table
    return next(iter(ExerciseProgress.objects.raw(sql, [user_id, exercise_id])), None)


def workbook_progress(*, user_id: int, workbook_id: int) -> dict[int, ExerciseProgress]:
    """The learner's progress rows in a workbook by exercise id, retired exercises' too (one query,
    on the (user, workbook) index)."""
    sql = f"SELECT * FROM {_PROGRESS} WHERE user_id = %s AND workbook_id = %s"  # noqa: S608 - our table
    return {p.exercise_id: p for p in ExerciseProgress.objects.raw(sql, [user_id, workbook_id])}


_DUE_SQL = f"""SELECT a.cohort_id, c.name, c.time_zone, a.due_on FROM {CohortWorkbook._meta.db_table} a
  JOIN {Cohort._meta.db_table} c ON c.id = a.cohort_id
  JOIN {Membership._meta.db_table} m ON m.cohort_id = a.cohort_id
WHERE m.user_id = %s AND a.workbook_id = %s AND a.due_on IS NOT NULL
ORDER BY a.due_on, c.name, a.cohort_id"""  # noqa: S608 - table names are ours, values are parameters


def workbook_due(*, user_id: int, workbook: Workbook, solved: int, total: int, at: datetime | None = None) -> list[Due]:
    """``progress.selectors.learner_due`` for one workbook whose counts the caller has (the
    workbook page: the learner's solved active exercises, and the active exercises): only the
    learner's cohorts' due dates are read, in one query. Each is decided by ``workbook_cell``."""
    at = at or timezone.now()
    with connection.cursor() as cursor:
        cursor.execute(_DUE_SQL, [user_id, workbook.pk])
        rows = cursor.fetchall()
    found = []
    for cohort_id, name, zone, due_on in rows:
        today = at.astimezone(ZoneInfo(zone)).date()
        assignment = CohortWorkbook(cohort_id=cohort_id, workbook=workbook, due_on=due_on)
        cell = workbook_cell(assignment, solved=solved, total=total, today=today)
        found.append(Due(cohort_id, name, zone, workbook.pk, workbook.title, cell, today))
    return found


_RECENT_SQL = f"""SELECT a.*, v.version AS version_number FROM {Attempt._meta.db_table} a
  JOIN {ExerciseVersion._meta.db_table} v ON v.id = a.version_id
WHERE a.user_id = %s AND a.exercise_id = %s
ORDER BY a.created_at DESC, a.id DESC LIMIT %s"""  # noqa: S608 - table names are ours, values are parameters


def recent_attempts(*, user_id: int, exercise: Exercise, limit: int = 5) -> list[Attempt]:
    """``exercises.selectors.attempt_list`` of one exercise, its ``limit`` newest, in one query:
    each with ``exercise`` (this one) and its version's number (its other fields load if read)."""
    found = list(Attempt.objects.raw(_RECENT_SQL, [user_id, exercise.pk, limit]))
    for a in found:
        a.exercise = exercise
        number = a.version_number  # type: ignore[attr-defined] # selected beside the attempt's columns
        a.version = ExerciseVersion.from_db(a._state.db, ["id", "version"], [a.version_id, number])
    return found


def _neighbours(exercise: Exercise) -> tuple[str | None, str | None]:
    """``exercises.selectors.neighbours``, kept on the instance. The exercise page's instance is
    the per-process one of ``exercises.selectors.exercise_get``, replaced on every content write:
    the workbook's order is read once per exercise and content generation, not per request."""
    memo: tuple[str | None, str | None] | None = exercise.__dict__.get("_page_neighbours")
    if memo is None:
        memo = exercise.__dict__["_page_neighbours"] = exercise_selectors.neighbours(exercise=exercise)
    return memo
