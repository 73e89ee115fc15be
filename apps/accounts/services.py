"""Writes on users: creation, roles, email; the sign-in and password reset request limits. Roles
map onto Django groups for admin permissions."""

from __future__ import annotations

import hashlib
import math
import time

from django.conf import settings
from django.contrib.auth import authenticate
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import transaction
from django.http import HttpRequest
from rest_framework import status
from rest_framework.authtoken.models import Token

from apps.accounts.models import Role, User
from apps.core.exceptions import ApplicationError
from apps.core.throttling import count_in_window, peek_window

AUTHORS_GROUP = "Authors"
INSTRUCTORS_GROUP = "Instructors"


@transaction.atomic
def user_create(*, username: str, password: str, email: str = "", role: str = Role.STUDENT) -> User:
    user = User(username=username, email=User.objects.normalize_email(email.strip()))
    user.set_password(password)
    user.save()
    return user_set_role(user=user, role=role)


@transaction.atomic
def user_set_role(*, user: User, role: str) -> User:
    """Set a role and the admin access that goes with it.

    Authors are staff in the Authors group (content editing). Instructors are staff in the
    Instructors group (read-only monitoring; their cohort scoping arrives with cohorts).
    Students have no admin access.
    """
    if role not in Role.values:
        raise ValueError(f"unknown role {role!r}")
    user.role = role
    user.is_staff = role in (Role.AUTHOR, Role.INSTRUCTOR) or user.is_superuser
    user.save(update_fields=["role", "is_staff"])
    groups = {AUTHORS_GROUP: role == Role.AUTHOR, INSTRUCTORS_GROUP: role == Role.INSTRUCTOR}
    for name, member in groups.items():
        group = Group.objects.get(name=name)
        if member:
            user.groups.add(group)
        else:
            user.groups.remove(group)
    return user


def email_validate(email: str) -> str:
    """An address as stored (stripped, domain lower-cased; blank stays blank), or ``bad_email``."""
    email = User.objects.normalize_email(email.strip())
    if email:
        try:
            validate_email(email)
        except ValidationError:
            raise ApplicationError("Enter a valid email address.", code="bad_email") from None
        limit = User._meta.get_field("email").max_length or 254
        if len(email) > limit:
            raise ApplicationError(f"An email address has at most {limit} characters.", code="bad_email")
    return email


def user_set_email(*, user: User, email: str) -> User:
    """The address password resets go to; blank removes it (and with it the way to reset)."""
    user.email = email_validate(email)
    user.save(update_fields=["email"])
    return user


# ---- password reset requests ---------------------------------------------------------------------

_PERIODS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def _rate(scope: str) -> tuple[int, int]:
    """``"3/hour"`` → (3, 3600), read the way DRF reads DEFAULT_THROTTLE_RATES."""
    number, period = settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"][scope].split("/")
    return int(number), _PERIODS[period[0]]


def _over(scope: str, ident: str, now: float) -> tuple[bool, float]:
    """Count a hit on ``ident`` in the current fixed window: (over the limit?, seconds left)."""
    limit, period = _rate(scope)
    window = int(now // period)
    count = count_in_window(f"throttle_{scope}_{ident}:{window}", period)
    return count > limit, (window + 1) * period - now


def _throttled(message: str, wait: float) -> ApplicationError:
    minutes = max(1, math.ceil(wait / 60))
    return ApplicationError(
        f"{message} Try again in {minutes} minute{'s' if minutes != 1 else ''}.",
        code="throttled",
        status_code=status.HTTP_429_TOO_MANY_REQUESTS,
        details={"retry_after": math.ceil(wait)},
    )


def password_reset_admit(*, client: str, email: str, now: float | None = None) -> bool:
    """Count a reset request and say whether to send its email.

    Past the client's limit (THROTTLE_PASSWORD_RESET) the request is refused with a 429 that
    says when to retry. Past the address's limit (THROTTLE_PASSWORD_RESET_EMAIL) it returns
    False: nothing is sent, and the page says the same as always, so the limit tells nothing
    about whether the address has an account. The address limit holds whichever client asks,
    so nobody can fill a learner's inbox. Addresses are hashed: no raw address sits in the cache.
    """
    now = time.time() if now is None else now
    over, wait = _over("password_reset", client, now)
    if over:
        raise _throttled("Too many password reset requests from your network.", wait)
    address = hashlib.sha256(email.strip().lower().encode()).hexdigest()
    over, _ = _over("password_reset_email", address, now)
    return not over


# ---- sign-in limits (API token and web login form) -----------------------------------------------


def _username_key(username: str) -> str:
    """One key per username however it is typed (Unicode form, case); hashed, as addresses are."""
    normal = User.normalize_username(username).strip().casefold()
    return hashlib.sha256(normal.encode()).hexdigest()


def login_admit(*, username: str, client: str | None = None, now: float | None = None) -> None:
    """Check a sign-in before its password is: raise a 429 when it may not be tried now.

    Two limits. Per client address (THROTTLE_AUTH, every request counts): ``client`` is given by
    the web form; the API counts it with its DRF throttle (the same scope and key). Per username
    (THROTTLE_LOGIN_USERNAME, failures only, from any address): once a username has failed that
    often in the window, every sign-in for it is refused until the window ends, the right
    password too, so a guesser learns nothing more. The username need not exist. Without Redis
    both fail closed (RateLimitUnavailable, a 503).
    """
    now = time.time() if now is None else now
    if client is not None:
        over, wait = _over("auth", client, now)
        if over:
            raise _throttled("Too many sign-in attempts from your network.", wait)
    limit, period = _rate("login_username")
    window = int(now // period)
    if peek_window(f"throttle_login_username_{_username_key(username)}:{window}") >= limit:
        raise _throttled("Too many failed sign-ins for this username.", (window + 1) * period - now)


def login_failed(*, username: str, now: float | None = None) -> None:
    """Count a failed sign-in (wrong password or no such user) against the username."""
    _over("login_username", _username_key(username), time.time() if now is None else now)


def login_check(*, request: HttpRequest | None, username: str, password: str, client: str | None = None) -> User:
    """A sign-in, for the API's token endpoint and the web form alike: the limits first
    (``login_admit``: a 429, or a 503 without Redis), then the password; a failure counts against
    the username and raises ``invalid_credentials``. ``request`` goes to the authentication
    backends; ``client`` as for ``login_admit``."""
    login_admit(username=username, client=client)
    user = authenticate(request, username=username, password=password)
    if not isinstance(user, User) or not user.is_active:
        login_failed(username=username)
        raise ApplicationError("Wrong username or password.", code="invalid_credentials")
    return user


# ---- API tokens ----------------------------------------------------------------------------------


def auth_token_create(*, request: HttpRequest | None, username: str, password: str) -> tuple[Token, User]:
    """Check a sign-in (limits first, then the password): the user and their API token, the same
    token each time until it is revoked. ``request`` goes to the authentication backends."""
    user = login_check(request=request, username=username, password=password)
    token, _ = Token.objects.get_or_create(user=user)
    return token, user


def auth_token_revoke(*, user: User) -> None:
    """Sign every API client of this user out (there is one token per user)."""
    Token.objects.filter(user=user).delete()
