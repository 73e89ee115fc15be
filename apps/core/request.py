"""The signed-in user of a request, typed as our user model."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.contrib.auth import get_user_model
from django.http import HttpRequest
from rest_framework.exceptions import NotAuthenticated
from rest_framework.request import Request

if TYPE_CHECKING:
    # django-stubs resolves this alias to settings.AUTH_USER_MODEL (apps.accounts.models.User),
    # so core names the user type without importing the accounts app, which sits above it.
    from django.contrib.auth.models import _User


def request_user(request: HttpRequest | Request) -> _User:
    """The authenticated user, or NotAuthenticated (a 401 `not_authenticated` through the API's
    exception handler). API views reach here behind IsAuthenticated and pages behind
    login_required, so the raise is a guard against a view that forgot its permission."""
    user = request.user
    if not isinstance(user, get_user_model()) or not user.is_authenticated:
        raise NotAuthenticated()
    return user
