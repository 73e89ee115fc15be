"""The project's URLs plus a view that crashes, under /api/ and outside it (for the 500 tests)."""

from django.http import HttpRequest, HttpResponse
from django.urls import path

from config.urls import handler400, handler403, handler404, handler500, urlpatterns  # noqa: F401


def crash(request: HttpRequest) -> HttpResponse:
    raise RuntimeError("secret detail that must not leak")


urlpatterns = [path("api/v1/crash/", crash), path("crash/", crash), *urlpatterns]
