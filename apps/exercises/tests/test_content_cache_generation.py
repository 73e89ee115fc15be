"""The content generation token: an emptied Redis must never let old lookups pass for current."""

from __future__ import annotations

import pytest
from django.core.cache import cache as django_cache

from apps.exercises import selectors
from apps.exercises.content import cache as content_cache


@pytest.mark.django_db
def test_an_emptied_redis_starts_a_new_generation_and_lookups_are_read_again() -> None:
    first = content_cache.generation()
    assert content_cache.generation() == first, "stable while nothing changes"
    exercise = selectors.exercise_get(workbook_slug="transformer-math", number="1.1")
    assert selectors.exercise_get(workbook_slug="transformer-math", number="1.1") is exercise
    django_cache.clear()  # what a Redis restart without persistence does
    second = content_cache.generation()
    assert second != first
    assert selectors.exercise_get(workbook_slug="transformer-math", number="1.1") is not exercise
