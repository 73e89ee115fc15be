"""The Celery queues, by name: routing, workers' ``-Q`` and tests say the same thing."""

from enum import StrEnum


class Queue(StrEnum):
    DEFAULT = "celery"  # everything that needs only PostgreSQL and Redis
    SANDBOX = "sandbox"  # learners' code: consumed by workers that can reach a Docker Engine
