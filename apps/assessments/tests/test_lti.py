"""One LMS column per assessment, against the real test LTI platform (apps/lti/tests/platform.py:
a live HTTP server that signs launches, verifies the tool's service tokens and records line items
and scores): deep linking places assessments, each with its own line item; scores arrive when an
instance is submitted or closes and again after an override; relaunches and retries create no
second line item; a busy platform is retried and nothing is lost; hidden verdicts are not leaked."""

from __future__ import annotations

import re
import threading
from datetime import timedelta
from typing import Any

import jwt
import pytest
import requests
from celery.exceptions import Retry
from django.db import connection
from django.test import Client
from django.utils import timezone
from lti_tool.models import LtiContext

from apps.accounts.models import Role, User
from apps.assessments import lti as assessments_lti
from apps.assessments import services
from apps.assessments.models import Assessment, Instance, Kind, Question, Verdicts
from apps.assessments.tests.conftest import right, varying
from apps.lti import services as lti_services
from apps.lti.models import CohortLink, ContextLineItem
from apps.lti.tests import conftest as lti_fixtures
from apps.lti.tests.conftest import Lms
from apps.lti.tests.platform import INSTRUCTOR, LEARNER, TestPlatform
from apps.progress.models import Cohort
from apps.progress.services.cohorts import cohort_create, cohort_join

platform = lti_fixtures.platform  # the LTI app's fixtures: the test platform, and the LMS's browser
lms = lti_fixtures.lms
CONTENT_ITEMS = "https://purl.imsglobal.org/spec/lti-dl/claim/content_items"


@pytest.fixture(autouse=True)
def _installed() -> None:
    """AssessmentsConfig.ready() installs it; installing again is harmless (tests do not rely on the order)."""
    assessments_lti.install()


