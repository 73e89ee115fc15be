"""Hooks for apps above ``lti`` in the layers (import-linter): they register what deep linking
may place besides workbooks and chapters, and where a link carrying their custom parameter lands.
``lti`` knows nothing of them beyond this registry.

An extension has a ``key``: the custom parameter its links carry (``{"assessment": "12"}``) and the
prefix of its picker values (``assessment/12``: a slash, which no workbook slug holds, so a value
never reads as a workbook). What it offers is asked again when the picker's answer comes back, so
only what the instructor was offered can be placed, whatever the form says.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from apps.accounts.models import User
from apps.progress.models import Cohort


@dataclass(frozen=True)
class Placeable:
    """One choice in the deep linking picker: a resource link with these custom parameters and,
    when ``resource_id`` is set, a line item of its own (a gradebook column)."""

    value: str  # "<key>/<id>", unique among the extension's choices
    title: str
    group: str  # a heading in the picker
    custom: dict[str, str]
    resource_id: str = ""
    score_maximum: float = 0.0
    note: str = ""


@dataclass(frozen=True)
class LinkLaunch:
    """A validated resource link launch whose custom parameters carry an extension's key: the
    user is signed in here and (a learner) a member of ``cohort``, the course's cohort."""

    user: User
    instructor: bool
    cohort: Cohort
    value: Any  # the custom parameter, as the platform sent it (unchecked: the extension checks it)
    custom: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Landing:
    """Where the launch continues, and the resource id of the link's own line item (if any): the
    platform's line item URL from the launch is remembered for it (``ContextLineItem``)."""

    url: str
    resource_id: str = ""


@dataclass(frozen=True)
class Extension:
    key: str
    placeable: Callable[[User, Cohort], list[Placeable]]
    launch: Callable[[LinkLaunch], Landing]  # raises apps.lti.exceptions.LaunchRefused to refuse


_registry: dict[str, Extension] = {}


def register(extension: Extension) -> None:
    """Register (or replace: ``ready()`` may run twice in tests) an extension by its key."""
    if not extension.key.isidentifier():
        raise ValueError("An extension's key is a custom parameter name (letters, digits, _).")
    if extension.key in ("workbook", "chapter"):
        raise ValueError("workbook and chapter are the tool's own custom parameters.")
    _registry[extension.key] = extension


def registered() -> list[Extension]:
    return list(_registry.values())


def placeable(*, user: User, cohort: Cohort | None) -> list[Placeable]:
    """Every extension's choices for this instructor in this course (none without a course)."""
    if cohort is None:
        return []
    choices: list[Placeable] = []
    for extension in _registry.values():
        choices.extend(c for c in extension.placeable(user, cohort) if c.value.startswith(f"{extension.key}/"))
    return choices


def for_custom(custom: dict[str, Any] | None) -> tuple[Extension, Any] | None:
    """The extension whose key the link's custom parameters carry, with its value."""
    for key, value in (custom or {}).items():
        extension = _registry.get(key)
        if extension is not None and value not in (None, ""):
            return extension, value
    return None
