"""``case_field``: where a log names its case, when it is not ``case`` (docs/formats.md#case-field).

A path is dotted keys with ``[n]`` list indexes (``task_id``, ``metadata.case``,
``inputs[0].id``). The upload (API and page) and ``manage.py score --case-field`` take one;
each record of the file then gets its ``case`` from there before its format is read.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from scoring.matcher import InvalidInput, json_type

MAX_LENGTH = 200
_STEP = re.compile(r"\[(\d+)\]|\.?([^.\[\]]+)")


def parse_case_field(path: str) -> tuple[str | int, ...]:
    """The steps of ``path``: keys (str) and list indexes (int). Raises ``ValueError`` saying
    what is wrong with a path that is empty or malformed (``a..b``, ``a[x]``, ``.a``)."""
    if not path or len(path) > MAX_LENGTH:
        raise ValueError(f"a case field is a dotted path of 1 to {MAX_LENGTH} characters")
    steps: list[str | int] = []
    at = 0
    while at < len(path):
        found = _STEP.match(path, at)
        if found is None or (at == 0 and path.startswith(".")):
            raise ValueError(
                f"{path!r} is not a dotted path with [n] indexes (e.g. metadata.case,"
                f" inputs[0].id): stuck at character {at + 1}"
            )
        index, key = found.groups()
        steps.append(int(index) if index is not None else key)
        at = found.end()
    return tuple(steps)


def root_field(path: str | None) -> str | None:
    """The top-level field ``path`` starts at (readers that skip fields must keep it)."""
    first = parse_case_field(path)[0] if path else None
    return first if isinstance(first, str) else None


def with_case_from(record: Any, path: str) -> Any:
    """``record`` with ``case`` set to the string of the value at ``path``; ``InvalidInput``
    naming the path when it is missing or is not a string or a number. A record that is
    not an object is returned as it is, for its importer to refuse."""
    if not isinstance(record, Mapping):
        return record
    value: Any = record
    where = ""
    for step in parse_case_field(path):
        where = f"{where}[{step}]" if isinstance(step, int) else f"{where}.{step}".lstrip(".")
        if isinstance(step, int):
            found = isinstance(value, list) and step < len(value)
        else:
            found = isinstance(value, Mapping) and step in value
        if not found:
            raise InvalidInput.single(where, f"required by case_field={path}: the case key")
        value = value[step]
    if not isinstance(value, str | int) or isinstance(value, bool):
        message = f"case_field={path} names the case key: a string or a number, not"
        raise InvalidInput.single(where, f"{message} {json_type(value)}")
    return {**record, "case": str(value)}
