"""Comparing recorded arguments with expected ones (DESIGN.md §4).

An expected value compiles once, per case, into a ``ValuePattern``; patterns answer
``matches(value)`` fast, and on failure ``difference(value, path)`` says where and how the
recorded value differs, for the report.
"""

from __future__ import annotations

from collections.abc import Mapping
from operator import itemgetter
from typing import Any

from .errors import field_path
from .jsonvalue import MISSING, is_number, json_equal, python_equality_suffices, render_short
from .options import MatchOptions


class ValuePattern:
    """What a recorded value must be. ``value`` is ``MISSING`` for an argument not sent."""

    __slots__ = ()

    def matches(self, value: Any) -> bool:
        raise NotImplementedError

    def difference(self, value: Any, path: str) -> str:
        """Why ``value`` does not match, starting with the path where it differs."""
        raise NotImplementedError

    def describe(self) -> str:
        """The expected value, short, for labels."""
        raise NotImplementedError


class Equal(ValuePattern):
    """Equal by JSON meaning, as a whole."""

    __slots__ = ("expected", "plain")

    def __init__(self, expected: Any):
        self.expected = expected
        self.plain = python_equality_suffices(expected)

    def matches(self, value: Any) -> bool:
        if self.plain:
            return value == self.expected
        return value is not MISSING and json_equal(self.expected, value)

    def difference(self, value: Any, path: str) -> str:
        return first_difference(self.expected, value, path)

    def describe(self) -> str:
        return render_short(self.expected, 40)


class Contains(ValuePattern):
    """An object whose named keys match (recursively); the recorded one may have more keys."""

    __slots__ = ("items",)

    def __init__(self, items: tuple[tuple[str, ValuePattern], ...]):
        self.items = items

    def matches(self, value: Any) -> bool:
        if not isinstance(value, Mapping):
            return False
        return all(pattern.matches(value.get(key, MISSING)) for key, pattern in self.items)

    def difference(self, value: Any, path: str) -> str:
        if value is MISSING:
            return f"{path}: missing (expected {self.describe()})"
        if not isinstance(value, Mapping):
            return f"{path}: expected an object, got {render_short(value)}"
        for key, pattern in self.items:
            item = value.get(key, MISSING)
            if not pattern.matches(item):
                return pattern.difference(item, field_path(path, key))
        return f"{path}: matches"  # not reached: only called when matches() is false

    def describe(self) -> str:
        inner = ", ".join(
            f"{render_short(key)}: {pattern.describe()}" for key, pattern in self.items
        )
        return "{" + inner + "}"


class NullOrAbsent(ValuePattern):
    """An expected ``null`` under ``null_args: absent_or_null``."""

    __slots__ = ()

    def matches(self, value: Any) -> bool:
        return value is MISSING or value is None

    def difference(self, value: Any, path: str) -> str:
        return f"{path}: expected null or absent, got {render_short(value)}"

    def describe(self) -> str:
        return "null"


def compile_value(expected: Any, *, contains: bool) -> ValuePattern:
    """The pattern for one expected value: equal as a whole, or (``contains``) a recursive
    subset where objects may carry more keys at every level."""
    if contains and isinstance(expected, Mapping):
        return Contains(
            tuple((key, compile_value(value, contains=True)) for key, value in expected.items())
        )
    return Equal(expected)


def first_difference(expected: Any, actual: Any, path: str) -> str:
    """Where ``actual`` first differs from ``expected`` (equal as a whole), in words."""
    if actual is MISSING:
        return f"{path}: missing (expected {render_short(expected)})"
    if isinstance(expected, Mapping) and isinstance(actual, Mapping):
        for key, value in expected.items():
            where = field_path(path, key)
            if key not in actual:
                return f"{where}: missing (expected {render_short(value)})"
            if not json_equal(value, actual[key]):
                return first_difference(value, actual[key], where)
        extra = next(key for key in actual if key not in expected)
        return f"{field_path(path, extra)}: not expected (the object must be equal as a whole)"
    if isinstance(expected, list | tuple) and isinstance(actual, list | tuple):
        if len(expected) != len(actual):
            return f"{path}: expected {len(expected)} items, got {len(actual)}"
        for index, (want, got) in enumerate(zip(expected, actual, strict=True)):
            if not json_equal(want, got):
                return first_difference(want, got, field_path(path, index))
    return f"{path}: expected {render_short(expected)}, got {render_short(actual)}"


_PLAIN = "plain"  # Python's == decides (no numbers or booleans inside)
_SCALAR = "scalar"  # a number: same type and == is a match; otherwise ask the pattern
_PATTERN = "pattern"  # the pattern decides


