"""Writes on users: creation, roles, email; the sign-up, sign-in and password reset request limits;
API tokens. Roles map onto Django groups for admin permissions."""

from __future__ import annotations

import hashlib
import ipaddress
import math
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import redis.exceptions
from django.conf import settings
from django.contrib.auth import authenticate
from django.contrib.auth.models import Group
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import transaction
from django.http import HttpRequest
from django.utils import timezone
from knox.models import AuthToken
from knox.settings import knox_settings
from rest_framework import status

from apps.accounts.models import Role, User
from apps.core.exceptions import ApplicationError
from apps.core.throttling import RateLimitUnavailable, count_in_window

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
    seconds = max(1, math.ceil(wait))
    if seconds < 120:
        when = f"{seconds} second{'s' if seconds != 1 else ''}"
    else:
        minutes = math.ceil(seconds / 60)
        when = f"{minutes} minutes"
    return ApplicationError(
        f"{message} Try again in {when}.",
        code="throttled",
        status_code=status.HTTP_429_TOO_MANY_REQUESTS,
        details={"retry_after": seconds},
    )


def signup_admit(*, client: str, now: float | None = None) -> None:
    """Count an account about to be created from ``client`` (THROTTLE_SIGNUP per window); past the
    limit, a 429 that says when to come back. Counted once the form is valid, so typos cost nothing."""
    over, wait = _over("signup", client, time.time() if now is None else now)
    if over:
        raise _throttled("Too many accounts were created from your network.", wait)


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
#
# Who may try a password, checked before it is (login_admit says how). The limits count per
# (username, address), per address and per username, so that none of them can be aimed at a
# learner: usernames are public (leaderboards), and an attacker hammering one from elsewhere must
# not keep its owner out. Counters live in the cache (Redis); without Redis they fail closed
# (RateLimitUnavailable, a 503).


def _username_key(username: str) -> str:
    """One key per username however it is typed (Unicode form, case); hashed, as addresses are."""
    normal = User.normalize_username(username).strip().casefold()
    return hashlib.sha256(normal.encode()).hexdigest()


def _address_key(client: str) -> str:
    """One key per client network: an IPv4 address, or an IPv6 address's /64 (what one subscriber
    is given, so a client cannot take a fresh address per guess); hashed."""
    try:
        address = ipaddress.ip_address(client)
    except ValueError:
        normal = client
    else:
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            normal = str(address.ipv4_mapped)
        elif isinstance(address, ipaddress.IPv6Address):
            normal = str(ipaddress.IPv6Network(f"{address}/64", strict=False))
        else:
            normal = str(address)
    return hashlib.sha256(normal.encode()).hexdigest()[:32]


@contextmanager
def _limiter() -> Iterator[None]:
    """Cache calls of the limits: an unreachable Redis refuses the sign-in (fail closed)."""
    try:
        yield
    except redis.exceptions.RedisError as exc:
        raise RateLimitUnavailable from exc


@dataclass(frozen=True)
class SignIn:
    """A sign-in the limits admitted, for counting its outcome (login_failed, login_succeeded)."""

    user_key: str
    address_key: str
    familiar: bool  # this address has signed in to this username before (LOGIN_KNOWN_ADDRESS_DAYS)
    now: float


