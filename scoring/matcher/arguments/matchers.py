"""Compiling expected values, argument matchers included, into patterns
(docs/matcher.md#argument-matchers, docs/matcher.md#where-matchers-apply).

Inside ``required_args`` and ``called_tool_with.args``, an object whose only keys start
with ``$`` is a matcher. Values are compiled in one of three modes:

- ``EQUAL``: equal as a whole (expected-call arguments, array elements, ``$one_of``
  alternatives in that place): objects may only leave out keys whose pattern accepts
  absence;
- ``CONTAINS``: ``called_tool_with``: objects are open at every level, anything else
  (arrays included) is compared as a whole;
- ``SUBSET``: ``$subset``: objects are open, arrays have the same length and each element
  contains its counterpart.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import Problem, Problems, field_path
from ..fields import FieldReader
from ..jsonvalue import json_type, render_short, to_decimal
from ..numbers import MAX_BOUND_DIGITS, Tolerance, bound_digits
from ..options import MatchOptions
from ..regex import PatternError, compile_pattern
from ..text import IGNORABLE
from .patterns import (
    JSON_TYPES,
    Absent,
    Approx,
    ArrayPattern,
    Equal,
    NullOrAbsent,
    ObjectPattern,
    OneOf,
    OptionalPattern,
    Regex,
    Subset,
    Text,
    TypeIs,
    ValuePattern,
)

EQUAL, CONTAINS, SUBSET = "equal", "contains", "subset"

MATCHERS = (
    "$one_of",
    "$regex",
    "$approx",
    "$text",
    "$type",
    "$optional",
    "$absent",
    "$subset",
    "$literal",
)


def argument_problems(arguments: Mapping[str, Any]) -> list[Problem]:
    """What is wrong with a call's required arguments as written (each argument matcher
    checked, under the default options), by argument name: an editor's as-you-type check."""
    problems = Problems()
    compiler = PatternCompiler(MatchOptions(), problems)
    for name, value in arguments.items():
        compiler.argument(value, name, EQUAL)
    return problems.items


def is_matcher(value: Any) -> bool:
    """Whether ``value`` is a matcher object: an object whose only keys start with ``$``."""
    return (
        isinstance(value, Mapping)
        and bool(value)
        and all(isinstance(key, str) and key.startswith("$") for key in value)
    )


def holds_matchers(value: Any) -> bool:
    if is_matcher(value):
        return True
    if isinstance(value, Mapping):
        return any(holds_matchers(item) for item in value.values())
    if isinstance(value, list):
        return any(holds_matchers(item) for item in value)
    return False


