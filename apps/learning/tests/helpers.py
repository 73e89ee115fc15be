"""For the learning tests: an API client as a given learner uses it."""

from __future__ import annotations

from rest_framework.test import APIClient

from apps.accounts import services as account_services
from apps.accounts.models import User


def client_for(user: User) -> APIClient:
    """An API client authenticated with ``user``'s token, as API clients do."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {account_services.auth_token_issue(user=user).key}")
    return client
