"""Authoring in the admin: YAML editing validated by the content checks, versions, previews."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import yaml
from django.test import Client

from apps.accounts.models import Role, User
from apps.exercises.admin import spec_yaml
from apps.exercises.models import Exercise
from apps.exercises.tests.admin_forms import post_exercise_edit

pytestmark = pytest.mark.django_db


@pytest.fixture
def author_client(make_user: Callable[..., User]) -> Client:
    client = Client()
    client.force_login(make_user("ada", role=Role.AUTHOR))
    return client


def ex(number: str) -> Exercise:
    return Exercise.objects.select_related("current_version", "chapter").get(
        workbook__slug="transformer-math", number=number
    )


def test_author_sees_lists_with_search_and_filters(author_client: Client) -> None:
    response = author_client.get("/admin/exercises/exercise/?q=Mixtral")
    assert response.status_code == 200
    assert "Mixtral 8x7B" in response.text
    assert "GPT-2-style model" not in response.text
    filtered = author_client.get("/admin/exercises/exercise/?kind__exact=debug")
    assert "Find the bug in param_count()" in filtered.text
    assert "Mixtral" not in filtered.text
    assert author_client.get("/admin/exercises/workbook/").status_code == 200
    chapter = ex("0.1").chapter
    chapter_page = author_client.get(f"/admin/exercises/chapter/{chapter.pk}/change/")
    assert "Parameter count of a GPT-2-style model" in chapter_page.text  # exercises inline
    assert "<math" in chapter_page.text  # intro preview


def test_change_page_previews_prompt_and_evaluated_answer(author_client: Client) -> None:
    page = author_client.get(f"/admin/exercises/exercise/{ex('0.7').pk}/change/")
    assert page.status_code == 200
    assert "46.7 B params" in page.text
    assert "Known mistake" in page.text
    assert "<math" in page.text


def test_the_preview_shows_options_and_their_feedback_rendered(author_client: Client) -> None:
    page = author_client.get(f"/admin/exercises/exercise/{ex('0.3').pk}/change/").text
    preview = page.split("Derivation")[0]
    assert "Correct option" in preview and "feedback: Layers: 64.4B" in preview
    assert "{{" not in preview and "sig3" not in preview
    unit_note = author_client.get(f"/admin/exercises/exercise/{ex('4.1').pk}/change/").text
    assert "Accepted with a unit note" in unit_note


def test_saving_a_changed_answer_makes_a_new_version(author_client: Client) -> None:
    exercise = ex("0.1")
    assert exercise.current_version is not None
    data = yaml.safe_load(spec_yaml(exercise.current_version.spec))
    data["answer"]["value"] = "layers + tok_emb + final_ln"
    data["answer"]["mistakes"] = []
    assert post_exercise_edit(author_client, exercise, yaml.safe_dump(data)) == "redirect 302"
    after = ex("0.1")
    assert after.current_version is not None
    assert after.current_version.version == 2


def test_an_author_can_retire_an_exercise_and_learners_stop_seeing_it(author_client: Client, api: Any) -> None:
    exercise = ex("0.4")
    assert api.get("/api/v1/workbooks/transformer-math/exercises/0.4/").status_code == 200  # cached now
    assert exercise.current_version is not None
    form = {
        "chapter": exercise.chapter_id,
        "spec_text": spec_yaml(exercise.current_version.spec),
        "versions-TOTAL_FORMS": "0",
        "versions-INITIAL_FORMS": "0",
        "versions-MIN_NUM_FORMS": "0",
        "versions-MAX_NUM_FORMS": "1000",
    }  # no "is_active": the checkbox is cleared
    assert author_client.post(f"/admin/exercises/exercise/{exercise.pk}/change/", form).status_code == 302
    assert ex("0.4").is_active is False
    assert api.get("/api/v1/workbooks/transformer-math/exercises/0.4/").status_code == 404


def test_saving_runs_the_content_checks(author_client: Client) -> None:
    exercise = ex("0.1")
    assert exercise.current_version is not None
    data = yaml.safe_load(spec_yaml(exercise.current_version.spec))
    data["answer"]["tolerance"] = 0.5  # swallows the known mistakes
    page = post_exercise_edit(author_client, exercise, yaml.safe_dump(data))
    assert "is within the tolerance of the answer" in page
    assert "not valid YAML" in post_exercise_edit(author_client, exercise, "number: [unclosed").replace("Not", "not")
    data["answer"]["tolerance"] = 0.001
    data["answer"]["unit"] = "furlongs"
    assert "unknown unit" in post_exercise_edit(author_client, exercise, yaml.safe_dump(data))
    assert ex("0.1").current_version.version == 1  # type: ignore[union-attr]


def test_download_yaml_round_trips_through_the_schema(author_client: Client) -> None:
    exercise = ex("0.6")
    response = author_client.post(
        "/admin/exercises/exercise/", {"action": "download_yaml", "_selected_action": [exercise.pk]}
    )
    assert response["Content-Type"].startswith("text/yaml")
    items = yaml.safe_load(response.content)
    assert items[0]["number"] == "0.6"
    assert items[0]["code"] == {"entry": "param_count", "dir": "0.6-param-count-bug"}
    assert items[0]["buggy_lines"] == [8]


def test_students_have_no_admin_and_instructors_cannot_edit_content(make_user: Callable[..., User]) -> None:
    client = Client()
    client.force_login(make_user("sam", role=Role.STUDENT))
    assert client.get("/admin/").status_code == 302  # to the admin login
    client.force_login(make_user("ivy", role=Role.INSTRUCTOR))
    assert client.get("/admin/exercises/exercise/").status_code == 200  # may view
    page = client.get(f"/admin/exercises/exercise/{ex('0.1').pk}/change/")
    assert page.status_code == 200
    assert "Save" not in page.text  # read-only
    assert client.post(f"/admin/exercises/exercise/{ex('0.1').pk}/change/", {}).status_code == 403
