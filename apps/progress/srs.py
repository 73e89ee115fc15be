"""Spaced review with FSRS (py-fsrs): one scheduler for review cards and the skills checklist.

A review's outcome is a rating:

- **Again**: the first answer of the review was wrong, or the learner revealed it (a skill: "forgot");
- **Hard**: solved without a wrong answer, but with hints;
- **Good**: solved without a wrong answer or a hint (a skill: "remembered");
- **Easy** is never given: a derivation done right is Good; FSRS widens Good's gaps on its own.

Intervals are whole days (no minute-scale learning steps: a derivation reviewed ten minutes after
it was solved proves nothing), without fuzz, so a schedule can be tested with a frozen clock.
"""

from __future__ import annotations

from datetime import datetime

from fsrs import Card, Rating, Scheduler, State

from apps.progress.models import Memory

__all__ = ["SCHEDULER", "Rating", "retrievability", "review"]

SCHEDULER = Scheduler(desired_retention=0.9, learning_steps=(), relearning_steps=(), enable_fuzzing=False)


def _card(memory: Memory) -> Card:
    state = State(memory.state)
    return Card(
        card_id=1,  # unused; without one py-fsrs sleeps a millisecond to make a unique id
        state=state,
        step=0 if state == State.Learning else None,
        stability=memory.stability,
        difficulty=memory.difficulty,
        due=memory.due_at,
        last_review=memory.last_review_at,
    )


def review(memory: Memory, rating: Rating, at: datetime) -> None:
    """Rate a review at ``at``: updates the memory's schedule in place (the caller saves it)."""
    card, _ = SCHEDULER.review_card(_card(memory), rating, review_datetime=at)
    memory.state = int(card.state)
    memory.stability = card.stability
    memory.difficulty = card.difficulty
    memory.due_at = card.due
    memory.last_review_at = at
    memory.reviews += 1
    if rating == Rating.Again:
        memory.lapses += 1


def retrievability(memory: Memory, at: datetime) -> float:
    """FSRS's probability that the learner recalls it at ``at`` (0 before the first review)."""
    return float(SCHEDULER.get_card_retrievability(_card(memory), current_datetime=at))