def _keys(sign_in: SignIn) -> dict[str, str]:
    u, a, now = sign_in.user_key, sign_in.address_key, sign_in.now
    windows = {scope: int(now // _rate(scope)[1]) for scope in ("login_pair", "login_address", "login_username")}
    return {
        "pair": f"login_pair_{u}_{a}:{windows['login_pair']}",
        "address": f"login_address_{a}:{windows['login_address']}",
        "username": f"login_username_{u}:{windows['login_username']}",
        "known": f"login_known_{u}_{a}",
        "slow": f"login_slow_{u}",
    }


def _window_left(scope: str, now: float) -> float:
    period = _rate(scope)[1]
    return (int(now // period) + 1) * period - now


def _slowed(until: float, now: float) -> ApplicationError:
    return _throttled(
        "Too many failed sign-ins for this username from networks it has not signed in from before, so "
        "those wait between tries (a network it signed in from before does not).",
        until - now,
    )


def login_rate_admit(*, client: str, now: float | None = None) -> None:
    """The limit on sign-in requests per client address (THROTTLE_AUTH; every request counts), for
    the web form. The API's token endpoint counts the same scope and key with its DRF throttle."""
    over, wait = _over("auth", client, time.time() if now is None else now)
    if over:
        raise _throttled("Too many sign-in attempts from your network.", wait)


def login_admit(*, username: str, client: str, now: float | None = None) -> SignIn:
    """Check a sign-in before its password is: raise a 429 (with the seconds to wait) when it may not
    be tried now. The username need not exist; nothing here says whether it does.

    - Per (username, address), failures (THROTTLE_LOGIN_PAIR): past the limit this address may not
      try this username until the window ends. This is the limit that stops a guesser at one
      address, and the only one that applies to an address the user has signed in from before.
    - Per address, failures over all usernames (THROTTLE_LOGIN_ADDRESS): past it, the address may
      try only usernames it has signed in to before (one address guessing many usernames).
    - Per username, tries from addresses it has never signed in from (THROTTLE_LOGIN_USERNAME):
      past it, such tries are slowed, not refused: one try per delay, which doubles with each try
      (LOGIN_BACKOFF_BASE_S up to LOGIN_BACKOFF_MAX_S); every other one in between gets a 429 with
      the wait. The turn is taken atomically (one SET NX), so many addresses at once get one try.

    An attacker hammering a username from elsewhere therefore slows only the unfamiliar addresses:
    its owner signs in from where they signed in before, whatever the attacker does. The right
    password refused by a limit learns nothing more than a wrong one.
    """
    now = time.time() if now is None else now
    probe = SignIn(_username_key(username), _address_key(client), False, now)
    keys = _keys(probe)
    with _limiter():
        found = cache.get_many([keys["pair"], keys["address"], keys["known"], keys["slow"]])
    if int(found.get(keys["pair"]) or 0) >= _rate("login_pair")[0]:
        raise _throttled(
            "Too many failed sign-ins for this username from your network.", _window_left("login_pair", now)
        )
    if found.get(keys["known"]) is not None:
        return SignIn(probe.user_key, probe.address_key, True, now)
    if int(found.get(keys["address"]) or 0) >= _rate("login_address")[0]:
        raise _throttled("Too many failed sign-ins from your network.", _window_left("login_address", now))
    until = found.get(keys["slow"])
    if until is not None and float(until) > now:
        raise _slowed(float(until), now)
    limit, period = _rate("login_username")
    tries = count_in_window(keys["username"], period)
    if tries > limit:
        doublings = min(tries - limit - 1, 30)  # a flood's losers count too: keep the power small
        delay = min(settings.LOGIN_BACKOFF_MAX_S, settings.LOGIN_BACKOFF_BASE_S * 2**doublings)
        with _limiter():
            if not cache.add(keys["slow"], now + delay, math.ceil(delay)):  # another try has this turn
                raise _slowed(float(cache.get(keys["slow"]) or now + 1), now)
    return probe


def login_failed(*, sign_in: SignIn) -> None:
    """Count a failed sign-in (wrong password, or no such user) against its (username, address) and
    its address. (A try from an unfamiliar address was counted against the username when admitted.)"""
    keys = _keys(sign_in)
    count_in_window(keys["pair"], _rate("login_pair")[1])
    if not sign_in.familiar:
        count_in_window(keys["address"], _rate("login_address")[1])


def login_succeeded(*, sign_in: SignIn) -> None:
    """Remember the address for this username, clear its failures there, and give back the try it
    was counted against the username (a success is not a guess)."""
    keys = _keys(sign_in)
    with _limiter():
        cache.set(keys["known"], 1, settings.LOGIN_KNOWN_ADDRESS_DAYS * 86400)
        cache.delete(keys["pair"])
        if not sign_in.familiar:
            with suppress(ValueError):  # its window ended meanwhile
                cache.decr(keys["username"])


def login_remember(*, username: str, client: str) -> None:
    """Make ``client`` a familiar address of ``username`` (a sign-up signs in from there)."""
    login_succeeded(sign_in=SignIn(_username_key(username), _address_key(client), True, time.time()))


def login_check(
    *, request: HttpRequest | None, username: str, password: str, client: str, count_request: bool = False
) -> User:
    """A sign-in, for the API's token endpoint and the web form alike: the limits first (a 429, or a
    503 without Redis), then the password; a failure is counted and raises ``invalid_credentials``.

    ``client`` is the client's address as DRF's throttles identify it (NUM_PROXIES aware).
    ``count_request``: also count the request against THROTTLE_AUTH (the web form; the API's DRF
    throttle counts it). ``request`` goes to the authentication backends.
    """
    if count_request:
        login_rate_admit(client=client)
    sign_in = login_admit(username=username, client=client)
    user = authenticate(request, username=username, password=password)
    if not isinstance(user, User) or not user.is_active:
        login_failed(sign_in=sign_in)
        raise ApplicationError("Wrong username or password.", code="invalid_credentials")
    login_succeeded(sign_in=sign_in)
    return user


# ---- API tokens ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class IssuedToken:
    """A new API token: its key (shown once; only a digest is stored) and when it ends."""

    key: str
    expiry: datetime  # unless used before: each use moves it to API_TOKEN_TTL_HOURS from then
    max_expiry: datetime  # API_TOKEN_MAX_AGE_DAYS after sign-in, however often it is used
    user: User


@transaction.atomic
def auth_token_issue(*, user: User) -> IssuedToken:
    """A new token for ``user`` (one per client: each sign-in gets its own). The user's expired
    tokens are deleted; past API_TOKENS_PER_USER live ones, those closest to expiry (the longest
    unused) end, so a script signing in in a loop cannot pile up rows."""
    tokens = AuthToken.objects.filter(user=user)
    tokens.filter(expiry__lte=timezone.now()).delete()
    keep = max(0, settings.API_TOKENS_PER_USER - 1)
    oldest = list(tokens.order_by("-expiry").values_list("digest", flat=True)[keep:])
    if oldest:
        AuthToken.objects.filter(digest__in=oldest).delete()
    token, key = AuthToken.objects.create(user=user)
    return IssuedToken(
        key=key, expiry=token.expiry, max_expiry=token.created + knox_settings.AUTO_REFRESH_MAX_TTL, user=user
    )


def auth_token_create(*, request: HttpRequest | None, username: str, password: str, client: str) -> IssuedToken:
    """Check a sign-in (limits first, then the password, as ``login_check``) and issue a token."""
    user = login_check(request=request, username=username, password=password, client=client)
    return auth_token_issue(user=user)


def auth_token_revoke(*, user: User, token: Any) -> None:
    """Sign out the client that holds ``token``, the token the request was authenticated with; a
    request signed in by a session has none (``no_token``)."""
    if not isinstance(token, AuthToken) or token.user_id != user.pk:
        raise ApplicationError("This request is not signed with a token: there is none to revoke.", code="no_token")
    token.delete()


def auth_tokens_revoke(*, user: User) -> int:
    """Sign every API client of this user out (on request, and on every password change); how many."""
    deleted, _ = AuthToken.objects.filter(user=user).delete()
    return int(deleted)
