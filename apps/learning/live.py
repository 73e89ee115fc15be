"""A running code attempt's test results, as the sandbox reports them one by one.

The worker judges each test as its result arrives (``verdict.decide``, the same comparison as the
final verdict) and keeps the list in the cache, where the attempt's API reads it while the attempt
is running. What it keeps is what the learner may see (``verdict.learner_rows``): each test's
label ("Example 1", "Hidden test 4 of 9"), whether it passed and why not, never a hidden test's id,
call, inputs or values. Writes are spaced ``WRITE_EVERY_S`` apart and the first waits that long: a run that
ends sooner (most do) writes nothing here, and its final verdict says it all.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any

from django.core.cache import cache
from redis.exceptions import RedisError

from apps.sandbox.verdict import Case, decide, labels_of, learner_rows

logger = logging.getLogger(__name__)

WRITE_EVERY_S = 0.1
KEEP_S = 900  # longer than any run


def _key(attempt_id: int) -> str:
    return f"attempt-live:{attempt_id}"


class Recorder:
    """Passed to the runner as its ``progress``: judges each reported test and publishes the list."""

    def __init__(self, attempt_id: int, cases: Sequence[Case], entry: str) -> None:
        self.attempt_id, self.entry = attempt_id, entry
        self.cases = {c.id: c for c in cases}
        self.labels = dict(zip(self.cases, labels_of([{"example": c.example} for c in cases]), strict=True))
        self.tests: list[dict[str, Any]] = []
        self.last_write = time.monotonic()

    def __call__(self, item: dict[str, Any]) -> None:
        case = self.cases.get(str(item.get("id")))
        if case is None:
            return
        checked = decide([item], [case], self.entry)[0]
        row = learner_rows([checked.__dict__])[0]
        self.tests.append({"label": self.labels[case.id], "passed": row["passed"], "message": row["message"]})
        if time.monotonic() - self.last_write >= WRITE_EVERY_S:
            self.last_write = time.monotonic()
            try:
                cache.set(_key(self.attempt_id), self.tests, timeout=KEEP_S)
            except RedisError as exc:  # the verdict does not depend on this
                logger.warning("could not publish live results: %s", exc)


def tests_so_far(attempt_id: int) -> list[dict[str, Any]]:
    """What the running attempt's tests reported so far (empty if nothing was published yet)."""
    try:
        tests = cache.get(_key(attempt_id))
    except RedisError:
        return []
    return tests if isinstance(tests, list) else []
