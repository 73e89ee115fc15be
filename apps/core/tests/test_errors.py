"""Every response under /api/ is the JSON error shape, whatever layer the error comes from; pages
outside /api/ keep Django's HTML error pages. Bad input is a 4xx, never a 5xx."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

from apps.accounts.models import User
from apps.core.parsers import MAX_JSON_DEPTH, json_depth_exceeds
from apps.exercises.models import Attempt

pytestmark = pytest.mark.django_db

EXERCISE = "/api/v1/workbooks/transformer-math/exercises/4.1/"


def error(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/json"
    body = json.loads(response.content)
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "details"}
    assert body["error"]["code"] == code
    return dict(body["error"])


def is_html(response: Any, status: int) -> None:
    assert response.status_code == status
    assert response["Content-Type"].startswith("text/html")


def test_unmatched_urls_are_json_under_api_and_html_elsewhere(api: APIClient) -> None:
    assert error(api.get("/api/nope/"), 404, "not_found")["message"] == "Not found."
    error(api.get("/api/v1/no/such/thing/"), 404, "not_found")
    is_html(Client().get("/no/such/page/"), 404)


def test_a_bad_host_header_is_a_json_400_under_api() -> None:
    body = error(APIClient().get("/api/v1/workbooks/", HTTP_HOST="evil.example"), 400, "bad_request")
    assert "evil" not in body["message"]
    is_html(Client().get("/", HTTP_HOST="evil.example"), 400)


def test_a_body_over_the_upload_limit_is_a_413(api: APIClient, student: User, settings: Any) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10_000
    body = json.dumps({"answer": "1" * 20_000})
    response = api.post(EXERCISE + "attempts/", body, content_type="application/json")
    assert error(response, 413, "too_large")["details"] == {"max_bytes": 10_000}
    assert not Attempt.objects.filter(user=student).exists()


def test_too_many_form_fields_is_a_json_400(anon_api: APIClient) -> None:
    fields = "&".join(f"f{i}=1" for i in range(1_100))  # DATA_UPLOAD_MAX_NUMBER_FIELDS is 1,000
    response = anon_api.post("/api/v1/auth/token/", fields, content_type="application/x-www-form-urlencoded")
    error(response, 400, "too_many_fields")


def test_method_media_type_and_throttle_errors_keep_the_shape(api: APIClient) -> None:
    error(api.patch("/api/v1/workbooks/"), 405, "method_not_allowed")
    error(api.post(EXERCISE + "attempts/", "x", content_type="text/plain"), 415, "unsupported_media_type")
    codes = [api.post("/api/v1/cohorts/join/", {"code": f"WRONG{i:03d}"}).status_code for i in range(11)]
    assert codes[-1] == 429
    response = api.post("/api/v1/cohorts/join/", {"code": "WRONG999"})
    assert int(error(response, 429, "throttled")["details"]["retry_after_seconds"]) == int(response["Retry-After"])


@pytest.mark.urls("apps.core.tests.crash_urls")
def test_a_crash_is_a_json_500_without_the_traceback(api: APIClient) -> None:
    api.raise_request_exception = False
    response = api.get("/api/v1/crash/")
    body = error(response, 500, "server_error")
    assert "secret" not in response.content.decode() and "Traceback" not in response.content.decode()
    assert body["message"] == "Something went wrong on our side. It has been logged."
    is_html(Client(raise_request_exception=False).get("/crash/"), 500)


# ---- bodies nested too deep ----------------------------------------------------------------------


def test_json_nested_a_thousand_deep_is_a_400_before_parsing(api: APIClient, anon_api: APIClient) -> None:
    deep = "[" * 1000 + "]" * 1000  # 2 KB: json.loads would raise RecursionError
    body = error(api.post(EXERCISE + "preview/", deep, content_type="application/json"), 400, "parse_error")
    assert f"more than {MAX_JSON_DEPTH} deep" in body["message"]
    error(anon_api.post("/api/v1/auth/token/", '{"a":' * 1000 + "1" + "}" * 1000, content_type="application/json"),
          400, "parse_error")  # fmt: skip


def test_nesting_within_the_limit_and_form_bodies_still_parse(anon_api: APIClient, student: User) -> None:
    nested = {
        "username": "x",
        "password": "y",
        "extra": json.loads("[" * (MAX_JSON_DEPTH - 1) + "]" * (MAX_JSON_DEPTH - 1)),
    }
    error(anon_api.post("/api/v1/auth/token/", nested, format="json"), 400, "invalid_credentials")
    form = anon_api.post("/api/v1/auth/token/", {"username": student.username, "password": "a-strong-pass-123"},
                         format="multipart")  # fmt: skip
    assert form.status_code == 200 and form.json()["user"]["username"] == student.username
    urlencoded = anon_api.post(
        "/api/v1/auth/token/",
        f"username={student.username}&password=a-strong-pass-123",
        content_type="application/x-www-form-urlencoded",
    )
    assert urlencoded.status_code == 200


@pytest.mark.parametrize(
    ("body", "too_deep"),
    [
        (b"[" * 33 + b"]" * 33, True),
        (b"[" * 32 + b"]" * 32, False),
        (b'{"a": "' + b"[" * 100 + b'"}', False),  # brackets inside a string do not count
        (b'["\\"' + b"[" * 40 + b'"]', False),  # nor after an escaped quote
        (b'{"a":' * 33 + b"1" + b"}" * 33, True),
        (b"[]" * 10_000, False),  # wide is fine
    ],
)
def test_depth_is_measured_outside_strings(body: bytes, too_deep: bool) -> None:
    assert json_depth_exceeds(body) is too_deep


# ---- path and query parameters --------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/workbooks/transformer-math/exercises/4.1%00/",
        "/api/v1/workbooks/transformer-math/exercises/4.1%00/attempts/",
        "/api/v1/workbooks/transformer-math/exercises/" + "9" * 5000 + "/",
        "/api/v1/workbooks/transformer-math/exercises/4.1.1/",
        "/api/v1/workbooks/" + "a" * 65 + "/",
        "/api/v1/workbooks/" + "a" * 65 + "/exercises/4.1/",
        "/api/v1/workbooks/scaling-book/skills/a%00b/",
        "/api/v1/progress/" + "a" * 5000 + "/",
    ],
)
def test_malformed_path_parameters_are_a_json_404(api: APIClient, path: str) -> None:
    error(api.get(path), 404, "not_found")
    error(api.post(path, {}), 404, "not_found")


def test_malformed_path_parameters_on_pages_are_an_html_404(student: User) -> None:
    client = Client()
    client.force_login(student)
    assert client.get("/w/transformer-math/4.1/").status_code == 200
    is_html(client.get("/w/transformer-math/4.1%00/"), 404)
    is_html(client.post("/w/transformer-math/4.1%00/", {"answer": "1"}), 404)
    is_html(client.get("/w/" + "a" * 65 + "/"), 404)
    is_html(client.get("/w/transformer-math/" + "9" * 100 + "/"), 404)


def test_every_exercise_number_in_the_content_is_routable(api: APIClient) -> None:
    from apps.exercises.models import Exercise

    for exercise in Exercise.objects.select_related("workbook"):
        path = f"/api/v1/workbooks/{exercise.workbook.slug}/exercises/{exercise.number}/"
        assert api.get(path).status_code == 200, path


def test_a_null_character_in_the_query_string_is_a_400(api: APIClient, student: User) -> None:
    body = error(api.get("/api/v1/attempts/?workbook=a%00b"), 400, "bad_request")
    assert "null character" in body["message"]
    client = Client()
    client.force_login(student)
    is_html(client.get("/w/transformer-math/4.1/?attempt=1%00"), 400)
