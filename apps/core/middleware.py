"""Refuse NUL characters in the query string before any view reads it.

PostgreSQL text cannot hold NUL: a ``?workbook=a%00b`` that reaches a query raises psycopg's
DataError, a 500. No parameter of ours can legitimately hold one, so the request is a 400 (the
JSON error shape under /api/, Django's page elsewhere). Path parameters are bounded by the URL
converters (apps/core/converters.py); bodies by DRF's and Django's form fields, which refuse NUL.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest

from apps.core.exceptions import is_api, json_error


class RejectNullCharactersMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if any("\x00" in key or any("\x00" in value for value in values) for key, values in request.GET.lists()):
            message = "The query string contains a null character."
            if is_api(request):
                return json_error(400, "bad_request", message)
            return HttpResponseBadRequest(message)
        return self.get_response(request)