def _fast_check(pattern: ValuePattern) -> tuple[str, Any, ValuePattern]:
    if type(pattern) is Equal:
        if pattern.plain:
            return _PLAIN, pattern.expected, pattern
        if is_number(pattern.expected):
            return _SCALAR, pattern.expected, pattern
    return _PATTERN, None, pattern


class ArgumentsPattern:
    """The arguments an expected call (or a ``called_tool_with``) requires.

    Each named argument must be sent with a matching value; others may be sent too, unless
    ``exact`` (``exact_args``). Top-level names follow the case's ``arg_names`` rule and an
    expected ``null`` its ``null_args`` rule. A call whose arguments could not be parsed
    (``None``) has no arguments: it matches only a pattern that names none.
    """

    __slots__ = ("checks", "exact", "ignore_case", "items", "keys", "plain_lookup", "plain_values")

    def __init__(
        self, required: Mapping, options: MatchOptions, *, contains: bool, exact: bool = False
    ):
        items = []
        for name, value in required.items():
            if value is None and options.absent_is_null:
                pattern: ValuePattern = NullOrAbsent()
            else:
                pattern = compile_value(value, contains=contains)
            items.append((name, options.arg_key(name), pattern))
        self.items: tuple[tuple[str, str, ValuePattern], ...] = tuple(items)
        self.keys = frozenset(key for _, key, _ in items)
        self.exact = exact
        self.ignore_case = options.ignore_arg_case
        # The hot path (exact names) compares simple values inline, skipping method calls;
        # when every value is plain, one C-level lookup and tuple comparison does it all.
        self.checks = tuple((name, *_fast_check(pattern)) for name, _, pattern in items)
        self.plain_lookup = None
        if items and not self.ignore_case and all(how is _PLAIN for _, how, _, _ in self.checks):
            names = [name for name, _, _ in items]
            values = tuple(expected for _, _, expected, _ in self.checks)
            self.plain_lookup = itemgetter(*names)
            self.plain_values = values if len(values) > 1 else values[0]

    def _values(self, arguments: Mapping, name: str, key: str) -> list:
        if not self.ignore_case:
            return [arguments[name]] if name in arguments else []
        # Under ignore_case a call may carry several spellings ("city" and "City").
        return [value for arg, value in arguments.items() if arg.casefold() == key]

    def _unexpected(self, arguments: Mapping) -> list[str]:
        if not self.exact:
            return []
        if self.ignore_case:
            return [name for name in arguments if name.casefold() not in self.keys]
        return [name for name in arguments if name not in self.keys]

    def matches(self, arguments: Mapping | None) -> bool:
        if arguments is None:
            return not self.items
        if self.plain_lookup is not None:
            try:
                if self.plain_lookup(arguments) != self.plain_values:
                    return False
            except KeyError:  # an argument was not sent
                return False
        elif self.ignore_case:
            for name, key, pattern in self.items:
                values = self._values(arguments, name, key)
                if not any(map(pattern.matches, values or (MISSING,))):
                    return False
        else:
            for name, how, expected, pattern in self.checks:
                value = arguments.get(name, MISSING)
                if how is _PLAIN:
                    if value != expected:
                        return False
                elif how is _SCALAR and type(value) is type(expected) and value == expected:
                    continue
                elif not pattern.matches(value):
                    return False
        return not (self.exact and self._unexpected(arguments))

    def _failing(self, arguments: Mapping) -> list[tuple[str, ValuePattern, Any]]:
        failing = []
        for name, key, pattern in self.items:
            values = self._values(arguments, name, key) or [MISSING]
            if not any(map(pattern.matches, values)):
                failing.append((name, pattern, values[0]))
        return failing

    def mismatches(self, arguments: Mapping | None) -> int:
        """How many arguments fail (unparsed arguments count as all failing): a distance."""
        if arguments is None:
            return len(self.items)
        return len(self._failing(arguments)) + len(self._unexpected(arguments))

    def differences(self, arguments: Mapping | None) -> list[str]:
        """One sentence per failing argument; empty when ``arguments`` match."""
        if arguments is None:
            return [] if not self.items else ["the arguments could not be parsed as a JSON object"]
        found = [
            pattern.difference(value, name) for name, pattern, value in self._failing(arguments)
        ]
        found.extend(
            f"{name}: not expected (no other arguments allowed)"
            for name in self._unexpected(arguments)
        )
        return found

    def describe(self) -> str:
        return ", ".join(f"{name}={pattern.describe()}" for name, _, pattern in self.items)
