"""Instructor and author operations over REST: a learner's attempt history in the instructor's
cohort (answers as the learner saw them), the cohort CSV files, and the content export.

Who may call each of them is in test_authz.py's table; these tests check what they answer.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
from collections.abc import Callable
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext, override_settings
from rest_framework.test import APIClient

from apps.accounts import services as account_services
from apps.accounts.models import Role, User
from apps.exercises import presentation
from apps.exercises.choices import AnswerFormat, AttemptPart, AttemptStatus
from apps.exercises.content import cache
from apps.exercises.content.plain import tex_plain
from apps.exercises.models import Attempt, Exercise, Workbook
from apps.exercises.tests.answers import correct_payload, wrong_payload
from apps.learning import services as learning_services
from apps.progress import services
from apps.progress.models import Cohort
from apps.progress.tests.factories import MembershipFactory

pytestmark = pytest.mark.django_db


def api(user: User | None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.credentials(HTTP_AUTHORIZATION=f"Token {account_services.auth_token_issue(user=user).key}")
    return client


def exercise(slug: str, number: str) -> Exercise:
    return Exercise.objects.select_related("workbook", "current_version").get(workbook__slug=slug, number=number)


def first(fmt: str, slug: str = "transformer-math") -> Exercise:
    found = (
        Exercise.objects.filter(workbook__slug=slug, format=fmt, is_active=True)
        .select_related("workbook", "current_version")
        .order_by("chapter__number", "position")
        .first()
    )
    assert found is not None, (fmt, slug)
    return found


@pytest.fixture
def cohort(make_user: Callable[..., User]) -> tuple[Cohort, User, User]:
    """A cohort with its instructor and one learner, assigned transformer-math and scaling-book."""
    teacher = make_user("teacher", role=Role.INSTRUCTOR)
    learner = make_user("ada")
    books = [(Workbook.objects.get(slug=s), None) for s in ("transformer-math", "scaling-book")]
    c = services.cohort_create(instructor=teacher, name="Evening", workbooks=books)
    services.cohort_join(user=learner, code=c.join_code)
    return c, teacher, learner


def attempts_url(c: Cohort, learner: User, suffix: str = "attempts/") -> str:
    return f"/api/v1/cohorts/{c.pk}/learners/{learner.pk}/{suffix}"


# ---- a learner's attempt history ---------------------------------------------------------------


def test_the_attempt_history_renders_each_answer_as_the_learner_saw_it(cohort: tuple[Cohort, User, User]) -> None:
    c, teacher, learner = cohort
    numeric, choice, order, table = (first(f) for f in ("numeric", "choice", "order", "table"))
    parts, lines = first("parts", "scaling-book"), first("lines")
    for ex in (numeric, choice, order, table, parts, lines):
        learning_services.attempt_create(user=learner, exercise=ex, payload=wrong_payload(ex, learner))
    learning_services.attempt_create(user=learner, exercise=numeric, payload=correct_payload(numeric, learner))
    code_ex = first("code")
    code = "def f(x):\n    return x\n"
    assert code_ex.current_version is not None
    # A code attempt waiting for the sandbox (the sandbox path itself is tested in apps/sandbox).
    Attempt.objects.create(
        user=learner, exercise=code_ex, version=code_ex.current_version, part=AttemptPart.CODE,
        status=AttemptStatus.QUEUED, raw={"code": code},
    )  # fmt: skip

    body = api(teacher).get(attempts_url(c, learner)).json()
    assert body["count"] == 8 and body["next"] is None and body["previous"] is None
    got = {(a["workbook"], a["exercise"], a["correct"]): a for a in body["results"]}
    assert [a["exercise"] for a in body["results"]][:2] == [code_ex.number, numeric.number]  # newest first

    # A number: as typed, with its unit, and how it was read.
    right = got[("transformer-math", numeric.number, True)]
    typed = correct_payload(numeric, learner)["answer"]
    assert numeric.current_version is not None
    stored = Attempt.objects.get(pk=right["id"])
    assert right == {
        "id": stored.pk,
        "workbook": "transformer-math",
        "exercise": numeric.number,
        "title": numeric.title,
        "format": "numeric",
        "version": numeric.current_version.version,
        "created_at": stored.created_at.isoformat().replace("+00:00", "Z"),
        "part": "",
        "status": "graded",
        "verdict": "correct",
        "outcome": "",
        "correct": True,
        "accepted_with_note": False,
        "counted": True,
        "score": 1.0,
        "answer": {"text": typed, "items": [], "code": None},
        "understood": stored.parsed["understood"],
        "feedback": stored.feedback,
    }
    assert (
        got[("transformer-math", numeric.number, False)]["answer"]["text"] == wrong_payload(numeric, learner)["answer"]
    )

    # Options: their texts, not the opaque ids the client sent, labelled by where this learner saw them.
    spec = cache.resolved(choice.current_version).spec  # type: ignore[arg-type]
    picked = wrong_payload(choice, learner)["choices"]
    ids = presentation.option_ids(choice.current_version, len(spec.options or []))  # type: ignore[arg-type]
    shown = presentation.learner_order(learner.pk, choice.current_version, len(ids))  # type: ignore[arg-type]
    [index] = [ids.index(p) for p in picked]
    answer = got[("transformer-math", choice.number, False)]["answer"]
    assert answer["items"] == [{"label": f"option {shown.index(index) + 1}", "value": spec.options[index].text}]  # type: ignore[index]
    assert answer["text"] == spec.options[index].text and not any(p in json.dumps(answer) for p in picked)  # type: ignore[index]

    # Steps: their texts in the order given (the wrong payload reverses them).
    spec = cache.resolved(order.current_version).spec  # type: ignore[arg-type]
    steps = [s.text for s in reversed(spec.steps or [])]
    answer = got[("transformer-math", order.number, False)]["answer"]
    assert answer["items"] == [{"label": str(n), "value": t} for n, t in enumerate(steps, start=1)]
    assert answer["text"] == " → ".join(steps)

    # Table cells and parts: by their labels, values as typed.
    labels = presentation.table_labels(cache.resolved(table.current_version).spec)  # type: ignore[arg-type]
    answer = got[("transformer-math", table.number, False)]["answer"]
    assert answer["items"] == [{"label": label, "value": "1"} for label in labels.values()]
    assert answer["text"] == "; ".join(f"{label}: 1" for label in labels.values())
    typed_parts = wrong_payload(parts, learner)["parts"]
    part_labels = presentation.part_labels(cache.resolved(parts.current_version).spec)  # type: ignore[arg-type]
    answer = got[("scaling-book", parts.number, False)]["answer"]
    assert answer["items"] == [{"label": part_labels[k], "value": typed_parts[k]} for k in part_labels]

    # Lines: their numbers and their code; code: the code itself.
    starter = cache.resolved(lines.current_version).spec.code.starter.splitlines()  # type: ignore[arg-type, union-attr]
    [n] = wrong_payload(lines, learner)["lines"]
    answer = got[("transformer-math", lines.number, False)]["answer"]
    assert answer == {"text": f"lines {n}", "items": [{"label": f"line {n}", "value": starter[n - 1]}], "code": None}
    queued = got[("transformer-math", code_ex.number, False)]
    assert queued["status"] == "queued" and queued["part"] == "code" and queued["verdict"] == ""
    assert queued["answer"] == {"text": "2 lines of code", "items": [], "code": code}


def test_the_attempt_history_pages_in_a_fixed_number_of_queries(cohort: tuple[Cohort, User, User]) -> None:
    c, teacher, learner = cohort
    client = api(teacher)
    exercises = [first(f) for f in ("numeric", "choice", "order", "table")]

    def queries(url: str) -> int:
        with CaptureQueriesContext(connection) as ctx:
            assert client.get(url).status_code == 200
        return len(ctx.captured_queries)

    learning_services.attempt_create(user=learner, exercise=exercises[0], payload=wrong_payload(exercises[0], learner))
    one = queries(attempts_url(c, learner))
    for ex in exercises * 3:
        learning_services.attempt_create(user=learner, exercise=ex, payload=wrong_payload(ex, learner))
    assert queries(attempts_url(c, learner)) == one
    page = client.get(attempts_url(c, learner) + "?page_size=5&page=2").json()
    assert page["count"] == 13 and len(page["results"]) == 5 and page["previous"] and page["next"]
    assert queries(attempts_url(c, learner) + "?page_size=5&page=2") == one


def test_nobody_outside_the_cohort_is_found_through_it(
    cohort: tuple[Cohort, User, User], make_user: Callable[..., User]
) -> None:
    c, teacher, learner = cohort
    # A learner in another instructor's cohort, in none of this teacher's.
    membership = MembershipFactory.create(cohort__name="Other")
    stranger, other = membership.user, membership.cohort
    ex = first("numeric")
    learning_services.attempt_create(user=stranger, exercise=ex, payload=wrong_payload(ex, stranger))
    client = api(teacher)
    for url in (
        attempts_url(c, stranger),  # another cohort's learner, through this cohort
        attempts_url(c, teacher),  # the instructor is not a member
        f"/api/v1/cohorts/{c.pk}/learners/999999999/attempts/",
        attempts_url(other, stranger),  # another instructor's cohort
        attempts_url(c, stranger, "attempts.csv"),
        attempts_url(other, stranger, "attempts.csv"),
    ):
        response = client.get(url)
        assert response.status_code == 404, url
        assert response.json()["error"]["code"] == "not_found"
    services.cohort_leave(user=learner, cohort=c)
    assert client.get(attempts_url(c, learner)).status_code == 404  # left: no longer visible


# ---- CSV files ----------------------------------------------------------------------------------


def rows(content: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(content.decode("utf-8"))))


def test_the_csv_files_are_the_ones_the_admin_downloads(cohort: tuple[Cohort, User, User]) -> None:
    c, teacher, learner = cohort
    for ex in (first("numeric"), first("choice")):
        learning_services.attempt_create(user=learner, exercise=ex, payload=wrong_payload(ex, learner))
        learning_services.attempt_create(user=learner, exercise=ex, payload=correct_payload(ex, learner))
    admin = Client()
    admin.force_login(teacher)
    client = api(teacher)
    pairs = [
        (f"/api/v1/cohorts/{c.pk}/progress.csv", f"/admin/progress/cohort/{c.pk}/progress/?format=csv"),
        (
            f"/api/v1/cohorts/{c.pk}/exercises.csv?workbook=transformer-math",
            f"/admin/progress/cohort/{c.pk}/exercises/?workbook=transformer-math&format=csv",
        ),
    ]
    for url, admin_url in pairs:
        # Accept: text/csv (what a client downloading a CSV sends) is answered, not refused with a 406.
        for accept in ("*/*", "text/csv", "application/json"):
            response = client.get(url, HTTP_ACCEPT=accept)
            assert response.status_code == 200, (url, accept)
            assert response["Content-Type"] == "text/csv; charset=utf-8"
            assert response["Content-Disposition"].startswith('attachment; filename="cohort-')
            assert response.content == admin.get(admin_url).content
    progress = rows(client.get(pairs[0][0]).content)
    assert progress[0][:3] == ["learner", "transformer-math solved", "scaling-book solved"]
    assert progress[1][:2] == ["ada", "2"]
    stats = {r[0]: r for r in rows(client.get(pairs[1][0]).content)[1:]}
    numeric = stats[first("numeric").number]
    assert (numeric[3], numeric[4], numeric[9]) == ("1", "1", "2")  # learners, solved, attempts


def test_the_attempts_csv_has_the_answers_as_the_history_renders_them(cohort: tuple[Cohort, User, User]) -> None:
    c, teacher, learner = cohort
    order, numeric = first("order"), first("numeric")
    negative = {"answer": "-" + correct_payload(numeric, learner)["answer"]}
    learning_services.attempt_create(user=learner, exercise=order, payload=wrong_payload(order, learner))
    learning_services.attempt_create(user=learner, exercise=numeric, payload=negative)
    client = api(teacher)
    response = client.get(attempts_url(c, learner, "attempts.csv"))
    assert response.status_code == 200 and response["Content-Type"] == "text/csv; charset=utf-8"
    assert f'filename="cohort-{c.pk}-learner-{learner.pk}-attempts.csv"' in response["Content-Disposition"]
    table = rows(response.content)
    assert table[0] == [
        "when (UTC)", "workbook", "exercise", "version", "part", "status", "verdict", "outcome", "counted",
        "answer", "understood", "feedback",
    ]  # fmt: skip
    history = {a["exercise"]: a for a in client.get(attempts_url(c, learner)).json()["results"]}
    assert [r[2] for r in table[1:]] == [numeric.number, order.number]  # newest first
    by_number = {r[2]: r for r in table[1:]}
    # The steps as the history shows them, their TeX as plain text ("$W_O$" → "W_O").
    assert by_number[order.number][9] == tex_plain(history[order.number]["answer"]["text"])
    assert "$" in history[order.number]["answer"]["text"] and "$" not in by_number[order.number][9]
    assert by_number[numeric.number][9] == "'" + negative["answer"]  # a formula to a spreadsheet: quoted


def test_csv_errors_are_the_json_error_shape_whatever_the_client_accepts(cohort: tuple[Cohort, User, User]) -> None:
    c, teacher, _ = cohort
    cases = [
        (APIClient(), f"/api/v1/cohorts/{c.pk}/progress.csv", 401, "not_authenticated"),
        (api(teacher), f"/api/v1/cohorts/{c.pk + 1000}/progress.csv", 404, "not_found"),
        (api(teacher), f"/api/v1/cohorts/{c.pk}/exercises.csv", 404, "not_found"),  # no workbook given
        (api(teacher), f"/api/v1/cohorts/{c.pk}/exercises.csv?workbook=nope", 404, "not_found"),
    ]
    for client, url, status, code in cases:
        response = client.get(url, HTTP_ACCEPT="text/csv")
        assert response.status_code == status, url
        assert response["Content-Type"] == "application/json"
        assert response.json()["error"]["code"] == code


# ---- content export -----------------------------------------------------------------------------


def command_export(slug: str) -> dict[str, Any]:
    out = StringIO()
    call_command("export_content", workbook=slug, stdout=out)
    return json.loads(out.getvalue())  # type: ignore[no-any-return]


@pytest.mark.parametrize("slug", ["transformer-math", "scaling-book"])
def test_authors_export_what_export_content_prints(make_user: Callable[..., User], slug: str) -> None:
    author = make_user("writer", role=Role.AUTHOR)
    response = api(author).get(f"/api/v1/workbooks/{slug}/export/")
    assert response.status_code == 200
    assert response.json() == command_export(slug)


def test_the_export_refuses_other_roles_before_it_looks_for_the_workbook(make_user: Callable[..., User]) -> None:
    author, learner = make_user("writer", role=Role.AUTHOR), make_user("reader")
    teacher = make_user("teacher", role=Role.INSTRUCTOR)
    response = api(author).get("/api/v1/workbooks/no-such-book/export/")
    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"
    for user in (learner, teacher):
        for slug in ("transformer-math", "no-such-book"):
            response = api(user).get(f"/api/v1/workbooks/{slug}/export/")
            assert response.status_code == 403
            assert response.json() == {
                "error": {"code": "permission_denied", "message": "Only authors export content.", "details": {}}
            }


def test_an_export_of_broken_content_says_so(make_user: Callable[..., User], tmp_path: Path) -> None:
    from django.conf import settings

    shutil.copytree(Path(settings.CONTENT_DIR) / "roofline", tmp_path / "roofline")
    chapter = sorted((tmp_path / "roofline" / "chapters").glob("*.yaml"))[0]
    chapter.write_text("exercises: [{number: 1}]\n", encoding="utf-8")
    author = make_user("writer", role=Role.AUTHOR)
    with override_settings(CONTENT_DIR=tmp_path, CONTENT_DIRS=[tmp_path]):
        response = api(author).get("/api/v1/workbooks/roofline/export/")
    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "content_invalid" and chapter.name in error["details"]["problems"]


def test_formats_cover_every_answer_format() -> None:
    """The history test above renders one attempt of each format the content uses; a format it does
    not use yet renders its attempts in its own test, ``apps/exercises/tests/test_format_<name>.py``."""
    rendered_above = {"numeric", "choice", "order", "lines", "table", "parts", "code"}
    tests = Path(__file__).resolve().parents[2] / "exercises" / "tests"
    for name in set(AnswerFormat.values) - rendered_above:
        own = tests / f"test_format_{name}.py"
        assert own.is_file() and "answer_shown" in own.read_text(encoding="utf-8"), name
