"""Filters for showing recorded runs."""

from django import template

from scoring.matcher.jsonvalue import pretty_json

register = template.Library()


@register.filter
def json_pretty(value) -> str:
    """A JSON value as indented text (escaped by the template like any other text)."""
    return pretty_json(value).decode().rstrip("\n")
