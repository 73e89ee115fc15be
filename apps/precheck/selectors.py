"""Reads of prechecks: one learner's own precheck by id, and what an exercise offers to precheck."""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

from django.core.cache import cache
from django.http import Http404
from redis.exceptions import RedisError

from apps.accounts.models import User
from apps.core.exceptions import ServiceUnavailable
from apps.exercises.content import cache as content_cache
from apps.exercises.models import Exercise
from apps.precheck.records import UNAVAILABLE_MESSAGE, Precheck, PrecheckStatus, counts, describe, record_key

LOST_MESSAGE = "The precheck could not run: no sandbox finished it in time. Nothing was counted; try again in a moment."


def precheck_get(*, user: User, precheck_id: str) -> Precheck:
    """The learner's own precheck. Another learner's, an expired one or an unknown id: a 404.

    One still pending past its deadline (its worker died, or none took it) reads as not run."""
    try:
        precheck = Precheck.from_record(cache.get(record_key(str(precheck_id))))
    except RedisError as exc:
        raise ServiceUnavailable(UNAVAILABLE_MESSAGE, code="precheck_unavailable") from exc
    if precheck is None or precheck.user_id != user.pk:
        raise Http404("No such precheck.")
    if precheck.pending and time.time() > precheck.deadline:
        return dataclasses.replace(precheck, status=PrecheckStatus.NOT_RUN, message=LOST_MESSAGE)
    return precheck


@dataclass(frozen=True)
class PrecheckOffer:
    """What a precheck of this exercise runs: how many examples and structural checks."""

    examples: int
    checks: int

    @property
    def available(self) -> bool:
        return bool(self.examples or self.checks)

    @property
    def described(self) -> str:
        return describe(self.examples, self.checks)


def precheck_offer(*, exercise: Exercise) -> PrecheckOffer | None:
    """None for an exercise that takes no code."""
    version = exercise.current_version
    code = content_cache.resolved(version).spec.code if version is not None else None
    if code is None:
        return None
    examples, checks = counts(code.cases)
    return PrecheckOffer(examples, checks)
