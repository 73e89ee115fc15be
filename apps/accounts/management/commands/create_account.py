"""Create one account from the command line: how an operator adds learners, instructors and
authors to the compose stack (``docker-compose exec web create_account ...``, deploy/README.md)."""

from __future__ import annotations

import secrets
import sys
from typing import Any, TextIO

from django.contrib.auth import password_validation
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.core.validators import validate_email
from django.db import IntegrityError

from apps.accounts import services
from apps.accounts.models import Role, User

# "learner" is what people call a student; the stored role is Role.STUDENT.
USERNAME_MAX = 150  # AbstractUser.username
ROLES = {"learner": Role.STUDENT, "student": Role.STUDENT, "instructor": Role.INSTRUCTOR, "author": Role.AUTHOR}


class Command(BaseCommand):
    help = (
        "Create a learner, instructor or author account. Without --password-stdin a random password is "
        "generated and printed once."
    )
    stealth_options = ("stdin",)

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--role", choices=list(ROLES), required=True)
        parser.add_argument("--email", default="", help="For password resets (optional).")
        parser.add_argument(
            "--password-stdin",
            action="store_true",
            help="Read the password from the first line of standard input instead of generating one.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        username: str = options["username"]
        role = ROLES[options["role"]]
        email = User.objects.normalize_email(str(options["email"]).strip())
        try:
            User.username_validator(username)
        except ValidationError as exc:
            raise CommandError(f"Invalid username {username!r}: {' '.join(exc.messages)}") from None
        if len(username) > USERNAME_MAX:
            raise CommandError(f"Invalid username: at most {USERNAME_MAX} characters.")
        if email:
            try:
                validate_email(email)
            except ValidationError:
                raise CommandError(f"Invalid email address {email!r}.") from None
        if User.objects.filter(username__iexact=username).exists():
            raise CommandError(f"An account named {username!r} already exists; nothing was changed.")

        self.stdin: TextIO = options.get("stdin") or sys.stdin  # call_command(..., stdin=...) in tests
        generated = not options["password_stdin"]
        password = secrets.token_urlsafe(15) if generated else self._read_password(username, email)
        try:
            user = services.user_create(username=username, password=password, email=email, role=role)
        except IntegrityError:  # created by someone else since the check above
            raise CommandError(f"An account named {username!r} already exists; nothing was changed.") from None
        self.stdout.write(f"Created {options['role']} account {user.username!r} (role {user.role}).")
        if generated:
            self.stdout.write(f"password: {password}")

    def _read_password(self, username: str, email: str) -> str:
        line = self.stdin.readline()
        password = line[:-1] if line.endswith("\n") else line
        if not password:
            raise CommandError("--password-stdin: standard input is empty; give the password on its first line.")
        try:
            password_validation.validate_password(password, User(username=username, email=email))
        except ValidationError as exc:
            raise CommandError(f"Password refused: {' '.join(exc.messages)}") from None
        return password
