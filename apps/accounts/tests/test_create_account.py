"""`manage.py create_account`: how an operator adds accounts to the stack (deploy/README.md)."""

from __future__ import annotations

import io
import re

import pytest
from django.contrib.auth.models import Group
from django.core.management import CommandError, call_command
from django.test import Client

from apps.accounts.models import Role, User

pytestmark = pytest.mark.django_db


def create(*args: str, stdin: str | None = None) -> str:
    out = io.StringIO()
    call_command("create_account", *args, stdout=out, stdin=io.StringIO(stdin) if stdin is not None else None)
    return out.getvalue()


def test_a_learner_gets_a_generated_password_that_logs_in() -> None:
    out = create("ada", "--role", "learner", "--email", " Ada@Example.ORG ")
    match = re.search(r"^password: (\S+)$", out, re.MULTILINE)
    assert match is not None, out
    assert "Created learner account 'ada' (role student)." in out
    user = User.objects.get(username="ada")
    assert (user.role, user.is_staff, user.is_superuser, user.email) == (Role.STUDENT, False, False, "Ada@example.org")
    assert list(user.groups.all()) == []
    token = Client().post(
        "/api/v1/auth/token/", {"username": "ada", "password": match.group(1)}, content_type="application/json"
    )
    assert token.status_code == 200
    assert token.json()["user"] == {"id": user.pk, "username": "ada", "email": "Ada@example.org", "role": "student"}


@pytest.mark.parametrize(("role", "group"), [("instructor", "Instructors"), ("author", "Authors")])
def test_staff_roles_get_their_group_and_a_password_from_stdin(role: str, group: str) -> None:
    out = create("grace", "--role", role, "--password-stdin", stdin="a-long-pass-phrase-77\nignored\n")
    assert "password:" not in out
    user = User.objects.get(username="grace")
    assert (user.role, user.is_staff) == (role, True)
    assert list(user.groups.values_list("name", flat=True)) == [group]
    assert Group.objects.get(name=group).user_set.count() == 1
    assert user.check_password("a-long-pass-phrase-77")


@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [
        (["TAKEN", "--role", "learner"], None, "An account named 'TAKEN' already exists; nothing was changed."),
        (["new one", "--role", "learner"], None, "Invalid username 'new one'"),
        (["x" * 151, "--role", "learner"], None, "Invalid username: at most 150 characters."),
        (["newbie", "--role", "learner", "--email", "not-an-address"], None, "Invalid email address 'not-an-address'."),
        (["newbie", "--role", "learner", "--password-stdin"], "", "standard input is empty"),
        (["newbie", "--role", "learner", "--password-stdin"], "12345678\n", "Password refused: "),
    ],
)
def test_bad_input_is_refused_clearly_and_writes_nothing(args: list[str], stdin: str | None, message: str) -> None:
    User.objects.create_user(username="taken", password="whatever-it-was-1")
    before = list(User.objects.values_list("username", "password"))
    with pytest.raises(CommandError) as exc:
        create(*args, stdin=stdin)
    assert message in str(exc.value)
    assert list(User.objects.values_list("username", "password")) == before


def test_an_unknown_role_is_refused() -> None:
    with pytest.raises(CommandError, match="invalid choice: 'admin'"):
        create("newbie", "--role", "admin")
    assert not User.objects.filter(username="newbie").exists()
