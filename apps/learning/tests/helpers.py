"""For the learning tests: an API client as a given learner uses it."""

from __future__ import annotations

from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from apps.accounts.models import User


def client_for(user: User) -> APIClient:
    """An API client authenticated with ``user``'s token, as API clients do."""
    client = APIClient()
    token, _ = Token.objects.get_or_create(user=user)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client
