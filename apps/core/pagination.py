"""Page-number pagination, strict about its parameters, and its envelope for the OpenAPI schema."""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from django.core.paginator import Paginator
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request

_DIGITS = re.compile(r"[0-9]{1,9}")


class Pagination(PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 200
    last_page_strings = ()  # `page=last` is not an integer; the schema says page is one

    def get_page_number(self, request: Request, paginator: Paginator[Any]) -> Any:
        # DRF hands the raw value to Django's paginator, which takes "1_0", " 1" and "+1"; the
        # schema promises digits. Anything else is a page that does not exist: 404, as DRF says.
        value = request.query_params.get(self.page_query_param, "1")
        if not _DIGITS.fullmatch(value):
            raise NotFound("Invalid page.")
        return value

    def get_page_size(self, request: Request) -> int:
        # DRF ignores a bad page_size and uses the default; a client that asked for 0 or 1000
        # rows should be told, not silently given 50 or 200.
        value = request.query_params.get(self.page_size_query_param)
        if value is None:
            return self.page_size
        if not _DIGITS.fullmatch(value) or not 1 <= int(value) <= self.max_page_size:
            raise ValidationError({"page_size": [f"A whole number from 1 to {self.max_page_size}."]})
        return int(value)


PAGE_PARAMETERS = [
    OpenApiParameter(
        "page", {"type": "integer", "minimum": 1, "maximum": 999_999_999}, description="1-based page number."
    ),
    OpenApiParameter(
        "page_size",
        {"type": "integer", "minimum": 1, "maximum": Pagination.max_page_size},
        description=f"Items per page (default {Pagination.page_size}).",
    ),
]


@cache
def paginated(item: type[serializers.Serializer[Any]]) -> type[serializers.Serializer[Any]]:
    """The envelope ``Pagination`` answers with, around ``item``: one component per item type."""
    fields: dict[str, Any] = {
        "count": serializers.IntegerField(min_value=0, help_text="Items in all pages."),
        "next": serializers.CharField(allow_null=True, help_text="The next page's URL; null on the last."),
        "previous": serializers.CharField(allow_null=True, help_text="The previous page's URL; null on the first."),
        "results": item(many=True),
    }
    return type(f"Paginated{item.__name__}List", (serializers.Serializer,), fields)
