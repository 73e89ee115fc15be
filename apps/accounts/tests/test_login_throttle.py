"""Sign-in and sign-up limits that cannot be turned on a victim: failures count per (username,
address), per address and per username, on the API token endpoint and the web login form alike
(one service), with X-Forwarded-For trusted only as far as NUM_PROXIES says. Real Redis."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client
from rest_framework.test import APIClient

from apps.accounts import services
from apps.accounts.models import User
from apps.core.exceptions import ApplicationError
from apps.core.throttling import FixedWindowScopedThrottle

pytestmark = pytest.mark.django_db

PASSWORD = "a-strong-pass-123"
HOME = "10.0.0.5"  # where the victim signs in from


def set_rates(settings: Any, monkeypatch: pytest.MonkeyPatch, **rates: str) -> None:
    # The API's throttle class reads its rates once, at import; the services read the settings.
    new = {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], **rates}
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": new}
    monkeypatch.setattr(FixedWindowScopedThrottle, "THROTTLE_RATES", new)


@pytest.fixture
def rates(settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """3 sign-in requests a minute per address; 4 failures per (username, address) an hour, 6 per
    address; past 5 tries of a username from unfamiliar addresses, those are slowed (15 s, doubling)."""
    set_rates(settings, monkeypatch, auth="3/min", login_pair="4/hour", login_address="6/hour", login_username="5/hour")
    settings.LOGIN_BACKOFF_BASE_S = 15
    settings.LOGIN_BACKOFF_MAX_S = 900


@pytest.fixture
def lenient(settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """As ``rates`` but with no limit on requests per address, to hammer the failure limits."""
    set_rates(
        settings, monkeypatch, auth="100000/min", login_pair="4/hour", login_address="6/hour", login_username="5/hour"
    )
    settings.LOGIN_BACKOFF_BASE_S = 15
    settings.LOGIN_BACKOFF_MAX_S = 900


def token(username: str, password: str, address: str, forwarded: str | None = None) -> Any:
    extra: dict[str, Any] = {"REMOTE_ADDR": address} | ({"HTTP_X_FORWARDED_FOR": forwarded} if forwarded else {})
    return APIClient().post("/api/v1/auth/token/", {"username": username, "password": password}, **extra)


def codes(responses: list[Any]) -> list[int]:
    return [r.status_code for r in responses]


def refused(response: Any, says: str) -> int:
    """A 429 in the error shape that says why and when; the seconds to wait."""
    assert response.status_code == 429, response.content
    error = response.json()["error"]
    assert error["code"] == "throttled" and says in error["message"], error
    assert error["details"]["retry_after"] == int(response["Retry-After"]) > 0
    return int(response["Retry-After"])


def slow_key(username: str) -> str:
    return f"login_slow_{services._username_key(username)}"


def test_a_forged_x_forwarded_for_does_not_buy_more_guesses(rates: None, student: User) -> None:
    answers = [token(f"nobody{i}", "x", "10.1.1.1", forwarded=f"203.0.113.{i}") for i in range(6)]
    assert codes(answers) == [400, 400, 400, 429, 429, 429]


def test_behind_a_proxy_the_forwarded_client_is_the_key(rates: None, settings: Any) -> None:
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    # The proxy appends the address it saw; what the client wrote before it is not trusted.
    answers = [token(f"nobody{i}", "x", "172.18.0.2", forwarded=f"1.2.3.4, 203.0.113.{i % 2}") for i in range(8)]
    assert codes(answers) == [400] * 6 + [429] * 2  # two clients, three each


def test_the_victim_signs_in_from_home_while_an_attacker_hammers_their_username(lenient: None, student: User) -> None:
    assert token(student.username, PASSWORD, HOME).status_code == 200  # home is now familiar
    # One attacking address: four failures, then that address may not try this username.
    assert codes([token(student.username, "guess", "10.66.0.1") for _ in range(4)]) == [400] * 4
    wait = refused(token(student.username, PASSWORD, "10.66.0.1"), "for this username from your network")
    assert 0 < wait <= 3600
    # Many attacking addresses: the fifth try from anywhere unfamiliar is the last free one; the sixth
    # takes a turn and slows every unfamiliar address for 15 s, the right password too.
    assert token(student.username, "guess", "10.66.1.0").status_code == 400
    assert token(student.username, "guess", "10.66.1.1").status_code == 400
    for i in range(2, 30):
        wait = refused(token(student.username, "guess", f"10.66.1.{i}"), "networks it has not signed in from before")
        assert 0 < wait <= 15
    slowed = token(student.username, PASSWORD, "10.9.9.9")  # the victim, travelling: asked to wait
    assert "Try again in" in slowed.json()["error"]["message"] and slowed.status_code == 429
    # From home, neither limit applies: the right password signs in, a typo is just a typo.
    assert token(student.username, "typo", HOME).status_code == 400
    assert token(student.username, PASSWORD, HOME).status_code == 200
    home = Client(REMOTE_ADDR=HOME)
    assert home.post("/login/", {"username": student.username, "password": PASSWORD}).status_code == 302
    assert "_auth_user_id" in home.session
    # An IPv6 attacker gets one counter for its whole /64, not one per address.
    assert codes([token("bob", "guess", f"2001:db8:1:2::{i}") for i in range(1, 5)]) == [400] * 4
    refused(token("bob", "guess", "2001:db8:1:2:ffff::1"), "for this username from your network")
    assert token("bob", "guess", "2001:db8:1:3::1").status_code == 400  # another /64


def test_the_slowing_doubles_with_each_try_and_lets_one_try_through_at_a_time(lenient: None, student: User) -> None:
    for i in range(5):
        sign_in = services.login_admit(username="alice", client=f"10.7.0.{i}")
        services.login_failed(sign_in=sign_in)
    waits = []
    for turn in range(7):
        services.login_failed(sign_in=services.login_admit(username="alice", client=f"10.7.1.{turn}"))
        with pytest.raises(ApplicationError) as caught:
            services.login_admit(username="alice", client=f"10.7.2.{turn}")
        assert caught.value.status_code == 429
        waits.append(caught.value.details["retry_after"])
        cache.delete(slow_key("alice"))  # the wait passes (its key's expiry), without sleeping
    assert waits == [15, 30, 60, 120, 240, 480, 900]  # capped at LOGIN_BACKOFF_MAX_S
    assert services._slowed(1015.0, 1000.0).message.endswith("Try again in 15 seconds.")
    assert services._slowed(1900.0, 1000.0).message.endswith("Try again in 15 minutes.")


def test_one_address_guessing_many_usernames_is_stopped_but_not_for_its_own_users(lenient: None, student: User) -> None:
    shared = "10.8.0.1"  # a classroom behind one address
    assert token(student.username, PASSWORD, shared).status_code == 200
    assert codes([token(f"user{i}", "guess", shared) for i in range(6)]) == [400] * 6
    refused(token("user99", "guess", shared), "Too many failed sign-ins from your network")
    refused(token("bob", PASSWORD, shared), "Too many failed sign-ins from your network")
    assert token(student.username, PASSWORD, shared).status_code == 200  # signed in from here before
    assert token("user99", "guess", "10.8.0.2").status_code == 400  # other addresses are not affected


def test_the_web_login_form_follows_the_same_rules(rates: None, student: User) -> None:
    assert token(student.username, "wrong", "10.2.2.2").status_code == 400  # requests count together
    client = Client(REMOTE_ADDR="10.2.2.2")
    pages = [client.post("/login/", {"username": student.username, "password": "wrong"}) for _ in range(2)]
    assert codes(pages) == [200, 200]
    over = client.post("/login/", {"username": student.username, "password": PASSWORD}, HTTP_X_FORWARDED_FOR="1.1.1.1")
    assert over.status_code == 429 and int(over["Retry-After"]) > 0
    assert "Too many sign-in attempts from your network" in over.text
    assert "_auth_user_id" not in client.session


def test_failures_through_the_form_and_the_api_count_together(lenient: None, student: User) -> None:
    def form(address: str, password: str) -> Any:
        return Client(REMOTE_ADDR=address).post("/login/", {"username": student.username, "password": password})

    assert codes([form("10.2.2.2", "wrong") for _ in range(3)]) == [200] * 3
    assert token(student.username, "wrong", "10.2.2.2").status_code == 400  # the fourth
    locked = form("10.2.2.2", PASSWORD)
    assert locked.status_code == 429 and int(locked["Retry-After"]) > 0
    assert "Too many failed sign-ins for this username from your network" in locked.text
    refused(token(student.username, PASSWORD, "10.2.2.2"), "for this username from your network")
    # Elsewhere the owner signs in, and a success clears that address's failures.
    assert form("10.5.0.1", "typo").status_code == 200
    assert form("10.5.0.1", PASSWORD).status_code == 302
    assert codes([form("10.5.0.1", "typo") for _ in range(4)]) == [200] * 4  # counted from zero again
    assert form("10.5.0.1", PASSWORD).status_code == 429


# ---- sign-up ------------------------------------------------------------------------------------


def sign_up(address: str, username: str, password2: str = "correct horse 42") -> Any:
    form = {"username": username, "email": "", "password1": "correct horse 42", "password2": password2}
    return Client(REMOTE_ADDR=address).post("/signup/", form)


def test_sign_up_is_limited_per_address(settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    set_rates(settings, monkeypatch, signup="3/hour")
    assert codes([sign_up("10.3.0.1", f"new{i}") for i in range(3)]) == [302] * 3
    assert sign_up("10.3.0.1", "typo", password2="not the same").status_code == 200  # a form error costs nothing
    over = sign_up("10.3.0.1", "new3")
    assert over.status_code == 429 and 0 < int(over["Retry-After"]) <= 3600
    assert "Too many accounts were created from your network. Try again in" in over.text
    assert not User.objects.filter(username="new3").exists()
    assert sign_up("10.3.0.2", "new3").status_code == 302  # another address
    assert set(User.objects.filter(username__startswith="new").values_list("username", flat=True)) == {
        "new0",
        "new1",
        "new2",
        "new3",
    }


def test_a_new_account_is_familiar_where_it_signed_up(lenient: None, settings: Any) -> None:
    assert sign_up("10.4.0.1", "fresh").status_code == 302
    for i in range(6):  # an attacker elsewhere slows the new username for unfamiliar addresses
        token("fresh", "guess", f"10.4.1.{i}")
    refused(token("fresh", "correct horse 42", "10.4.2.1"), "networks it has not signed in from before")
    assert token("fresh", "correct horse 42", "10.4.0.1").status_code == 200
