"""Numbers as SVG attributes: coordinates with one decimal, the same in every locale."""

from collections.abc import Iterable

from django import template

register = template.Library()


@register.filter
def coord(value: float) -> str:
    """A coordinate: an int as it is (a layout constant), a float to a tenth of a unit."""
    return str(value) if isinstance(value, int) else f"{value:.1f}"


@register.filter
def coords(points: Iterable[tuple[float, float]]) -> str:
    """A polyline's ``points``: "x,y x,y …"."""
    return " ".join(f"{coord(x)},{coord(y)}" for x, y in points)
