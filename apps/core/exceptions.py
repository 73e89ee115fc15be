"""One error model for the API.

Every error response has the same JSON shape::

    {"error": {"code": "wrong_dimension", "message": "...", "details": {...}}}

Domain code raises ``ApplicationError`` (or a subclass) with a stable code; DRF's own exceptions
(validation, authentication, throttling, 404) are mapped onto the same shape. Anything else stays
a 500 and is logged by Django.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler


class ApplicationError(Exception):
    status_code: int = status.HTTP_400_BAD_REQUEST
    code: str = "invalid"

    def __init__(self, message: str, *, code: str | None = None, details: dict[str, Any] | None = None,
                 status_code: int | None = None) -> None:  # fmt: skip
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        if status_code is not None:
            self.status_code = status_code
        self.details = details or {}


class ServiceUnavailable(ApplicationError):
    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    code = "unavailable"


def error_body(code: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "details": details or {}}}


_DRF_CODES = {
    exceptions.NotAuthenticated: "not_authenticated",
    exceptions.AuthenticationFailed: "authentication_failed",
    exceptions.PermissionDenied: "permission_denied",
    exceptions.NotFound: "not_found",
    exceptions.MethodNotAllowed: "method_not_allowed",
    exceptions.NotAcceptable: "not_acceptable",
    exceptions.UnsupportedMediaType: "unsupported_media_type",
    exceptions.Throttled: "throttled",
    exceptions.ParseError: "parse_error",
    exceptions.ValidationError: "validation_error",
}


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, ApplicationError):
        return Response(error_body(exc.code, exc.message, exc.details), status=exc.status_code)
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied()
    response = exception_handler(exc, context)
    if response is None or not isinstance(exc, exceptions.APIException):
        return response  # unknown errors stay 500s
    code = next((c for t, c in _DRF_CODES.items() if isinstance(exc, t)), "error")
    if isinstance(exc, exceptions.ValidationError):
        message = "The request is not valid."
        details: dict[str, Any] = {
            "fields": response.data if isinstance(response.data, dict) else {"non_field_errors": response.data}
        }
    else:
        message = str(exc.detail) if not isinstance(exc.detail, (list, dict)) else "Request failed."
        details = {}
        wait = getattr(exc, "wait", None)
        if isinstance(exc, exceptions.Throttled) and wait is not None:
            details["retry_after_seconds"] = int(wait)
    response.data = error_body(code, message, details)
    return response
