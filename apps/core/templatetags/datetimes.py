from datetime import datetime

from django import template
from django.utils.dateparse import parse_datetime

register = template.Library()


@register.filter
def iso_datetime(value: str | None) -> datetime | None:
    """An API body's ISO 8601 timestamp as a datetime, for ``|date`` in pages that render bodies."""
    return parse_datetime(value) if value else None
