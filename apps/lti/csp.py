"""The LTI pages' Content-Security-Policy: the rest of the site may be framed by nobody
(``frame-ancestors 'none'``); the pages an LMS shows in its iframe may be framed by the registered
platforms only, and the deep-linking return form may post to its platform's return URL only."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any
from urllib.parse import urlsplit

from django.http import HttpRequest, HttpResponse

from apps.lti import selectors


def framed_by_platforms(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Every response of ``view`` (errors included) may be framed by the registered platforms."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        response = view(request, *args, **kwargs)
        origins = selectors.framing_origins()
        response._csp_replace = {"frame-ancestors": origins or ["'none'"]}  # type: ignore[attr-defined]
        return response

    return wrapped


def allow_form_post_to(response: HttpResponse, url: str) -> HttpResponse:
    """Let the page's form post to ``url``'s origin (already checked to be the platform's)."""
    parts = urlsplit(url)
    if parts.scheme in ("http", "https") and parts.netloc:
        response._csp_update = {"form-action": [f"{parts.scheme}://{parts.netloc}"]}  # type: ignore[attr-defined]
    return response
