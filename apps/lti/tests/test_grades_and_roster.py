from __future__ import annotations

import time
from io import StringIO
from typing import Any

import pytest
from celery.exceptions import Retry
from django.conf import settings
from django.core.cache import cache
from django.core.management import call_command
from django.test import Client

from apps.accounts.models import User
from apps.exercises.models import Exercise, Workbook
from apps.exercises.tests.answers import correct_payload
from apps.learning import services as learning_services
from apps.lti import tasks
from apps.lti.models import CohortLink, GradeBinding, LinkTarget, LtiIdentity, RosterEntry
from apps.lti.tests.conftest import Lms
from apps.lti.tests.platform import INSTRUCTOR, LEARNER, TestPlatform
from apps.progress.models import Membership
from apps.progress.services.cohorts import cohort_join


@pytest.fixture
def scheduled(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The score posts the solves schedule (not sent to a broker: the test runs them)."""
    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(tasks.post_score, "apply_async", lambda **kw: calls.append(kw))
    return calls


def _exercises(workbook: Workbook) -> list[Exercise]:
    return list(
        Exercise.objects.filter(workbook=workbook, is_active=True)
        .select_related("workbook", "current_version", "chapter")
        .order_by("chapter__number", "position")
    )


def _solve(user: User, exercise: Exercise, capture: Any) -> None:
    with capture(execute=True):  # the solve's on_commit hooks run, as after a real commit
        outcome = learning_services.attempt_create(
            user=user, exercise=exercise, payload=correct_payload(exercise, user)
        )
    assert outcome.first_solve


def _learner(lms: Lms, **claims: Any) -> User:
    lms.launch(Client(), sub="teacher-1", roles=INSTRUCTOR)
    response = lms.launch(Client(), sub="learner-1", roles=LEARNER, **claims)
    assert response.status_code == 200, response.content.decode()
    return User.objects.get(lti_identities__subject="learner-1")


def test_solves_post_one_coalesced_score_creating_the_line_item(
    lms: Lms,
    platform: TestPlatform,
    synthetic_workbook: Workbook,
    scheduled: list[dict[str, Any]],
    django_capture_on_commit_callbacks: Any,
) -> None:
    learner = _learner(lms, custom={"workbook": "synthetic"})
    binding = GradeBinding.objects.get()
    exercises = _exercises(synthetic_workbook)
    for exercise in exercises[:3]:
        _solve(learner, exercise, django_capture_on_commit_callbacks)
    assert scheduled == [{"args": (binding.pk,), "countdown": settings.LTI_SCORE_COALESCE_S}]  # three solves, one post

    assert tasks.post_score.apply(args=(binding.pk,)).get() == "posted"
    [lineitem] = platform.lineitems
    assert lineitem["resourceLinkId"] == "link-1" and lineitem["scoreMaximum"] == 100
    [(url, score)] = platform.scores
    assert url == lineitem["id"]
    assert score["userId"] == "learner-1" and score["scoreGiven"] == 3 and score["scoreMaximum"] == 6
    assert score["activityProgress"] == "InProgress" and score["gradingProgress"] == "Pending"
    assert score["timestamp"].endswith("+00:00")
    assert LinkTarget.objects.get().lineitem_url == lineitem["id"]
    # The service token was granted against a client assertion the platform verified with our JWKS.
    assert platform.token_requests and "lti-ags/scope/score" in platform.token_requests[0]["scope"]

    assert tasks.post_score.apply(args=(binding.pk,)).get() == "unchanged"  # idempotent: nothing new
    for exercise in exercises[3:]:  # the post ran, so the next solve schedules another
        _solve(learner, exercise, django_capture_on_commit_callbacks)
    assert len(scheduled) == 2
    assert tasks.post_score.apply(args=(binding.pk,)).get() == "posted"
    score = platform.scores[-1][1]
    assert (score["scoreGiven"], score["scoreMaximum"]) == (6, 6)
    assert score["activityProgress"] == "Completed" and score["gradingProgress"] == "FullyGraded"
    assert len(platform.lineitems) == 1


def test_a_chapter_link_posts_to_its_line_item_and_retries_a_busy_platform(
    lms: Lms,
    platform: TestPlatform,
    synthetic_workbook: Workbook,
    scheduled: list[dict[str, Any]],
    django_capture_on_commit_callbacks: Any,
) -> None:
    existing = platform.lineitem_add("Chapter 2")
    learner = _learner(lms, custom={"workbook": "synthetic", "chapter": "2"}, lineitem=existing)
    binding = GradeBinding.objects.get()
    exercises = _exercises(synthetic_workbook)
    _solve(learner, exercises[0], django_capture_on_commit_callbacks)  # chapter 1: not this link's
    assert scheduled == []
    _solve(learner, exercises[4], django_capture_on_commit_callbacks)  # 2.1
    assert len(scheduled) == 1
    platform.fail_scores = 1  # a 503 first: Celery retries (with backoff), then it goes through
    with pytest.raises(Retry):
        tasks.post_score.apply(args=(binding.pk,))
    assert platform.scores == []
    assert tasks.post_score.apply(args=(binding.pk,)).get() == "posted"
    [(url, score)] = platform.scores
    assert url == existing and (score["scoreGiven"], score["scoreMaximum"]) == (1, 2)
    assert len(platform.lineitems) == 1  # the platform's line item, none created


def test_an_ungradable_link_binds_no_grade(lms: Lms, synthetic_workbook: Workbook) -> None:
    _learner(lms, custom={"workbook": "synthetic"}, ags=False)
    assert not GradeBinding.objects.exists()


def _member(sub: str, roles: list[str], status: str = "Active") -> dict[str, Any]:
    return {"user_id": sub, "roles": roles, "status": status, "name": f"Person {sub}", "email": f"{sub}@example.org"}


def test_roster_sync_adds_learners_and_removes_only_those_lti_added(
    lms: Lms, platform: TestPlatform, make_user: Any
) -> None:
    lms.launch(Client(), sub="teacher-1", roles=INSTRUCTOR)
    link = CohortLink.objects.select_related("cohort").get()
    by_code = make_user("joined-by-code")
    cohort_join(user=by_code, code=link.cohort.join_code)
    platform.roster = [
        _member("teacher-1", INSTRUCTOR),
        _member("s1", LEARNER),
        _member("s2", LEARNER),
        _member("s3", LEARNER, status="Inactive"),
    ]
    out = StringIO()
    call_command("lti_sync_roster", stdout=out)
    assert "2 added, 0 removed" in out.getvalue()
    members = set(Membership.objects.filter(cohort=link.cohort).values_list("user__username", flat=True))
    assert len(members) == 3 and "joined-by-code" in members
    assert LtiIdentity.objects.filter(subject__in=["s1", "s2"]).count() == 2
    assert not LtiIdentity.objects.filter(subject="s3").exists()

    platform.roster = [_member("teacher-1", INSTRUCTOR), _member("s1", LEARNER)]
    tasks.sync_roster.apply(args=(link.pk,))
    remaining = set(
        Membership.objects.filter(cohort=link.cohort).values_list("user__lti_identities__subject", flat=True)
    )
    assert remaining == {"s1", None}  # s1 and the learner who joined by code
    assert RosterEntry.objects.filter(link=link).count() == 1
    assert User.objects.filter(lti_identities__subject="s2").exists()  # the account stays, out of the cohort


def test_nightly_roster_sync_is_scheduled() -> None:
    entry = settings.CELERY_BEAT_SCHEDULE["lti-sync-rosters"]
    assert entry["task"] == "lti.sync_rosters"


@pytest.mark.django_db(transaction=True)
def test_without_a_broker_the_score_posts_from_a_timer_not_in_the_learners_request(
    lms: Lms, platform: TestPlatform, synthetic_workbook: Workbook, settings: Any
) -> None:
    """The embedded default (``make run``: no Redis, tasks eager): solves still coalesce into one
    post, sent after the window by a timer thread, and the learner's request does not wait for it."""
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.LTI_SCORE_COALESCE_S = 0.5
    learner = _learner(lms, custom={"workbook": "synthetic"})
    binding = GradeBinding.objects.get()
    cache.delete(tasks._pending_key(binding.pk))
    for exercise in _exercises(synthetic_workbook)[:2]:  # committed: the on_commit hooks run at once
        assert learning_services.attempt_create(
            user=learner, exercise=exercise, payload=correct_payload(exercise, learner)
        ).first_solve
    assert platform.scores == []  # nothing was posted inside the requests
    deadline = time.monotonic() + 15
    while not platform.scores and time.monotonic() < deadline:
        time.sleep(0.05)
    [(_, score)] = platform.scores
    assert (score["scoreGiven"], score["scoreMaximum"]) == (2, 6)
