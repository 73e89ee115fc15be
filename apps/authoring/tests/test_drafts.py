"""Drafts: authors only, previewed on four variants, checked off the request, published through
the content services. Real PostgreSQL and Redis; the checks' task body runs here as a worker runs it."""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any

import pytest
import yaml
from django.test import Client
from django.utils import timezone
from django.utils.html import escape
from rest_framework.test import APIClient

from apps.accounts.models import User
from apps.authoring import selectors, services, tasks
from apps.authoring.exceptions import DraftNotPublishable
from apps.authoring.models import Draft, DraftStatus
from apps.authoring.tests.conftest import exercise, new_exercise_text, spec_of, varying_numeric
from apps.exercises import selectors as exercise_selectors
from apps.exercises.models import Exercise, ExerciseVersion

pytestmark = pytest.mark.django_db

SECRET_TITLE = "Draft-only title 7f3a"


class Elements(HTMLParser):
    """Every attribute on the page, and every script element with its src."""

    def __init__(self) -> None:
        super().__init__()
        self.attributes: list[tuple[str, str | None]] = []
        self.scripts: list[tuple[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.attributes += [(k.lower(), v) for k, v in attrs]
        if tag == "script":
            self.scripts.append((tag, dict(attrs).get("src")))


def new_draft(author: User, *, text: str | None = None, number: str = "0.97") -> Draft:
    base = exercise("0.1")
    text = text or new_exercise_text(base, key="draft-only-7f3a", number=number, title=SECRET_TITLE)
    return services.draft_create(chapter=base.chapter, spec_text=text, user=author)


def checked(draft: Draft) -> Draft:
    """Ask for the checks and run the task as a worker would (here: in this test's transaction)."""
    services.draft_check_request(draft=draft)
    tasks.check_draft.apply(args=(draft.pk,))
    draft.refresh_from_db()
    return draft


# ---- learners never see a draft -------------------------------------------------------------------


def test_a_draft_is_invisible_to_learners_everywhere(author: User, api: APIClient, student: User) -> None:
    draft = new_draft(author)
    edited = spec_of(exercise("0.2"))
    edited["title"] = "Edited-in-a-draft title 7f3a"
    edit = services.draft_create(
        chapter=exercise("0.2").chapter, exercise=exercise("0.2"), spec_text=yaml.safe_dump(edited), user=author
    )
    learner_reads = [
        "/api/v1/workbooks/",
        "/api/v1/workbooks/transformer-math/",
        "/api/v1/workbooks/transformer-math/exercises/",
        "/api/v1/workbooks/transformer-math/chapters/0/",
        "/api/v1/workbooks/transformer-math/exercises/0.2/",
    ]
    for url in learner_reads:
        response = api.get(url)
        assert response.status_code == 200, url
        assert "7f3a" not in response.content.decode(), url
    assert api.get("/api/v1/workbooks/transformer-math/exercises/0.97/").status_code == 404
    assert api.get("/api/v1/workbooks/transformer-math/export/").status_code == 403
    web = Client()
    web.force_login(student)
    for url in ("/", "/w/transformer-math/", "/w/transformer-math/0.2/"):
        page = web.get(url)
        assert page.status_code == 200, url
        assert "7f3a" not in page.text, url
    assert web.get("/w/transformer-math/0.97/").status_code == 404
    # The admin's drafts, their preview and their progress: not for learners (the sign-in page).
    for url in (
        "/admin/authoring/draft/",
        f"/admin/authoring/draft/{draft.pk}/preview/",
        f"/admin/authoring/draft/{draft.pk}/status/",
        f"/admin/authoring/draft/{edit.pk}/change/",
    ):
        denied = web.get(url)
        assert denied.status_code == 302 and "/admin/login/" in denied["Location"], url
    assert web.post(f"/admin/authoring/draft/{draft.pk}/publish/").status_code == 302
    assert Draft.objects.get(pk=draft.pk).status == DraftStatus.DRAFT
    assert not Exercise.objects.filter(number="0.97", workbook__slug="transformer-math").exists()
    assert selectors.draft_list(user=student).count() == 0


def test_an_instructor_without_the_content_permission_gets_no_draft(
    author: User, make_user: Any, settings: Any
) -> None:
    draft = new_draft(author)
    instructor = make_user("drafts-instructor", role="instructor")
    client = Client()
    client.force_login(instructor)
    if instructor.is_staff:
        assert client.get(f"/admin/authoring/draft/{draft.pk}/preview/").status_code in (403, 404)
        assert client.get(f"/admin/authoring/draft/{draft.pk}/status/").status_code in (403, 404)
        assert "Drafts" not in client.get("/admin/").text
    else:
        assert client.get(f"/admin/authoring/draft/{draft.pk}/preview/").status_code == 302
    assert selectors.draft_get(user=instructor, draft_id=draft.pk) is None


# ---- the admin: add, prefill, edit ------------------------------------------------------------------


def test_an_author_adds_a_draft_in_the_admin_and_edits_of_an_exercise_start_from_its_yaml(
    author_client: Client,
) -> None:
    base = exercise("0.1")
    form = author_client.get(f"/admin/authoring/draft/add/?exercise={base.pk}")
    assert form.status_code == 200
    assert "Parameter count of a GPT-2-style model" in form.text  # the exercise's YAML, prefilled
    text = new_exercise_text(base, key="admin-draft-7f3a", number="0.96", title="Added in the admin")
    response = author_client.post("/admin/authoring/draft/add/", {"chapter": base.chapter_id, "spec_text": text})
    assert response.status_code == 302
    draft = Draft.objects.get(spec_text__contains="admin-draft-7f3a")
    assert draft.exercise_id is None and draft.status == DraftStatus.DRAFT
    listing = author_client.get("/admin/authoring/draft/")
    assert listing.status_code == 200 and f"Draft {draft.pk}" in listing.text
    change = author_client.get(f"/admin/authoring/draft/{draft.pk}/change/")
    assert change.status_code == 200 and "Save draft, preview and run checks" in change.text
    # Save and check: the checks are queued for a worker, and the preview says so.
    response = author_client.post(
        f"/admin/authoring/draft/{draft.pk}/change/",
        {"chapter": base.chapter_id, "spec_text": text, "_check": "1"},
    )
    assert response.status_code == 302 and response["Location"].endswith(f"/{draft.pk}/preview/")
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CHECKING and draft.report["state"] == "queued"


# ---- preview --------------------------------------------------------------------------------------


def test_the_preview_shows_four_variants_with_their_answers_and_derivations(
    author: User, author_client: Client
) -> None:
    base = varying_numeric()
    text = new_exercise_text(base, key="varying-draft-7f3a", number="0.95", title="A varying draft")
    draft = services.draft_create(chapter=base.chapter, spec_text=text, user=author)
    preview = selectors.draft_preview(draft=draft)
    assert preview.problems == [] and preview.varies
    assert len(preview.variants) == 4
    assert [v.round for v in preview.variants] == [0, 1, 1, 1]
    assert len({tuple(v.givens) for v in preview.variants}) > 1  # other numbers than the seed's
    for v in preview.variants:
        assert v.error == ""
        assert v.prompt_html and v.explanation_html
        assert dict(v.answers)["Answer"]  # the evaluated answer on these numbers
        assert v.widget["format"] == "numeric" and "answer" not in v.widget
    page = author_client.get(f"/admin/authoring/draft/{draft.pk}/preview/")
    assert page.status_code == 200
    body = page.text
    assert body.count('class="authoring-variant"') == 4
    assert body.count("<h4>Derivation</h4>") == 4 and body.count("<h4>The answer</h4>") == 4
    assert "Round 0 (the seed" in body and "Learner C (round 1)" in body
    assert 'id="answer"' in body  # the numeric widget, as on the exercise page
    assert "<math" in body
    for v in preview.variants:
        assert dict(v.answers)["Answer"] in body
    # Another format: its own widget (the options), and its answers (the correct option).
    choice = exercise("0.3")
    text = new_exercise_text(choice, key="choice-draft-7f3a", number="0.91", title="A choice draft")
    draft = services.draft_create(chapter=choice.chapter, spec_text=text, user=author)
    page = author_client.get(f"/admin/authoring/draft/{draft.pk}/preview/")
    assert page.text.count('class="authoring-variant"') == 4
    assert page.text.count('name="choices"') >= 4 * 2 and "Correct option" in page.text


def test_a_script_in_a_draft_renders_inert_on_the_preview(author: User, author_client: Client) -> None:
    base = exercise("0.1")
    spec = spec_of(base)
    hostile = '<script>alert("draft")</script><img src=x onerror="alert(1)"> <a href="javascript:alert(2)">x</a>'
    spec.update(id="xss-draft-7f3a", number="0.94", title='<script>alert("title")</script>')
    spec["prompt"] = hostile + "\n\n" + spec["prompt"]
    spec["explanation"] = hostile + "\n\n" + spec["explanation"]
    draft = services.draft_create(chapter=base.chapter, spec_text=yaml.safe_dump(spec), user=author)
    page = author_client.get(f"/admin/authoring/draft/{draft.pk}/preview/")
    assert page.status_code == 200
    body = page.text
    assert "<script>alert" not in body
    elements = Elements()
    elements.feed(body)
    assert not [a for a in elements.attributes if a[0].startswith("on")]  # no event handler
    assert not [a for a in elements.attributes if a[0] in ("href", "src") and "javascript:" in (a[1] or "")]
    assert all(src for tag, src in elements.scripts)  # every script is a file of ours
    assert "&lt;script&gt;alert(&quot;title&quot;)&lt;/script&gt;" in body  # the title is text
    csp = page["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp.split("script-src")[1].split(";")[0]


def test_a_draft_that_is_not_an_exercise_yet_says_why(author: User, author_client: Client) -> None:
    draft = new_draft(author, text="number: 0.93\ntitle: [unclosed\n")
    page = author_client.get(f"/admin/authoring/draft/{draft.pk}/preview/")
    assert page.status_code == 200
    assert "This draft is not an exercise yet" in page.text and "Not valid YAML" in page.text


# ---- checks and their progress ------------------------------------------------------------------


def test_checks_run_off_the_request_with_progress_and_a_report(author: User, author_client: Client) -> None:
    draft = new_draft(author)
    status_url = f"/admin/authoring/draft/{draft.pk}/status/"
    assert author_client.get(status_url).json()["state"] == "not run"
    services.draft_check_request(draft=draft)
    queued = author_client.get(status_url).json()
    assert queued == {
        "draft": draft.pk,
        "status": "checking",
        "state": "queued",
        "stale": False,
        "passed": None,
        "steps": [
            {"key": "schema", "title": services.STEP_TITLES["schema"], "state": "pending", "problems": []},
            {"key": "checks", "title": services.STEP_TITLES["checks"], "state": "pending", "problems": []},
        ],
        "done": 0,
        "total": 2,
        "runs": [],
        "code_runs_in": "",
        "problems": [],
        "publishable": False,
    }
    assert tasks.check_draft.apply(args=(draft.pk,)).get() == "passed"
    # A second delivery of the same task changes nothing.
    assert tasks.check_draft.apply(args=(draft.pk,)).get() == "not requested"
    done = author_client.get(status_url).json()
    assert done["status"] == "checked" and done["state"] == "done" and done["passed"] is True
    assert done["done"] == 2 and [s["state"] for s in done["steps"]] == ["passed", "passed"]
    assert done["publishable"] is True and done["runs"] == []
    # Editing the text makes the report stale: back to unchecked, not publishable.
    services.draft_update(draft=draft, spec_text=draft.spec_text + "\n# edited\n", user=author)
    assert author_client.get(status_url).json()["publishable"] is False
    # The admin's check button queues it again.
    response = author_client.post(f"/admin/authoring/draft/{draft.pk}/check/")
    assert response.status_code == 302
    assert author_client.get(status_url).json()["state"] == "queued"
    assert author_client.get(status_url.replace("status", "check")).status_code == 405


def test_an_edit_made_while_the_checks_run_is_not_overwritten_by_them(author: User) -> None:
    draft = new_draft(author)
    services.draft_check_request(draft=draft)
    services.draft_update(draft=draft, spec_text=draft.spec_text + "\n# edited meanwhile\n", user=author)
    assert tasks.check_draft.apply(args=(draft.pk,)).get() == "not requested"
    draft.refresh_from_db()
    assert draft.status == DraftStatus.DRAFT and draft.report == {}


def test_failed_checks_are_reported_and_refuse_publishing(author: User, author_client: Client) -> None:
    base = exercise("0.1")
    answer = {**spec_of(base)["answer"], "value": "layers + no_such_name"}
    text = new_exercise_text(base, key="failing-draft-7f3a", number="0.92", title="Unknown name", answer=answer)
    draft = checked(new_draft(author, text=text))
    assert draft.status == DraftStatus.CHECKED and draft.report["passed"] is False
    assert [s["state"] for s in draft.report["steps"]] == ["passed", "failed"]
    assert any("no_such_name" in p for p in draft.report["problems"]), draft.report["problems"]
    with pytest.raises(DraftNotPublishable, match="checks failed"):
        services.draft_publish(draft=draft, user=author)
    response = author_client.post(f"/admin/authoring/draft/{draft.pk}/publish/", follow=True)
    assert "Not published: The checks failed" in response.text
    assert not Exercise.objects.filter(key="failing-draft-7f3a").exists()
    page = author_client.get(f"/admin/authoring/draft/{draft.pk}/preview/").text
    assert 'id="publish-button" disabled' in page and "no_such_name" in page


def test_publishing_unchecked_or_stale_drafts_is_refused(author: User) -> None:
    draft = new_draft(author)
    with pytest.raises(DraftNotPublishable, match="have not run"):
        services.draft_publish(draft=draft, user=author)
    draft = checked(draft)
    draft = services.draft_update(draft=draft, spec_text=draft.spec_text.replace(SECRET_TITLE, "Retitled"), user=author)
    with pytest.raises(DraftNotPublishable, match="have not run"):
        services.draft_publish(draft=draft, user=author)


# ---- publishing ---------------------------------------------------------------------------------


def test_publishing_an_answer_change_creates_a_version_and_a_prose_change_updates_it(
    author: User, author_client: Client
) -> None:
    target = exercise("0.1")
    before = target.current_version
    assert before is not None
    spec = spec_of(target)
    spec["answer"]["value"] = "layers + tok_emb + final_ln"
    spec["answer"]["mistakes"] = []
    draft = services.draft_create(chapter=target.chapter, exercise=target, spec_text=yaml.safe_dump(spec), user=author)
    draft = checked(draft)
    assert draft.report["passed"] is True, draft.report
    response = author_client.post(f"/admin/authoring/draft/{draft.pk}/publish/")
    assert response.status_code == 302 and response["Location"].endswith(f"/exercises/exercise/{target.pk}/change/")
    after = exercise("0.1")
    assert after.current_version is not None and after.current_version.version == before.version + 1
    draft.refresh_from_db()
    assert draft.status == DraftStatus.PUBLISHED and draft.published_version_id == after.current_version_id
    assert ExerciseVersion.objects.filter(exercise=target).count() == 2
    # Published drafts are the record: not edited again.
    assert author_client.get(f"/admin/authoring/draft/{draft.pk}/change/").status_code == 200
    assert author_client.post(f"/admin/authoring/draft/{draft.pk}/check/", follow=True).status_code == 200
    draft.refresh_from_db()
    assert draft.status == DraftStatus.PUBLISHED

    # A prose change keeps the version and updates it.
    spec = spec_of(after)
    spec["title"] = "Retitled in a draft"
    prose = checked(
        services.draft_create(chapter=after.chapter, exercise=after, spec_text=yaml.safe_dump(spec), user=author)
    )
    version = services.draft_publish(draft=prose, user=author)
    assert version.pk == after.current_version_id and version.version == after.current_version.version
    assert exercise("0.1").title == "Retitled in a draft"
    # The draft begun before that publish is refused: the exercise moved on under it.
    spec["title"] = "An older draft"
    older = services.draft_create(chapter=after.chapter, exercise=after, spec_text=yaml.safe_dump(spec), user=author)
    Draft.objects.filter(pk=older.pk).update(base_version=before)
    with pytest.raises(DraftNotPublishable, match="changed since this draft was begun"):
        services.draft_publish(draft=checked(older), user=author)


def test_publishing_a_new_exercise_adds_it_for_learners(author: User, api: APIClient) -> None:
    draft = checked(new_draft(author))
    assert draft.report["passed"] is True, draft.report
    version = services.draft_publish(draft=draft, user=author)
    assert version.version == 1
    body = api.get("/api/v1/workbooks/transformer-math/exercises/0.97/")
    assert body.status_code == 200 and body.json()["title"] == SECRET_TITLE


def test_a_draft_of_an_edit_starts_from_the_block_as_written_and_publishes_only_its_lines(
    author: User, author_client: Client
) -> None:
    target = exercise("0.1")
    text = exercise_selectors.exercise_source(exercise=target)
    page = author_client.get(f"/admin/authoring/draft/add/?exercise={target.pk}")
    assert escape(text.splitlines()[0].strip()) in page.text
    edited = text.replace(target.title, "Retitled from its block", 1)
    assert edited != text
    response = author_client.post(
        "/admin/authoring/draft/add/",
        # A browser sends the textarea's lines with CRLF: the draft keeps the file's own newlines.
        {"chapter": target.chapter_id, "exercise": target.pk, "spec_text": edited.replace("\n", "\r\n")},
    )
    assert response.status_code == 302
    draft = Draft.objects.get(exercise=target, status=DraftStatus.DRAFT)
    assert draft.spec_text == edited
    version = services.draft_publish(draft=checked(draft), user=author)
    assert version.version == 1  # a prose change: the same version, updated
    assert exercise("0.1").title == "Retitled from its block"
    assert exercise_selectors.exercise_source(exercise=target) == edited


def test_a_check_that_cannot_finish_ends_failed_not_checking_for_ever(author: User) -> None:
    draft = new_draft(author)
    assert services.draft_check_abandon(draft_id=draft.pk, reason="x") is False  # nothing asked
    services.draft_check_request(draft=draft)
    assert services.draft_check_abandon(draft_id=draft.pk, reason="x") is False  # not claimed yet
    Draft.objects.filter(pk=draft.pk).update(check_started_at=timezone.now())  # as the task's claim does
    assert services.draft_check_abandon(draft_id=draft.pk, reason="they ran past their time limit")
    draft.refresh_from_db()
    assert draft.status == DraftStatus.CHECKED and draft.report["passed"] is False
    assert "did not finish: they ran past their time limit" in draft.report["problems"][0]
    with pytest.raises(DraftNotPublishable):
        services.draft_publish(draft=draft, user=author)
