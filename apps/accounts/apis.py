"""Token authentication for API clients, and who am I."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.authtoken.models import Token
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.accounts import services
from apps.accounts.models import Role, User
from apps.core.fields import StrictCharField
from apps.core.request import request_user
from apps.core.serializers import ComputedField, ErrorOut, represent
from apps.core.throttling import FixedWindowScopedThrottle


class UserOut(serializers.Serializer[Any]):
    # Reads the user.
    id = serializers.IntegerField(source="pk")
    username = serializers.CharField()
    email = serializers.EmailField(allow_blank=True)
    role = serializers.ChoiceField(choices=Role.choices)


_user = UserOut()


class TokenIn(serializers.Serializer[Any]):
    username = StrictCharField(max_length=150)
    password = StrictCharField(max_length=128, style={"input_type": "password"}, trim_whitespace=False)


class TokenOut(serializers.Serializer[Any]):
    # Reads the (token, user) pair that services.auth_token_create returns.
    token = ComputedField(help_text="Send as `Authorization: Token <token>`.")
    user = ComputedField()

    @extend_schema_field(OpenApiTypes.STR)
    def get_token(self, signed_in: tuple[Token, User]) -> str:
        return str(signed_in[0].key)

    @extend_schema_field(UserOut)
    def get_user(self, signed_in: tuple[Token, User]) -> dict[str, Any]:
        return dict(_user.to_representation(signed_in[1]))


class TokenApi(APIView):
    permission_classes = [AllowAny]
    throttle_scope = "auth"

    def get_throttles(self) -> list[Any]:
        return [FixedWindowScopedThrottle()] if self.request.method == "POST" else []

    def get_permissions(self) -> list[Any]:
        from rest_framework.permissions import IsAuthenticated

        return [IsAuthenticated()] if self.request.method == "DELETE" else [AllowAny()]

    @extend_schema(
        operation_id="auth_token_create",
        request=TokenIn,
        responses={
            200: TokenOut,
            400: OpenApiResponse(ErrorOut, description="Wrong username or password."),
            429: OpenApiResponse(
                ErrorOut, description="Too many sign-ins from this address or failures for this username."
            ),
            503: OpenApiResponse(ErrorOut, description="The rate limiter is unreachable (`rate_limit_unavailable`)."),
        },
        auth=[],
    )
    def post(self, request: Request) -> Response:
        body = TokenIn(data=request.data)
        body.is_valid(raise_exception=True)
        # The address is limited by the "auth" throttle above; the username in the service.
        signed_in = services.auth_token_create(request=request._request, **body.validated_data)
        return Response(represent(TokenOut, signed_in))

    @extend_schema(operation_id="auth_token_destroy", request=None, responses={204: None})
    def delete(self, request: Request) -> Response:
        services.auth_token_revoke(user=request_user(request))
        return Response(status=status.HTTP_204_NO_CONTENT)


class MeApi(APIView):
    @extend_schema(operation_id="me_retrieve", responses={200: UserOut, 401: OpenApiResponse(ErrorOut)})
    def get(self, request: Request) -> Response:
        user = request_user(request)
        return Response(represent(UserOut, user))