class PatternCompiler:
    """Compiles the expected values of one case, recording authoring problems by path.

    With ``strict=False`` a regex RE2 cannot compile is not a problem: the pattern is kept,
    and ``unavailable`` says why it cannot be evaluated (the predicate's verdict is then
    ``error``), which is how a stored suite is scored after its rules have tightened.
    """

    def __init__(self, options: MatchOptions, problems: Problems, *, strict: bool = True):
        self.options = options
        self.problems = problems
        self.strict = strict
        self.unavailable: list[str] = []

    def argument(self, value: Any, path: str, mode: str) -> ValuePattern:
        """The pattern for a top-level argument, where the ``null_args`` rule applies."""
        if value is None and self.options.absent_is_null:
            return NullOrAbsent()
        if is_matcher(value):
            return self._matcher(value, path, mode, top_level=True)
        return self.value(value, path, mode)

    def value(self, value: Any, path: str, mode: str) -> ValuePattern:
        if is_matcher(value):
            return self._matcher(value, path, mode, top_level=False)
        if isinstance(value, Mapping):
            if mode == EQUAL and not holds_matchers(value):
                return Equal(value)
            items = tuple(
                (key, self.value(item, field_path(path, key), mode)) for key, item in value.items()
            )
            return ObjectPattern(items, open=mode != EQUAL)
        if isinstance(value, list):
            element_mode = SUBSET if mode == SUBSET else EQUAL
            if element_mode == EQUAL and not holds_matchers(value):
                return Equal(value)
            return ArrayPattern(
                tuple(
                    self.value(item, field_path(path, index), element_mode)
                    for index, item in enumerate(value)
                )
            )
        return Equal(value)

    def _matcher(
        self, value: Mapping[str, Any], path: str, mode: str, top_level: bool
    ) -> ValuePattern:
        if len(value) != 1:
            keys = ", ".join(value)
            self.problems.add(path, f"a matcher has exactly one $ key, not several ({keys})")
            return Equal(value)
        ((name, argument),) = value.items()
        where = field_path(path, name)
        if name not in MATCHERS:
            self.problems.add(
                where,
                f"unknown matcher; one of {', '.join(MATCHERS)} "
                "(to mean an object with $ keys itself, wrap it in $literal)",
            )
            return Equal(value)
        # An alternative or an optional value is compared as it would be alone.
        inner = self.argument if top_level else self.value
        if name == "$one_of":
            if not isinstance(argument, list) or not argument:
                self.problems.add(where, "must be a non-empty list of alternatives")
                return Equal(value)
            return OneOf(
                tuple(inner(item, field_path(where, i), mode) for i, item in enumerate(argument))
            )
        if name == "$optional":
            return OptionalPattern(inner(argument, where, mode))
        if name == "$subset":
            return Subset(self.value(argument, where, SUBSET))
        if name == "$literal":
            return Equal(argument)
        if name == "$absent":
            if argument is not True:
                self.problems.add(where, "must be true ($absent means: not sent)")
            return Absent()
        if name == "$type":
            if argument not in JSON_TYPES:
                self.problems.add(where, f"must be one of {', '.join(JSON_TYPES)}")
                return Equal(value)
            return TypeIs(argument)
        if name == "$regex":
            return self._regex(argument, where)
        if name == "$approx":
            return self._approx(argument, where)
        return self._text(argument, where)

    def _regex(self, source: Any, where: str) -> ValuePattern:
        if not isinstance(source, str):
            self.problems.add(where, f"must be a string (an RE2 pattern), not {json_type(source)}")
            return Regex("", None)
        try:
            return Regex(source, compile_pattern(source))
        except PatternError as exc:
            if self.strict:
                self.problems.add(where, str(exc))
            else:
                self.unavailable.append(f"{where}: {exc}")
            return Regex(source, None)

    def _approx(self, argument: Any, where: str) -> ValuePattern:
        if not isinstance(argument, Mapping):
            self.problems.add(where, 'must be an object: {"value": number, "tolerance": number}')
            return Approx(Tolerance(0))
        fields = FieldReader(argument, where, self.problems)
        number = fields.number("value", required=True)
        tolerance = fields.number("tolerance", default=0)
        if number is None or tolerance is None:
            return Approx(Tolerance(0))
        if tolerance < 0:
            self.problems.add(fields.at("tolerance"), "must not be negative")
            return Approx(Tolerance(0))
        if bound_digits(to_decimal(number), to_decimal(tolerance)) > MAX_BOUND_DIGITS:
            self.problems.add(fields.at("tolerance"), "too far from value in magnitude")
            return Approx(Tolerance(0))
        return Approx(Tolerance(number, tolerance))

    def _text(self, argument: Any, where: str) -> ValuePattern:
        if not isinstance(argument, Mapping):
            self.problems.add(where, 'must be an object: {"value": string, "ignore": [...]}')
            return Text("", frozenset())
        fields = FieldReader(argument, where, self.problems)
        text = fields.string("value", required=True)
        ignore = fields.strings("ignore")
        unknown = [item for item in ignore if item not in IGNORABLE]
        if unknown:
            self.problems.add(
                fields.at("ignore"),
                f"unknown {render_short(unknown)}; each of {', '.join(IGNORABLE)}",
            )
        return Text(text or "", frozenset(ignore) - set(unknown))
