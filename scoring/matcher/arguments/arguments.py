"""The arguments an expected call (docs/matcher.md#when-a-recorded-call-matches) or a
``called_tool_with`` (docs/matcher.md#expectations) requires."""

from __future__ import annotations

from collections.abc import Mapping
from operator import itemgetter
from typing import Any

from ..errors import Problems, field_path
from ..examples import NoExample
from ..jsonvalue import MISSING, NOT_RECORDED
from ..options import MatchOptions
from ..report import (
    ARGUMENT_MISSING,
    ARGUMENT_UNEXPECTED,
    ARGUMENT_VALUE,
    ARGUMENTS_UNPARSED,
    Cause,
)
from .matchers import CONTAINS, EQUAL, PatternCompiler
from .patterns import MISSING_ARGUMENT, UNEXPECTED, Difference, Equal, ValuePattern

_CAUSE_OF_DIFFERENCE = {MISSING_ARGUMENT: ARGUMENT_MISSING, UNEXPECTED: ARGUMENT_UNEXPECTED}


class ArgumentsPattern:
    """The arguments an expected call (or a ``called_tool_with``) requires.

    Each named argument must be sent with a matching value; others may be sent too, unless
    ``exact`` (``exact_args``). Top-level names follow the case's ``arg_names`` rule and an
    expected ``null`` its ``null_args`` rule. A call whose arguments could not be parsed
    (``None``) has no arguments: it matches only a pattern that names none.
    """

    __slots__ = (
        "checks",
        "error",
        "exact",
        "ignore_case",
        "items",
        "keys",
        "plain_lookup",
        "plain_values",
    )

    def __init__(
        self,
        required: Mapping[str, Any],
        options: MatchOptions,
        *,
        contains: bool,
        exact: bool = False,
        path: str = "",
        problems: Problems | None = None,
        strict: bool = True,
    ):
        compiler = PatternCompiler(
            options, problems if problems is not None else Problems(), strict=strict
        )
        mode = CONTAINS if contains else EQUAL
        items = [
            (name, options.arg_key(name), compiler.argument(value, field_path(path, name), mode))
            for name, value in required.items()
        ]
        # Set when a pattern cannot be evaluated (an RE2 pattern refused in a lenient load).
        self.error = "; ".join(compiler.unavailable) or None
        self.items: tuple[tuple[str, str, ValuePattern], ...] = tuple(items)
        self.keys = frozenset(key for _, key, _ in items)
        self.exact = exact
        self.ignore_case = options.ignore_arg_case
        # The hot path (exact names): plain values (see Equal.plain) are fetched with one
        # C-level lookup and compared as a tuple; the other patterns are asked one by one.
        plain = [(name, p.expected) for name, _, p in items if type(p) is Equal and p.plain]
        self.plain_lookup = itemgetter(*(name for name, _ in plain)) if plain else None
        # itemgetter of one name returns the value itself, of several a tuple
        self.plain_values = tuple(v for _, v in plain) if len(plain) != 1 else plain[0][1]
        self.checks = tuple(
            (name, pattern.matches)
            for name, _, pattern in items
            if not (type(pattern) is Equal and pattern.plain)
        )

    def sent(self, arguments: Mapping[str, Any], name: str, key: str) -> list[tuple[str, Any]]:
        """The recorded (name, value) pairs that stand for the expected argument ``name``:
        one at most, but under ignore_case a call may carry several spellings ("city" and
        "City")."""
        if not self.ignore_case:
            return [(name, arguments[name])] if name in arguments else []
        return [(arg, value) for arg, value in arguments.items() if arg.casefold() == key]

    def _values(self, arguments: Mapping[str, Any], name: str, key: str) -> list[Any]:
        return [value for _, value in self.sent(arguments, name, key)]

    def unexpected(self, arguments: Mapping[str, Any]) -> list[str]:
        """The recorded argument names ``exact_args`` forbids (none unless exact)."""
        if not self.exact:
            return []
        if self.ignore_case:
            return [name for name in arguments if name.casefold() not in self.keys]
        return [name for name in arguments if name not in self.keys]

    def matches(self, arguments: Mapping[str, Any] | None) -> bool:
        if arguments is None:
            return not self.items
        if self.ignore_case:
            for name, key, pattern in self.items:
                values = self._values(arguments, name, key)
                if not any(map(pattern.matches, values or (MISSING,))):
                    return False
        else:
            if self.plain_lookup is not None:
                try:
                    if self.plain_lookup(arguments) != self.plain_values:
                        return False
                except KeyError:  # an argument was not sent
                    return False
            for name, matches in self.checks:
                if not matches(arguments.get(name, MISSING)):
                    return False
        return not (self.exact and self.unexpected(arguments))

    def _failing(self, arguments: Mapping[str, Any]) -> list[tuple[str, ValuePattern, Any]]:
        failing = []
        for name, key, pattern in self.items:
            values = self._values(arguments, name, key) or [MISSING]
            if not any(map(pattern.matches, values)):
                failing.append((name, pattern, values[0]))
        return failing

    def mismatches(self, arguments: Mapping[str, Any] | None) -> int:
        """How many arguments fail (unparsed arguments count as all failing): a distance."""
        if arguments is None:
            return len(self.items)
        return len(self._failing(arguments)) + len(self.unexpected(arguments))

    def differences(self, arguments: Mapping[str, Any] | None) -> list[str]:
        """One sentence per failing argument; empty when ``arguments`` match."""
        if arguments is None:
            return [] if not self.items else ["the arguments could not be parsed as a JSON object"]
        found: list[str] = [
            pattern.difference(value, name) for name, pattern, value in self._failing(arguments)
        ]
        found.extend(
            Difference(name, "not expected (no other arguments allowed)", UNEXPECTED)
            for name in self.unexpected(arguments)
        )
        return found

    def cause(
        self, tool: str, arguments: Mapping[str, Any] | None, differences: list[str]
    ) -> Cause:
        """The cause of a call of ``tool`` failing this pattern: its first difference's
        kind and path (``differences`` as ``differences(arguments)`` gave them)."""
        if arguments is None:
            return Cause(ARGUMENTS_UNPARSED, tool)
        first = next((d for d in differences if isinstance(d, Difference)), None)
        if first is None:
            return Cause(ARGUMENT_VALUE, tool)
        return Cause(_CAUSE_OF_DIFFERENCE.get(first.kind, ARGUMENT_VALUE), tool, first.path)

    def describe(self) -> str:
        return ", ".join(f"{name}={pattern.describe()}" for name, _, pattern in self.items)

    def example(self) -> tuple[dict[str, Any], list[NoExample]]:
        """The plainest arguments this pattern accepts (docs/audit.md#the-reference-run),
        and why each argument left out of them has no example (each ``NoExample`` naming
        its argument)."""
        found: dict[str, Any] = {}
        missing: list[NoExample] = []
        for name, _, pattern in self.items:
            try:
                value = pattern.example()
            except NoExample as exc:
                missing.append(NoExample(f"{name}: {exc}", proven=exc.proven))
                continue
            if value is not MISSING:
                found[name] = value
        return found, missing


class AnyWhenNotRecorded:
    """``pattern``, which a call whose arguments were not recorded (``NOT_RECORDED``)
    satisfies too: how a run that lacks some arguments is judged on what it recorded
    (docs/matcher.md#content-not-captured)."""

    __slots__ = ("pattern",)

    def __init__(self, pattern: ArgumentsPattern | AnyWhenNotRecorded):
        self.pattern = pattern

    def __getattr__(self, name: str) -> Any:
        return getattr(self.pattern, name)

    def matches(self, arguments: Mapping[str, Any] | None) -> bool:
        return arguments is NOT_RECORDED or self.pattern.matches(arguments)
