"""A JSON model field that keeps what PostgreSQL's jsonb would change.

jsonb reorders object keys and rounds numbers to its own form; suites need neither: the
order of an expected call's arguments is the order its label shows, and a number must
read back exactly as written. This field stores the JSON text itself.
"""

import hashlib
from typing import Any

from django.core.exceptions import ValidationError
from django.db import models

from scoring.matcher import InvalidInput, dump_json, parse_json


class JSONText(str):
    """JSON text already written by ``dump_json``: the field stores it as it is. Code that
    writes many rows (the run store) dumps a value as soon as it is made, rather than hold
    the value until the rows go in."""

    __slots__ = ()


class JSONTextField(models.TextField):
    description = "JSON stored as text, with key order and exact numbers kept"
    # For django-stubs: it takes and gives JSON values, not the text it stores.
    _pyi_private_set_type: Any
    _pyi_private_get_type: Any

    def from_db_value(self, value, expression, connection):
        return None if value is None else parse_json(value)

    def to_python(self, value):
        if value is None or not isinstance(value, str):
            return value
        try:
            return parse_json(value)
        except InvalidInput as exc:
            raise ValidationError(str(exc)) from None

    def get_prep_value(self, value):
        if isinstance(value, JSONText):
            return str(value)
        return None if value is None else dump_json(value).decode()

    def value_to_string(self, obj):
        return self.get_prep_value(self.value_from_object(obj))


def document_digest(value) -> str:
    """The SHA-256 of the text the field stores for ``value``: equal digests, equal JSON."""
    return hashlib.sha256(dump_json(value)).hexdigest()
