"""Required arguments in words on any page that shows them: ``city ≈ "paris" (ignoring
case)`` rather than the matcher's JSON (scoring.matcher.describe_arguments)."""

from collections.abc import Mapping

from django import template

from scoring.matcher import InvalidInput, describe_arguments, parse_json

register = template.Library()


@register.filter
def argument_words(required_args) -> tuple[str, ...]:
    """The phrases of required arguments given as an object or as its JSON text (a form's
    value); none when the text is not a JSON object (the form says why beside it)."""
    if isinstance(required_args, str):
        try:
            required_args = parse_json(required_args)
        except InvalidInput:
            return ()
    if not isinstance(required_args, Mapping):
        return ()
    return describe_arguments(required_args)
