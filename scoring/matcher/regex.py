"""RE2 patterns: linear-time matching, so a pattern from a suite can never hang scoring.

Linear in the text, but not free in the pattern: matching costs up to the pattern's
compiled size times the text's length when RE2's fast automaton (DFA) runs out of memory
and RE2 falls back to simulating the program. A 50,000-character literal, or ``\\w{1000}``
five times over (15,000 instructions), takes a minute or more on a 1 MB text that way. So
a pattern is refused past ``max_length`` characters (a setting of the app:
``limit_patterns``) and past ``MAX_PROGRAM_SIZE`` instructions, and RE2 is given
``MAX_MEM`` per pattern: within both limits its DFA fits, and a match on a 1 MB text takes
at most a few hundredths of a second (measured).
"""

from __future__ import annotations

from functools import lru_cache

import re2

from .examples import regex_example

# The scorer only asks yes/no questions, so it talks to RE2's binding directly: the
# package's Python wrapper builds match objects and offset tables that cost three times
# the match itself. (google-re2 is pinned; ``_re2`` is the binding its wrapper uses.)
_RE2 = re2._re2.RE2
_UNANCHORED = _RE2.Anchor.UNANCHORED
_ANCHOR_BOTH = _RE2.Anchor.ANCHOR_BOTH

# RE2's memory per pattern: the program and the DFA's cache of states. Less starves the
# DFA into the slow fallback (``(?i)(a|b){1000}c`` takes 50 s per MB at 2 MiB, 0.06 s at 8).
MAX_MEM = 8 << 20
MAX_PROGRAM_SIZE = 2000  # RE2 instructions: ``\\w{600}`` is 1,805, a 1,000-letter literal 1,004
DEFAULT_MAX_LENGTH = 1000

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # RE2 would otherwise print every bad pattern to stderr
_OPTIONS.never_capture = True
_OPTIONS.max_mem = MAX_MEM
_max_length = DEFAULT_MAX_LENGTH

# For patterns over raw bytes (JSON text): each byte a character, ``.`` any of them.
_BYTE_OPTIONS = re2.Options()
_BYTE_OPTIONS.log_errors = False
_BYTE_OPTIONS.never_capture = True
_BYTE_OPTIONS.encoding = re2.Options.Encoding.LATIN1
_BYTE_OPTIONS.dot_nl = True
_BYTE_OPTIONS.max_mem = MAX_MEM


def limit_patterns(max_length: int) -> None:
    """Refuse patterns longer than ``max_length`` characters from now on (the app sets its
    ``CASEBOOK_MAX_PATTERN_LENGTH`` here; the default is 1,000)."""
    global _max_length
    _max_length = max_length


class PatternError(ValueError):
    """A pattern RE2 cannot compile; the message says why."""


class Pattern:
    """A compiled RE2 pattern (RE2 syntax and semantics: ASCII ``\\d \\w \\s \\b``, ``$`` at
    the end of the text unless ``(?m)``)."""

    __slots__ = ("_regexp", "source")

    def __init__(self, source: str, *, over_bytes: bool = False):
        """``over_bytes``: the pattern reads bytes, each a character (``*_bytes`` below),
        rather than UTF-8 text."""
        self.source = source
        options = _BYTE_OPTIONS if over_bytes else _OPTIONS
        self._regexp = _RE2(source.encode("utf-8", "surrogatepass"), options)
        if not self._regexp.ok():  # Match() answers [(start, end)], (-1, -1) for no match
            raise PatternError(_explain(self._regexp.error()))

    def search(self, text: str) -> bool:
        """Whether the pattern matches anywhere in ``text``."""
        data = text.encode("utf-8", "surrogatepass")
        start: int = self._regexp.Match(_UNANCHORED, data, 0, len(data))[0][0]
        return start != -1

    def search_bytes(self, data: bytes) -> bool:
        """Whether the pattern matches anywhere in UTF-8 ``data``."""
        start: int = self._regexp.Match(_UNANCHORED, data, 0, len(data))[0][0]
        return start != -1

    def fullmatch_bytes(self, data: bytes) -> bool:
        """Whether the pattern matches the whole of ``data``."""
        start: int = self._regexp.Match(_ANCHOR_BOTH, data, 0, len(data))[0][0]
        return start != -1

    def fullmatch(self, text: str) -> bool:
        """Whether the pattern matches the whole of ``text``."""
        data = text.encode("utf-8", "surrogatepass")
        start: int = self._regexp.Match(_ANCHOR_BOTH, data, 0, len(data))[0][0]
        return start != -1

    def example(self) -> str:
        """A text the pattern matches as a whole; ``NoExample`` when none is found
        (``examples``)."""
        return regex_example(self.source, self.fullmatch)


def compile_pattern(source: str) -> Pattern:
    """The compiled pattern, cached; raises ``PatternError`` if RE2 refuses it or it is past
    the limits on length and compiled size."""
    if len(source) > _max_length:
        raise PatternError(
            f"the pattern is {len(source):,} characters; the limit is {_max_length:,}"
        )
    return _compile(source)


@lru_cache(maxsize=4096)
def _compile(source: str) -> Pattern:
    pattern = Pattern(source)
    size = pattern._regexp.ProgramSize()
    if size > MAX_PROGRAM_SIZE:
        raise PatternError(
            f"the pattern is too costly to match: RE2 compiles it to {size:,} instructions, "
            f"the limit is {MAX_PROGRAM_SIZE:,} (each repetition of a counted repeat such as "
            "{1000} costs its own)"
        )
    return pattern


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
