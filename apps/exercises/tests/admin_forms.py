"""Posting the exercise admin's change form as a browser does (its version inline empty)."""

from __future__ import annotations

from django.test import Client

from apps.exercises.models import Exercise


def post_exercise_edit(client: Client, exercise: Exercise, text: str) -> str:
    """Save ``text`` as the exercise's YAML: the page's HTML when the form refuses it, else "redirect <status>"."""
    response = client.post(
        f"/admin/exercises/exercise/{exercise.pk}/change/",
        {
            "chapter": exercise.chapter_id,
            "is_active": "on",
            "spec_text": text,
            "versions-TOTAL_FORMS": "0",
            "versions-INITIAL_FORMS": "0",
            "versions-MIN_NUM_FORMS": "0",
            "versions-MAX_NUM_FORMS": "1000",
        },
    )
    return response.content.decode() if response.status_code == 200 else f"redirect {response.status_code}"
