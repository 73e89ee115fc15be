"""Serializer fields for request bodies that read exactly what the schema says."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers


class StrictCharField(serializers.CharField):
    """A string and only a string. DRF's CharField turns ``0`` or ``true`` into text, which the
    OpenAPI schema (``type: string``) rules out: a client that sends a number is told so."""

    default_error_messages = {"invalid": "Must be a string."}

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return str(super().to_internal_value(data))
