"""The learner's last code submission: the exercise page's editor opens on it, and the exercise
detail carries it — the caller's own, whatever came of it, and nobody else's."""

from __future__ import annotations

import pytest
from django.test import Client
from django.utils import timezone
from django.utils.html import escape
from rest_framework.test import APIClient

from apps.accounts import services as account_services
from apps.accounts.models import User
from apps.exercises.choices import AttemptPart, AttemptStatus, Verdict
from apps.exercises.models import Attempt, Exercise

pytestmark = pytest.mark.django_db
WB = "transformer-math"


def url(number: str) -> str:
    return f"/api/v1/workbooks/{WB}/exercises/{number}/"


def submit(user: User, number: str, code: str, status: str = AttemptStatus.QUEUED) -> Attempt:
    """A code attempt as the service records it (grading is not what is tested here)."""
    exercise = Exercise.objects.select_related("current_version").get(workbook__slug=WB, number=number)
    assert exercise.current_version is not None
    return Attempt.objects.create(
        user=user, exercise=exercise, version=exercise.current_version, part=AttemptPart.CODE, status=status,
        raw={"code": code}, parsed={"lines": code.count("\n") + 1, "bytes": len(code)},
        verdict=Verdict.INCORRECT if status == AttemptStatus.GRADED else "",
        finished_at=timezone.now() if status != AttemptStatus.QUEUED else None,
    )  # fmt: skip


def test_the_detail_and_the_page_carry_the_callers_own_last_code(
    api: APIClient, student: User, other_student: User
) -> None:
    assert api.get(url("0.5")).json()["last_code"] is None  # nothing sent yet: the page shows the starter
    submit(student, "0.5", "def param_count(d, n_layers, vocab_size):\n    return 1\n", AttemptStatus.GRADED)
    # The latest, though a sandbox fault left it ungraded: the code is still the learner's.
    latest = submit(student, "0.5", "def param_count(d, n_layers, vocab_size):\n    return 2  # <mine>\n", "not_graded")
    theirs = submit(other_student, "0.5", "def param_count(d, n_layers, vocab_size):\n    return 3  # bob's\n")

    body = api.get(url("0.5")).json()
    assert body["last_code"] == {
        "attempt": latest.pk,
        "code": latest.raw["code"],
        "submitted_at": latest.created_at.isoformat().replace("+00:00", "Z"),
        "status": "not_graded",
        "verdict": "",
        "url": f"/api/v1/attempts/{latest.pk}/",
    }
    other = APIClient()
    other.credentials(HTTP_AUTHORIZATION=f"Token {account_services.auth_token_issue(user=other_student).key}")
    assert other.get(url("0.5")).json()["last_code"]["attempt"] == theirs.pk
    assert api.get(url("0.1")).json()["last_code"] is None  # a numeric exercise takes no code

    # The page: the editor opens on it (escaped), with the starter kept aside for "Reset to starter".
    web = Client()
    web.force_login(student)
    page = web.get(f"/w/{WB}/0.5/").content.decode()
    assert f">\n{escape(latest.raw['code'])}</textarea>" in page
    assert f'data-last-attempt="{latest.pk}"' in page and f'data-draft="{student.pk}:{WB}/0.5@' in page
    assert "bob&#x27;s" not in page and "return 3" not in page
    # A Debug exercise's fix editor opens on the last fix the same way.
    fix = submit(student, "0.6", "def fixed():\n    return 'my fix'\n")
    page = web.get(f"/w/{WB}/0.6/").content.decode()
    assert f'data-last-attempt="{fix.pk}"' in page and escape(fix.raw["code"]) in page
