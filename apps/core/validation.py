"""Validating an input body cheaply, as ``apps.core.serializers.represent`` renders output.

``Body(data=...).is_valid(raise_exception=True)`` builds a serializer (deep-copying its declared
fields) for every request. An input serializer without context or state validates the same with
one instance per class: ``run_validation`` is what ``is_valid`` calls. A body it refuses is
validated again the usual way, so that the 400 says exactly what ``is_valid`` says.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from rest_framework import serializers


@cache
def _instance(cls: type[serializers.Serializer[Any]]) -> serializers.Serializer[Any]:
    return cls()


def validated(cls: type[serializers.Serializer[Any]], data: Any) -> dict[str, Any]:
    """``cls(data=data)``'s ``validated_data``; raises the ``ValidationError`` ``is_valid`` raises."""
    try:
        return dict(_instance(cls).run_validation(data))
    except serializers.ValidationError:
        body = cls(data=data)
        body.is_valid(raise_exception=True)
        return dict(body.validated_data)  # (not reached: it refused the same data)
