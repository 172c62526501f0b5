"""Value patterns: what a recorded value must be (docs/matcher.md#value-equality,
docs/matcher.md#argument-matchers).

An expected value compiles once per case (``matchers.PatternCompiler``) into a tree of
patterns. ``matches(value)`` is the fast question; only on failure does
``difference(value, path)`` say where and how the recorded value differs, in words a
reviewer can act on, and ``describe()`` renders the expectation for labels.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, cast

from ..errors import field_path
from ..examples import NoExample
from ..jsonvalue import (
    MISSING,
    is_number,
    json_equal,
    json_type,
    number_as_parsed,
    python_equality_suffices,
    render_short,
    to_decimal,
)
from ..numbers import Tolerance
from ..regex import Pattern
from ..text import normalize

VALUE, MISSING_ARGUMENT, UNEXPECTED = "value", "missing", "unexpected"


class Difference(str):
    """A sentence saying where and how a recorded value differs (``city: expected "Paris",
    got "paris"``) that also keeps the where (``path``) and the how (``kind``: ``value``,
    ``missing`` or ``unexpected``), so that failures can be grouped by cause
    (docs/formats.md#cause) without reading the sentence back."""

    path: str
    kind: str

    def __new__(cls, path: str, message: str, kind: str = VALUE) -> Difference:
        self = super().__new__(cls, f"{path}: {message}")
        self.path = path
        self.kind = kind
        return self


class ValuePattern:
    """What a recorded value must be. ``value`` is ``MISSING`` for an argument not sent."""

    __slots__ = ()

    def matches(self, value: Any) -> bool:
        raise NotImplementedError

    def difference(self, value: Any, path: str) -> Difference:
        """Why ``value`` does not match, starting with the path where it differs."""
        if value is MISSING:
            return Difference(path, f"missing (expected {self.describe()})", MISSING_ARGUMENT)
        return Difference(path, f"expected {self.describe()}, got {render_short(value)}")

    def describe(self) -> str:
        """The expected value, short, for labels."""
        raise NotImplementedError

    def example(self, present: bool = False) -> Any:
        """The plainest value this pattern accepts (docs/audit.md#the-reference-run);
        ``MISSING`` when leaving the value out is plainest, unless ``present`` (an array's
        item cannot be left out). Raises ``NoExample``."""
        raise NotImplementedError


class Equal(ValuePattern):
    """Equal by JSON meaning, as a whole."""

    __slots__ = ("expected", "plain")

    def __init__(self, expected: Any):
        self.expected = expected
        self.plain = python_equality_suffices(expected)

    def matches(self, value: Any) -> bool:
        if self.plain:
            equal: bool = value == self.expected
            return equal
        return value is not MISSING and json_equal(self.expected, value)

    def difference(self, value: Any, path: str) -> Difference:
        return first_difference(self.expected, value, path)

    def describe(self) -> str:
        return render_short(self.expected, 40)

    def example(self, present: bool = False) -> Any:
        return self.expected


class NullOrAbsent(ValuePattern):
    """An expected top-level ``null`` under ``null_args: absent_or_null``."""

    __slots__ = ()

    def matches(self, value: Any) -> bool:
        return value is MISSING or value is None

    def difference(self, value: Any, path: str) -> Difference:
        return Difference(path, f"expected null or absent, got {render_short(value)}")

    def describe(self) -> str:
        return "null"

    def example(self, present: bool = False) -> Any:
        return None if present else MISSING


class ObjectPattern(ValuePattern):
    """An object whose keys match their patterns. A closed one must have no other keys (an
    object equal as a whole); an open one may have more (a recursive subset). A key whose
    pattern accepts absence (``$optional``, ``$absent``) may be left out of either."""

    __slots__ = ("checks", "items", "keys", "open")

    def __init__(self, items: tuple[tuple[str, ValuePattern], ...], *, open: bool):
        self.items = items
        self.checks = tuple((key, pattern.matches) for key, pattern in items)
        self.keys = frozenset(key for key, _ in items)
        self.open = open

    def matches(self, value: Any) -> bool:
        if type(value) is not dict and not isinstance(value, Mapping):  # the ABC check is slow
            return False
        for key, matches in self.checks:
            if not matches(value.get(key, MISSING)):
                return False
        return self.open or value.keys() <= self.keys

    def difference(self, value: Any, path: str) -> Difference:
        if value is MISSING or not isinstance(value, Mapping):
            return super().difference(value, path)
        for key, pattern in self.items:
            item = value.get(key, MISSING)
            if not pattern.matches(item):
                return pattern.difference(item, field_path(path, key))
        extra = next(key for key in value if key not in self.keys)
        return Difference(
            field_path(path, extra), "not expected (the object must be equal as a whole)"
        )

    def describe(self) -> str:
        inner = ", ".join(f"{render_short(k)}: {p.describe()}" for k, p in self.items)
        return "{" + inner + "}"

    def example(self, present: bool = False) -> Any:
        found = {}
        for key, pattern in self.items:
            value = _example_at(pattern, field_path("", key))
            if value is not MISSING:
                found[key] = value
        return found


class ArrayPattern(ValuePattern):
    """An array of the same length whose elements match, position by position."""

    __slots__ = ("checks", "items")

    def __init__(self, items: tuple[ValuePattern, ...]):
        self.items = items
        self.checks = tuple(pattern.matches for pattern in items)

    def matches(self, value: Any) -> bool:
        if not isinstance(value, list | tuple) or len(value) != len(self.items):
            return False
        for matches, item in zip(self.checks, value):  # noqa: B905, SIM110 - lengths checked
            if not matches(item):
                return False
        return True

    def difference(self, value: Any, path: str) -> Difference:
        if not isinstance(value, list | tuple):
            return super().difference(value, path)
        if len(value) != len(self.items):
            return Difference(path, f"expected {len(self.items)} items, got {len(value)}")
        for index, (pattern, item) in enumerate(zip(self.items, value, strict=True)):
            if not pattern.matches(item):
                return pattern.difference(item, field_path(path, index))
        return Difference(path, "matches")  # not reached: only called when matches() is false

    def describe(self) -> str:
        return "[" + ", ".join(p.describe() for p in self.items) + "]"

    def example(self, present: bool = False) -> Any:
        return [_example_at(p, f"[{n}]", present=True) for n, p in enumerate(self.items)]


class OneOf(ValuePattern):
    """``$one_of``: any of the alternatives."""

    __slots__ = ("alternatives", "plain_set")

    def __init__(self, alternatives: tuple[ValuePattern, ...]):
        self.alternatives = alternatives
        # Alternatives that are plain strings or numbers (see Equal.plain) answer with one
        # hash lookup; no boolean can be among them, nor equal one of them.
        self.plain_set = None
        if all(
            type(p) is Equal and p.plain and type(p.expected) in (str, int) for p in alternatives
        ):
            # Each alternative was just checked to be an Equal.
            self.plain_set = frozenset(cast(Equal, p).expected for p in alternatives)

    def matches(self, value: Any) -> bool:
        if self.plain_set is not None:
            kind = type(value)
            if kind is str or kind is int or kind is float:
                return value in self.plain_set
        for pattern in self.alternatives:  # noqa: SIM110 - a loop is faster than any()
            if pattern.matches(value):
                return True
        return False

    def describe(self) -> str:
        shown = [p.describe() for p in self.alternatives[:6]]
        more = ", …" if len(self.alternatives) > 6 else ""
        return f"one of [{', '.join(shown)}{more}]"

    def example(self, present: bool = False) -> Any:
        """The first alternative's example that there is."""
        reasons = []
        for pattern in self.alternatives:
            try:
                return pattern.example(present)
            except NoExample as exc:
                reasons.append(exc)
        proven = all(reason.proven for reason in reasons)
        said = "; ".join(str(reason) for reason in reasons[:3])
        raise NoExample(f"no alternative of {self.describe()} has a value: {said}", proven=proven)


class Regex(ValuePattern):
    """``$regex``: a string the RE2 pattern matches as a whole."""

    __slots__ = ("compiled", "source")

    def __init__(self, source: str, compiled: Pattern | None):
        self.source = source
        self.compiled = compiled  # None when RE2 refused it (a lenient load; see error)

    def matches(self, value: Any) -> bool:
        return type(value) is str and self.compiled is not None and self.compiled.fullmatch(value)

    def describe(self) -> str:
        return f"/{self.source}/"

    def example(self, present: bool = False) -> Any:
        if self.compiled is None:
            raise NoExample(f"/{self.source}/ is a pattern RE2 refuses", proven=False)
        return self.compiled.example()

    def difference(self, value: Any, path: str) -> Difference:
        if value is MISSING:
            return super().difference(value, path)
        what = "a string matching" if type(value) is str else "a string, matching"
        return Difference(
            path, f"expected {what} /{self.source}/ (whole), got {render_short(value)}"
        )


class Approx(ValuePattern):
    """``$approx``: a number within a tolerance, in exact decimal arithmetic, inclusive."""

    __slots__ = ("bounds", "in_high", "in_low", "out_high", "out_low")

    def __init__(self, bounds: Tolerance):
        self.bounds = bounds
        # Floats a hair inside and outside the exact bounds settle most values without
        # Decimal arithmetic; only a value within that hair of a bound is decided exactly.
        margin = float(max(abs(bounds.low), abs(bounds.high))) * 1e-9 + 1e-300
        self.in_low, self.in_high = float(bounds.low) + margin, float(bounds.high) - margin
        self.out_low, self.out_high = float(bounds.low) - margin, float(bounds.high) + margin

    def matches(self, value: Any) -> bool:
        kind = type(value)
        if kind is float or kind is int:
            if self.in_low <= value <= self.in_high:
                return True
            if value < self.out_low or value > self.out_high:
                return False
        return is_number(value) and to_decimal(value) in self.bounds

    def describe(self) -> str:
        return self.bounds.describe()

    def example(self, present: bool = False) -> Any:
        return number_as_parsed(self.bounds.value)


class Text(ValuePattern):
    """``$text``: a string equal to the expected one once both drop what ``ignore`` names."""

    __slots__ = ("ignore", "normalized", "seen", "value")

    def __init__(self, value: str, ignore: frozenset[str]):
        self.value = value
        self.ignore = ignore
        self.normalized = normalize(value, ignore)
        # Recorded strings repeat (cities, units, enums): remember recent answers.
        self.seen: dict[str, bool] = {}

    def matches(self, value: Any) -> bool:
        if type(value) is not str:
            return False
        found = self.seen.get(value)
        if found is None:
            found = normalize(value, self.ignore) == self.normalized
            if len(self.seen) >= 256:
                self.seen.clear()
            self.seen[value] = found
        return found

    def describe(self) -> str:
        ignoring = ", ".join(sorted(self.ignore))
        suffix = f" (ignoring {ignoring})" if ignoring else ""
        return f"{render_short(self.value, 40)}{suffix}"

    def example(self, present: bool = False) -> Any:
        return self.value


def _is_integer(value: Any) -> bool:
    if type(value) is int:
        return True
    if type(value) is float:
        return value.is_integer()
    return is_number(value) and value == value.to_integral_value()  # a Decimal


# JSON Schema's reading: ``integer`` is a number with no fractional part (5.0 included), and
# a boolean is never a number.
JSON_TYPE_TESTS: dict[str, Callable[[Any], bool]] = {
    "string": lambda value: type(value) is str,
    "number": is_number,
    "integer": _is_integer,
    "boolean": lambda value: type(value) is bool,
    "array": lambda value: isinstance(value, list | tuple),
    "object": lambda value: isinstance(value, Mapping),
    "null": lambda value: value is None,
}
JSON_TYPES = tuple(JSON_TYPE_TESTS)
# The plainest value of each type, for examples.
TYPE_EXAMPLES = {
    "string": "",
    "number": 0,
    "integer": 0,
    "boolean": False,
    "array": [],
    "object": {},
    "null": None,
}


class TypeIs(ValuePattern):
    """``$type``: any value of that JSON type."""

    __slots__ = ("name", "test")

    def __init__(self, name: str):
        self.name = name
        self.test = JSON_TYPE_TESTS[name]

    def matches(self, value: Any) -> bool:
        return self.test(value)

    def describe(self) -> str:
        return "null" if self.name == "null" else f"any {self.name}"

    def example(self, present: bool = False) -> Any:
        return TYPE_EXAMPLES[self.name]

    def difference(self, value: Any, path: str) -> Difference:
        if value is MISSING:
            return super().difference(value, path)
        return Difference(
            path, f"expected {self.describe()}, got {render_short(value)} ({json_type(value)})"
        )


class OptionalPattern(ValuePattern):
    """``$optional``: absent, or matching the inner pattern."""

    __slots__ = ("inner",)

    def __init__(self, inner: ValuePattern):
        self.inner = inner

    def matches(self, value: Any) -> bool:
        return value is MISSING or self.inner.matches(value)

    def difference(self, value: Any, path: str) -> Difference:
        return self.inner.difference(value, path)

    def describe(self) -> str:
        return f"optional {self.inner.describe()}"

    def example(self, present: bool = False) -> Any:
        return self.inner.example(present=True) if present else MISSING


class Absent(ValuePattern):
    """``$absent``: the argument (or key) must not be sent."""

    __slots__ = ()

    def matches(self, value: Any) -> bool:
        return value is MISSING

    def difference(self, value: Any, path: str) -> Difference:
        return Difference(path, f"must not be sent, got {render_short(value)}", UNEXPECTED)

    def describe(self) -> str:
        return "absent"

    def example(self, present: bool = False) -> Any:
        if present:
            raise NoExample("an array item cannot be absent", proven=True)
        return MISSING


class Subset(ValuePattern):
    """``$subset``: contains the expected value (the pattern tree does the containing)."""

    __slots__ = ("inner",)

    def __init__(self, inner: ValuePattern):
        self.inner = inner

    def matches(self, value: Any) -> bool:
        return self.inner.matches(value)

    def difference(self, value: Any, path: str) -> Difference:
        return self.inner.difference(value, path)

    def describe(self) -> str:
        return f"containing {self.inner.describe()}"

    def example(self, present: bool = False) -> Any:
        return self.inner.example(present)


def _example_at(pattern: ValuePattern, path: str, *, present: bool = False) -> Any:
    """``pattern``'s example, a ``NoExample`` naming where it sits (``[0].date``)."""
    try:
        return pattern.example(present)
    except NoExample as exc:
        if str(exc).startswith(("[", ".")):
            raise NoExample(f"{path}{exc}", proven=exc.proven) from None
        raise NoExample(f"{path}: {exc}", proven=exc.proven) from None


def first_difference(expected: Any, actual: Any, path: str) -> Difference:
    """Where ``actual`` first differs from ``expected`` (equal as a whole), in words."""
    if actual is MISSING:
        return Difference(path, f"missing (expected {render_short(expected)})", MISSING_ARGUMENT)
    if isinstance(expected, Mapping) and isinstance(actual, Mapping):
        for key, value in expected.items():
            where = field_path(path, key)
            if key not in actual:
                return Difference(
                    where, f"missing (expected {render_short(value)})", MISSING_ARGUMENT
                )
            if not json_equal(value, actual[key]):
                return first_difference(value, actual[key], where)
        extra = next(key for key in actual if key not in expected)
        return Difference(
            field_path(path, extra), "not expected (the object must be equal as a whole)"
        )
    if isinstance(expected, list | tuple) and isinstance(actual, list | tuple):
        if len(expected) != len(actual):
            return Difference(path, f"expected {len(expected)} items, got {len(actual)}")
        for index, (want, got) in enumerate(zip(expected, actual, strict=True)):
            if not json_equal(want, got):
                return first_difference(want, got, field_path(path, index))
    return Difference(path, f"expected {render_short(expected)}, got {render_short(actual)}")
