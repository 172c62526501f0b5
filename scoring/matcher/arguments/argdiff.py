"""An expected call's arguments beside a recorded call's, argument by argument, for people.

``ArgumentsPattern.differences`` says in one sentence per argument why a call does not
match, which suits a report. A reviewer comparing two calls wants the whole picture: every
argument of both sides in one table, a nested value opened down to the keys and items that
differ, and for a failed argument matcher (docs/matcher.md#argument-matchers) which one it
was and why. Every verdict here is asked of the same compiled patterns that scoring asked,
so the table cannot disagree with the report.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import field_path
from ..jsonvalue import MISSING, render_short
from .arguments import AnyWhenNotRecorded, ArgumentsPattern
from .patterns import (
    Absent,
    Approx,
    ArrayPattern,
    Equal,
    ObjectPattern,
    OneOf,
    OptionalPattern,
    Regex,
    Subset,
    Text,
    TypeIs,
    ValuePattern,
)

EQUAL = "equal"
DIFFERENT = "different"
MISSING_ARG = "missing"  # expected, not sent
UNEXPECTED = "unexpected"  # sent where it must not be (exact_args, a closed object, $absent)
NOT_CHECKED = "not checked"  # sent, and nothing is required of it

SHOWN = 200  # characters of a value shown in a row

MATCHER_NAMES: dict[type[ValuePattern], str] = {
    OneOf: "$one_of",
    Regex: "$regex",
    Approx: "$approx",
    Text: "$text",
    TypeIs: "$type",
    OptionalPattern: "$optional",
    Absent: "$absent",
    Subset: "$subset",
}


@dataclass(frozen=True, slots=True)
class ArgumentRow:
    """One argument (or nested key or item, named by its ``path``) of the comparison.

    ``expected`` describes what is required (None: nothing is), ``got`` renders what was sent
    (None: nothing was); ``reason`` is the matcher's own sentence for a row that does not hold,
    and ``matcher`` names the argument matcher that failed (``$one_of``), if one did.
    """

    path: str
    state: str
    expected: str | None = None
    got: str | None = None
    reason: str | None = None
    matcher: str | None = None

    @property
    def holds(self) -> bool:
        return self.state in (EQUAL, NOT_CHECKED)


def compare_arguments(
    pattern: ArgumentsPattern | AnyWhenNotRecorded, arguments: Mapping[str, Any] | None
) -> tuple[ArgumentRow, ...]:
    """Each required argument against what the call sent, then the arguments sent that
    ``exact_args`` forbids, then the others sent (not checked). A pattern that a call with
    no arguments recorded satisfies as well compares as its pattern."""
    while isinstance(pattern, AnyWhenNotRecorded):
        pattern = pattern.pattern
    if arguments is None:
        reason = "the arguments could not be parsed as a JSON object"
        return tuple(
            ArgumentRow(name, MISSING_ARG, expected.describe(), reason=reason)
            for name, _, expected in pattern.items
        )
    rows: list[ArgumentRow] = []
    compared: set[str] = set()
    for name, key, expected in pattern.items:
        sent = pattern.sent(arguments, name, key)
        compared.update(arg for arg, _ in sent)
        # Under ignore_case any spelling may hold: show the one that does, if one does.
        value = next((v for _, v in sent if expected.matches(v)), sent[0][1] if sent else MISSING)
        rows.extend(_compare(expected, value, name))
    forbidden = pattern.unexpected(arguments)
    rows.extend(
        ArgumentRow(
            name,
            UNEXPECTED,
            got=_shown(arguments[name]),
            reason="not expected (no other arguments allowed)",
        )
        for name in forbidden
    )
    rows.extend(
        ArgumentRow(name, NOT_CHECKED, got=_shown(value))
        for name, value in arguments.items()
        if name not in compared and name not in forbidden
    )
    return tuple(rows)


def _compare(pattern: ValuePattern, value: Any, path: str) -> list[ArgumentRow]:
    # A plain value is shown at length; a matcher as it describes itself.
    expected = _shown(pattern.expected) if type(pattern) is Equal else pattern.describe()
    got = None if value is MISSING else _shown(value)
    if pattern.matches(value):
        return [ArgumentRow(path, EQUAL, expected, got)]
    if value is not MISSING:
        opened = _opened(pattern, value, path)
        if opened is not None:
            return opened
    if isinstance(pattern, Absent):
        state = UNEXPECTED
    else:
        state = MISSING_ARG if value is MISSING else DIFFERENT
    reason = pattern.difference(value, path).removeprefix(f"{path}: ")
    return [ArgumentRow(path, state, expected, got, reason, MATCHER_NAMES.get(type(pattern)))]


def _opened(pattern: ValuePattern, value: Any, path: str) -> list[ArgumentRow] | None:
    """The rows of a nested object or array compared key by key (item by item), or None
    when the value is not of the expected shape and is compared as a whole."""
    while isinstance(pattern, Subset | OptionalPattern):
        pattern = pattern.inner
    if isinstance(value, Mapping):
        if isinstance(pattern, ObjectPattern):
            items, closed = pattern.items, not pattern.open
        elif isinstance(pattern, Equal) and isinstance(pattern.expected, Mapping):
            items, closed = tuple((k, Equal(v)) for k, v in pattern.expected.items()), True
        else:
            return None
        rows = []
        for key, inner in items:
            rows.extend(_compare(inner, value.get(key, MISSING), field_path(path, key)))
        if closed:
            named = {key for key, _ in items}
            rows.extend(
                ArgumentRow(
                    field_path(path, key),
                    UNEXPECTED,
                    got=_shown(item),
                    reason="not expected (the object must be equal as a whole)",
                )
                for key, item in value.items()
                if key not in named
            )
        return rows
    if isinstance(value, list | tuple):
        if isinstance(pattern, ArrayPattern):
            item_patterns = pattern.items
        elif isinstance(pattern, Equal) and isinstance(pattern.expected, list | tuple):
            item_patterns = tuple(Equal(item) for item in pattern.expected)
        else:
            return None
        if len(item_patterns) != len(value):
            return None  # the pattern says "expected 2 items, got 3"
        rows = []
        for index, (inner, item) in enumerate(zip(item_patterns, value, strict=True)):
            rows.extend(_compare(inner, item, field_path(path, index)))
        return rows
    return None


def _shown(value: Any) -> str:
    return render_short(value, SHOWN)
