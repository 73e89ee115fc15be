"""Content text in pages outside the learner's: math rendered as the learner's page renders it."""

from django import template
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from apps.exercises.formats.base import inline_html

register = template.Library()


@register.filter
def with_math(text: str) -> SafeString:
    """A label that may quote content (an option's or a step's text): its ``$…$`` math rendered
    (Markdown without raw HTML); anything else escaped as it is, so a typed ``2*N*d`` stays literal."""
    text = str(text)
    if "$" not in text:
        return escape(text)
    return mark_safe(inline_html(text))  # noqa: S308 - markdown_html is sanitized (apps/core/html.py)
