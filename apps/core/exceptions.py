"""One error model for the API.

Every error response has the same JSON shape::

    {"error": {"code": "wrong_dimension", "message": "...", "details": {...}}}

Domain code raises ``ApplicationError`` (or a subclass) with a stable code; DRF's own exceptions
(validation, authentication, throttling, 404) are mapped onto the same shape. Anything else stays
a 500 and is logged by Django.

Errors raised before or around a DRF view (an unmatched URL, a bad Host header, a body over
DATA_UPLOAD_MAX_MEMORY_SIZE, a crash) reach Django's handler400/403/404/500 instead, which
config/urls.py points at the handlers below: under ``/api/`` they answer the same JSON shape,
elsewhere Django's HTML pages.
"""

from __future__ import annotations

import logging
from typing import Any

from django import db
from django.conf import settings
from django.core.exceptions import PermissionDenied, RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.views import defaults
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler

logger = logging.getLogger(__name__)
DB_RETRY_AFTER_S = 5


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
        answer = Response(error_body(exc.code, exc.message, exc.details), status=exc.status_code)
        retry_after = exc.details.get("retry_after")
        if retry_after is not None:  # a 429 or a 503 says when to come back, as DRF's own 429 does
            answer["Retry-After"] = str(retry_after)
        return answer
    if isinstance(exc, (db.OperationalError, db.InterfaceError)):
        # PostgreSQL restarting or out of reach: say so, and when to come back, not a bare 500.
        logger.warning("database unavailable: %s", exc)
        answer = Response(
            error_body("database_unavailable", "The database is unavailable for a moment; please try again in a "
                       "few seconds.", {"retry_after": DB_RETRY_AFTER_S}),
            status=status.HTTP_503_SERVICE_UNAVAILABLE,
        )  # fmt: skip
        answer["Retry-After"] = str(DB_RETRY_AFTER_S)
        return answer
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


# ---- Django-level errors (handler400/403/404/500 in config/urls.py) ------------------------------

API_PREFIX = "/api/"


def is_api(request: HttpRequest) -> bool:
    return request.path_info.startswith(API_PREFIX)


def json_error(status_code: int, code: str, message: str, details: dict[str, Any] | None = None) -> JsonResponse:
    return JsonResponse(error_body(code, message, details), status=status_code)


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """A SuspiciousOperation (bad Host header, body too large, too many fields) or a BadRequest."""
    if not is_api(request):
        return defaults.bad_request(request, exception)
    if isinstance(exception, RequestDataTooBig):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        return json_error(
            status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
            "too_large",
            f"The request body is larger than the {limit:,} bytes this server accepts.",
            {"max_bytes": limit},
        )
    if isinstance(exception, (TooManyFieldsSent, TooManyFilesSent)):
        return json_error(status.HTTP_400_BAD_REQUEST, "too_many_fields", "The request has too many fields.")
    # The exception's text can echo attacker-chosen input (a Host header): say nothing specific.
    return json_error(status.HTTP_400_BAD_REQUEST, "bad_request", "The request could not be understood.")


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    if not is_api(request):
        return defaults.permission_denied(request, exception)
    return json_error(status.HTTP_403_FORBIDDEN, "permission_denied", "You do not have permission to do this.")


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    if not is_api(request):
        return defaults.page_not_found(request, exception)
    return json_error(status.HTTP_404_NOT_FOUND, "not_found", "Not found.")


def server_error(request: HttpRequest) -> HttpResponse:
    """Django has logged the traceback already; the client gets none of it."""
    if not is_api(request):
        return defaults.server_error(request)
    return json_error(
        status.HTTP_500_INTERNAL_SERVER_ERROR, "server_error", "Something went wrong on our side. It has been logged."
    )
