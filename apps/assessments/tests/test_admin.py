"""Assessments in the admin, for every role: an instructor sets homework with its questions (pools
and terms checked as the services check them), grants and revokes overrides, sets a score with a
reason, reads the gradebook (and its CSV) and the live view of an exam; another instructor, an
author and a learner see none of it; a superuser sees all."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client

from apps.accounts.models import Role, User
from apps.assessments import exports, selectors, services
from apps.assessments.models import Assessment, Instance, Kind, Override, ScoreOverride
from apps.assessments.tests.conftest import Clock, MakeAssessment, right, varying
from apps.exercises.choices import AnswerFormat
from apps.exercises.models import Exercise
from apps.progress.models import Cohort
from apps.progress.services import cohorts as cohort_services

pytestmark = pytest.mark.django_db


def client_for(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def assessment_post(cohort: Cohort, pools: list[list[Exercise]], **fields: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "cohort": cohort.pk,
        "title": "Homework 1",
        "slug": "hw1",
        "kind": Kind.HOMEWORK,
        "instructions": "Show your numbers.",
        "opens_at_0": "2026-11-02",
        "opens_at_1": "08:00:00",
        "due_at_0": "2026-11-09",
        "due_at_1": "23:59:00",
        "closes_at_0": "2026-11-16",
        "closes_at_1": "23:59:00",
        "late_rules": '[{"until": "2026-11-12T23:59:00+00:00", "credit": 50}]',
        "time_limit_minutes": "",
        "max_attempts": "3",
        "attempt_credit": "[100, 80]",
        "verdicts": "live",
        "hints": "on",
        "questions-TOTAL_FORMS": str(len(pools)),
        "questions-INITIAL_FORMS": "0",
    }
    for i, pool in enumerate(pools):
        data |= {
            f"questions-{i}-position": str(i + 1),
            f"questions-{i}-zone": "Part A",
            f"questions-{i}-pool": [e.pk for e in pool],
            f"questions-{i}-choose": "1",
            f"questions-{i}-points": "10",
            f"questions-{i}-verdicts": "",
        }
    data |= fields
    return data


@pytest.fixture
def rival(make_user: Callable[..., User]) -> User:
    """Another instructor, with a cohort of their own."""
    return make_user("rival", role=Role.INSTRUCTOR)


@pytest.fixture
def rival_cohort(rival: User, make_user: Callable[..., User]) -> Cohort:
    cohort = cohort_services.cohort_create(instructor=rival, name="Rival class")
    cohort_services.cohort_join(user=make_user("carol"), code=cohort.join_code)
    return cohort


def test_an_instructor_sets_a_homework_with_its_questions(
    instructor: User, cohort: Cohort, rival_cohort: Cohort, clock: Clock
) -> None:
    client = client_for(instructor)
    form = client.get("/admin/assessments/assessment/add/").content.decode()
    assert "ML systems, fall" in form and "Rival class" not in form  # only the cohorts they teach
    pool = varying(n=2)
    response = client.post("/admin/assessments/assessment/add/", assessment_post(cohort, [pool]))
    assert response.status_code == 302, response.content.decode()[:3000]
    assessment = Assessment.objects.get(slug="hw1")
    assert assessment.cohort == cohort and assessment.created_by == instructor
    assert assessment.late_rules == [{"until": "2026-11-12T23:59:00+00:00", "credit": 50.0}]
    assert assessment.attempt_credit == [100, 80]
    question = assessment.questions.get()
    assert set(question.pool.all()) == set(pool) and question.points == 10 and question.zone == "Part A"
    # The change page links to the class's gradebook and the live view.
    page = client.get(f"/admin/assessments/assessment/{assessment.pk}/change/").content.decode()
    assert f"/admin/assessments/assessment/gradebook/{cohort.pk}/" in page
    assert f"/admin/assessments/assessment/{assessment.pk}/live/" in page
    # The pool's autocomplete offers exercises to an instructor.
    found = client.get(
        "/admin/autocomplete/",
        {"app_label": "assessments", "model_name": "question", "field_name": "pool", "term": pool[0].title[:12]},
    )
    assert found.status_code == 200 and str(pool[0].pk) in {r["id"] for r in found.json()["results"]}


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"due_at_0": "2026-11-20"}, "The due date must be between the opening and the close."),
        ({"late_rules": '[{"until": "2026-11-12T23:59:00", "credit": 50}]'}, "needs its time zone"),
        ({"late_rules": '[{"until": "2026-11-12T23:59:00+00:00", "credit": 150}]'}, "percent from 0 to 100"),
        ({"attempt_credit": "[100, -5]"}, "Attempt credit is a list of percents from 0 to 100."),
        ({"closes_at_0": "2026-11-01"}, "An assessment must close after it opens."),
    ],
)
def test_bad_terms_are_explained_on_the_form_and_nothing_is_saved(
    instructor: User, cohort: Cohort, clock: Clock, fields: dict[str, str], message: str
) -> None:
    response = client_for(instructor).post(
        "/admin/assessments/assessment/add/", assessment_post(cohort, [varying(n=1)], **fields)
    )
    assert response.status_code == 200
    assert message in response.content.decode()
    assert not Assessment.objects.exists()


def test_questions_are_reordered_and_a_position_is_not_given_twice(
    instructor: User, cohort: Cohort, make_assessment: MakeAssessment, clock: Clock
) -> None:
    first, second = varying(n=2)
    assessment = make_assessment(pools=[[first], [second]])
    q1, q2 = assessment.questions.order_by("position")
    client = client_for(instructor)
    url = f"/admin/assessments/assessment/{assessment.pk}/change/"

    def post(positions: tuple[int, int]) -> Any:
        data = assessment_post(cohort, [], slug=assessment.slug, title=assessment.title)
        data |= {"questions-TOTAL_FORMS": "2", "questions-INITIAL_FORMS": "2"}
        for i, (question, pool, position) in enumerate(((q1, first, positions[0]), (q2, second, positions[1]))):
            data |= {
                f"questions-{i}-id": question.pk, f"questions-{i}-assessment": assessment.pk,
                f"questions-{i}-position": str(position), f"questions-{i}-pool": [pool.pk],
                f"questions-{i}-choose": "1", f"questions-{i}-points": "10", f"questions-{i}-zone": "",
            }  # fmt: skip
        return client.post(url, data)

    response = post((1, 1))
    assert (
        response.status_code == 200 and "Please correct the duplicate data for position." in response.content.decode()
    )
    response = post((2, 1))  # swapped
    assert response.status_code == 302, response.content.decode()[:3000]
    assert list(assessment.questions.order_by("position").values_list("pk", flat=True)) == [q2.pk, q1.pk]


def test_a_code_exercise_or_an_oversized_choice_is_refused_in_a_pool(
    instructor: User, cohort: Cohort, clock: Clock
) -> None:
    client = client_for(instructor)
    code = Exercise.objects.filter(format=AnswerFormat.CODE, is_active=True).select_related("workbook").first()
    assert code is not None
    response = client.post("/admin/assessments/assessment/add/", assessment_post(cohort, [[code]]))
    assert response.status_code == 200
    assert "is graded by running code" in response.content.decode()
    data = assessment_post(cohort, [varying(n=2)], **{"questions-0-choose": "3"})
    response = client.post("/admin/assessments/assessment/add/", data)
    assert "The pool has 2 exercise(s): choose at most that many." in response.content.decode()
    assert not Assessment.objects.exists()


def test_another_instructor_sees_none_of_it(
    instructor: User, cohort: Cohort, rival: User, rival_cohort: Cohort, make_assessment: MakeAssessment
) -> None:
    assessment = make_assessment(pools=[varying(n=1)], title="Prof's homework")
    learner = User.objects.get(username="alice")
    instance = services.instance_open(assessment=assessment, user=learner)
    override = services.override_grant(
        assessment=assessment, user=learner, by=instructor, reason="illness", extra_attempts=2
    )
    # The instructor's own lists filter by their cohorts only, and the rival's lists show nothing of theirs.
    own = client_for(instructor)
    for url in ("/admin/assessments/instance/", "/admin/assessments/override/"):
        page = own.get(url).content.decode()
        assert "alice" in page and "Rival class" not in page  # (a plain cohort filter would list it)
    client = client_for(rival)
    assert "Prof&#x27;s homework" not in client.get("/admin/assessments/assessment/").content.decode()
    for url in ("/admin/assessments/instance/", "/admin/assessments/override/"):
        page = client.get(url).content.decode()
        assert "alice" not in page and "ML systems, fall" not in page
    for url in (
        f"/admin/assessments/assessment/{assessment.pk}/change/",
        f"/admin/assessments/instance/{instance.pk}/change/",
        f"/admin/assessments/override/{override.pk}/change/",
        f"/admin/assessments/assessment/gradebook/{cohort.pk}/",
        f"/admin/assessments/assessment/gradebook/{cohort.pk}/?format=csv",
        f"/admin/assessments/assessment/{assessment.pk}/live/",
        f"/admin/assessments/assessment/{assessment.pk}/learners/{learner.pk}/score/",
    ):
        assert client.get(url).status_code == 404, url
    # Nor can they set a score, grant on it, or put an assessment in a cohort not theirs.
    response = client.post(
        f"/admin/assessments/assessment/{assessment.pk}/learners/{learner.pk}/score/", {"score": "0", "reason": "x"}
    )
    assert response.status_code == 404 and not ScoreOverride.objects.exists()
    response = client.post(
        "/admin/assessments/override/add/",
        {"assessment": assessment.pk, "user": learner.pk, "extra_attempts": "5", "reason": "mine now"},
    )
    assert response.status_code == 200 and "Select a valid choice" in response.content.decode()
    response = client.post("/admin/assessments/assessment/add/", assessment_post(cohort, [varying(n=1)], slug="x"))
    assert response.status_code == 200 and not Assessment.objects.filter(slug="x").exists()
    assert Override.objects.get().pk == override.pk


@pytest.mark.parametrize("role", [Role.STUDENT, Role.AUTHOR])
def test_learners_and_authors_have_no_assessments_admin(
    role: str, make_user: Callable[..., User], cohort: Cohort, make_assessment: MakeAssessment
) -> None:
    assessment = make_assessment(pools=[varying(n=1)])
    client = client_for(make_user("someone", role=role))
    assert "/admin/assessments/" not in client.get("/admin/").content.decode()
    for url in (
        "/admin/assessments/assessment/",
        f"/admin/assessments/assessment/{assessment.pk}/change/",
        f"/admin/assessments/assessment/gradebook/{cohort.pk}/",
        f"/admin/assessments/assessment/{assessment.pk}/live/",
    ):
        response = client.get(url)
        # A learner is not staff: the admin sends them to sign in; an author is staff and finds nothing.
        assert response.status_code in (302, 403, 404), url
        assert "alice" not in response.content.decode()


def test_a_superuser_sees_every_cohort(
    make_user: Callable[..., User], cohort: Cohort, rival_cohort: Cohort, make_assessment: MakeAssessment
) -> None:
    assessment = make_assessment(pools=[varying(n=1)], title="Prof's homework")
    root = User.objects.create_superuser("root", "root@example.com", "a-strong-pass-123")
    client = client_for(root)
    assert "Prof&#x27;s homework" in client.get("/admin/assessments/assessment/").content.decode()
    assert client.get(f"/admin/assessments/assessment/gradebook/{rival_cohort.pk}/").status_code == 200
    assert client.get(f"/admin/assessments/assessment/{assessment.pk}/live/").status_code == 200


def test_overrides_are_granted_with_a_reason_and_revoked_not_deleted(
    instructor: User, cohort: Cohort, rival_cohort: Cohort, make_assessment: MakeAssessment, clock: Clock
) -> None:
    assessment = make_assessment(pools=[varying(n=1)], time_limit_minutes=60)
    alice = User.objects.get(username="alice")
    client = client_for(instructor)
    form = client.get("/admin/assessments/override/add/").content.decode()
    assert "alice" in form and "carol" not in form  # learners of their own cohorts only
    base = {"assessment": assessment.pk, "user": alice.pk, "time_factor": "1.5", "extra_attempts": "0"}
    # No reason: the service's message, nothing granted.
    response = client.post("/admin/assessments/override/add/", {**base, "reason": "  "})
    assert response.status_code == 200 and not Override.objects.exists()
    assert "This field is required." in response.content.decode()
    response = client.post("/admin/assessments/override/add/", {**base, "time_factor": "", "reason": "why"})
    assert "An override changes a due date, the close, the time or the attempts." in response.content.decode()
    early = (assessment.closes_at - timedelta(days=1)).strftime("%Y-%m-%d")
    response = client.post(
        "/admin/assessments/override/add/", {**base, "closes_at_0": early, "closes_at_1": "00:00:00", "reason": "r"}
    )
    assert "An override may move the close later, not earlier." in response.content.decode()
    assert not Override.objects.exists()
    response = client.post("/admin/assessments/override/add/", {**base, "reason": "Accommodation letter"})
    assert response.status_code == 302, response.content.decode()[:3000]
    override = Override.objects.get()
    assert (override.granted_by, override.reason, override.time_factor) == (instructor, "Accommodation letter", 1.5)
    assert selectors.window_for(assessment=assessment, user_id=alice.pk).time_limit == timedelta(minutes=90)
    # A second grant replaces the first, which is kept, revoked.
    client.post("/admin/assessments/override/add/", {**base, "time_factor": "2", "reason": "More"})
    assert Override.objects.count() == 2 and Override.objects.filter(revoked_at__isnull=True).count() == 1
    # The revoke action revokes (by whom) and deletes nothing.
    current = Override.objects.get(revoked_at__isnull=True)
    response = client.post(
        "/admin/assessments/override/", {"action": "revoke", "_selected_action": [current.pk]}, follow=True
    )
    assert "1 override(s) revoked." in response.content.decode()
    current.refresh_from_db()
    assert current.revoked_by == instructor and current.revoked_at is not None
    assert Override.objects.count() == 2
    assert selectors.window_for(assessment=assessment, user_id=alice.pk).time_limit == timedelta(minutes=60)


def test_a_score_is_set_with_a_reason_and_its_history_shows_on_the_instance(
    instructor: User, cohort: Cohort, make_assessment: MakeAssessment, clock: Clock
) -> None:
    assessment = make_assessment(pools=[varying(n=1)])
    alice, bob = User.objects.get(username="alice"), User.objects.get(username="bob")
    instance = services.instance_open(assessment=assessment, user=alice)
    services.answer_submit(user=alice, item_id=instance.questions.get().pk, payload=right(instance.questions.get()))
    client = client_for(instructor)
    url = f"/admin/assessments/assessment/{assessment.pk}/learners/{alice.pk}/score/"
    assert "Computed score: <strong>10</strong>" in client.get(url).content.decode()
    response = client.post(url, {"score": "7", "reason": ""})
    assert response.status_code == 200 and "This field is required." in response.content.decode()
    response = client.post(url, {"score": "-1", "reason": "typo"})
    assert response.status_code == 200 and not ScoreOverride.objects.exists()
    response = client.post(url, {"score": "7.5", "reason": "Partial credit for the derivation"})
    assert response.status_code == 302
    instance.refresh_from_db()
    assert instance.score_override == 7.5 and instance.final_score == 7.5 and instance.score == 10
    # The instance is read-only, with its score history and the link to set a score.
    page = client.get(f"/admin/assessments/instance/{instance.pk}/change/").content.decode()
    assert "Partial credit for the derivation" in page and url in page and 'name="_save"' not in page
    drawn = page.split('id="questions-table"')[1].split("</table>")[0]
    assert instance.questions.get().exercise.title in drawn and f"{instance.pk}#1" not in drawn
    assert client.post(f"/admin/assessments/instance/{instance.pk}/delete/").status_code == 403
    # A learner who never opened it gets a score too (an empty instance holds it).
    response = client.post(
        f"/admin/assessments/assessment/{assessment.pk}/learners/{bob.pk}/score/", {"score": "0", "reason": "Absent"}
    )
    assert response.status_code == 302
    held = assessment.instances.get(user=bob)
    assert held.started_at is None and held.final_score == 0
    # Removing the override (blank score) lets the computed score stand again.
    client.post(url, {"score": "", "reason": "Regraded"})
    regraded = Instance.objects.get(pk=instance.pk)
    assert regraded.score_override is None and regraded.final_score == 10
    assert list(regraded.score_history.values_list("score", "previous")) == [(None, 7.5), (7.5, 10.0)]


def test_the_gradebook_marks_overrides_and_late_work_and_downloads_the_csv(
    instructor: User, cohort: Cohort, make_assessment: MakeAssessment, clock: Clock
) -> None:
    late_rules = [{"until": (clock.at + timedelta(days=4)).isoformat(), "credit": 50}]
    homework = make_assessment(pools=[varying(n=1)], title="Homework <1>", late_rules=late_rules)
    alice, bob = User.objects.get(username="alice"), User.objects.get(username="bob")
    clock.advance(days=3)  # past the due date, within the late rule: half credit, marked late
    late = services.instance_open(assessment=homework, user=alice)
    item = late.questions.get()
    services.answer_submit(user=alice, item_id=item.pk, payload=right(item))
    bobs = services.instance_for_grading(assessment=homework, user=bob)
    services.score_override_set(instance=bobs, score=4, reason="Oral exam", by=instructor)
    services.override_grant(assessment=homework, user=bob, by=instructor, reason="r", extra_attempts=1)
    client = client_for(instructor)
    page = client.get(f"/admin/assessments/assessment/gradebook/{cohort.pk}/").content.decode()
    assert "Homework &lt;1&gt;" in page and "Homework <1>" not in page  # escaped
    alice_row = page.split('data-learner="alice"')[1].split("</tr>")[0]
    bob_row = page.split('data-learner="bob"')[1].split("</tr>")[0]
    assert 'class="mark-late"' in alice_row and "mark-override" not in alice_row
    assert "mark-override" in bob_row and ">4</a>" in bob_row and "own terms" in bob_row
    response = client.get(f"/admin/assessments/assessment/gradebook/{cohort.pk}/?format=csv")
    assert response["Content-Type"].startswith("text/csv")
    assert f"cohort-{cohort.pk}-gradebook.csv" in response["Content-Disposition"]
    assert response.content.decode() == exports.gradebook_csv(selectors.gradebook(cohort=cohort))
    table = list(csv.reader(io.StringIO(response.content.decode())))
    assert table[0][0] == "username" and table[2][0] == "bob" and table[2][2] == "4"


def test_the_live_view_shows_who_started_their_time_left_and_who_submitted(
    instructor: User, cohort: Cohort, make_user: Callable[..., User], make_assessment: MakeAssessment, clock: Clock
) -> None:
    exam = make_assessment(pools=[varying(n=2)], kind=Kind.EXAM, title="Midterm", time_limit_minutes=90, hints=False)
    cohort_services.cohort_join(user=make_user("dora"), code=cohort.join_code)
    alice, bob = User.objects.get(username="alice"), User.objects.get(username="bob")
    services.instance_open(assessment=exam, user=alice)
    clock.advance(minutes=30)
    opened = services.instance_open(assessment=exam, user=bob)
    item = opened.questions.get()
    services.answer_submit(user=bob, item_id=item.pk, payload=right(item))
    services.instance_submit(user=bob, instance=opened)
    clock.advance(minutes=10)
    client = client_for(instructor)
    change = client.get(f"/admin/assessments/assessment/{exam.pk}/change/").content.decode()
    assert f"/admin/assessments/assessment/{exam.pk}/live/" in change
    page = client.get(f"/admin/assessments/assessment/{exam.pk}/live/").content.decode()
    assert "3 learners · 2 started · 1 working now · 1 submitted · 1 not started" in page
    alice_row = page.split('data-learner="alice"')[1].split("</tr>")[0]
    bob_row = page.split('data-learner="bob"')[1].split("</tr>")[0]
    dora_row = page.split('data-learner="dora"')[1].split("</tr>")[0]
    assert "<td>working</td>" in alice_row and "<td>50 min</td>" in alice_row
    assert "<td>submitted</td>" in bob_row and "<td>1</td>" in bob_row
    assert "<td>not started</td>" in dora_row
    assert 'http-equiv="refresh"' in page


def test_an_assessment_with_learners_work_cannot_be_deleted(
    instructor: User, cohort: Cohort, make_assessment: MakeAssessment, clock: Clock
) -> None:
    unused, taken = make_assessment(pools=[varying(n=1)]), make_assessment(pools=[varying(n=1)])
    services.instance_open(assessment=taken, user=User.objects.get(username="alice"))
    client = client_for(instructor)
    assert client.post(f"/admin/assessments/assessment/{taken.pk}/delete/", {"post": "yes"}).status_code == 403
    assert Assessment.objects.filter(pk=taken.pk).exists() and taken.instances.count() == 1
    response = client.post(f"/admin/assessments/assessment/{unused.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302 and not Assessment.objects.filter(pk=unused.pk).exists()
    listing = client.get("/admin/assessments/assessment/").content.decode()
    assert 'value="delete_selected"' not in listing


def test_the_assessment_list_is_scoped_and_labelled(
    instructor: User, cohort: Cohort, make_assessment: MakeAssessment
) -> None:
    make_assessment(pools=[varying(n=2)], title="Week 1")
    page = client_for(instructor).get("/admin/assessments/assessment/").content.decode()
    assert "Week 1" in page and "Gradebook" in page and "Live view" in page
    index = client_for(instructor).get("/admin/").content.decode()
    assert "/admin/assessments/assessment/" in index and "/admin/assessments/override/" in index
