"""Per-process caches of resolved and rendered exercise versions.

A version's spec only changes through ``sync_content`` or the admin, which also change its
``content_hash``; keying on (id, content_hash) makes stale entries unreachable. The caches keep
the grading path free of YAML/JSON validation, formula parsing and Markdown rendering.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
import uuid
from collections import OrderedDict
from functools import cached_property
from typing import Any, Protocol

from django.core.cache import cache as django_cache
from django.db import transaction
from redis.exceptions import RedisError

from apps.core.redis import full_key, shared_client
from apps.exercises.content import variants
from apps.exercises.content.refs import spec_refs
from apps.exercises.content.render import render
from apps.exercises.content.resolve import ResolvedExercise, resolve
from apps.exercises.content.schema import ExerciseSpec
from apps.exercises.content.variants import Variant

logger = logging.getLogger(__name__)
MAX_ENTRIES = 4096


class VersionLike(Protocol):
    pk: Any
    content_hash: str
    spec: Any


def content_hash(spec_json: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(spec_json, sort_keys=True).encode()).hexdigest()[:16]


class Rendered:
    """A resolved version's text fields as HTML, each rendered the first time it is read: an
    exercise page needs the prompt and the options, the explanation and the options' feedback only
    once the solution is shown. A learner's first visit to a varying exercise rendered all six,
    most of its cost in a burst (bench/burst.py). Shared read-only by the requests of a process."""

    __slots__ = ("__dict__", "_scope", "_spec")

    def __init__(self, spec: ExerciseSpec, scope: Any) -> None:
        self._spec, self._scope = spec, scope

    @cached_property
    def prompt_html(self) -> str:
        return render(self._spec.prompt, self._scope)

    @cached_property
    def explanation_html(self) -> str:
        return render(self._spec.explanation, self._scope)

    @cached_property
    def hints_html(self) -> list[str]:
        return [render(h, self._scope) for h in self._spec.hints]

    @cached_property
    def options_html(self) -> list[str]:
        return [render(o.text, self._scope) for o in self._spec.options or []]

    @cached_property
    def options_feedback_html(self) -> list[str]:
        return [render(o.feedback, self._scope) for o in self._spec.options or []]

    @cached_property
    def steps_html(self) -> dict[str, str]:
        return {s.id: render(s.text, self._scope) for s in self._spec.steps or []}


class _LRU(OrderedDict[tuple[Any, ...], Any]):
    def get_or_make(self, key: tuple[Any, ...], make: Any) -> Any:
        if key in self:
            self.move_to_end(key)
            return self[key]
        value = self[key] = make()
        if len(self) > MAX_ENTRIES:
            self.popitem(last=False)
        return value


_resolved = _LRU()
_rendered = _LRU()


def _numbers(variant: Variant | None) -> tuple[Any, ...]:
    if variant is None:
        return ()
    numbers = () if variant.is_seed else (variant.values, variant.labels)
    return (*numbers, variant.known) if variant.known else numbers


_drawn = _LRU()


def drawn(version: VersionLike, *, seed: str, chapter: int, round: int) -> Variant:  # noqa: A002 - the word
    """``variants.variant`` of a version's spec, kept per process: drawing a learner's numbers walks
    the givens' space (milliseconds of Python), and a learner answers and reloads the same numbers
    until they ask for new ones (bench/burst.py, on learners' own numbers)."""
    key = (version.pk, version.content_hash, seed, chapter, round)
    return _drawn.get_or_make(  # type: ignore[no-any-return]
        key, lambda: variants.variant(resolved(version).spec, seed=seed, chapter=chapter, round=round)
    )


def resolved(version: VersionLike, variant: Variant | None = None) -> ResolvedExercise:
    """The version evaluated with ``variant``'s numbers (None or round 0: the seed's)."""
    key = (version.pk, version.content_hash, _numbers(variant))
    return _resolved.get_or_make(  # type: ignore[no-any-return]
        key, lambda: resolve(ExerciseSpec.model_validate(version.spec), variant)
    )


def rendered(version: VersionLike, variant: Variant | None = None) -> Rendered:
    def make() -> Rendered:
        r = resolved(version, variant)
        return Rendered(r.spec, r.scope)

    key = (version.pk, version.content_hash, _numbers(variant))
    return _rendered.get_or_make(key, make)  # type: ignore[no-any-return]


_references = _LRU()


def references(version: VersionLike) -> tuple[str, ...]:
    """The exercise ids (keys) a version's text refers to with ``{% ref %}``."""
    key = (version.pk, version.content_hash)
    return _references.get_or_make(key, lambda: tuple(spec_refs(version.spec)))  # type: ignore[no-any-return]


# ---- content generation --------------------------------------------------------------------
# Exercise lookups by (workbook, number) are cached per process (selectors.exercise_get). Every
# content write sets a new generation token in the shared cache (Redis in production), which
# makes every process's cached lookups stale at once.

GENERATION_KEY = "exercises:content-generation"
_warned = [-1e9]


def generation() -> str:
    """The current token. Without Redis nobody can tell this process that content changed, so
    every call then answers a new token: lookups go to the database until Redis is back."""
    client = shared_client()
    if client is not None:  # plain string value, read with one cheap GET
        try:
            value = client.get(full_key(GENERATION_KEY))
        except RedisError as exc:
            now = time.monotonic()
            if now - _warned[0] > 30:  # once per half minute, not once per request
                _warned[0] = now
                logger.warning("content generation unreadable, reading exercises from the database: %s", exc)
            return f"no-redis-{uuid.uuid4().hex}"
        if value is None:
            # No token: Redis was emptied (a restart without persistence, a flush). A constant
            # here would let lookups cached before the loss pass for current, so start a new one.
            client.set(full_key(GENERATION_KEY), uuid.uuid4().hex, nx=True)
            value = client.get(full_key(GENERATION_KEY)) or b""
        return str(value.hex())  # an opaque token: only equality matters
    django_cache.add(GENERATION_KEY, uuid.uuid4().hex, None)
    return str(django_cache.get(GENERATION_KEY))


def _set_generation() -> None:
    token = uuid.uuid4().hex
    client = shared_client()
    if client is not None:
        # A content write must reach every process: without Redis it fails, rather than leave
        # other processes serving the old version for as long as their lookups live.
        client.set(full_key(GENERATION_KEY), token)
    else:
        django_cache.set(GENERATION_KEY, token, None)


def bump_generation() -> None:
    """Call on any content write. Bumped now (this transaction's later reads) and on commit
    (so no other process caches the pre-commit state under the new token)."""
    _set_generation()
    transaction.on_commit(_set_generation)
