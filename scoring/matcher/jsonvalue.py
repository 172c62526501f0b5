"""JSON values: parsing without losing numbers, equality by JSON meaning, and rendering.

JSON values here are what a JSON parser produces: ``None``, ``bool``, ``int``, ``float``,
``Decimal`` (numbers a float cannot hold exactly), ``str``, ``list`` and ``dict``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from types import MappingProxyType
from typing import Any

import msgspec
import orjson

from .documents import parse_json_document
from .errors import InvalidInput, field_path
from .regex import Pattern

# Number literals a float would round: 16+ digits in a row (big integers, long fractions)
# or a three-digit exponent. Lines holding one take the exact (slower) parser; the check is
# on raw bytes, so a long digit run inside a string only costs speed, never correctness.
# RE2's automaton scans for it fifteen times faster than Python's re.
_NEEDS_EXACT_NUMBERS = Pattern(r"[0-9]{16}|[0-9.][eE][-+]?[0-9]{3}")

_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")

_NUMBER_TYPES = (int, float, Decimal)
_SCALAR_TYPES = frozenset({str, bool, int, float, Decimal, type(None)})


class _Missing:
    """The value of an argument that was not sent (distinct from ``null``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()
# The arguments of a call whose recording left them out, as the scorer's second look at a
# run sees them (docs/matcher.md#content-not-captured): no arguments, and not ``None``.
NOT_RECORDED: Mapping[str, Any] = MappingProxyType({})


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _fraction_as_written(literal: str) -> float | Decimal:
    """A JSON fraction, given as its text: a float where the float is the written value,
    else a ``Decimal`` (``number_as_parsed``)."""
    # Up to 15 significant digits and no exponent, the float is always the written value
    # (DBL_DIG): no Decimal needs building to tell.
    if len(literal) <= 16 and "e" not in literal and "E" not in literal:
        return float(literal)
    return number_as_parsed(_decimal(literal))


def _decimal(literal: str) -> Decimal:
    """The exact value of a JSON fraction; ValueError (invalid JSON, said where) for one
    whose exponent no ``Decimal`` holds (past 10**999999)."""
    try:
        return Decimal(literal)
    except InvalidOperation:
        shown = literal if len(literal) <= 40 else f"{literal[:40]}…"
        raise ValueError(f"the number {shown} is out of range") from None


# msgspec reads integers of any size exactly and hands each fraction over as its text, so
# numbers are exact in one pass in C, with no scan of the text for long numbers first.
_DECODER = msgspec.json.Decoder(float_hook=_fraction_as_written)


def parse_json(data: bytes | str) -> Any:
    """Parse one JSON document; numbers keep their exact written value: integers exact,
    a fraction a float where the float is the written value, else a ``Decimal``.

    Raises ``InvalidInput`` with the parser's message (NaN and Infinity are refused).
    """
    try:
        return _DECODER.decode(data)  # a string as it is: msgspec reads its UTF-8 in place
    except (msgspec.DecodeError, ValueError, RecursionError):  # UnicodeDecodeError is one
        # A string holding a lone surrogate has no UTF-8 (msgspec raises
        # UnicodeEncodeError): written with surrogatepass, the parsers say where it is.
        raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
        return _parse_refused(raw)


def _parse_refused(raw: bytes) -> Any:
    """What msgspec refused (invalid JSON, a lone surrogate, nesting past its recursion
    limit), parsed again for the message: orjson's, or for a document with long numbers
    the standard parser's (orjson would round them), says what is wrong and where."""
    try:
        if not _NEEDS_EXACT_NUMBERS.search_bytes(raw):
            return orjson.loads(raw)
        value = json.loads(raw, parse_float=_decimal, parse_constant=_reject_constant)
        # orjson refuses lone surrogates ("\ud800" unpaired); the exact parser must too.
        if _SURROGATE_ESCAPE.search(raw) and lone_surrogate_path(value) is not None:
            raise ValueError("a string holds a lone surrogate (not valid Unicode)")
        return value
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, UnicodeDecodeError, ...
        not_a_value = _not_a_value(raw, exc)
        if not_a_value:
            raise InvalidInput.single("", not_a_value) from None
        raise InvalidInput.single(
            "", f"invalid JSON: {_parser_message(_utf8_error(raw) or exc)}"
        ) from None


def number_as_parsed(value: int | Decimal) -> int | float | Decimal:
    """A number from a parser that gives fractions as ``Decimal`` (ijson), as ``parse_json``
    would give it: a fraction is a float unless the float would not be its written value
    (too many digits, an exponent past a float's)."""
    if type(value) is Decimal:
        as_float = float(value)
        if math.isfinite(as_float) and Decimal(repr(as_float)) == value:
            return as_float
    return value


def lone_surrogate_path(value: Any, path: str = "") -> str | None:
    """The path of the first string (or key) holding a lone surrogate, or None."""
    if isinstance(value, str):
        return None if _encodes(value) else path
    if isinstance(value, Mapping):
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            if not _encodes(str(key)):
                return where
            found = lone_surrogate_path(item, where)
            if found is not None:
                return found
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            found = lone_surrogate_path(item, f"{path}[{index}]")
            if found is not None:
                return found
    return None


def duplicate_key(raw: bytes, value: Any) -> tuple[str, str] | None:
    """(the object's path, the key) of the first object that the JSON text ``raw`` (parsed
    as ``value``, the last of a key's values standing) names a key twice in; else None.

    Checked by counting colons, in C: outside strings, JSON has one per key, and the parsed
    value written back has one fewer for each key named twice (and the colons of the
    value it dropped) — the colons inside strings stay as they are, unless written as an
    escape (``\\u003a``), which takes the exact, slower parse below. Costs a compact
    dump of the value: a tenth of parsing and loading a run. A line written as that dump
    is (compact JSON, as orjson and Casebook write it) names no key twice, and comparing
    it costs less than counting the colons; so does a line that is that dump once its
    white space is taken out (json.dumps's spacing, ``_same_tokens``).
    """
    dumped = dump_json(value)
    if raw.startswith(dumped) and not raw[len(dumped) :].strip():
        return None
    # A line with escapes holds text (a transcript's \\n, json.dumps's \\u for non-ASCII):
    # long strings, which msgspec steps over faster than counting their colons. Lines
    # without (memchr finds none) have short tokens, and counting costs less there; so do
    # lines whose non-ASCII text is written as \\u escapes, which no compact dump matches
    # (writing the dump's characters as escapes to compare costs more than counting).
    escapes = b"\\" in raw
    if escapes and (dumped.isascii() or not raw.isascii()) and _same_tokens(raw, dumped):
        return None
    escaped_colon = escapes and b"\\u003" in raw
    if not escaped_colon and raw.count(b":") == dumped.count(b":"):
        return None
    return _first_duplicate(parse_json_document(raw), "")


def _same_tokens(raw: bytes, dumped: bytes) -> bool:
    """Whether the JSON text ``raw``, its white space taken out, is ``dumped`` (the compact
    dump of its value): then it names the same keys as the value, none twice.

    White space is taken out in C (msgspec keeps every token as written, keys named twice
    included), at a third of the cost of counting the colons of both texts."""
    try:
        return msgspec.json.format(raw, indent=-1) == dumped
    except msgspec.DecodeError:  # what only the slower parsers read (a lone surrogate)
        return False


def _first_duplicate(value: Any, path: str) -> tuple[str, str] | None:
    if isinstance(value, Mapping):
        duplicates = getattr(value, "duplicate_keys", ())
        if duplicates:
            return path, duplicates[0]
        items = ((field_path(path, key), item) for key, item in value.items())
    elif isinstance(value, list):
        items = ((field_path(path, index), item) for index, item in enumerate(value))
    else:
        return None
    for where, item in items:
        found = _first_duplicate(item, where)
        if found is not None:
            return found
    return None


def nested_deeper_than(raw: bytes, limit: int) -> bool:
    """Whether the JSON text ``raw`` (valid JSON) nests arrays and objects more than
    ``limit`` deep (a scalar is at depth 0, ``[1]`` at depth 1).

    Read by RE2 in one pass over the bytes: nesting bounded by ``limit`` is a regular
    language, so an automaton of ``limit`` levels (strings skipped whole, brackets inside
    them ignored) matches exactly the texts within it. Cutting the strings out with bytes
    operations instead cost three times as much; walking the parsed value, more still.
    """
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return False
    return not _within_depth(limit).fullmatch_bytes(raw)


# Every byte but those that tell a JSON text's objects, arrays and strings apart.
_NOT_STRUCTURE = bytes(byte for byte in range(256) if byte not in b'"{[')


def json_containers(raw: bytes, enough: int) -> int:
    """How many objects and arrays the JSON text ``raw`` holds, without parsing it: its
    ``{`` and ``[`` outside strings. Counted exactly (for valid JSON) only when those
    anywhere in it pass ``enough``: a string's count as well bounds it from above, in one
    pass of C. Escaped quotes and backslashes are dropped first, so that every ``"`` left
    opens or closes a string."""
    anywhere = raw.count(b"{") + raw.count(b"[")
    if anywhere <= enough:
        return anywhere
    bare = raw.replace(b"\\\\", b"").replace(b'\\"', b"").translate(None, _NOT_STRUCTURE)
    return sum(len(outside) for outside in bare.split(b'"')[::2])


@lru_cache(maxsize=8)
def _within_depth(limit: int) -> Pattern:
    string = r'"(?:[^"\\]|\\.)*"'
    other = r'[^\[\]{}"]'
    level = f"(?:{other}|{string})*"  # depth 0: no brackets outside strings
    for _ in range(limit):
        level = f"(?:{other}|{string}|[\\[{{]{level}[\\]}}])*"
    return Pattern(level, over_bytes=True)


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _utf8_error(raw: bytes) -> UnicodeDecodeError | None:
    """orjson reports bad UTF-8 vaguely; the codec says which byte, where."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc
    return None


_SINGLE_LINE_POSITION = re.compile(r"line 1 column (\d+) \(char \d+\)$")


# The parsers' words for text that starts no JSON value ("invalid literal, expected 'null'"
# for "not json": they guess the word meant), and what such text is, for the message.
_NOT_A_VALUE = ("invalid literal", "unexpected character, expected a JSON value", "Expecting value")
_WORD = re.compile(r"[^\s,:\[\]{}\"]{1,30}")
_VALUES = "an object, array, string, number, true, false or null"


def _not_a_value(raw: bytes, exc: BaseException) -> str | None:
    """Where the text holds something that starts no JSON value: said plainly ("not JSON:
    `not` at column 1 …"), not as the parser's guess at the word meant. None otherwise."""
    position = getattr(exc, "pos", None)
    if not isinstance(exc, json.JSONDecodeError) or position is None:
        return None
    if not str(exc).startswith(_NOT_A_VALUE) or b"\n" in raw.rstrip(b"\r\n"):
        return None
    text = raw.decode("utf-8", "replace")  # the parsers count characters
    word = _WORD.match(text, position)
    shown = word.group() if word else text[position : position + 1]
    whole = "not JSON" if not text[:position].strip() else "invalid JSON"
    column = getattr(exc, "colno", position + 1)
    return f"{whole}: `{shown}` at column {column} is not a JSON value ({_VALUES})"


def _parser_message(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    if isinstance(exc, UnicodeDecodeError):
        return f"not valid UTF-8 (byte 0x{exc.object[exc.start]:02x} at offset {exc.start})"
    if type(exc) is ValueError:  # a number past Python's int digits: no advice to programmers
        return str(exc).split(";")[0]
    # A one-line document (a JSON-lines record) is located by column alone.
    return _SINGLE_LINE_POSITION.sub(r"at column \1", str(exc))


def dump_json(value: Any) -> bytes:
    """Compact JSON text for ``value``, keys in their order, numbers exactly as they are.

    ``parse_json`` reads it back to an equal value: a ``Decimal`` is written with all its
    digits and an integer beyond 64 bits in full, which orjson cannot do, so documents
    holding one take a slower path.
    """
    try:
        return orjson.dumps(value)
    except TypeError:
        return _dump_exact(value).encode()


def pretty_json(value: Any) -> bytes:
    """JSON text for people: indented by two, ending in a newline. A value holding numbers
    orjson cannot write exactly is written unindented, numbers kept."""
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2) + b"\n"
    except TypeError:
        return dump_json(value) + b"\n"


def _dump_exact(value: Any) -> str:
    if type(value) is int:  # orjson refuses integers beyond 64 bits
        return str(value)
    if type(value) is Decimal:
        if not value.is_finite():
            raise TypeError(f"{value} is not a JSON number")
        return str(value)
    if isinstance(value, Mapping):
        items = (f"{_dump_exact(str(k))}:{_dump_exact(v)}" for k, v in value.items())
        return "{" + ",".join(items) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(_dump_exact(item) for item in value) + "]"
    return orjson.dumps(value).decode()


def is_number(value: Any) -> bool:
    """True for JSON numbers; booleans are not numbers."""
    return type(value) in _NUMBER_TYPES


def to_decimal(number: int | float | Decimal) -> Decimal:
    """The exact decimal value of a JSON number; a float is read as its shortest repr."""
    if type(number) is float:
        return Decimal(repr(number))
    return Decimal(number)


def is_finite_number(value: Any) -> bool:
    if type(value) is float:
        return math.isfinite(value)
    if type(value) is Decimal:
        return value.is_finite()
    return type(value) is int


def json_equal(a: Any, b: Any) -> bool:
    """Equality by JSON meaning (docs/matcher.md#value-equality).

    Numbers are equal when numerically equal (``2 == 2.0``), exactly; a boolean never
    equals a number; strings compare code point by code point; arrays element by element;
    objects by key set and values, in any order.
    """
    ta, tb = type(a), type(b)
    if ta is tb:
        if ta is dict:
            if len(a) != len(b):
                return False
            for key, value in a.items():
                other = b.get(key, MISSING)
                if other is MISSING or not json_equal(value, other):
                    return False
            return True
        if ta is list:
            if len(a) != len(b):
                return False
            for x, y in zip(a, b, strict=True):  # noqa: SIM110 - a loop is faster than all()
                if not json_equal(x, y):
                    return False
            return True
        if ta in _SCALAR_TYPES:
            equal: bool = a == b  # one scalar type: Python's == is exact here
            return equal
    if ta in _NUMBER_TYPES and tb in _NUMBER_TYPES:
        return to_decimal(a) == to_decimal(b)
    if isinstance(a, list | tuple):
        return (
            isinstance(b, list | tuple)
            and len(a) == len(b)
            and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
        )
    if isinstance(a, Mapping):
        return (
            isinstance(b, Mapping)
            and len(a) == len(b)
            and all(key in b and json_equal(value, b[key]) for key, value in a.items())
        )
    return False


def python_equality_suffices(value: Any) -> bool:
    """Whether Python's ``==`` against ``value`` is equality by JSON meaning.

    Python errs in two places only: a boolean equals 0 and 1 (``True == 1``), and numbers
    of mixed types compare as binary values (``2**60 == 2.0**60``, ``Decimal("0.1") !=
    0.1``) where JSON meaning compares written decimals. A value without booleans, floats,
    Decimals, or integers that are 0, 1 or beyond 2**53 avoids both, so matching can
    compare it in C instead of walking it.
    """
    t = type(value)
    if t is str or value is None:
        return True
    if t is int:
        number: int = value
        return 1 < abs(number) < 2**53 or number == -1
    if isinstance(value, Mapping):
        return all(python_equality_suffices(item) for item in value.values())
    if isinstance(value, list):
        return all(python_equality_suffices(item) for item in value)
    return False  # booleans, floats, Decimals, tuples


def json_type(value: Any) -> str:
    """The JSON type name of a value, as JSON Schema spells it (``integer`` aside)."""
    if value is None:
        return "null"
    t = type(value)
    if t is bool:
        return "boolean"
    if t in _NUMBER_TYPES:
        return "number"
    if t is str:
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return t.__name__


def render(value: Any) -> str:
    """Compact JSON text for a value, for labels and details (non-ASCII kept as is)."""
    if value is MISSING:
        return "(absent)"
    if value is None:
        return "null"
    t = type(value)
    if t is bool:
        return "true" if value else "false"
    if t is int or t is Decimal:
        return str(value)
    if t is float:
        return repr(value)
    if t is str:
        try:
            return orjson.dumps(value).decode()
        except TypeError:  # a lone surrogate: escape it rather than fail
            return json.dumps(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(render(item) for item in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{render(str(k))}: {render(v)}" for k, v in value.items()) + "}"
    return repr(value)


def shorten(text: str, limit: int = 60) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis, for one-line summaries."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def render_short(value: Any, limit: int = 60) -> str:
    return shorten(render(value), limit)
