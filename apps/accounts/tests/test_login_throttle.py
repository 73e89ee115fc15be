"""Sign-in limits: per client address (X-Forwarded-For trusted only as far as NUM_PROXIES says)
and per username, on the API token endpoint and the web login form alike."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

from apps.accounts.models import User
from apps.core.throttling import FixedWindowScopedThrottle

pytestmark = pytest.mark.django_db

PASSWORD = "a-strong-pass-123"


@pytest.fixture
def rates(settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """3 sign-ins a minute per address, 5 failures per username (the API's throttle class reads
    its rates once, at import; the services read the settings)."""
    new = {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], "auth": "3/min", "login_username": "5/hour"}
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": new}
    monkeypatch.setattr(FixedWindowScopedThrottle, "THROTTLE_RATES", new)


def token(client: APIClient, username: str, password: str, address: str, forwarded: str | None = None) -> Any:
    extra: dict[str, Any] = {"REMOTE_ADDR": address} | ({"HTTP_X_FORWARDED_FOR": forwarded} if forwarded else {})
    return client.post("/api/v1/auth/token/", {"username": username, "password": password}, **extra)


def test_a_forged_x_forwarded_for_does_not_buy_more_guesses(rates: None, anon_api: APIClient, student: User) -> None:
    codes = [token(anon_api, f"nobody{i}", "x", "10.1.1.1", forwarded=f"203.0.113.{i}").status_code for i in range(6)]
    assert codes == [400, 400, 400, 429, 429, 429]


def test_behind_a_proxy_the_forwarded_client_is_the_key(rates: None, settings: Any, anon_api: APIClient) -> None:
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    # The proxy appends the address it saw; what the client wrote before it is not trusted.
    codes = [token(anon_api, f"nobody{i}", "x", "172.18.0.2", forwarded=f"1.2.3.4, 203.0.113.{i % 2}").status_code
             for i in range(8)]  # fmt: skip
    assert codes == [400] * 6 + [429] * 2  # two clients, three each


def test_failures_per_username_lock_it_whatever_the_address(rates: None, anon_api: APIClient, student: User) -> None:
    codes = [token(anon_api, student.username, "wrong", f"10.0.0.{i}").status_code for i in range(5)]
    assert codes == [400] * 5
    refused = token(anon_api, student.username.upper(), PASSWORD, "10.0.9.9")  # right password, other case
    assert refused.status_code == 429
    assert refused.json()["error"]["code"] == "throttled"
    assert "failed sign-ins for this username" in refused.json()["error"]["message"]
    assert 0 < int(refused["Retry-After"]) <= 3600
    assert refused.json()["error"]["details"]["retry_after"] == int(refused["Retry-After"])
    # Another account signs in; a success does not count against a username.
    other = User.objects.create_user("other", password=PASSWORD)
    for i in range(3):
        assert token(anon_api, other.username, PASSWORD, f"10.0.1.{i}").status_code == 200


def test_the_web_login_form_has_the_same_limits(rates: None, student: User) -> None:
    client = Client(REMOTE_ADDR="10.2.2.2")
    pages = [client.post("/login/", {"username": student.username, "password": "wrong"}) for _ in range(3)]
    assert [p.status_code for p in pages] == [200, 200, 200]
    over = client.post("/login/", {"username": student.username, "password": PASSWORD}, HTTP_X_FORWARDED_FOR="1.1.1.1")
    assert over.status_code == 429 and int(over["Retry-After"]) > 0
    assert "Too many sign-in attempts from your network" in over.text
    assert "_auth_user_id" not in client.session
    # From other addresses: two more failures lock the username (5 in all), then even the password fails.
    for i in range(2):
        assert (
            Client(REMOTE_ADDR=f"10.3.0.{i}")
            .post("/login/", {"username": student.username, "password": "x"})
            .status_code
            == 200
        )
    locked = Client(REMOTE_ADDR="10.4.0.1").post("/login/", {"username": student.username, "password": PASSWORD})
    assert locked.status_code == 429 and "failed sign-ins for this username" in locked.text
    fresh = Client(REMOTE_ADDR="10.5.0.1")
    other = User.objects.create_user("other", password=PASSWORD)
    assert fresh.post("/login/", {"username": other.username, "password": PASSWORD}).status_code == 302
