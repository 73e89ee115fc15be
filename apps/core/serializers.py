"""Rendering output serializers cheaply.

Instantiating a DRF serializer deep-copies its declared fields; for a nested output body that
was ~0.45 ms per response, ten times the cost of rendering. Output serializers here are pure
(no context, no state), so one instance per class renders every response.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import Any

from rest_framework import serializers


@cache
def _instance(cls: type[serializers.Serializer[Any]]) -> serializers.Serializer[Any]:
    return cls()


def represent(cls: type[serializers.Serializer[Any]], data: Any) -> dict[str, Any]:
    """``cls(data).data``, without rebuilding the field tree."""
    return dict(_instance(cls).to_representation(data))


def represent_many(cls: type[serializers.Serializer[Any]], items: list[Any]) -> list[dict[str, Any]]:
    serializer = _instance(cls)
    return [dict(serializer.to_representation(item)) for item in items]


class ComputedField(serializers.SerializerMethodField):
    """A value the serializer computes in ``get_<name>`` (typed with ``extend_schema_field``),
    documented as the plain field it stands for.

    DRF marks a method field read-only, and drf-spectacular then writes ``readOnly: true`` and
    makes the field required only through that mark. An output body always has these fields, as
    the plain fields they replaced did: same schema, so API clients see no change.
    """

    def __init__(self, method_name: str | None = None, **kwargs: Any) -> None:
        super().__init__(method_name, **kwargs)
        self.read_only = False
        self.required = True


def read_through(fields: dict[str, Any], names: Iterable[str], attr: str) -> dict[str, Any]:
    """Point the named fields at the object's ``attr`` (from a ``get_fields`` override): a body
    that extends another reads the extended part from one attribute of the object it is given."""
    for name in names:
        field = fields[name]
        source = field.source or name
        field.source = attr if source == "*" else f"{attr}.{source}"
    return fields


# ---- the one error shape (apps.core.exceptions renders it) -----------------------------------


class ErrorDetailOut(serializers.Serializer[Any]):
    code = serializers.CharField(help_text="Stable machine-readable code, e.g. wrong_dimension, not_found.")
    message = serializers.CharField(help_text="What went wrong, for a person.")
    details = serializers.DictField(help_text="Extra context, e.g. `understood` for answers we could not grade.")


class ErrorOut(serializers.Serializer[Any]):
    error = ErrorDetailOut()
