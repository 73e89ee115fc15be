"""What a precheck is, as kept: one short-lived record in the cache (Redis), never a database row.

The web process writes a record once, queued; from then on only the run that claimed it writes it
(running, then checked or not run). Nothing that grades, counts or ranks reads these records.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import models

KEEP_S = 3600  # how long a learner can come back to a precheck's result
# Past the run's own time limit: the wait for a free sandbox slot and a container's start. A
# precheck still pending then is reported as not run (its worker died, or none took it).
QUEUE_GRACE_S = 60.0
NOTE = "Precheck: examples and structure only — not graded"
UNAVAILABLE_MESSAGE = "Prechecks are unavailable for a moment (their store cannot be reached). Nothing ran."


class PrecheckStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    CHECKED = "checked", "Checked"  # the run finished: `outcome` says how
    NOT_RUN = "not_run", "Could not run"  # a sandbox fault, or no worker took it in time: never a pass


PENDING = (PrecheckStatus.QUEUED, PrecheckStatus.RUNNING)


class TestKind(models.TextChoices):
    EXAMPLE = "example", "Example"  # public: its call, expected value and what came back are shown
    CHECK = "check", "Check"  # a structural probe: only its requirement, in plain words, is shown


def record_key(precheck_id: str) -> str:
    return f"precheck:{precheck_id}"


def claim_key(precheck_id: str) -> str:
    return f"precheck-claim:{precheck_id}"


def active_key(user_id: int) -> str:
    """The learner's pending precheck, if any: one at a time per learner."""
    return f"precheck-active:{user_id}"


@dataclass
class Precheck:
    id: str
    user_id: int
    exercise_id: int
    version_id: int
    workbook: str
    number: str
    code: str
    created_at: datetime
    deadline: float  # epoch seconds: still pending after this, it is reported as not run
    status: str = PrecheckStatus.QUEUED
    started_at: datetime | None = None
    finished_at: datetime | None = None
    time_limit_s: float | None = None
    tests_total: int | None = None
    outcome: str = ""  # once checked: passed, failed, error, timeout, memory_limit, crash, output_limit
    message: str = ""
    tests: list[dict[str, Any]] = field(default_factory=list)
    traceback: str = ""
    prints: str = ""

    @property
    def pending(self) -> bool:
        return self.status in PENDING

    def as_record(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_record(cls, record: Any) -> Precheck | None:
        if not isinstance(record, dict):
            return None
        names = {f.name for f in dataclasses.fields(cls)}
        try:
            return cls(**{k: v for k, v in record.items() if k in names})
        except TypeError:  # a record from another version of this class, missing a field
            return None


def counts(cases: Sequence[Any]) -> tuple[int, int]:
    """(examples, structural checks) among cases (CodeCase or Case): what a precheck runs."""
    examples = sum(1 for c in cases if c.example)
    checks = sum(1 for c in cases if not c.example and c.precheck)
    return examples, checks


def describe(examples: int, checks: int) -> str:
    parts = [f"{examples} example{'s' if examples != 1 else ''}"] if examples else []
    if checks:
        parts.append(f"{checks} structural check{'s' if checks != 1 else ''}")
    return " and ".join(parts)
