"""Drafts' fixtures: an author in the admin, and exercises of Transformer Math made into drafts."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
import yaml
from django.test import Client

from apps.accounts.models import Role, User
from apps.exercises.models import Exercise


@pytest.fixture
def author(make_user: Callable[..., User]) -> User:
    user = make_user("drafting-author", role=Role.AUTHOR)
    assert user.is_staff and not user.is_superuser and user.has_perm("exercises.change_exercise")
    return user


@pytest.fixture
def author_client(author: User) -> Client:
    client = Client()
    client.force_login(author)
    return client


def exercise(number: str) -> Exercise:
    return Exercise.objects.select_related("current_version", "chapter").get(
        workbook__slug="transformer-math", number=number
    )


def spec_of(ex: Exercise) -> dict[str, Any]:
    assert ex.current_version is not None
    spec: dict[str, Any] = json.loads(json.dumps(ex.current_version.spec))
    return spec


def new_exercise_text(base: Exercise, *, key: str, number: str, title: str, **changes: Any) -> str:
    """``base``'s spec as a new exercise (another id, number and title): a draft's YAML."""
    spec = spec_of(base)
    spec.update(id=key, number=number, title=title, **changes)
    return yaml.safe_dump(spec, sort_keys=False, allow_unicode=True)


def varying_numeric() -> Exercise:
    """A numeric exercise of Transformer Math whose numbers vary per learner."""
    for ex in Exercise.objects.select_related("current_version", "chapter").filter(
        workbook__slug="transformer-math", format="numeric", is_active=True
    ):
        if ex.current_version is not None and ex.current_version.spec.get("vary"):
            return ex
    raise AssertionError("Transformer Math has no varying numeric exercise")
