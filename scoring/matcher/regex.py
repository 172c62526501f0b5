"""RE2 patterns: linear-time matching, so a pattern from a suite can never hang scoring."""

from __future__ import annotations

from functools import lru_cache

import re2

# The scorer only asks yes/no questions, so it talks to RE2's binding directly: the
# package's Python wrapper builds match objects and offset tables that cost three times
# the match itself. (google-re2 is pinned; ``_re2`` is the binding its wrapper uses.)
_RE2 = re2._re2.RE2
_UNANCHORED = _RE2.Anchor.UNANCHORED
_ANCHOR_BOTH = _RE2.Anchor.ANCHOR_BOTH

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # RE2 would otherwise print every bad pattern to stderr
_OPTIONS.never_capture = True


class PatternError(ValueError):
    """A pattern RE2 cannot compile; the message says why."""


class Pattern:
    """A compiled RE2 pattern (RE2 syntax and semantics: ASCII ``\\d \\w \\s \\b``, ``$`` at
    the end of the text unless ``(?m)``)."""

    __slots__ = ("_regexp", "source")

    def __init__(self, source: str):
        self.source = source
        self._regexp = _RE2(source.encode("utf-8", "surrogatepass"), _OPTIONS)
        if not self._regexp.ok():  # Match() answers [(start, end)], (-1, -1) for no match
            raise PatternError(_explain(self._regexp.error()))

    def search(self, text: str) -> bool:
        """Whether the pattern matches anywhere in ``text``."""
        data = text.encode("utf-8", "surrogatepass")
        return self._regexp.Match(_UNANCHORED, data, 0, len(data))[0][0] != -1

    def search_bytes(self, data: bytes) -> bool:
        """Whether the pattern matches anywhere in UTF-8 ``data``."""
        return self._regexp.Match(_UNANCHORED, data, 0, len(data))[0][0] != -1

    def fullmatch(self, text: str) -> bool:
        """Whether the pattern matches the whole of ``text``."""
        data = text.encode("utf-8", "surrogatepass")
        return self._regexp.Match(_ANCHOR_BOTH, data, 0, len(data))[0][0] != -1


@lru_cache(maxsize=4096)
def compile_pattern(source: str) -> Pattern:
    """The compiled pattern, cached; raises ``PatternError`` if RE2 refuses it."""
    return Pattern(source)


def pattern_problem(source: str) -> str | None:
    """Why RE2 cannot compile ``source``, or None when it can."""
    try:
        compile_pattern(source)
    except PatternError as exc:
        return str(exc)
    return None


def _explain(reason: bytes | str) -> str:
    if isinstance(reason, bytes):
        reason = reason.decode("utf-8", "replace")
    hint = ""
    if "perl operator" in reason or "escape sequence: \\" in reason:
        hint = " (RE2 supports no lookaround and no backreferences)"
    return f"RE2 cannot compile this pattern: {reason}{hint}"
