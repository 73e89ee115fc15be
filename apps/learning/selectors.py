"""Reads for learner-facing bodies: where one body needs several objects, a small frozen bundle of
them that the output serializers (apps.learning.serializers) read directly."""

from __future__ import annotations

import time as time_module
from dataclasses import dataclass
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

from apps.accounts.models import User
from apps.exercises import selectors as exercise_selectors
from apps.exercises.content import cache, variants
from apps.exercises.content.variants import Variant
from apps.exercises.models import Attempt, Chapter, Exercise, ExerciseVersion, Verdict, Workbook
from apps.exercises.selectors import Counts
from apps.progress import selectors as progress_selectors
from apps.progress import services as progress_services
from apps.progress.models import ExerciseProgress


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
    found = variants.variant(spec, seed=seed, chapter=exercise.chapter_id, round=max(0, round + offset))
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
    found = variants.variant(spec, seed=seed, chapter=exercise.chapter_id, round=max(0, round_ + offset))
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
    progress = state_of(progress_selectors.progress_get(user=user, exercise=exercise))
    previous, following = exercise_selectors.neighbours(exercise=exercise)
    variant = learner_variant(user_id=user.pk, exercise=exercise, version=version, round=progress.round)
    last_code = (
        exercise_selectors.last_code_attempt(user=user, exercise=exercise)
        if cache.resolved(version).spec.code is not None
        else None
    )
    return ExercisePage(exercise, progress, version, previous, following, user.pk, variant, last_code)