@pytest.fixture
def scheduled(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The score posts the signal schedules (not sent to a broker: the test runs them)."""
    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(assessments_lti.post_instance_score, "apply_async", lambda **kw: calls.append(kw))
    return calls


def _post(instance_id: int) -> str:
    return str(assessments_lti.post_instance_score.apply(args=(instance_id,)).get())


def _course(lms: Lms) -> tuple[Cohort, User]:
    """The instructor's first launch sets up the course's cohort, as in a real course."""
    response = lms.launch(Client(), sub="teacher-1", roles=INSTRUCTOR)
    assert response.status_code == 200, response.content.decode()
    link = CohortLink.objects.select_related("cohort__instructor").get()
    return link.cohort, link.cohort.instructor


def _assessment(cohort: Cohort, by: User, title: str, *, n: int = 2, points: float = 5.0, **fields: Any) -> Assessment:
    now = timezone.now()
    values: dict[str, Any] = {
        "cohort": cohort,
        "slug": re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-"),
        "title": title,
        "opens_at": now - timedelta(hours=1),
        "due_at": now + timedelta(days=2),
        "closes_at": now + timedelta(days=7),
        "created_by": by,
    }
    values.update(fields)
    assessment = Assessment.objects.create(**values)
    for i, exercise in enumerate(varying(n=n)):
        question = Question.objects.create(assessment=assessment, position=i + 1, points=points)
        question.pool.set([exercise])
    return assessment


def _picker_token(response: Any) -> str:
    match = re.search(r'name="token" value="([^"]+)"', response.content.decode())
    assert match, response.content.decode()
    return match.group(1)


def _place(lms: Lms, platform: TestPlatform, values: list[str]) -> list[dict[str, Any]]:
    """The instructor's content picker in the LMS: choose, and the LMS receives the response."""
    picker = lms.launch(Client(), sub="teacher-1", roles=INSTRUCTOR, message_type="LtiDeepLinkingRequest")
    assert picker.status_code == 200, picker.content.decode()
    page = picker.content.decode()
    for value in values:
        assert f'value="{value}"' in page
    response = Client().post("/lti/deep-link/", {"token": _picker_token(picker), "item": values})
    assert response.status_code == 200, response.content.decode()
    encoded = re.search(r'name="JWT" value="([^"]+)"', response.content.decode()).group(1)  # type: ignore[union-attr]
    # The browser posts the signed response to the LMS, which makes the links and their line items.
    assert requests.post(platform.base + "/deep-link-return", data={"JWT": encoded}, timeout=10).ok
    return list(jwt.decode(encoded, options={"verify_signature": False})[CONTENT_ITEMS])


def _landing(response: Any) -> str:
    match = re.search(r'id="lti-landing" data-href="([^"]+)"', response.content.decode())
    assert match, response.content.decode()
    return match.group(1)


def _launch_placed(lms: Lms, placed: dict[str, Any], sub: str, roles: list[str]) -> Any:
    response = lms.launch(
        Client(),
        sub=sub,
        roles=roles,
        custom=placed["custom"],
        resource_link_id=placed["resource_link_id"],
        lineitem=placed["lineitem"],
    )
    assert response.status_code == 200, response.content.decode()
    return response


def _take(assessment: Assessment, learner: User, capture: Any, *, correct: int) -> Instance:
    """Open, answer ``correct`` questions right, and submit (its on_commit hooks run, as after a commit)."""
    instance = services.instance_open(assessment=assessment, user=learner)
    for item in list(instance.questions.all())[:correct]:
        services.answer_submit(user=learner, item_id=item.pk, payload=right(item))
    with capture(execute=True):
        return services.instance_submit(user=learner, instance=instance)


def test_two_placed_assessments_are_two_columns_that_get_scores_and_overrides_without_duplicates(
    lms: Lms,
    platform: TestPlatform,
    scheduled: list[dict[str, Any]],
    django_capture_on_commit_callbacks: Any,
) -> None:
    platform.lineitems_from_deep_linking = True
    cohort, teacher = _course(lms)
    homework = _assessment(cohort, teacher, "Homework 1", n=2, points=5.0)
    exam = _assessment(cohort, teacher, "Midterm", n=1, points=10.0, kind=Kind.EXAM)

    items = _place(lms, platform, [f"assessment/{homework.pk}", f"assessment/{exam.pk}"])
    assert [i["custom"] for i in items] == [{"assessment": str(homework.pk)}, {"assessment": str(exam.pk)}]
    assert items[0]["lineItem"] == {
        "scoreMaximum": 10.0,
        "label": "Homework 1",
        "resourceId": f"assessment:{homework.pk}",
    }
    assert items[1]["lineItem"]["resourceId"] == f"assessment:{exam.pk}" and items[1]["lineItem"]["scoreMaximum"] == 10
    assert len(platform.lineitems) == 2  # the LMS made one column per assessment
    on_homework, on_exam = platform.placed

    # The learner follows the homework link: their page; its line item is remembered for the course.
    landing = _landing(_launch_placed(lms, on_homework, "learner-1", LEARNER))
    assert landing == f"/assessments/{homework.pk}/"
    remembered = ContextLineItem.objects.get(resource_id=f"assessment:{homework.pk}")
    assert remembered.lineitem_url == on_homework["lineitem"]
    # The instructor following the same link lands on its admin page.
    instructor_landing = _landing(_launch_placed(lms, on_homework, "teacher-1", INSTRUCTOR))
    assert instructor_landing == f"/admin/assessments/assessment/{homework.pk}/change/"

    learner = User.objects.get(lti_identities__subject="learner-1")
    instance = _take(homework, learner, django_capture_on_commit_callbacks, correct=1)
    assert [c["args"] for c in scheduled] == [(instance.pk,)]
    assert _post(instance.pk) == "posted"
    [(url, score)] = platform.scores
    assert url == on_homework["lineitem"]
    assert score["userId"] == "learner-1" and score["scoreGiven"] == pytest.approx(5.0)
    assert score["scoreMaximum"] == 10 and score["activityProgress"] == "Completed"
    assert score["gradingProgress"] == "FullyGraded" and score["timestamp"]
    instance.refresh_from_db()
    assert instance.posted_score == pytest.approx(5.0) and instance.posted_at is not None

    # Relaunches and a second submit: no new line item, no new post.
    _launch_placed(lms, on_homework, "learner-1", LEARNER)
    _launch_placed(lms, on_exam, "learner-1", LEARNER)
    with django_capture_on_commit_callbacks(execute=True):
        services.instance_submit(user=learner, instance=instance)
    assert len(scheduled) == 1
    assert _post(instance.pk) == "unchanged"  # a retried or repeated task is harmless
    assert len(platform.lineitems) == 2 and len(platform.scores) == 1

    # The exam: its own column, its own score.
    exam_instance = _take(exam, learner, django_capture_on_commit_callbacks, correct=1)
    assert _post(exam_instance.pk) == "posted"
    assert platform.scores[-1][0] == on_exam["lineitem"] and platform.scores[-1][1]["scoreGiven"] == 10

    # The instructor overrides the homework's score: the new score goes to the same column.
    with django_capture_on_commit_callbacks(execute=True):
        services.score_override_set(instance=instance, score=9.5, reason="Regraded question 2", by=teacher)
    assert scheduled[-1]["args"] == (instance.pk,)
    assert _post(instance.pk) == "posted"
    url, score = platform.scores[-1]
    assert url == on_homework["lineitem"] and score["scoreGiven"] == 9.5 and score["userId"] == "learner-1"
    instance.refresh_from_db()
    assert instance.posted_score == 9.5
    assert len(platform.lineitems) == 2 and ContextLineItem.objects.count() == 2


def test_without_a_placed_line_item_the_first_score_finds_or_creates_one_column_per_assessment(
    lms: Lms,
    platform: TestPlatform,
    make_user: Any,
    scheduled: list[dict[str, Any]],
    django_capture_on_commit_callbacks: Any,
) -> None:
    cohort, teacher = _course(lms)
    homework = _assessment(cohort, teacher, "Homework 2")
    quiz = _assessment(cohort, teacher, "Quiz")
    # The platform already has a column for the quiz (an earlier create whose answer was lost).
    existing = platform.lineitem_add("Quiz")
    platform.lineitems[-1]["resourceId"] = f"assessment:{quiz.pk}"
    custom = {"assessment": str(homework.pk)}
    for sub in ("learner-1", "learner-2"):
        lms.launch(Client(), sub=sub, roles=LEARNER, custom=custom, resource_link_id="hw", name=f"Learner {sub}")
    one, two = (User.objects.get(lti_identities__subject=s) for s in ("learner-1", "learner-2"))

    first = _take(homework, one, django_capture_on_commit_callbacks, correct=2)
    assert _post(first.pk) == "posted"
    assert platform.lineitem_queries[-1] == {"resource_id": f"assessment:{homework.pk}"}  # AGS's filter asked
    created = platform.lineitems[-1]
    assert created["resourceId"] == f"assessment:{homework.pk}" and created["label"] == "Homework 2"
    assert created["scoreMaximum"] == 10 and len(platform.lineitems) == 2
    second = _take(homework, two, django_capture_on_commit_callbacks, correct=0)
    queries = len(platform.lineitem_queries)
    assert _post(second.pk) == "posted"
    assert len(platform.lineitem_queries) == queries and len(platform.lineitems) == 2  # the stored URL, reused
    assert [(u, s["userId"], s["scoreGiven"]) for u, s in platform.scores] == [
        (created["id"], "learner-1", 10),
        (created["id"], "learner-2", 0),
    ]

    quiz_instance = _take(quiz, one, django_capture_on_commit_callbacks, correct=1)
    assert _post(quiz_instance.pk) == "posted"
    assert platform.scores[-1][0] == existing and len(platform.lineitems) == 2  # found by resource id, reused

    # A learner who joined by code is unknown to the platform: nothing to post, nothing owed.
    by_code = make_user("by-code")
    cohort_join(user=by_code, code=cohort.join_code)
    theirs = _take(homework, by_code, django_capture_on_commit_callbacks, correct=1)
    assert _post(theirs.pk) == "no identity"
    assert theirs.pk not in assessments_lti.instances_owed()


def test_a_busy_platform_is_retried_and_the_score_is_owed_until_it_arrives(
    lms: Lms,
    platform: TestPlatform,
    scheduled: list[dict[str, Any]],
    django_capture_on_commit_callbacks: Any,
) -> None:
    cohort, teacher = _course(lms)
    homework = _assessment(cohort, teacher, "Homework 3")
    lms.launch(Client(), sub="learner-1", roles=LEARNER, custom={"assessment": str(homework.pk)})
    learner = User.objects.get(lti_identities__subject="learner-1")
    instance = _take(homework, learner, django_capture_on_commit_callbacks, correct=1)

    platform.fail_scores = 1  # a 503: Celery retries the task (with backoff)
    with pytest.raises(Retry):
        assessments_lti.post_instance_score.apply(args=(instance.pk,))
    assert platform.scores == []
    instance.refresh_from_db()
    assert instance.posted_at is None and instance.posted_score is None
    assert assessments_lti.instances_owed() == [instance.pk]  # the sweep would send it again

    assert _post(instance.pk) == "posted"
    assert len(platform.lineitems) == 1 and platform.scores[0][1]["scoreGiven"] == 5
    assert assessments_lti.instances_owed() == []

    # The platform unreachable altogether: retried too, and nothing recorded as sent.
    with django_capture_on_commit_callbacks(execute=True):
        services.score_override_set(instance=instance, score=7, reason="Late work accepted", by=teacher)
    platform.close()
    with pytest.raises(Retry):
        assessments_lti.post_instance_score.apply(args=(instance.pk,))
    assert Instance.objects.get(pk=instance.pk).posted_score == 5  # the last score the platform has
    assert assessments_lti.instances_owed() == [instance.pk]


def test_hidden_verdicts_are_not_posted_until_the_assessment_closes(
    lms: Lms,
    platform: TestPlatform,
    scheduled: list[dict[str, Any]],
    django_capture_on_commit_callbacks: Any,
) -> None:
    cohort, teacher = _course(lms)
    exam = _assessment(cohort, teacher, "Final", kind=Kind.EXAM, verdicts=Verdicts.AFTER_CLOSE)
    lms.launch(Client(), sub="learner-1", roles=LEARNER, custom={"assessment": str(exam.pk)})
    learner = User.objects.get(lti_identities__subject="learner-1")
    instance = _take(exam, learner, django_capture_on_commit_callbacks, correct=2)
    assert _post(instance.pk) == "hidden"  # the LMS shows grades to learners: not before the close
    assert platform.scores == [] and assessments_lti.instances_owed() == []

    now = timezone.now()
    Assessment.objects.filter(pk=exam.pk).update(opens_at=now - timedelta(days=8), closes_at=now - timedelta(minutes=1))
    assert assessments_lti.instances_owed() == [instance.pk]
    assert assessments_lti.post_scores_due.apply().get() == 1  # beat: scheduled
    assert scheduled[-1]["args"] == (instance.pk,)
    assert _post(instance.pk) == "posted"
    assert platform.scores[0][1]["scoreGiven"] == 10


def test_launches_and_placements_stay_in_their_course(lms: Lms, platform: TestPlatform, make_user: Any) -> None:
    cohort, teacher = _course(lms)
    mine = _assessment(cohort, teacher, "Mine", n=1)
    elsewhere = cohort_create(instructor=make_user("other-prof", role=Role.INSTRUCTOR), name="Another course")
    theirs = _assessment(elsewhere, elsewhere.instructor, "Theirs", n=1)

    picker = lms.launch(Client(), sub="teacher-1", roles=INSTRUCTOR, message_type="LtiDeepLinkingRequest")
    page = picker.content.decode()
    assert f'value="assessment/{mine.pk}"' in page and f'value="assessment/{theirs.pk}"' not in page
    assert "Assessments of Systems 101" in page and 'value="transformer-math"' in page  # workbooks still offered
    forged = Client().post("/lti/deep-link/", {"token": _picker_token(picker), "item": [f"assessment/{theirs.pk}"]})
    assert forged.status_code == 400 and b'data-code="nothing_chosen"' in forged.content

    # A workbook and an assessment in one response: the workbook link keeps its mastery grade.
    picker = lms.launch(Client(), sub="teacher-1", roles=INSTRUCTOR, message_type="LtiDeepLinkingRequest")
    response = Client().post(
        "/lti/deep-link/",
        {"token": _picker_token(picker), "item": ["transformer-math", f"assessment/{mine.pk}"], "graded": "on"},
    )
    encoded = re.search(r'name="JWT" value="([^"]+)"', response.content.decode()).group(1)  # type: ignore[union-attr]
    book, assessment_item = jwt.decode(encoded, options={"verify_signature": False})[CONTENT_ITEMS]
    assert book["custom"] == {"workbook": "transformer-math"} and book["lineItem"]["scoreMaximum"] == 100
    assert assessment_item["custom"] == {"assessment": str(mine.pk)}
    assert assessment_item["lineItem"]["resourceId"] == f"assessment:{mine.pk}"

    refused = lms.launch(Client(), sub="learner-1", roles=LEARNER, custom={"assessment": str(theirs.pk)})
    assert refused.status_code == 404 and b'data-code="unknown_assessment"' in refused.content
    bad = lms.launch(Client(), sub="learner-1", roles=LEARNER, custom={"assessment": "12; drop"})
    assert bad.status_code == 400 and b'data-code="bad_assessment"' in bad.content
    assert not User.objects.filter(lti_identities__subject="learner-1").exists()  # a refused launch writes nothing


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_creators_make_one_line_item(platform: TestPlatform, lms: Lms) -> None:
    lms.launch(Client(), sub="teacher-1", roles=INSTRUCTOR)
    context = LtiContext.objects.get()
    platform.lineitem_create_delay_s = 0.4  # the first create is slow: the second creator arrives meanwhile
    urls: list[str] = []
    errors: list[BaseException] = []

    def create() -> None:
        try:
            urls.append(
                lti_services.context_lineitem_ensure(
                    context=context, resource_id="assessment:77", label="Race", score_maximum=4
                )
            )
        except BaseException as error:  # noqa: BLE001 - reported by the assertion below
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=create) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert errors == [] and len(urls) == 2 and urls[0] == urls[1]
    assert len(platform.lineitems) == 1 and ContextLineItem.objects.get().lineitem_url == urls[0]
