"""Examples: a value each pattern accepts, for a case's own reference run (docs/audit.md).

An example is the plainest value a matcher accepts: a literal as written, the first
alternative of ``$one_of`` that has one, ``$approx``'s lower bound, ``$text``'s own text,
a value of ``$type``'s type, and nothing (absence) for ``$optional`` and ``$absent``.
A pattern with no example raises ``NoExample``, saying whether no value can match
(``proven``) or only that none was found.

``$regex`` takes the most work: its example is built from the pattern's syntax tree as
Python's ``re`` parser reads it (RE2's syntax mostly reads the same), a few candidates each
checked by RE2 itself. None matching is a proof that the pattern matches nothing only when
Python's ``re`` refuses them too: the candidates are built to match whatever Python's
reading of the pattern can match, anchors and word boundaries aside, so both refusing
means the anchors, boundaries or an empty class leave nothing to match. Where the two
readings part (RE2's ``\\pL``, ``[[:alpha:]]``, ``(?U)``), no example is claimed either way.
"""

from __future__ import annotations

import itertools
import re
import warnings
from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import TYPE_CHECKING, Any

# Python's own parser of regular expressions (``sre_parse``, a deprecated alias since 3.11).
if TYPE_CHECKING:  # typeshed types the aliases, which are the same modules
    import sre_constants as sre
    import sre_parse
else:
    from re import _constants as sre
    from re import _parser as sre_parse

# Whether a character is in a class of the pattern.
_CharTest = Callable[[str], bool]

# Candidates tried per pattern, and choices kept per position (a word character and one
# that is not, so that \b and \B can be met).
MAX_CANDIDATES = 256
CHOICES = 2
# Characters tried, in order, for ``.`` and classes that are not a plain list.
POOL = "a0 _A-.z9!\n\té"
# Where a negated class finds a member when the pool has none: every code point to U+3000,
# then one in each 4,096 up to the last (surrogates left out: not text).
_SCANNED = [
    *range(0x3000),
    *(n for n in range(0x3000, 0x110000, 0x1000) if not 0xD800 <= n <= 0xDFFF),
]


class NoExample(Exception):
    """A pattern has no example. ``proven``: no value can match it; otherwise none was
    found (the message says why)."""

    def __init__(self, message: str, *, proven: bool):
        super().__init__(message)
        self.proven = proven


def regex_example(source: str, fullmatch: Callable[[str], bool]) -> str:
    """A string that ``fullmatch`` (RE2's whole-text match of ``source``) accepts; raises
    ``NoExample``. Kept per pattern: suites repeat their patterns, and parsing one is most
    of the cost."""
    found = _example(source, fullmatch)
    if isinstance(found, NoExample):
        raise NoExample(str(found), proven=found.proven)
    return found


@lru_cache(maxsize=4096)
def _example(source: str, fullmatch: Callable[[str], bool]) -> str | NoExample:
    try:
        return _search(source, fullmatch)
    except NoExample as exc:
        return exc


def _search(source: str, fullmatch: Callable[[str], bool]) -> str:
    candidates = _candidates(source)
    if candidates is None:
        raise NoExample(
            f"/{source}/: no example could be built (syntax beyond Python's re)", proven=False
        )
    for candidate in candidates:
        if fullmatch(candidate):
            return candidate
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        python = re.compile(source, re.ASCII)  # parsed above, so it compiles
    if any(python.fullmatch(c) for c in candidates):
        raise NoExample(f"/{source}/: no example found that RE2 accepts", proven=False)
    raise NoExample(f"/{source}/ matches no text", proven=True)


def _candidates(source: str) -> list[str] | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # FutureWarning for "[[" and the like
            tree = sre_parse.parse(source, re.ASCII)
        # A SubPattern iterates by __getitem__, which typeshed's stub leaves out of it.
        nodes = list(tree)  # type: ignore[call-overload]
        return list(itertools.islice(_sequence(nodes), MAX_CANDIDATES))
    except (re.error, _Unsupported, RecursionError, OverflowError):
        return None


class _Unsupported(Exception):
    pass


def _sequence(items: list[Any]) -> Iterator[str]:
    options = [_choices(op, av) for op, av in items]
    for parts in itertools.product(*options):
        yield "".join(parts)


def _choices(op: sre._NamedIntConstant, av: Any) -> list[str]:
    """The strings one node of the syntax tree may stand for, plainest first."""
    if op is sre.LITERAL:
        return [chr(av)]
    if op is sre.NOT_LITERAL:
        return _members(lambda c: ord(c) != av)
    if op is sre.ANY:
        return ["a", " "]
    if op is sre.IN:
        return _members(_class_test(av))
    if op is sre.AT:
        return [""]
    if op is sre.BRANCH:
        found: list[str] = []
        for branch in av[1]:
            found.extend(itertools.islice(_sequence(list(branch)), CHOICES))
        return found
    if op is sre.SUBPATTERN:
        return list(itertools.islice(_sequence(list(av[-1])), CHOICES * 2))
    if op in (sre.MAX_REPEAT, sre.MIN_REPEAT) or op.name == "POSSESSIVE_REPEAT":
        low, high, inner = av
        body = list(itertools.islice(_sequence(list(inner)), CHOICES))
        if not body:  # nothing can repeat: only none of it
            return [""] if low == 0 else []
        counts = [low] if high == low else [low, low + 1]
        return [piece * count for count in counts for piece in body]
    raise _Unsupported(op)


def _members(test: _CharTest) -> list[str]:
    """Up to ``CHOICES`` characters that pass ``test``: from the pool, else the first found
    (none: a class no character is in, and no candidate goes through it)."""
    found = [c for c in POOL if test(c)][:CHOICES]
    return found or next(([chr(n)] for n in _SCANNED if test(chr(n))), [])


_CATEGORIES: dict[sre._NamedIntConstant, _CharTest] = {
    sre.CATEGORY_DIGIT: lambda c: "0" <= c <= "9",
    sre.CATEGORY_NOT_DIGIT: lambda c: not ("0" <= c <= "9"),
    sre.CATEGORY_SPACE: lambda c: c in " \t\n\r\f\v",
    sre.CATEGORY_NOT_SPACE: lambda c: c not in " \t\n\r\f\v",
    sre.CATEGORY_WORD: lambda c: c.isascii() and (c.isalnum() or c == "_"),
    sre.CATEGORY_NOT_WORD: lambda c: not (c.isascii() and (c.isalnum() or c == "_")),
}


def _is_code(code: int) -> _CharTest:
    return lambda c: ord(c) == code


def _in_range(bounds: tuple[int, int]) -> _CharTest:
    return lambda c: bounds[0] <= ord(c) <= bounds[1]


def _class_test(items: list[Any]) -> _CharTest:
    negated = False
    tests: list[_CharTest] = []
    for op, av in items:
        if op is sre.NEGATE:
            negated = True
        elif op is sre.LITERAL:
            tests.append(_is_code(av))
        elif op is sre.RANGE:
            tests.append(_in_range(av))
        elif op is sre.CATEGORY and av in _CATEGORIES:
            tests.append(_CATEGORIES[av])
        else:
            raise _Unsupported(op)
    return lambda c: any(test(c) for test in tests) != negated
