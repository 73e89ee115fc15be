"""A live server on the test database for the contract run, and the callers it is fuzzed as.

The server is Django's threaded live server on real PostgreSQL and Redis; its requests commit, so
the accounts made here (``contract-*``) are deleted afterwards with everything they wrote, and
the leaderboards rebuilt, as tests/e2e does.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from django.contrib.staticfiles.handlers import StaticFilesHandler
from django.core.management import call_command
from django.db import connections
from django.test.testcases import LiveServerThread

from apps.accounts import services as account_services
from apps.accounts.models import Role, User
from apps.exercises.models import Attempt, Workbook
from apps.progress import services as progress_services
from apps.progress.models import Cohort, ExerciseProgress

PREFIX = "contract-"


@dataclass(frozen=True)
class Callers:
    url: str
    learner: str  # tokens
    instructor: str


def _forget() -> None:
    users = User.objects.filter(username__startswith=PREFIX)
    if not users.exists():
        return
    Cohort.objects.filter(instructor__in=users).delete()
    ExerciseProgress.objects.filter(user__in=users).delete()
    Attempt.objects.filter(user__in=users).delete()
    users.delete()
    progress_services.scores_rebuild()


@pytest.fixture(autouse=True)
def _live_database(django_db_blocker: Any) -> Iterator[None]:
    """The live server's threads read and write the test database while a test runs."""
    with django_db_blocker.unblock():
        yield


# Module-scoped, not session: the contract tests run first on their worker (conftest.py's
# LONG_GROUPS) and the accounts they commit must be gone before that worker's other tests.
@pytest.fixture(scope="module")
def contract_server(django_db_setup: None, django_db_blocker: Any) -> Iterator[Callers]:
    server = LiveServerThread("127.0.0.1", StaticFilesHandler, port=0)
    server.daemon = True
    with django_db_blocker.unblock():
        _forget()  # what an interrupted earlier run left
        call_command("sync_content", verbosity=0)
        learner = account_services.user_create(
            username=PREFIX + "learner", password="contract-pass-1x", role=Role.STUDENT
        )
        instructor = account_services.user_create(
            username=PREFIX + "instructor", password="contract-pass-2y", role=Role.INSTRUCTOR
        )
        cohort = progress_services.cohort_create(
            instructor=instructor, name="Contract cohort", time_zone="UTC",
            workbooks=[(w, None) for w in Workbook.objects.order_by("slug")],
        )  # fmt: skip
        progress_services.cohort_join(user=learner, code=cohort.join_code)
        tokens = [account_services.auth_token_issue(user=u).key for u in (learner, instructor)]
        server.start()
        server.is_ready.wait()
        if server.error:
            raise server.error
        try:
            yield Callers(f"http://127.0.0.1:{server.port}", *tokens)
        finally:
            server.terminate()
            _forget()
            connections.close_all()
