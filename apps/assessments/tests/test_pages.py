"""The learner's assessment pages through Django's test client: who may see what, the start screen,
answers saved or graded beside their question, refusals that keep the learner's input and record
nothing, hints on homework, and "submit and close" behind its confirmation."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from apps.accounts.models import User
from apps.assessments.models import Instance, InstanceQuestion, Submission, Verdicts
from apps.assessments.services import variant_of
from apps.assessments.tests.conftest import Clock, MakeAssessment, right, varying, wrong
from apps.exercises.content import cache
from apps.exercises.models import Exercise
from apps.exercises.tests.answers import secrets

pytestmark = pytest.mark.django_db


def page_url(assessment_id: int) -> str:
    return reverse("web:assessment", args=[assessment_id])


def question_url(assessment_id: int, position: int) -> str:
    return reverse("web:assessment-question", args=[assessment_id, position])


def submit_url(assessment_id: int) -> str:
    return reverse("web:assessment-submit", args=[assessment_id])


def signed_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def started(client: Client, assessment_id: int) -> list[InstanceQuestion]:
    response = client.post(page_url(assessment_id))
    assert response.status_code == 302 and response["Location"] == page_url(assessment_id)
    return list(InstanceQuestion.objects.filter(instance__assessment_id=assessment_id).order_by("position"))


def test_anonymous_visitors_are_sent_to_log_in(make_assessment: MakeAssessment) -> None:
    a = make_assessment(pools=[varying(n=1)])
    client = Client()
    for method, url in (
        ("get", reverse("web:assessments")),
        ("get", page_url(a.pk)),
        ("post", page_url(a.pk)),
        ("post", question_url(a.pk, 1)),
        ("get", submit_url(a.pk)),
    ):
        response = getattr(client, method)(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith(reverse("web:login")), url
    assert not Instance.objects.exists()


def test_a_learner_outside_the_cohort_gets_404_everywhere(
    make_assessment: MakeAssessment, make_user: Callable[..., User], instructor: User
) -> None:
    a = make_assessment(pools=[varying(n=1)], title="Cohort-only homework")
    # A learner of no cohort, and the cohort's instructor (who grades it, but does not take it).
    for outsider in (signed_in(make_user("outsider")), signed_in(instructor)):
        listing = outsider.get(reverse("web:assessments"))
        assert listing.status_code == 200
        assert "Cohort-only homework" not in listing.content.decode()
        for method, url in (
            ("get", page_url(a.pk)),
            ("post", page_url(a.pk)),
            ("post", question_url(a.pk, 1)),
            ("get", submit_url(a.pk)),
            ("post", submit_url(a.pk)),
        ):
            assert getattr(outsider, method)(url).status_code == 404, url
    assert not Instance.objects.exists()


def test_an_assessment_not_open_yet_is_neither_listed_nor_shown(
    make_assessment: MakeAssessment, student: User, clock: Clock
) -> None:
    a = make_assessment(pools=[varying(n=1)], title="Next week", opens_at=clock.at + timedelta(days=1))
    client = signed_in(student)
    assert "Next week" not in client.get(reverse("web:assessments")).content.decode()
    assert client.get(page_url(a.pk)).status_code == 404


def test_the_start_screen_says_the_time_limit_and_opens_nothing_until_start(
    make_assessment: MakeAssessment, student: User
) -> None:
    a = make_assessment(pools=[varying(n=2)], kind="exam", title="Midterm", time_limit_minutes=50)
    client = signed_in(student)
    listing = client.get(reverse("web:assessments")).content.decode()
    assert "Midterm" in listing and "Not started" in listing
    response = client.get(page_url(a.pk))
    body = response.content.decode()
    assert response.status_code == 200
    assert "This exam has a 50-minute limit that starts when you begin." in body
    assert not Instance.objects.filter(assessment=a).exists()  # looking is not starting

    items = started(client, a.pk)
    instance = Instance.objects.get(assessment=a, user=student)
    assert instance.started_at is not None and instance.deadline is not None
    body = client.get(page_url(a.pk)).content.decode()
    assert 'id="timer"' in body and 'data-seconds="3000"' in body
    assert "50:00" in body
    for item in items:
        assert cache.rendered(item.version, variant_of(item)).prompt_html in body  # on its own numbers
        explanation = cache.rendered(item.version, variant_of(item)).explanation_html
        assert not explanation or explanation not in body  # never the working
    assert "In progress" in client.get(reverse("web:assessments")).content.decode()


def test_live_homework_shows_right_and_wrong_with_points(make_assessment: MakeAssessment, student: User) -> None:
    a = make_assessment(pools=[varying(n=1), varying(n=2)[1:]], max_attempts=3)
    client = signed_in(student)
    first, second = started(client, a.pk)

    response = client.post(question_url(a.pk, 1), {"action": "answer", **right(first)})
    assert response.status_code == 302 and response["Location"].endswith("#q1")
    client.post(question_url(a.pk, 2), {"action": "answer", **wrong(second)})
    body = client.get(page_url(a.pk)).content.decode()
    q1 = body[body.index('id="q1"') : body.index('id="q2"')]
    q2 = body[body.index('id="q2"') :]
    assert "✓ Right" in q1 and "10 of 10 points" in q1 and "1 answer used, 2 left" in q1
    assert "✗ Wrong" in q2 and "0 of 10 points" in q2
    assert Submission.objects.filter(item__instance__user=student).count() == 2


def test_an_exam_with_verdicts_after_close_shows_saved_until_it_closes(
    make_assessment: MakeAssessment, student: User, clock: Clock
) -> None:
    a = make_assessment(pools=[varying(n=1)], kind="exam", verdicts=Verdicts.AFTER_CLOSE)
    client = signed_in(student)
    (item,) = started(client, a.pk)
    client.post(question_url(a.pk, 1), {"action": "answer", **right(item)})
    body = client.get(page_url(a.pk)).content.decode()
    assert "Saved" in body
    assert "✓ Right" not in body and "✗ Wrong" not in body and "Score:" not in body
    assert right(item)["answer"] in body  # the learner's own answer stays in its box

    client.post(submit_url(a.pk))
    body = client.get(page_url(a.pk)).content.decode()
    assert "Grades are released when the exam closes at" in body and "✓ Right" not in body

    clock.set(a.closes_at + timedelta(minutes=1))
    body = client.get(page_url(a.pk)).content.decode()
    assert "✓ Right" in body and "Score: <strong>10 / 10</strong>" in body


def test_an_answer_after_the_time_limit_is_refused_beside_its_question_and_kept_in_the_box(
    make_assessment: MakeAssessment, student: User, clock: Clock
) -> None:
    a = make_assessment(pools=[varying(n=1)], kind="exam", time_limit_minutes=10)
    client = signed_in(student)
    (item,) = started(client, a.pk)
    client.post(question_url(a.pk, 1), {"action": "answer", **wrong(item)})
    clock.advance(minutes=11)
    late = right(item)
    response = client.post(question_url(a.pk, 1), {"action": "answer", **late})
    body = response.content.decode()
    assert response.status_code == 409
    assert "Your time ran out at" in body and "Not recorded." in body
    assert f'value="{late["answer"]}"' in body  # what they typed stays in its box
    assert Submission.objects.filter(item=item).count() == 1  # the earlier answer, nothing more
    assert 'id="timer"' not in body


def test_an_unreadable_answer_is_explained_and_costs_nothing(make_assessment: MakeAssessment, student: User) -> None:
    a = make_assessment(pools=[varying(n=1)], max_attempts=1)
    client = signed_in(student)
    started(client, a.pk)
    response = client.post(question_url(a.pk, 1), {"action": "answer", "answer": "about <b>twelve</b>"})
    body = response.content.decode()
    assert response.status_code == 400
    assert "nothing recorded, no attempt used" in body
    assert 'value="about &lt;b&gt;twelve&lt;/b&gt;"' in body  # kept, as text
    assert "<b>twelve</b>" not in body
    assert not Submission.objects.exists()
    assert InstanceQuestion.objects.get(instance__user=student).attempts == 0


def test_homework_offers_hints_one_at_a_time_and_an_exam_none(make_assessment: MakeAssessment, student: User) -> None:
    homework = make_assessment(pools=[varying(n=1)])
    client = signed_in(student)
    (item,) = started(client, homework.pk)
    hints = cache.rendered(item.version, variant_of(item)).hints_html
    assert hints, "the exercise needs hints for this test"
    body = client.get(page_url(homework.pk)).content.decode()
    assert f"Hint (1 of {len(hints)})" in body and hints[0] not in body
    response = client.post(question_url(homework.pk, 1), {"action": "hint"})
    assert response.status_code == 302
    body = client.get(page_url(homework.pk)).content.decode()
    assert hints[0] in body
    assert all(h not in body for h in hints[1:])

    exam = make_assessment(pools=[varying(n=1)], kind="exam", slug="exam")
    started(client, exam.pk)
    assert "Hint (" not in client.get(page_url(exam.pk)).content.decode()
    refused = client.post(question_url(exam.pk, 1), {"action": "hint"})
    assert refused.status_code == 409 and "offers no hints" in refused.content.decode()


def test_submit_and_close_asks_first_then_takes_no_more_answers(make_assessment: MakeAssessment, student: User) -> None:
    a = make_assessment(pools=[varying(n=1), varying(n=2)[1:]])
    client = signed_in(student)
    first, _ = started(client, a.pk)
    client.post(question_url(a.pk, 1), {"action": "answer", **right(first)})
    confirm = client.get(submit_url(a.pk)).content.decode()
    assert "You answered <strong>1 of 2</strong> questions." in confirm
    instance = Instance.objects.get(assessment=a, user=student)
    assert instance.submitted_at is None  # asking is not submitting

    assert client.post(submit_url(a.pk))["Location"] == page_url(a.pk)
    assert Instance.objects.get(pk=instance.pk).submitted_at is not None
    body = client.get(page_url(a.pk)).content.decode()
    assert "Submitted" in body and "Score: <strong>10 / 20</strong>" in body
    assert "Check answer" not in body
    refused = client.post(question_url(a.pk, 2), {"action": "answer", **right(first)})
    assert refused.status_code == 409 and "You submitted this assessment" in refused.content.decode()
    assert "Submitted" in client.get(reverse("web:assessments")).content.decode()


def test_each_learner_sees_only_their_own_instance(
    make_assessment: MakeAssessment, student: User, other_student: User
) -> None:
    a = make_assessment(pools=[varying(n=1)])
    mine = signed_in(student)
    (item,) = started(mine, a.pk)
    mine.post(question_url(a.pk, 1), {"action": "answer", **right(item)})
    theirs = signed_in(other_student)
    body = theirs.get(page_url(a.pk)).content.decode()
    assert "Start" in body and "✓ Right" not in body  # their own start screen, nothing of mine
    assert theirs.post(question_url(a.pk, 1), {"action": "answer", **right(item)}).status_code == 302
    assert not Submission.objects.filter(item__instance__user=other_student).exists()


def form_fields(payload: dict[str, Any]) -> dict[str, Any]:
    """A payload as the page's form posts it (the names the widgets give their inputs)."""
    if "order" in payload:
        return {f"pos:{sid}": str(i + 1) for i, sid in enumerate(payload["order"])}
    if "cells" in payload:
        return {f"cell:{k}": v for k, v in payload["cells"].items()}
    if "parts" in payload:
        return {f"part:{k}": v for k, v in payload["parts"].items()}
    return payload


