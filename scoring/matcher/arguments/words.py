"""Required arguments read as words, for people: ``city ≈ "paris" (ignoring case)``,
``amount = 12.5 ± 0.1``, ``date matches /2024-\\d\\d-\\d\\d/``.

Each argument is compiled as scoring compiles it, and the value part is the pattern's own
``describe``, the words report labels use, so a page cannot word a matcher otherwise than
the report does. A malformed matcher (an editor's draft) reads as the JSON it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import Problems
from ..jsonvalue import render_short
from ..options import MatchOptions
from .matchers import EQUAL, PatternCompiler
from .patterns import (
    Absent,
    Equal,
    NullOrAbsent,
    OneOf,
    OptionalPattern,
    Regex,
    Subset,
    Text,
    TypeIs,
    ValuePattern,
)

SHOWN = 200  # characters of a plain expected value; a matcher's words are its own


def describe_arguments(
    required_args: Mapping[str, Any], options: MatchOptions | None = None
) -> tuple[str, ...]:
    """One phrase per required argument, in order: what it must be, in words."""
    compiler = PatternCompiler(options or MatchOptions(), Problems(), strict=False)
    return tuple(
        _phrase(str(name), compiler.argument(value, str(name), EQUAL))
        for name, value in required_args.items()
    )


def _phrase(name: str, pattern: ValuePattern) -> str:
    if type(pattern) is Equal:
        return f"{name} = {render_short(pattern.expected, SHOWN)}"
    if isinstance(pattern, OptionalPattern):
        return f"{_phrase(name, pattern.inner)}, or not sent"
    if isinstance(pattern, Absent):
        return f"{name} not sent"
    if isinstance(pattern, NullOrAbsent):
        return f"{name} is null or not sent"
    if isinstance(pattern, Text):
        return f"{name} ≈ {pattern.describe()}"
    if isinstance(pattern, Regex):
        return f"{name} matches {pattern.describe()}"
    if isinstance(pattern, OneOf | TypeIs):
        return f"{name} is {pattern.describe()}"
    if isinstance(pattern, Subset):
        return f"{name} contains {pattern.inner.describe()}"
    return f"{name} = {pattern.describe()}"  # $approx, or an object or array with matchers
