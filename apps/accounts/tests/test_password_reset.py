"""Password reset by email (Django's views and tokens, our templates and limits), and how a
learner puts an email address on the account: at sign-up or on the profile."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.tokens import default_token_generator
from django.core import mail
from django.core.cache import cache
from django.test import Client

from apps.accounts import services
from apps.accounts.models import User
from apps.core.exceptions import ApplicationError
from config.env import BASE_DIR
from tests.test_project import PROD_ENV, run

pytestmark = pytest.mark.django_db

ADDRESS = "alice@example.org"
NEW_PASSWORD = "a-brand-new-pass-42"


@pytest.fixture
def alice(make_user: Callable[..., User]) -> User:
    return services.user_set_email(user=make_user("alice"), email=ADDRESS)


def rate(scope: str) -> int:
    return int(settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"][scope].split("/")[0])


def request_link(client: Client, email: str, **extra: str) -> str:
    response = client.post("/password/reset/", {"email": email}, **extra)  # type: ignore[arg-type]
    assert response.status_code == 302, response.content
    assert response["Location"] == "/password/reset/sent/"
    return str(client.get(response["Location"]).text)


def link_in(message: mail.EmailMessage) -> str:
    found = re.findall(r"http://testserver(/password/reset/[^/\s]+/[^/\s]+/)", str(message.body))
    assert len(found) == 1, message.body
    return str(found[0])


def test_login_and_sign_up_pages_lead_to_a_working_reset() -> None:
    client = Client()
    assert 'href="/password/reset/"' in client.get("/login/").text
    signup = client.get("/signup/").text
    assert "to send you a password reset link if you forget your password" in signup
    assert 'type="email" name="email" autocomplete="email"' in signup
    page = client.get("/password/reset/").text
    assert "Forgot your password?" in page and 'name="email"' in page


def test_sign_up_with_an_email_then_reset_and_log_in_with_the_new_password() -> None:
    client = Client()
    response = client.post(
        "/signup/",
        {
            "username": "newbie",
            "email": "Newbie@Example.ORG",
            "password1": "correct horse 42",
            "password2": "correct horse 42",
        },
    )
    assert response.status_code == 302
    assert User.objects.get(username="newbie").email == "Newbie@example.org"  # the domain is case-blind
    client.post("/logout/")

    page = request_link(client, "newbie@example.org")
    assert "Check your inbox" in page
    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert message.to == ["Newbie@example.org"]
    assert message.subject == "Reset your password on ML-systems workbooks"
    assert message.from_email == settings.DEFAULT_FROM_EMAIL
    assert '"newbie"' in str(message.body) and "one hour, and only once" in str(message.body)

    response = client.get(link_in(message))
    assert response.status_code == 302 and response["Location"].endswith("/set-password/")  # token leaves the URL
    form_page = client.get(response["Location"])
    assert "Choose a new password" in form_page.text and "newbie" in form_page.text
    response = client.post(response["Location"], {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})
    assert response.status_code == 302 and response["Location"] == "/password/reset/done/"
    assert "Your password is changed" in client.get("/password/reset/done/").text
    assert client.login(username="newbie", password=NEW_PASSWORD)
    assert not Client().login(username="newbie", password="correct horse 42")


def test_an_unknown_address_gets_the_same_page_and_no_email(alice: User, make_user: Callable[..., User]) -> None:
    client = Client()
    known = request_link(client, ADDRESS)
    unknown = request_link(client, "nobody@example.org")
    assert unknown == known
    # Nor does an account that cannot use a reset: inactive, or without a usable password.
    make_user("gone")
    User.objects.filter(username="gone").update(email="gone@example.org", is_active=False)
    sso = make_user("sso")
    sso.email = "sso@example.org"
    sso.set_unusable_password()
    sso.save()
    assert request_link(client, "gone@example.org") == known
    assert request_link(client, "sso@example.org") == known
    assert [m.to for m in mail.outbox] == [[ADDRESS]]


def test_a_wrong_a_used_and_an_expired_link_are_refused_in_words(alice: User, monkeypatch: pytest.MonkeyPatch) -> None:
    client = Client()
    request_link(client, ADDRESS)
    link = link_in(mail.outbox[-1])
    uid = link.split("/")[-3]

    def refused(path: str) -> None:
        response = Client().get(path, follow=True)
        assert response.status_code == 200
        assert "This reset link cannot be used" in response.text
        assert "wrong, has expired, or has been used already" in response.text
        assert 'href="/password/reset/"' in response.text  # ask for a new one
        assert 'name="new_password1"' not in response.text

    refused(f"/password/reset/{uid}/c3w6ne-0123456789abcdef0123456789abcdef/")
    refused("/password/reset/not-a-uid/whatever/")

    # Sent two hours ago: the token's clock is the only thing moved back.
    sent_at = datetime.now() - timedelta(hours=2)  # noqa: DTZ005 - the token generator's own naive clock
    monkeypatch.setattr(default_token_generator, "_now", lambda: sent_at)
    request_link(client, ADDRESS)
    monkeypatch.undo()
    refused(link_in(mail.outbox[-1]))

    # Used once, then never again; the password stays what the first use set.
    client = Client()
    set_password = client.get(link)["Location"]
    client.post(set_password, {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})
    refused(link)
    alice.refresh_from_db()
    assert alice.check_password(NEW_PASSWORD)


def test_resets_are_limited_per_address_silently_and_per_client_with_a_429(alice: User) -> None:
    per_address, per_client = rate("password_reset_email"), rate("password_reset")
    assert 0 < per_address < per_client
    client = Client()
    same = request_link(client, ADDRESS)
    for _ in range(per_address):  # past the address's limit: the same page, no more email
        assert request_link(client, ADDRESS) == same
    assert len(mail.outbox) == per_address
    # From another client, the address's limit still holds: nobody can flood an inbox.
    assert request_link(Client(), ADDRESS, REMOTE_ADDR="10.1.2.3") == same
    assert len(mail.outbox) == per_address
    # The client's own limit: a plain refusal that says when to come back, and nothing sent.
    for i in range(per_client - per_address - 1):
        request_link(client, f"someone{i}@example.org")
    response = client.post("/password/reset/", {"email": "one-more@example.org"})
    assert response.status_code == 429
    assert "Too many password reset requests from your network. Try again in" in response.text
    assert 0 < int(response["Retry-After"]) <= 3600
    assert len(mail.outbox) == per_address
    # The counts live in the cache, per window: once it has passed (cleared here), mail flows again.
    cache.clear()
    request_link(client, ADDRESS)
    assert len(mail.outbox) == per_address + 1


def test_a_malformed_address_is_explained_and_counts_nothing() -> None:
    client = Client()
    response = client.post("/password/reset/", {"email": "not-an-address"})
    assert response.status_code == 200
    assert "Enter a valid email address." in response.text
    assert mail.outbox == []


def test_the_profile_adds_changes_and_removes_the_email(alice: User) -> None:
    client = Client()
    client.force_login(alice)
    page = client.get("/profile/").text
    assert f'value="{ADDRESS}"' in page and "password reset link" in page
    form = {"time_zone": "", "on_global_board": "on"}
    response = client.post("/profile/", {**form, "email": "not an address"})
    assert response.status_code == 400 and "Enter a valid email address." in response.text
    alice.refresh_from_db()
    assert alice.email == ADDRESS  # nothing saved
    assert client.post("/profile/", {**form, "email": "alice@new.example.org"}).status_code == 302
    alice.refresh_from_db()
    assert alice.email == "alice@new.example.org"
    assert client.post("/profile/", {**form, "email": ""}).status_code == 302
    alice.refresh_from_db()
    assert alice.email == ""


def test_the_profile_saves_nothing_when_the_email_is_refused(alice: User) -> None:
    # Well formed, so the form takes it, but longer than the column: the service refuses it, and
    # the time zone and board choice posted with it are not saved either.
    too_long = "a" * 60 + "@" + ".".join(["b" * 60] * 4) + ".org"
    client = Client()
    client.force_login(alice)
    before = (alice.time_zone, alice.on_global_board)
    response = client.post("/profile/", {"time_zone": "Asia/Tokyo", "email": too_long})
    assert response.status_code == 400 and "An email address has at most 254 characters." in response.text
    alice.refresh_from_db()
    assert (alice.email, alice.time_zone, alice.on_global_board) == (ADDRESS, *before) != (ADDRESS, "Asia/Tokyo", False)
    # A bad time zone with a good new address: neither is saved.
    response = client.post("/profile/", {"time_zone": "Mars/Olympus", "email": "alice@new.example.org"})
    assert response.status_code == 400 and "is not a time zone name" in response.text
    alice.refresh_from_db()
    assert (alice.email, alice.time_zone) == (ADDRESS, before[0])


def test_user_set_email_refuses_a_malformed_address(alice: User) -> None:
    with pytest.raises(ApplicationError) as caught:
        services.user_set_email(user=alice, email="alice@")
    assert caught.value.code == "bad_email"
    alice.refresh_from_db()
    assert alice.email == ADDRESS


@pytest.mark.slow
def test_mail_goes_to_files_under_var_on_the_embedded_default_and_to_smtp_in_production() -> None:
    code = (
        "import django, json; django.setup(); from django.conf import settings as s; "
        "print(json.dumps([s.EMAIL_BACKEND, str(getattr(s, 'EMAIL_FILE_PATH', '')), s.EMAIL_HOST, s.EMAIL_PORT, "
        "s.EMAIL_HOST_USER, s.EMAIL_HOST_PASSWORD, s.EMAIL_USE_TLS, s.DEFAULT_FROM_EMAIL]))"
    )
    local = run([sys.executable, "-c", code], {"DJANGO_SETTINGS_MODULE": "config.settings.local"})
    assert local.returncode == 0, local.stderr
    backend, path, *_ = json.loads(local.stdout)
    assert backend == "django.core.mail.backends.filebased.EmailBackend"
    assert path == str(BASE_DIR / "var" / "mail")
    smtp = {
        "EMAIL_PORT": "2525",
        "EMAIL_HOST_USER": "mailer",
        "EMAIL_HOST_PASSWORD": "s3cret",
        "EMAIL_USE_TLS": "false",
    }
    production = run([sys.executable, "-c", code], {**PROD_ENV, **smtp})
    assert production.returncode == 0, production.stderr
    assert json.loads(production.stdout) == [
        "django.core.mail.backends.smtp.EmailBackend",
        "",
        PROD_ENV["EMAIL_HOST"],
        2525,
        "mailer",
        "s3cret",
        False,
        PROD_ENV["DEFAULT_FROM_EMAIL"],
    ]


@pytest.mark.slow
def test_production_without_smtp_starts_with_resets_off_and_says_so() -> None:
    code = (
        "import django, json; django.setup(); from django.conf import settings as s; "
        "from django.core.management import call_command; "
        "print(json.dumps([s.PASSWORD_RESET_BY_EMAIL, s.EMAIL_BACKEND]))"
    )
    no_mail = {**PROD_ENV, "EMAIL_HOST": "", "DEFAULT_FROM_EMAIL": ""}
    started = run([sys.executable, "-c", code], no_mail)
    assert started.returncode == 0, started.stderr
    assert json.loads(started.stdout) == [False, "django.core.mail.backends.filebased.EmailBackend"]
    check = run([sys.executable, "manage.py", "check", "--deploy"], no_mail)
    assert "accounts.W001" in check.stderr + check.stdout and "EMAIL_HOST is not set" in check.stderr + check.stdout


def test_with_resets_off_the_pages_say_so_and_send_nothing(alice: User, settings: Any) -> None:
    settings.PASSWORD_RESET_BY_EMAIL = False
    client = Client()
    page = client.get("/password/reset/").content.decode()
    assert "does not send email" in page and "administrator" in page
    posted = client.post("/password/reset/", {"email": ADDRESS})
    assert posted.status_code == 200 and "does not send email" in posted.content.decode()
    assert mail.outbox == []
    assert "does not send email" in client.get("/signup/").content.decode()
