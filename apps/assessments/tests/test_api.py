"""The assessments API on real content, PostgreSQL and Redis: authoring, overrides, the gradebook
(JSON and CSV), score overrides, the live view for instructors; opening, answering, hints and
submitting for learners; who may see what (other cohorts' people get 404, anonymous 401), and
verdicts an assessment hides really absent from the JSON."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from apps.accounts import services as account_services
from apps.accounts.models import Role, User
from apps.assessments.models import Assessment, Instance, InstanceQuestion, Kind, Override, Submission, Verdicts
from apps.assessments.tests.conftest import Clock, MakeAssessment, right, varying, wrong
from apps.core.throttling import FixedWindowScopedThrottle
from apps.exercises.choices import AnswerFormat
from apps.exercises.models import Exercise
from apps.progress.models import Cohort
from apps.progress.services import cohorts as cohort_services

pytestmark = pytest.mark.django_db


def client_for(user: User) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {account_services.auth_token_issue(user=user).key}")
    return client


def ref(exercise: Exercise) -> str:
    return f"{exercise.workbook.slug}/{exercise.number}"


@pytest.fixture
def prof(instructor: User) -> APIClient:
    return client_for(instructor)


@pytest.fixture
def stranger_prof(make_user: Callable[..., User]) -> APIClient:
    """An instructor of another cohort."""
    other = make_user("other-prof", role=Role.INSTRUCTOR)
    cohort_services.cohort_create(instructor=other, name="Another class")
    return client_for(other)


@pytest.fixture
def outsider(make_user: Callable[..., User]) -> APIClient:
    """A learner of another cohort."""
    learner = make_user("carol")
    other = cohort_services.cohort_create(instructor=make_user("prof3", role=Role.INSTRUCTOR), name="Elsewhere")
    cohort_services.cohort_join(user=learner, code=other.join_code)
    return client_for(learner)


def body(clock: Clock, pool: list[Exercise], **fields: Any) -> dict[str, Any]:
    values: dict[str, Any] = {
        "slug": "hw1",
        "title": "Homework 1",
        "kind": "homework",
        "opens_at": (clock.at - timedelta(hours=1)).isoformat(),
        "due_at": (clock.at + timedelta(days=2)).isoformat(),
        "closes_at": (clock.at + timedelta(days=7)).isoformat(),
        "late_rules": [{"until": (clock.at + timedelta(days=4)).isoformat(), "credit": 50}],
        "attempt_credit": [100, 80],
        "questions": [
            {"position": 1, "zone": "Part A", "points": 5, "pool": [ref(pool[0])]},
            {"position": 2, "points": 10, "choose": 1, "pool": [ref(e) for e in pool[1:]], "verdicts": "after_close"},
        ],
    }
    values.update(fields)
    return values


# ---- authoring -----------------------------------------------------------------------------------


def test_an_instructor_creates_reads_changes_and_deletes_an_assessment(
    prof: APIClient, cohort: Cohort, clock: Clock
) -> None:
    pool = varying(n=3)
    made = prof.post(f"/api/v1/cohorts/{cohort.pk}/assessments/", body(clock, pool), format="json")
    assert made.status_code == 201, made.content
    data = made.json()
    assert data["points"] == 15 and data["instances"] == 0 and data["cohort_id"] == cohort.pk
    assert [q["pool"] for q in data["questions"]] == [[ref(pool[0])], [ref(pool[1]), ref(pool[2])]]
    assert data["questions"][0]["zone"] == "Part A" and data["questions"][1]["verdicts"] == "after_close"
    assert data["late_rules"][0]["credit"] == 50 and data["attempt_credit"] == [100, 80]
    listed = prof.get(f"/api/v1/cohorts/{cohort.pk}/assessments/").json()
    assert [a["slug"] for a in listed] == ["hw1"]

    url = f"/api/v1/assessments/{data['id']}/"
    assert prof.get(url).json()["title"] == "Homework 1"
    changed = prof.patch(url, {"title": "Homework one", "max_attempts": 3}, format="json")
    assert changed.status_code == 200, changed.content
    assert changed.json()["title"] == "Homework one" and changed.json()["max_attempts"] == 3
    assert changed.json()["questions"] == data["questions"]  # untouched when not given
    # Questions may be replaced while nobody has an instance (items read whole, defaults applied).
    again = prof.patch(url, {"questions": [{"position": 1, "pool": [ref(pool[2])]}]}, format="json")
    assert again.status_code == 200, again.content
    assert again.json()["questions"] == [
        {"position": 1, "zone": "", "points": 1.0, "choose": 1, "pool": [ref(pool[2])], "verdicts": ""}
    ]
    assert prof.delete(url).status_code == 204
    assert not Assessment.objects.filter(pk=data["id"]).exists()


def test_authoring_refuses_bad_input_and_keeps_nothing(prof: APIClient, cohort: Cohort, clock: Clock) -> None:
    pool = varying(n=3)
    url = f"/api/v1/cohorts/{cohort.pk}/assessments/"
    unknown = body(clock, pool)
    unknown["questions"][1]["pool"].append("transformer-math/99.99")
    r = prof.post(url, unknown, format="json")
    assert r.status_code == 400 and r.json()["error"]["code"] == "unknown_exercise"
    code = Exercise.objects.filter(format=AnswerFormat.CODE, is_active=True).select_related("workbook").first()
    assert code is not None
    with_code = body(clock, pool)
    with_code["questions"][0]["pool"] = [ref(code)]
    r = prof.post(url, with_code, format="json")
    assert r.status_code == 400 and r.json()["error"]["code"] == "code_not_in_assessments"
    r = prof.post(url, body(clock, pool, closes_at=(clock.at - timedelta(days=1)).isoformat()), format="json")
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_window"
    too_many = body(clock, pool)
    too_many["questions"][1]["choose"] = 3
    r = prof.post(url, too_many, format="json")
    assert r.status_code == 400 and r.json()["error"]["code"] == "pool_too_small"
    r = prof.post(url, body(clock, pool, questions=[]), format="json")
    assert r.status_code == 400 and "questions" in json.dumps(r.json())
    assert not Assessment.objects.exists()
    assert prof.post(url, body(clock, pool), format="json").status_code == 201
    r = prof.post(url, body(clock, pool), format="json")
    assert r.status_code == 409 and r.json()["error"]["code"] == "slug_taken"
    assert Assessment.objects.count() == 1


def test_questions_are_locked_once_a_learner_has_an_instance(
    prof: APIClient, api: APIClient, make_assessment: MakeAssessment
) -> None:
    pool = varying(n=2)
    homework = make_assessment(pools=[[pool[0]]])
    assert api.post(f"/api/v1/assessments/{homework.pk}/open/").status_code == 201
    url = f"/api/v1/assessments/{homework.pk}/"
    r = prof.patch(url, {"questions": [{"position": 1, "pool": [ref(pool[1])]}]}, format="json")
    assert r.status_code == 409 and r.json()["error"]["code"] == "questions_locked"
    assert "instance" in r.json()["error"]["message"]
    assert list(homework.questions.get().pool.all()) == [pool[0]]
    assert prof.patch(url, {"title": "Renamed"}, format="json").json()["title"] == "Renamed"
    r = prof.delete(url)
    assert r.status_code == 409 and r.json()["error"]["code"] == "has_instances"


# ---- who may see what ----------------------------------------------------------------------------


def test_instructor_resources_are_404_to_others_and_401_to_anonymous(
    prof: APIClient,
    api: APIClient,
    stranger_prof: APIClient,
    anon_api: APIClient,
    make_user: Callable[..., User],
    make_assessment: MakeAssessment,
    cohort: Cohort,
    student: User,
) -> None:
    homework = make_assessment(pools=[varying(n=1)])
    a = homework.pk
    reads = [
        f"/api/v1/cohorts/{cohort.pk}/assessments/",
        f"/api/v1/assessments/{a}/",
        f"/api/v1/assessments/{a}/overrides/",
        f"/api/v1/cohorts/{cohort.pk}/gradebook/",
        f"/api/v1/cohorts/{cohort.pk}/gradebook.csv",
        f"/api/v1/assessments/{a}/learners/{student.pk}/score/",
        f"/api/v1/assessments/{a}/live/",
    ]
    for url in reads:
        assert prof.get(url).status_code == 200, url
        for client in (api, stranger_prof):
            r = client.get(url)
            assert r.status_code == 404 and r.json()["error"]["code"] == "not_found", url
        assert anon_api.get(url).status_code == 401, url
    superuser = make_user("root", role=Role.INSTRUCTOR)
    superuser.is_superuser = True
    superuser.save(update_fields=["is_superuser"])
    assert all(client_for(superuser).get(url).status_code == 200 for url in reads)
    writes = [
        (f"/api/v1/assessments/{a}/overrides/", {"user_id": student.pk, "reason": "ill", "extra_attempts": 1}),
        (f"/api/v1/assessments/{a}/learners/{student.pk}/score/", {"score": 3, "reason": "regrade"}),
    ]
    for url, data in writes:
        for client in (api, stranger_prof):
            assert client.post(url, data, format="json").status_code == 404, url
    assert stranger_prof.patch(f"/api/v1/assessments/{a}/", {"title": "x"}, format="json").status_code == 404
    assert stranger_prof.delete(f"/api/v1/assessments/{a}/").status_code == 404
    assert not Override.objects.exists() and not Instance.objects.exists()
    assert Assessment.objects.get(pk=a).title == "Homework"


def test_a_learner_of_another_cohort_sees_nothing(
    outsider: APIClient, anon_api: APIClient, api: APIClient, make_assessment: MakeAssessment
) -> None:
    homework = make_assessment(pools=[varying(n=1)])
    assert outsider.get("/api/v1/me/assessments/").json() == []
    assert [x["id"] for x in api.get("/api/v1/me/assessments/").json()] == [homework.pk]
    for path in ("open/", "submit/", "questions/1/hints/"):
        assert outsider.post(f"/api/v1/assessments/{homework.pk}/{path}").status_code == 404
    assert outsider.get(f"/api/v1/assessments/{homework.pk}/instance/").status_code == 404
    r = outsider.post(f"/api/v1/assessments/{homework.pk}/questions/1/answers/", {"answer": "1"}, format="json")
    assert r.status_code == 404
    assert anon_api.get("/api/v1/me/assessments/").status_code == 401
    assert anon_api.post(f"/api/v1/assessments/{homework.pk}/open/").status_code == 401
    assert not Instance.objects.exists()


def test_an_assessment_not_open_yet_is_not_listed_nor_opened(
    api: APIClient, make_assessment: MakeAssessment, clock: Clock
) -> None:
    later = make_assessment(pools=[varying(n=1)], opens_at=clock.at + timedelta(days=1))
    assert api.get("/api/v1/me/assessments/").json() == []
    assert api.post(f"/api/v1/assessments/{later.pk}/open/").status_code == 404


# ---- a learner's work ----------------------------------------------------------------------------


def test_a_learner_opens_answers_sees_live_verdicts_and_submits(
    api: APIClient, make_assessment: MakeAssessment, student: User, clock: Clock
) -> None:
    homework = make_assessment(pools=[[e] for e in varying(n=2)], max_attempts=3)
    base = f"/api/v1/assessments/{homework.pk}"
    (row,) = api.get("/api/v1/me/assessments/").json()
    assert row["state"] == "not_started" and row["score"] is None and row["max_score"] == 20
    assert api.get(f"{base}/instance/").status_code == 404
    opened = api.post(f"{base}/open/")
    assert opened.status_code == 201
    assert api.post(f"{base}/open/").status_code == 200
    data = opened.json()
    assert data["state"] == "open" and data["closed"] is False and data["max_score"] == 20
    assert data["time_left_s"] == 7 * 24 * 3600  # no time limit: until the close, 7 days from now
    first = data["questions"][0]
    assert first["prompt_html"] and first["widget"]["format"] == "numeric" and first["attempts_left"] == 3
    text = json.dumps(data)
    assert "solution" not in text and "explanation" not in text
    item = InstanceQuestion.objects.get(instance__user=student, position=1)
    assert first["title"] == item.exercise.title

    r = api.post(f"{base}/questions/1/answers/", wrong(item), format="json")
    assert r.status_code == 201, r.content
    assert r.json()["status"] == "graded" and r.json()["correct"] is False and r.json()["points"] == 0
    r = api.post(f"{base}/questions/1/answers/", right(item), format="json")
    assert r.json()["correct"] is True and r.json()["points"] == 10 and r.json()["attempts_left"] == 1
    mine = api.get(f"{base}/instance/").json()
    assert mine["score"] == 10 and mine["score_visible"] is True
    assert [a["correct"] for a in mine["questions"][0]["answers"]] == [False, True]
    assert mine["questions"][0]["best"] == 10

    done = api.post(f"{base}/submit/")
    assert done.status_code == 200 and done.json()["state"] == "submitted" and done.json()["time_left_s"] is None
    r = api.post(f"{base}/questions/2/answers/", wrong(item), format="json")
    assert r.status_code == 409 and r.json()["error"]["code"] == "submitted"
    assert api.get("/api/v1/me/assessments/").json()[0]["state"] == "submitted"
    assert api.post(f"{base}/questions/9/answers/", right(item), format="json").status_code == 404


def test_hidden_verdicts_are_absent_from_every_body_until_the_close(
    api: APIClient, make_assessment: MakeAssessment, student: User, clock: Clock
) -> None:
    exam = make_assessment(
        kind=Kind.EXAM, pools=[[e] for e in varying(n=2)], verdicts=Verdicts.AFTER_CLOSE, time_limit_minutes=60
    )
    base = f"/api/v1/assessments/{exam.pk}"
    api.post(f"{base}/open/")
    item = InstanceQuestion.objects.get(instance__user=student, position=1)
    r = api.post(f"{base}/questions/1/answers/", right(item), format="json")
    assert r.status_code == 201
    saved = r.json()
    assert saved["status"] == "saved"
    assert saved["correct"] is None and saved["points"] is None and saved["feedback_html"] is None
    assert saved["credit"] is None
    assert Submission.objects.get().correct is True  # graded and kept, only not shown
    mine = api.get(f"{base}/instance/").json()
    assert mine["score"] is None and mine["score_visible"] is False
    assert mine["questions"][0]["best"] is None and mine["questions"][0]["verdicts_visible"] is False
    assert mine["questions"][0]["answers"][0]["correct"] is None
    text = json.dumps(mine)
    assert '"correct": true' not in text and '"points": 10' not in text.replace('"points": 10.0, "title"', "")
    assert mine["time_left_s"] == 3600
    (row,) = api.get("/api/v1/me/assessments/").json()
    assert row["state"] == "open" and row["score"] is None and row["time_left_s"] == 3600
    r = api.post(f"{base}/questions/1/hints/")
    assert r.status_code == 409 and r.json()["error"]["code"] == "no_hints"

    clock.advance(days=8)  # the exam closed for everyone and the instance is closed: verdicts show
    shown = api.get(f"{base}/instance/").json()
    assert shown["state"] == "closed" and shown["score"] == 10 and shown["questions"][0]["answers"][0]["correct"]
    assert api.get("/api/v1/me/assessments/").json()[0]["score"] == 10


def test_time_up_is_a_409_and_earlier_answers_are_kept(
    api: APIClient, make_assessment: MakeAssessment, student: User, clock: Clock
) -> None:
    exam = make_assessment(kind=Kind.EXAM, pools=[[e] for e in varying(n=2)], time_limit_minutes=30)
    base = f"/api/v1/assessments/{exam.pk}"
    api.post(f"{base}/open/")
    one = InstanceQuestion.objects.get(instance__user=student, position=1)
    two = InstanceQuestion.objects.get(instance__user=student, position=2)
    assert api.post(f"{base}/questions/1/answers/", right(one), format="json").status_code == 201
    clock.advance(minutes=31)
    r = api.post(f"{base}/questions/2/answers/", right(two), format="json")
    assert r.status_code == 409 and r.json()["error"]["code"] == "time_up"
    assert "kept" in r.json()["error"]["message"]
    assert Submission.objects.count() == 1
    mine = api.get(f"{base}/instance/").json()
    assert mine["closed"] is True and mine["time_left_s"] is None and mine["score"] == 10


def test_an_unreadable_answer_is_a_400_and_costs_nothing(
    api: APIClient, make_assessment: MakeAssessment, student: User
) -> None:
    homework = make_assessment(pools=[varying(n=1)], max_attempts=1)
    base = f"/api/v1/assessments/{homework.pk}"
    api.post(f"{base}/open/")
    for bad in ({"answer": "banana"}, {"answer": ""}, {}, {"answer": 12}):
        r = api.post(f"{base}/questions/1/answers/", bad, format="json")
        assert r.status_code == 400, (bad, r.content)
        assert set(r.json()["error"]) >= {"code", "message"}
    assert not Submission.objects.exists()
    assert InstanceQuestion.objects.get(instance__user=student).attempts == 0
    item = InstanceQuestion.objects.get(instance__user=student)
    assert api.post(f"{base}/questions/1/answers/", wrong(item), format="json").status_code == 201
    r = api.post(f"{base}/questions/1/answers/", right(item), format="json")
    assert r.status_code == 409 and r.json()["error"]["code"] == "no_attempts_left"


def test_homework_hints_come_one_at_a_time(api: APIClient, make_assessment: MakeAssessment, student: User) -> None:
    homework = make_assessment(pools=[varying(n=1)])
    base = f"/api/v1/assessments/{homework.pk}"
    api.post(f"{base}/open/")
    before = api.get(f"{base}/instance/").json()["questions"][0]["hints"]
    assert before["shown"] == []
    r = api.post(f"{base}/questions/1/hints/")
    if before["total"] == 0:
        assert r.status_code == 409 and r.json()["error"]["code"] == "no_more_hints"
        return
    assert r.status_code == 200 and r.json()["total"] == before["total"] and len(r.json()["shown"]) == 1
    assert len(api.get(f"{base}/instance/").json()["questions"][0]["hints"]["shown"]) == 1


# ---- overrides, scores, gradebook, live ----------------------------------------------------------


def test_overrides_are_granted_listed_and_revoked_with_who_and_why(
    prof: APIClient, api: APIClient, make_assessment: MakeAssessment, student: User, outsider: APIClient
) -> None:
    exam = make_assessment(kind=Kind.EXAM, pools=[varying(n=1)], time_limit_minutes=40)
    url = f"/api/v1/assessments/{exam.pk}/overrides/"
    r = prof.post(url, {"username": "alice", "time_factor": 1.5}, format="json")
    assert r.status_code == 400  # no reason
    r = prof.post(url, {"username": "alice", "reason": "   ", "time_factor": 1.5}, format="json")
    assert r.status_code == 400
    r = prof.post(url, {"username": "alice", "reason": "Accommodation"}, format="json")
    assert r.status_code == 400 and r.json()["error"]["code"] == "empty_override"
    r = prof.post(url, {"username": "carol", "reason": "x", "extra_attempts": 1}, format="json")
    assert r.status_code == 404  # not a member of this cohort
    r = prof.post(url, {"user_id": student.pk, "username": "alice", "reason": "x", "time_factor": 2}, format="json")
    assert r.status_code == 400
    assert not Override.objects.exists()

    r = prof.post(url, {"username": "alice", "reason": "Accommodation", "time_factor": 1.5}, format="json")
    assert r.status_code == 201, r.content
    granted = r.json()
    assert granted["in_force"] and granted["granted_by"] == "prof" and granted["username"] == "alice"
    assert granted["reason"] == "Accommodation" and granted["time_factor"] == 1.5
    opened = api.post(f"/api/v1/assessments/{exam.pk}/open/").json()
    assert opened["time_left_s"] == 60 * 60  # 40 minutes × 1.5
    listed = prof.get(url).json()
    assert [o["id"] for o in listed] == [granted["id"]]

    revoked = prof.post(f"{url}{granted['id']}/revoke/")
    assert revoked.status_code == 200
    assert revoked.json()["in_force"] is False and revoked.json()["revoked_by"] == "prof"
    assert api.get(f"/api/v1/assessments/{exam.pk}/instance/").json()["time_left_s"] == 40 * 60
    assert prof.post(f"{url}999999/revoke/").status_code == 404


def test_a_score_override_needs_a_reason_and_keeps_its_history(
    prof: APIClient, api: APIClient, make_assessment: MakeAssessment, student: User, other_student: User
) -> None:
    homework = make_assessment(pools=[varying(n=1)])
    api.post(f"/api/v1/assessments/{homework.pk}/open/")
    item = InstanceQuestion.objects.get(instance__user=student)
    api.post(f"/api/v1/assessments/{homework.pk}/questions/1/answers/", right(item), format="json")
    url = f"/api/v1/assessments/{homework.pk}/learners/{student.pk}/score/"
    assert prof.get(url).json() | {"history": []} == {
        "user_id": student.pk,
        "username": "alice",
        "score": 10.0,
        "computed_score": 10.0,
        "override_score": None,
        "max_score": 10.0,
        "history": [],
    }
    for bad in ({"score": 7}, {"score": 7, "reason": ""}, {"score": 7, "reason": "  "}, {"score": -1, "reason": "x"}):
        r = prof.post(url, bad, format="json")
        assert r.status_code == 400, bad
    r = prof.post(url, {"score": 7, "reason": "Copied part 2"}, format="json")
    assert r.status_code == 200 and r.json()["score"] == 7 and r.json()["computed_score"] == 10
    r = prof.post(url, {"score": None, "reason": "Cleared on appeal"}, format="json")
    assert r.json()["score"] == 10 and r.json()["override_score"] is None
    history = prof.get(url).json()["history"]
    assert [(h["previous"], h["score"], h["reason"], h["by"]) for h in history] == [
        (7.0, None, "Cleared on appeal", "prof"),
        (10.0, 7.0, "Copied part 2", "prof"),
    ]
    # A learner who never opened it can be given a score, and the gradebook shows it.
    never = f"/api/v1/assessments/{homework.pk}/learners/{other_student.pk}/score/"
    assert prof.get(never).json()["score"] is None
    assert prof.post(never, {"score": 4, "reason": "Oral exam"}, format="json").json()["score"] == 4
    assert prof.get(f"/api/v1/assessments/{homework.pk}/learners/999999/score/").status_code == 404


def _join(cohort: Cohort, make_user: Callable[..., User], n: int) -> list[User]:
    learners = [make_user() for _ in range(n)]
    for learner in learners:
        cohort_services.cohort_join(user=learner, code=cohort.join_code)
    return learners


def test_the_gradebook_shows_scores_overrides_and_lateness_in_fixed_queries(
    prof: APIClient,
    instructor: User,
    make_assessment: MakeAssessment,
    make_user: Callable[..., User],
    cohort: Cohort,
    student: User,
    other_student: User,
    clock: Clock,
) -> None:
    from apps.assessments import services

    pool = varying(n=2)
    first = make_assessment(pools=[[pool[0]]], title="Homework 1")
    second = make_assessment(pools=[[pool[1]]], title="Exam 1", kind=Kind.EXAM)
    instance = services.instance_open(assessment=first, user=student)
    clock.advance(days=3)  # late: 0% after the due date (no late rules), the answer is late
    services.answer_submit(user=student, item_id=instance.questions.get().pk, payload=right(instance.questions.get()))
    services.override_grant(assessment=second, user=other_student, by=instructor, reason="Travel", extra_attempts=2)
    graded = services.instance_for_grading(assessment=second, user=student)
    services.score_override_set(instance=graded, score=8, reason="Paper exam", by=instructor)

    url = f"/api/v1/cohorts/{cohort.pk}/gradebook/"
    with CaptureQueriesContext(connection) as small:
        book = prof.get(url).json()
    assert book["points"] == 20 and [a["title"] for a in book["assessments"]] == ["Homework 1", "Exam 1"]
    alice, bob = book["learners"]
    assert alice["username"] == "alice" and alice["total"] == 8
    assert alice["cells"][0] | {"started_at": None} == {
        "assessment_id": first.pk,
        "score": 0.0,
        "computed_score": 0.0,
        "override_score": None,
        "max_score": 10.0,
        "late": False,
        "started_at": None,
        "submitted_at": None,
        "override": None,
    }
    assert alice["cells"][1]["score"] == 8 and alice["cells"][1]["override_score"] == 8
    assert alice["cells"][1]["computed_score"] is None
    assert bob["cells"][0]["score"] is None and bob["cells"][1]["override"]["reason"] == "Travel"
    assert bob["cells"][1]["override"]["extra_attempts"] == 2

    for learner in _join(cohort, make_user, 6):
        services.instance_open(assessment=first, user=learner)
    with CaptureQueriesContext(connection) as large:
        assert len(prof.get(url).json()["learners"]) == 8
    assert len(large.captured_queries) == len(small.captured_queries) <= 12


def test_live_shows_who_started_their_time_left_and_points(
    prof: APIClient, api: APIClient, make_assessment: MakeAssessment, student: User, clock: Clock
) -> None:
    exam = make_assessment(kind=Kind.EXAM, pools=[[e] for e in varying(n=2)], time_limit_minutes=45)
    api.post(f"/api/v1/assessments/{exam.pk}/open/")
    item = InstanceQuestion.objects.get(instance__user=student, position=1)
    api.post(f"/api/v1/assessments/{exam.pk}/questions/1/answers/", right(item), format="json")
    clock.advance(minutes=15)
    live = prof.get(f"/api/v1/assessments/{exam.pk}/live/").json()
    alice, bob = live["learners"]
    assert alice["username"] == "alice" and alice["time_left_s"] == 30 * 60 and alice["answered"] == 1
    assert alice["questions"] == 2 and alice["score"] == 10 and alice["closed"] is False
    assert bob["started_at"] is None and bob["time_left_s"] is None and bob["score"] is None
    assert bob["max_score"] == 20


def test_the_gradebook_csv_is_wide_and_formula_safe(
    prof: APIClient,
    instructor: User,
    make_assessment: MakeAssessment,
    cohort: Cohort,
    student: User,
) -> None:
    from apps.assessments import services

    homework = make_assessment(pools=[varying(n=1)], title="=HYPERLINK(1)")
    instance = services.instance_open(assessment=homework, user=student)
    services.answer_submit(user=student, item_id=instance.questions.get().pk, payload=right(instance.questions.get()))
    r = prof.get(f"/api/v1/cohorts/{cohort.pk}/gradebook.csv", HTTP_ACCEPT="text/csv")
    assert r.status_code == 200 and r["Content-Type"].startswith("text/csv")
    assert f'filename="cohort-{cohort.pk}-gradebook.csv"' in r["Content-Disposition"]
    rows = list(csv.reader(io.StringIO(r.content.decode())))
    assert rows == [
        ["username", "email", "'=HYPERLINK(1) [10 pts]", "Total [10 pts]"],
        ["alice", student.email, "10", "10"],
        ["bob", "", "", "0"],
    ]


def test_answers_are_throttled_like_practice_attempts(
    api: APIClient, make_assessment: MakeAssessment, student: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    rates = {**FixedWindowScopedThrottle.THROTTLE_RATES, "attempts": "3/min"}
    monkeypatch.setattr(FixedWindowScopedThrottle, "THROTTLE_RATES", rates)
    homework = make_assessment(pools=[varying(n=1)])
    base = f"/api/v1/assessments/{homework.pk}"
    api.post(f"{base}/open/")
    item = InstanceQuestion.objects.get(instance__user=student)
    codes = [api.post(f"{base}/questions/1/answers/", wrong(item), format="json").status_code for _ in range(4)]
    assert codes == [201, 201, 201, 429]
    assert Submission.objects.count() == 3
    assert api.get(f"{base}/instance/").status_code == 200  # reading is not throttled
