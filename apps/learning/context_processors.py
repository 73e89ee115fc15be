"""What every learner page's navigation shows: the number of reviews due today."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from django.http import HttpRequest
from django.utils import timezone

from apps.accounts.models import User
from apps.learning import selectors


def navigation(request: HttpRequest) -> dict[str, Any]:
    """``nav_reviews_due``: counted only when a template shows it (the admin's pages do not), once
    per request, in one query (``learning.selectors.nav_reviews_due``)."""
    user = getattr(request, "user", None)
    if not isinstance(user, User) or not user.is_authenticated:
        return {}

    @cache
    def due() -> int:
        return selectors.nav_reviews_due(user=user, at=timezone.now())

    count: Callable[[], int] = due
    return {"nav_reviews_due": count}
