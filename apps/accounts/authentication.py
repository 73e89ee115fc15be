"""API token authentication: django-rest-knox's tokens (only a SHA-512 digest is stored; they expire,
sliding), read from the same ``Authorization: Token <key>`` header as DRF's authtoken was.

Two changes to knox's TokenAuthentication:

- A header that is not UTF-8 is a 401, as DRF's own class answers, not a 500 (knox decodes blindly).
- Only the presented token is checked for expiry. Knox also loads and deletes every other expired
  token of the user on every request: one more query on every API call. Expired tokens are deleted
  when the user next signs in (apps.accounts.services.auth_token_create) instead.
"""

from __future__ import annotations

import binascii
from hmac import compare_digest
from typing import Any

from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.plumbing import build_bearer_security_scheme_object
from knox.auth import TokenAuthentication
from knox.crypto import hash_token
from knox.models import AuthToken
from knox.settings import CONSTANTS, knox_settings
from rest_framework import exceptions

from apps.accounts.models import User

INVALID = "Invalid or expired token: sign in again (POST /api/v1/auth/token/)."


class ExpiringTokenAuthentication(TokenAuthentication):
    def authenticate_credentials(self, key: bytes) -> tuple[User, Any]:
        try:
            token = key.decode()
            digest = hash_token(token)
        except (UnicodeError, TypeError, binascii.Error):
            raise exceptions.AuthenticationFailed(INVALID) from None
        now = timezone.now()
        for auth_token in AuthToken.objects.filter(token_key=token[: CONSTANTS.TOKEN_KEY_LENGTH]).select_related(
            "user"
        ):
            if not compare_digest(digest, auth_token.digest):
                continue
            if auth_token.expiry is not None and auth_token.expiry <= now:
                auth_token.delete()
                break
            if knox_settings.AUTO_REFRESH and auth_token.expiry is not None:
                self.renew_token(auth_token)  # sliding: written at most once per MIN_REFRESH_INTERVAL
            if not auth_token.user.is_active:
                raise exceptions.AuthenticationFailed("This account is disabled.")
            return auth_token.user, auth_token
        raise exceptions.AuthenticationFailed(INVALID)


class ExpiringTokenScheme(OpenApiAuthenticationExtension):  # type: ignore[no-untyped-call]
    """The security scheme in the OpenAPI schema: the name and header DRF's TokenAuthentication had,
    so generated clients see no change (apps/core/schema.py describes it)."""

    target_class = "apps.accounts.authentication.ExpiringTokenAuthentication"
    name = "tokenAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return build_bearer_security_scheme_object(
            header_name="Authorization", token_prefix=knox_settings.AUTH_HEADER_PREFIX
        )