def test_every_format_gets_its_widget_with_ids_of_its_own_and_no_answer_on_the_page(
    make_assessment: MakeAssessment, student: User
) -> None:
    wanted = [
        ("transformer-math", "0.3"),
        ("transformer-math", "2.5"),
        ("transformer-math", "8.5"),
        ("scaling-book", "0.6"),
    ]
    pools = [[Exercise.objects.get(workbook__slug=wb, number=n)] for wb, n in wanted]
    assert [p[0].format for p in pools] == ["choice", "order", "table", "parts"]
    a = make_assessment(pools=pools)
    client = signed_in(student)
    items = started(client, a.pk)
    body = client.get(page_url(a.pk)).content.decode()
    ids = re.findall(r'\sid="([^"]+)"', body)
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
    for item in items:
        assert all(secret not in body for secret in secrets(item.exercise)), item.exercise
    assert 'name="choices"' in body and 'name="pos:' in body and 'name="cell:' in body and 'name="part:' in body

    # Two steps in one place: not readable, nothing recorded, the positions chosen stay chosen.
    order = right(items[1])["order"]
    muddled = {f"pos:{sid}": "1" for sid in order}
    refused = client.post(question_url(a.pk, 2), {"action": "answer", **muddled})
    page = refused.content.decode()
    assert refused.status_code == 400 and "Give each step a different position." in page
    q2 = page[page.index('id="q2"') : page.index('id="q3"')]
    assert q2.count('<option value="1" selected>') == len(order)
    assert not Submission.objects.exists()

    for item in items:
        response = client.post(question_url(a.pk, item.position), {"action": "answer", **form_fields(right(item))})
        assert response.status_code == 302, (item.exercise, response.content.decode()[:2000])
    body = client.get(page_url(a.pk)).content.decode()
    assert body.count("✓ Right") == 4, body
    assert Instance.objects.get(assessment=a, user=student).score == 40
