"""RE2 patterns: linear-time matching, so a pattern from a suite can never hang scoring."""

from __future__ import annotations

from functools import lru_cache

import re2

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # RE2 would otherwise print every bad pattern to stderr


class PatternError(ValueError):
    """A pattern RE2 cannot compile; the message says why."""


@lru_cache(maxsize=4096)
def compile_pattern(pattern: str):
    """The compiled RE2 pattern, cached; raises ``PatternError`` if RE2 refuses it."""
    try:
        return re2.compile(pattern, _OPTIONS)
    except re2.error as exc:
        raise PatternError(_explain(exc)) from None


def pattern_problem(pattern: str) -> str | None:
    """Why RE2 cannot compile ``pattern``, or None when it can."""
    try:
        compile_pattern(pattern)
    except PatternError as exc:
        return str(exc)
    return None


def _explain(exc: Exception) -> str:
    reason = exc.args[0] if exc.args else str(exc)
    if isinstance(reason, bytes):
        reason = reason.decode("utf-8", "replace")
    hint = ""
    if "perl operator" in reason or "escape sequence: \\" in reason:
        hint = " (RE2 supports no lookaround and no backreferences)"
    return f"RE2 cannot compile this pattern: {reason}{hint}"
