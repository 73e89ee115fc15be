"""API tokens (sign in, sign out here or everywhere), and who am I."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import BaseThrottle
from rest_framework.views import APIView

from apps.accounts import services
from apps.accounts.models import Role
from apps.core.fields import StrictCharField
from apps.core.request import request_user
from apps.core.serializers import ErrorOut, represent
from apps.core.throttling import FixedWindowScopedThrottle


class UserOut(serializers.Serializer[Any]):
    # Reads the user.
    id = serializers.IntegerField(source="pk")
    username = serializers.CharField()
    email = serializers.EmailField(allow_blank=True)
    role = serializers.ChoiceField(choices=Role.choices)


class TokenIn(serializers.Serializer[Any]):
    username = StrictCharField(max_length=150)
    password = StrictCharField(max_length=128, style={"input_type": "password"}, trim_whitespace=False)


class TokenOut(serializers.Serializer[Any]):
    # Reads the IssuedToken that services.auth_token_create returns.
    token = serializers.CharField(
        source="key",
        help_text="Send as `Authorization: Token <token>`. Shown once: the server keeps only a hash of it.",
    )
    expiry = serializers.DateTimeField(
        help_text="When the token stops working unless it is used before: each use moves this to "
        "`API_TOKEN_TTL_HOURS` from then (24 by default), never past `max_expiry`. After it, requests "
        "with the token answer 401: sign in again."
    )
    max_expiry = serializers.DateTimeField(
        help_text="When the token stops working however often it is used (`API_TOKEN_MAX_AGE_DAYS` after "
        "sign-in, 30 by default). A password change, or a revoke, ends it sooner."
    )
    user = UserOut()


def _client(request: Request) -> str:
    """The client's address as the API's throttles identify it (NUM_PROXIES aware)."""
    return str(BaseThrottle().get_ident(request))


class TokenApi(APIView):
    permission_classes = [AllowAny]
    throttle_scope = "auth"

    def get_throttles(self) -> list[Any]:
        return [FixedWindowScopedThrottle()] if self.request.method == "POST" else []

    def get_permissions(self) -> list[Any]:
        return [IsAuthenticated()] if self.request.method == "DELETE" else [AllowAny()]

    @extend_schema(
        operation_id="auth_token_create",
        summary="Sign in: a new API token",
        description="Each call issues a new token (one per client or device); the account keeps at most "
        "`API_TOKENS_PER_USER` (10 by default), the longest unused ending first. A token expires "
        "(`expiry`, sliding with use, and `max_expiry`), and every token of the account ends when its "
        "password changes. Failed sign-ins are limited per username and address: see the 429.",
        request=TokenIn,
        responses={
            200: TokenOut,
            400: OpenApiResponse(ErrorOut, description="Wrong username or password (`invalid_credentials`)."),
            429: OpenApiResponse(
                ErrorOut,
                description="Too many sign-ins from this address, too many failures for this username from "
                "this address, or this username is slowed for addresses it has not signed in from before "
                "(`throttled`; wait `Retry-After` seconds).",
            ),
            503: OpenApiResponse(ErrorOut, description="The rate limiter is unreachable (`rate_limit_unavailable`)."),
        },
        auth=[],
    )
    def post(self, request: Request) -> Response:
        body = TokenIn(data=request.data)
        body.is_valid(raise_exception=True)
        # The address's request rate is the "auth" throttle above; the failure limits in the service.
        issued = services.auth_token_create(request=request._request, client=_client(request), **body.validated_data)
        return Response(represent(TokenOut, issued))

    @extend_schema(
        operation_id="auth_token_destroy",
        summary="Sign out: revoke the token sent",
        request=None,
        responses={
            204: None,
            400: OpenApiResponse(ErrorOut, description="The request is not signed with a token (`no_token`)."),
        },
    )
    def delete(self, request: Request) -> Response:
        services.auth_token_revoke(user=request_user(request), token=request.auth)
        return Response(status=status.HTTP_204_NO_CONTENT)


class TokensApi(APIView):
    @extend_schema(
        operation_id="auth_tokens_destroy",
        summary="Sign out everywhere: revoke every token of the account",
        description="Every API token of the account ends, this one too (web sessions are not affected).",
        request=None,
        responses={204: None},
    )
    def delete(self, request: Request) -> Response:
        services.auth_tokens_revoke(user=request_user(request))
        return Response(status=status.HTTP_204_NO_CONTENT)


class MeApi(APIView):
    @extend_schema(operation_id="me_retrieve", responses={200: UserOut, 401: OpenApiResponse(ErrorOut)})
    def get(self, request: Request) -> Response:
        user = request_user(request)
        return Response(represent(UserOut, user))
