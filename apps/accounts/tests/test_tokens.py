"""API tokens (django-rest-knox): stored hashed, expiring (sliding, capped), revoked on request and
by every password change; web sessions end on a password change too."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.hashers import identify_hasher
from django.core import mail
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from knox.crypto import hash_token
from knox.models import AuthToken
from rest_framework.test import APIClient

from apps.accounts import services
from apps.accounts.models import User

pytestmark = pytest.mark.django_db

PASSWORD = "a-strong-pass-123"
NEW_PASSWORD = "a-brand-new-pass-42"
TOKEN_URL = "/api/v1/auth/token/"


def sign_in(username: str, password: str = PASSWORD, address: str = "127.0.0.1") -> dict[str, Any]:
    response = APIClient().post(TOKEN_URL, {"username": username, "password": password}, REMOTE_ADDR=address)
    assert response.status_code == 200, response.content
    return dict(response.json())


def me(key: str) -> Any:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client.get("/api/v1/me/")


def row(key: str) -> Any:
    return AuthToken.objects.get(digest=hash_token(key))


def close(a: Any, b: Any, seconds: float = 5) -> bool:
    return bool(abs((a - b).total_seconds()) < seconds)


def test_sign_in_answers_a_new_token_and_when_it_ends_and_only_a_hash_is_kept(student: User) -> None:
    body = sign_in(student.username)
    assert set(body) == {"token", "expiry", "max_expiry", "user"}
    assert body["user"] == {"id": student.pk, "username": "alice", "email": "", "role": "student"}
    now = timezone.now()
    assert close(parse_datetime(body["expiry"]), now + timedelta(hours=24))
    assert close(parse_datetime(body["max_expiry"]), now + timedelta(days=30))
    stored = row(body["token"])
    assert stored.user == student and body["token"] not in (stored.digest, stored.token_key)
    assert len(body["token"]) == 64 and stored.digest == hash_token(body["token"])
    # Each sign-in is a client of its own; both work.
    again = sign_in(student.username)
    assert again["token"] != body["token"]
    assert me(body["token"]).status_code == me(again["token"]).status_code == 200
    assert AuthToken.objects.filter(user=student).count() == 2


def test_an_expired_token_is_refused_with_401_and_deleted(student: User) -> None:
    key = sign_in(student.username)["token"]
    AuthToken.objects.filter(digest=hash_token(key)).update(expiry=timezone.now() - timedelta(seconds=1))
    refused = me(key)
    assert refused.status_code == 401
    assert refused.json()["error"] == {
        "code": "authentication_failed",
        "message": "Invalid or expired token: sign in again (POST /api/v1/auth/token/).",
        "details": {},
    }
    assert refused["WWW-Authenticate"] == "Token"
    assert not AuthToken.objects.filter(user=student).exists()


def test_each_use_moves_the_expiry_on_but_never_past_the_maximum(student: User) -> None:
    key = sign_in(student.username)["token"]
    # Unused for 23 hours: one hour left. A use gives it 24 hours from now.
    AuthToken.objects.filter(digest=hash_token(key)).update(expiry=timezone.now() + timedelta(hours=1))
    assert me(key).status_code == 200
    assert close(row(key).expiry, timezone.now() + timedelta(hours=24))
    # Signed in 29 days and 22 hours ago: a use extends it only to 30 days after sign-in.
    created = timezone.now() - timedelta(days=30) + timedelta(hours=2)
    AuthToken.objects.filter(digest=hash_token(key)).update(created=created, expiry=timezone.now() + timedelta(hours=1))
    assert me(key).status_code == 200
    assert row(key).expiry == created + timedelta(days=30)
    # Past it, however often it was used, the token is refused.
    AuthToken.objects.filter(digest=hash_token(key)).update(expiry=timezone.now() - timedelta(seconds=1))
    assert me(key).status_code == 401


def test_authenticating_costs_one_query_and_writes_the_expiry_at_most_once_a_minute(student: User) -> None:
    key = sign_in(student.username)["token"]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    with CaptureQueriesContext(connection) as queries:
        assert client.get("/api/v1/me/").status_code == 200
    assert len(queries) == 1 and "knox_authtoken" in queries[0]["sql"]
    before = row(key).expiry
    AuthToken.objects.filter(digest=hash_token(key)).update(expiry=before - timedelta(minutes=2))
    with CaptureQueriesContext(connection) as queries:
        assert client.get("/api/v1/me/").status_code == 200
    assert [q["sql"].split()[0] for q in queries] == ["SELECT", "UPDATE"]


def test_a_header_that_is_not_a_token_is_a_401_not_a_500(anon_api: APIClient) -> None:
    for header in ("Token caf\xe9\xff", "Token", "Token a b", "Token " + "0" * 64):
        anon_api.credentials(HTTP_AUTHORIZATION=header)
        response = anon_api.get("/api/v1/me/")
        assert response.status_code == 401, (header, response.content)
        assert response.json()["error"]["code"] == "authentication_failed"


def test_sign_out_revokes_the_token_sent_and_sign_out_everywhere_all_of_them(student: User) -> None:
    first, second, third = (sign_in(student.username)["token"] for _ in range(3))
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {first}")
    assert client.delete(TOKEN_URL).status_code == 204
    assert me(first).status_code == 401
    assert me(second).status_code == me(third).status_code == 200
    client.credentials(HTTP_AUTHORIZATION=f"Token {second}")
    assert client.delete("/api/v1/auth/tokens/").status_code == 204
    assert me(second).status_code == me(third).status_code == 401
    assert not AuthToken.objects.filter(user=student).exists()
    # Anonymous: 401; signed in by a session: there is no token to revoke, and the session lives on.
    assert APIClient().delete(TOKEN_URL).status_code == 401
    assert APIClient().delete("/api/v1/auth/tokens/").status_code == 401
    web = APIClient()
    web.force_login(student)
    kept = sign_in(student.username)["token"]
    refused = web.delete(TOKEN_URL)
    assert refused.status_code == 400
    assert refused.json()["error"] == {
        "code": "no_token",
        "message": "This request is not signed with a token: there is none to revoke.",
        "details": {},
    }
    assert me(kept).status_code == 200 and web.get("/api/v1/me/").status_code == 200


def test_an_account_keeps_a_bounded_number_of_tokens(student: User, settings: Any) -> None:
    settings.API_TOKENS_PER_USER = 2
    first, second = (sign_in(student.username)["token"] for _ in range(2))
    AuthToken.objects.filter(digest=hash_token(second)).update(expiry=timezone.now() + timedelta(hours=30))
    third = sign_in(student.username)["token"]  # the one unused longest (first) ends
    assert [me(k).status_code for k in (first, second, third)] == [401, 200, 200]
    # Expired tokens are deleted at the next sign-in.
    AuthToken.objects.filter(digest=hash_token(second)).update(expiry=timezone.now() - timedelta(seconds=1))
    fourth = sign_in(student.username)["token"]
    assert set(AuthToken.objects.filter(user=student).values_list("digest", flat=True)) == {
        hash_token(third),
        hash_token(fourth),
    }


# ---- a password change ends every token and every other session ------------------------------------


def reset_link(message: mail.EmailMessage) -> str:
    (link,) = re.findall(r"http://testserver(/password/reset/[^/\s]+/[^/\s]+/)", str(message.body))
    return str(link)


def test_a_password_reset_by_email_ends_the_tokens_and_the_sessions(make_user: Callable[..., User]) -> None:
    alice = services.user_set_email(user=make_user("alice"), email="alice@example.org")
    token = sign_in(alice.username)["token"]
    laptop = Client()  # signed in through the login form
    assert laptop.post("/login/", {"username": "alice", "password": PASSWORD}).status_code == 302
    assert laptop.get("/profile/").status_code == 200
    assert me(token).status_code == 200

    # The real reset: ask, read the email, follow the link, set a new password.
    phone = Client()
    assert phone.post("/password/reset/", {"email": "alice@example.org"}).status_code == 302
    (message,) = mail.outbox
    set_password = phone.get(reset_link(message))["Location"]
    done = phone.post(set_password, {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})
    assert done.status_code == 302 and done["Location"] == "/password/reset/done/"

    assert me(token).status_code == 401
    assert not AuthToken.objects.filter(user=alice).exists()
    # Django refuses the old session (its password hash no longer matches) and flushes it.
    profile = laptop.get("/profile/")
    assert profile.status_code == 302 and profile["Location"].startswith("/login/")
    assert "_auth_user_id" not in laptop.session
    # The new password signs in, on the web and the API.
    assert Client().post("/login/", {"username": "alice", "password": NEW_PASSWORD}).status_code == 302
    assert me(sign_in("alice", NEW_PASSWORD)["token"]).status_code == 200


def test_every_other_way_of_changing_a_password_ends_the_tokens(make_user: Callable[..., User]) -> None:
    alice = make_user("alice")
    admin = make_user("root")
    admin.is_superuser = admin.is_staff = True
    admin.save(update_fields=["is_superuser", "is_staff"])
    site = Client()
    site.force_login(admin)

    # The admin's "change password" form.
    token = sign_in("alice")["token"]
    changed = site.post(
        f"/admin/accounts/user/{alice.pk}/password/",
        {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD, "usable_password": "true"},
    )
    assert changed.status_code == 302, changed.content
    assert me(token).status_code == 401
    # The admin turning password sign-in off for the account.
    token = sign_in("alice", NEW_PASSWORD)["token"]
    disabled = site.post(
        f"/admin/accounts/user/{alice.pk}/password/", {"usable_password": "false", "unset-password": "Disable"}
    )
    assert disabled.status_code == 302
    alice.refresh_from_db()
    assert not alice.has_usable_password() and me(token).status_code == 401
    # Code: set_password (changepassword, seed_demo) and set_unusable_password, then save.
    alice.set_password(PASSWORD)
    alice.save()
    token = sign_in("alice")["token"]
    alice.set_password(NEW_PASSWORD)
    alice.save(update_fields=["password"])
    assert me(token).status_code == 401
    token = sign_in("alice", NEW_PASSWORD)["token"]
    alice.set_unusable_password()
    alice.save()
    assert me(token).status_code == 401
    # The admin's session survives its own change of someone else's password.
    assert site.get("/admin/").status_code == 200


def test_a_save_that_changes_no_password_keeps_the_tokens(make_user: Callable[..., User], settings: Any) -> None:
    alice = make_user("alice")
    token = sign_in("alice")["token"]
    alice.email = "alice@example.org"
    alice.save()
    services.user_set_email(user=alice, email="alice@new.example.org")
    # A hash upgrade at sign-in rewrites the stored password, but it is not a change.
    settings.PASSWORD_HASHERS = [
        "django.contrib.auth.hashers.ScryptPasswordHasher",
        "django.contrib.auth.hashers.MD5PasswordHasher",
    ]
    sign_in("alice")
    alice.refresh_from_db()
    assert identify_hasher(alice.password).algorithm == "scrypt"
    assert me(token).status_code == 200
