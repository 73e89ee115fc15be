"""The throttle's policy when Redis is unreachable (apps/core/throttling.py): reads and answers
fail open, security scopes fail closed with a clear 503. Against a real Redis that is stopped."""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from django.conf import settings
from django.test import Client, override_settings
from rest_framework.test import APIClient

from apps.accounts.models import User
from apps.core.redis import shared_client
from apps.exercises.models import Attempt

pytestmark = pytest.mark.django_db


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def redis_down() -> Iterator[None]:
    """The cache on a private Redis, which is then killed: every use of it now fails to connect."""
    port = free_port()
    server = subprocess.Popen(  # noqa: S603 - fixed argument list
        ["redis-server", "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--appendonly", "no"],  # noqa: S607
        stdout=subprocess.DEVNULL,
    )
    try:
        probe = redis.Redis(port=port, socket_connect_timeout=0.5)
        for _ in range(100):
            try:
                if probe.ping():
                    break
            except redis.exceptions.ConnectionError:
                time.sleep(0.05)
        caches = {"default": {**settings.CACHES["default"], "LOCATION": f"redis://127.0.0.1:{port}/0"}}
        with override_settings(CACHES=caches):
            shared_client.cache_clear()
            server.kill()
            server.wait(timeout=10)
            yield
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(timeout=10)
        shared_client.cache_clear()


def unavailable(response: Any) -> None:
    assert response.status_code == 503, response.content
    assert response["Retry-After"] == "10"
    body = response.json()
    assert body["error"]["code"] == "rate_limit_unavailable"
    assert "Try again in 10 seconds" in body["error"]["message"]


def test_security_scopes_fail_closed_with_a_clear_503(redis_down: None, api: APIClient, anon_api: APIClient,
                                                      student: User) -> None:  # fmt: skip
    token = anon_api.post("/api/v1/auth/token/", {"username": student.username, "password": "a-strong-pass-123"})
    unavailable(token)
    unavailable(api.post("/api/v1/cohorts/join/", {"code": "ABCDEFGH"}))


def test_web_login_and_password_reset_say_so_instead_of_a_500(redis_down: None, student: User) -> None:
    client = Client()
    login = client.post("/login/", {"username": student.username, "password": "a-strong-pass-123"})
    assert login.status_code == 503 and login["Retry-After"] == "10"
    assert "the service that limits attempts cannot be reached" in login.text
    assert "_auth_user_id" not in client.session
    reset = client.post("/password/reset/", {"email": "someone@example.org"})
    assert reset.status_code == 503 and reset["Retry-After"] == "10"
    assert "the service that limits attempts cannot be reached" in reset.text


def test_reads_previews_and_answers_fail_open(redis_down: None, api: APIClient, student: User,
                                              caplog: pytest.LogCaptureFixture) -> None:  # fmt: skip
    url = "/api/v1/workbooks/transformer-math/exercises/4.1/"
    assert api.get(url).status_code == 200
    preview = api.post(url + "preview/", {"answer": "1 GB"})
    assert preview.status_code == 200, preview.content
    answer = api.post(url + "attempts/", {"answer": "1 GB"})
    assert answer.status_code == 201, answer.content
    assert Attempt.objects.filter(user=student).count() == 1
