"""Filters for showing recorded runs and their results."""

from django import template

from scoring.matcher import pretty_json

register = template.Library()


@register.filter
def json_pretty(value) -> str:
    """A JSON value as indented text (escaped by the template like any other text)."""
    return pretty_json(value).decode().rstrip("\n")


@register.filter
def as_text(value) -> str:
    """A tool result as people read it: a string as it is (tools mostly answer with text,
    often JSON text, which quoting would bury under escapes), anything else as JSON."""
    return value if isinstance(value, str) else json_pretty(value)


@register.filter
def percent(part, whole) -> str:
    """``part`` of ``whole`` as a percentage to one decimal (``37.5%``), or a dash when
    there is no whole. Never 100% unless all passed, nor 0% unless none did."""
    if not whole:
        return "—"
    value = round(100 * part / whole, 1)
    if value == 100 and part < whole:
        value = 99.9
    elif value == 0 and part > 0:
        value = 0.1
    return f"{value:g}%"


@register.filter
def duration(value) -> str:
    """A timedelta as people say it: ``3.5 s``, ``4 min 12 s``, ``2 h 5 min``."""
    seconds = value.total_seconds()
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, seconds = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {seconds} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"
