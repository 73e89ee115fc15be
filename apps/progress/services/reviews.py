"""Spaced review of solved exercises on fresh numbers, scheduled by FSRS (apps.progress.srs).

- A learner's first solve of an auto-graded exercise makes its review card, rated by how that
  solve went: Good (first try, no hints), Hard (after a wrong answer or with hints), Again
  (solved only after revealing the answer).
- When a card is due the learner starts its review (``review_start``): the exercise starts over
  on the next round of numbers (a varying exercise's are new; a fixed one's are the same).
- The review's outcome rates the card: the first wrong answer, or revealing, rates Again and ends
  the review (the learner may still solve it: that counts toward mastery and the day streak); a
  solve with no wrong answer rates Good, or Hard with hints.

Code exercises (Build, Debug) have no cards: a review must be quick, and a sandbox run is not.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime

from django.db import transaction

from apps.accounts.models import User
from apps.core.exceptions import ApplicationError
from apps.exercises import formats
from apps.exercises import selectors as exercise_selectors
from apps.exercises.models import Exercise
from apps.progress import srs
from apps.progress.models import ExerciseProgress, ReviewCard

logger = logging.getLogger(__name__)


def _end(card: ReviewCard, progress: ExerciseProgress, rating: srs.Rating, at: datetime) -> None:
    srs.review(card, rating, at)
    card.reviewing_since = None
    card.save()
    ExerciseProgress.objects.filter(pk=progress.pk).update(reviewing=False)
    progress.reviewing = False
    logger.info(
        "review rated",
        extra={"user_id": card.user_id, "exercise_id": card.exercise_id, "rating": rating.name, "due": card.due_at},
    )


def review_solved(*, exercise: Exercise, progress: ExerciseProgress, at: datetime) -> ReviewCard | None:
    """An exercise was just solved (inside the solving attempt's transaction): rate the review
    under way, or make the exercise's card on its first solve."""
    if not formats.get(exercise.format).reviewable:
        return None
    card = ReviewCard.objects.select_for_update().filter(user_id=progress.user_id, exercise=exercise).first()
    if card is not None:
        if progress.reviewing:
            _end(card, progress, srs.Rating.Hard if progress.hints_used else srs.Rating.Good, at)
        return card
    if progress.solved_after_reveal:
        rating = srs.Rating.Again
    elif progress.hints_used or (progress.attempts_to_solve or 1) > 1:
        rating = srs.Rating.Hard
    else:
        rating = srs.Rating.Good
    card = ReviewCard(user_id=progress.user_id, exercise=exercise, due_at=at)
    srs.review(card, rating, at)
    card.reviews = 0  # the solve itself is not a review
    card.lapses = 0
    card.save()
    return card


def review_wrong(*, progress: ExerciseProgress, at: datetime) -> None:
    """A wrong answer during a review: the card is rated Again (once, at the first)."""
    card = (
        ReviewCard.objects.select_for_update()
        .filter(user_id=progress.user_id, exercise_id=progress.exercise_id)
        .first()
    )
    if card is not None and card.reviewing_since is not None:
        _end(card, progress, srs.Rating.Again, at)


def review_revealed(*, progress: ExerciseProgress, at: datetime) -> None:
    """Revealing the answer during a review rates it Again."""
    review_wrong(progress=progress, at=at)


MAX_ROUNDS_SKIPPED = 16


def progress_next_round(
    *, progress: ExerciseProgress, reviewing: bool = False, differs: Callable[[int], bool] | None = None
) -> list[Exercise]:
    """Start an exercise over on its next round of numbers (new numbers, or a review): the answer
    hidden again, hints and parts cleared; attempts, points and first-try statistics kept, as a
    workbook reset keeps them. The caller holds the row's lock.

    In a scenario (givens a chain of exercises shares) the whole scenario moves: the round is one
    past any the learner has had in it, and every exercise of it not finished yet (neither solved
    nor revealed) moves to that round too, so the chain stays on one set of numbers; finished ones
    keep the numbers they were finished on. Returns the exercises that moved with it.

    ``differs(round)``: whether that round shows this exercise other numbers than it shows now. A
    scenario's new round always differs somewhere, but perhaps only in givens this exercise does not
    show; such rounds are passed over (at most MAX_ROUNDS_SKIPPED), so "new numbers" look new."""
    members = exercise_selectors.scenario_members(exercise=progress.exercise)
    rows = {
        p.exercise_id: p
        for p in ExerciseProgress.objects.select_for_update()
        .filter(user_id=progress.user_id, exercise__in=members)
        .order_by("pk")
    }
    target = max([progress.round, *(p.round for p in rows.values())]) + 1
    if differs is not None:
        for _ in range(MAX_ROUNDS_SKIPPED):
            if differs(target):
                break
            target += 1
    _start_over(progress, target, reviewing=reviewing)
    moved = []
    for member in members:
        row = rows.get(member.pk)
        if row is not None and row.answer_visible:
            continue  # finished: its attempts and reveal stay on its numbers
        if row is None:
            ExerciseProgress.objects.create(
                user_id=progress.user_id, exercise=member, workbook_id=member.workbook_id, round=target
            )
        elif row.round != target:
            _start_over(row, target, reviewing=row.reviewing)
        moved.append(member)
    return moved


def _start_over(progress: ExerciseProgress, round: int, *, reviewing: bool) -> None:  # noqa: A002 - the word
    progress.round = round
    progress.solved_at = progress.revealed_at = progress.first_solve_attempt = None
    progress.parts_solved = progress.hints_used = 0
    progress.solved_with_note = False
    progress.reviewing = reviewing
    progress.save(
        update_fields=[
            "round", "solved_at", "revealed_at", "first_solve_attempt", "parts_solved", "hints_used",
            "solved_with_note", "reviewing",
        ]
    )  # fmt: skip


@transaction.atomic
def review_start(*, user: User, card_id: int, at: datetime) -> ReviewCard:
    """Start a due review: the exercise starts over on its next round of numbers. Starting one
    already under way changes nothing (a second tab, a retry)."""
    card = ReviewCard.objects.select_for_update().filter(pk=card_id, user=user).select_related("exercise").first()
    if card is None:
        raise ApplicationError("No such review.", code="not_found", status_code=404)
    if card.reviewing_since is not None:
        return card
    if card.due_at > at:
        raise ApplicationError(
            f"This review is not due until {card.due_at:%Y-%m-%d %H:%M} UTC.", code="not_due", status_code=409
        )
    progress = ExerciseProgress.objects.select_for_update().get(user=user, exercise_id=card.exercise_id)
    progress_next_round(progress=progress, reviewing=True)
    card.reviewing_since = at
    card.save(update_fields=["reviewing_since"])
    logger.info("review started", extra={"user_id": user.pk, "exercise_id": card.exercise_id, "round": progress.round})
    return card
