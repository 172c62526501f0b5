"""Reading typed fields out of a JSON object, recording a problem (by path) for each bad one."""

from __future__ import annotations

import builtins
from collections.abc import Iterator, Mapping
from decimal import Decimal
from typing import Any, TypeVar, overload

from .errors import Problems, field_path
from .jsonvalue import is_finite_number, is_number, json_type

_D = TypeVar("_D")
# A JSON number as the readers give it; booleans are not numbers.
Number = int | float | Decimal


class FieldReader:
    """Typed access to the fields of one JSON object at ``path``.

    Each accessor returns the field's value, or its default when the field is absent or
    null; a value of the wrong type adds a problem and returns the default, so validation
    goes on and reports everything in one pass.
    """

    __slots__ = ("data", "path", "problems")

    def __init__(self, data: Mapping[str, Any], path: str, problems: Problems):
        self.data = data
        self.path = path
        self.problems = problems

    def at(self, key: str) -> str:
        return field_path(self.path, key)

    def _get(self, key: str, required: bool) -> Any:
        value = self.data.get(key)
        if value is None and required:
            self.problems.add(
                self.at(key), "required" if key not in self.data else "must not be null"
            )
        return value

    def _wrong(self, key: str, expected: str) -> None:
        self.problems.add(self.at(key), f"must be {expected}, not {json_type(self.data[key])}")

    @overload
    def string(self, key: str, *, required: bool = False, nonempty: bool = False) -> str | None: ...
    @overload
    def string(
        self, key: str, *, required: bool = False, nonempty: bool = False, default: _D
    ) -> str | _D: ...
    def string(
        self, key: str, *, required: bool = False, nonempty: bool = False, default: Any = None
    ) -> Any:
        value = self._get(key, required)
        if value is None:
            return default
        if not isinstance(value, str):
            self._wrong(key, "a string")
            return default
        if nonempty and not value.strip():
            self.problems.add(self.at(key), "must not be empty")
            return default
        return value

    def boolean(self, key: str, *, default: bool = False) -> bool:
        value = self._get(key, False)
        if value is None:
            return default
        if not isinstance(value, bool):
            self._wrong(key, "true or false")
            return default
        return value

    def integer(self, key: str, *, minimum: int | None = None) -> int | None:
        value = self._get(key, False)
        if value is None:
            return None
        if not is_number(value):
            self._wrong(key, "a whole number")
            return None
        if not is_finite_number(value) or value != int(value):
            self.problems.add(self.at(key), "must be a whole number")
            return None
        whole = int(value)
        if minimum is not None and whole < minimum:
            self.problems.add(self.at(key), f"must be at least {minimum}")
            return None
        return whole

    @overload
    def number(self, key: str, *, required: bool = False) -> Number | None: ...
    @overload
    def number(self, key: str, *, required: bool = False, default: _D) -> Number | _D: ...
    def number(self, key: str, *, required: bool = False, default: Any = None) -> Any:
        value = self._get(key, required)
        if value is None:
            return default
        if not is_number(value):
            self._wrong(key, "a number")
            return default
        if not is_finite_number(value):
            self.problems.add(self.at(key), "must be a finite number")
            return default
        return value

    def choice(self, key: str, choices: tuple[str, ...], *, default: str) -> str:
        value = self._get(key, False)
        if value is None:
            return default
        if value not in choices:
            options = ", ".join(f'"{c}"' for c in choices)
            self.problems.add(self.at(key), f"must be one of {options}")
            return default
        chosen: str = value  # one of ``choices``
        return chosen

    @overload
    def object(self, key: str, *, required: bool = False) -> Mapping[str, Any] | None: ...
    @overload
    def object(
        self, key: str, *, required: bool = False, default: _D
    ) -> Mapping[str, Any] | _D: ...
    def object(self, key: str, *, required: bool = False, default: Any = None) -> Any:
        value = self._get(key, required)
        if value is None:
            return default
        if not isinstance(value, Mapping):
            self._wrong(key, "an object")
            return default
        return value

    def list(self, key: str, *, required: bool = False) -> builtins.list[Any]:
        value = self._get(key, required)
        if value is None:
            return []
        if not isinstance(value, list):
            self._wrong(key, "a list")
            return []
        return value

    def objects(
        self, key: str, *, what: str = "an object"
    ) -> Iterator[tuple[int, str, Mapping[str, Any]]]:
        """The items of a list of objects, with their index and path; others are problems."""
        for index, item in enumerate(self.list(key)):
            where = field_path(self.at(key), index)
            if isinstance(item, Mapping):
                yield index, where, item
            else:
                self.problems.add(where, f"must be {what}, not {json_type(item)}")

    def strings(self, key: str, *, nonempty: bool = False) -> builtins.list[str]:
        """A list of strings (each non-empty when asked)."""
        items = self.list(key)
        good: builtins.list[str] = []
        for index, item in enumerate(items):
            where = field_path(self.at(key), index)
            if not isinstance(item, str):
                self.problems.add(where, f"must be a string, not {json_type(item)}")
            elif nonempty and not item.strip():
                self.problems.add(where, "must not be empty")
            else:
                good.append(item)
        return good
