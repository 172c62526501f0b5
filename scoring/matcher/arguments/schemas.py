"""A tool's input schema, compiled to validate recorded arguments (docs/matcher.md#schema-checks).

Validation is the ``jsonschema`` library's, in the dialect the schema's ``$schema`` names
(Draft 2020-12 when it names none, as MCP specifies; OpenAI's tools and most MCP servers
write 2020-12 or draft-07). Two things are bounded, as regexes are (regex.py):

- the schema: at most ``MAX_SCHEMA_NODES`` values and ``MAX_SCHEMA_DEPTH`` levels, and
  sound under its dialect's metaschema;
- the work: ``pattern`` and ``patternProperties`` (and ``additionalProperties``, which reads
  them) match with RE2, never Python's backtracking ``re``; ``uniqueItems`` compares items
  by a hash of their JSON meaning, in time linear in the array (jsonschema compares them
  pairwise: 6,000 objects took 46 s); every keyword checks a deadline, and so does
  ``uniqueItems`` as it goes, so validating one run's calls stops after ``time_limit``
  seconds.

jsonschema spends about 40 µs per property validated (a new validator object for each
step down), which made a checked run twenty times dearer than an unchecked one. So a
call's arguments are first asked of ``jsonschema_rs`` (the same dialects, in Rust, with a
linear-time regex engine), which answers "valid" in a few microseconds; jsonschema, the
reference, then judges and words only the calls it finds invalid. The fast answer is
taken only where its cost is bounded in advance: a schema whose only ``$ref``s point within
it without a cycle, expanded to at most ``MAX_SCHEMA_NODES`` values, on arguments small
enough that schema size times argument size stays under ``FAST_WORK_LIMIT``. Elsewhere
jsonschema alone decides, under its deadline.

``format`` is an annotation, as Draft 2020-12 makes it by default: it is not checked.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import cache, lru_cache
from itertools import islice
from typing import Any, Literal, NoReturn, TypeAlias
from urllib.parse import unquote

import jsonschema_rs
from jsonschema import ValidationError, validators
from jsonschema.exceptions import SchemaError, best_match
from referencing.exceptions import Unresolvable

from ..errors import field_path
from ..jsonvalue import is_finite_number, shorten
from ..regex import Pattern, PatternError, compile_pattern

MAX_SCHEMA_NODES = 20_000
MAX_SCHEMA_DEPTH = 64
# Schema values (``$ref``s expanded) times argument values: past it, no fast answer.
FAST_WORK_LIMIT = 5_000_000
# Errors read per call to choose the one to report (jsonschema's ``best_match``).
ERRORS_READ = 20

_DEADLINE: ContextVar[float] = ContextVar("schema_deadline", default=math.inf)

# jsonschema ships no types: a validator class of one of its dialects, and a keyword's
# check, which is given the validator, the keyword's value, the instance and the schema.
Dialect: TypeAlias = Any
Keyword: TypeAlias = Callable[[Any, Any, Any, Mapping[str, Any]], Iterator[ValidationError] | None]


class TooSlow(Exception):
    """Validation went past its deadline."""


@dataclass(frozen=True, slots=True)
class SchemaFailure:
    """Why one call's arguments are not valid: the JSON path of the value at fault
    (``""`` for the arguments object itself), the argument it names, and what the schema
    wanted, in jsonschema's words."""

    path: str
    argument: str | None
    message: str

    def describe(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


class ToolSchema:
    """One input schema, checked and compiled on construction: ``problem`` says why it
    cannot be used (too large, unsound, a pattern RE2 refuses), else ``failure`` checks
    arguments against it."""

    __slots__ = ("_expanded", "_fast", "_fast_partial", "_schema", "_validator", "problem")

    def __init__(self, schema: Mapping[str, Any]):
        self._validator: Any = None  # an instance of _validator_class
        self._fast: jsonschema_rs.Validator | None = None
        self._fast_partial: jsonschema_rs.Validator | Literal[False] | None = None
        self._schema = schema
        self._expanded = 0
        self.problem = _schema_problem(schema)
        if self.problem is None:
            self._validator = _validator_class(_dialect(schema))(schema)
            self._expanded = _expanded_size(schema)
            self._fast = _fast_validator(schema) if self._expanded else None

    def _surely_valid(self, arguments: Mapping[str, Any], partial: bool = False) -> bool:
        """Whether the fast validator, asked only where its work is bounded, finds
        ``arguments`` valid; ``partial``: by the schema without its top-level ``required``,
        made on first use (exactly what a partial check leaves out)."""
        if self._fast is None:
            return False
        fast = self._fast
        if partial:
            if self._fast_partial is None:
                lax = {k: v for k, v in self._schema.items() if k != "required"}
                self._fast_partial = _fast_validator(lax) or False
            if not self._fast_partial:
                return False
            fast = self._fast_partial
        budget = FAST_WORK_LIMIT // self._expanded
        return _within_size(arguments, budget) and fast.is_valid(arguments)

    def failure(
        self, arguments: Mapping[str, Any], *, partial: bool = False
    ) -> SchemaFailure | None:
        """Why ``arguments`` are not valid against the schema, or None when they are.
        ``partial``: they are some of a call's arguments, so a required one they lack is
        no failure (an audit checks an expected call's arguments so, docs/audit.md).

        Raises ``TooSlow`` past the deadline ``validating`` set, and ``SchemaUnusable``
        when the schema turns out unusable on these arguments (a ``$ref`` it cannot
        resolve, a value jsonschema cannot compare)."""
        if self._surely_valid(arguments, partial):
            return None
        try:
            errors: Iterator[Any] = islice(self._validator.iter_errors(arguments), ERRORS_READ)
            if partial:
                errors = (e for e in errors if e.validator != "required" or e.absolute_path)
            error = best_match(errors)
        except (Unresolvable, RecursionError, TypeError, InvalidOperation) as exc:
            raise SchemaUnusable(_unusable(exc)) from None
        if error is None:
            return None
        path = ""
        for part in error.absolute_path:
            path = field_path(path, part)
        return SchemaFailure(path, _argument(error, arguments), shorten(error.message, 200))


def _argument(error: ValidationError, arguments: Mapping[str, Any]) -> str | None:
    """The argument an error is about: the first step of its path, or for an error about
    the arguments object itself, the argument missing or not allowed."""
    if error.absolute_path:
        return str(error.absolute_path[0])
    if error.validator == "required":
        return next((name for name in error.validator_value if name not in arguments), None)
    if error.validator == "additionalProperties":
        allowed = error.schema.get("properties", {})
        return next((name for name in arguments if name not in allowed), None)
    return None


class SchemaUnusable(Exception):
    """The schema could not be applied to some arguments; the message says why."""


@contextmanager
def validating(seconds: float, deadline: float = math.inf) -> Iterator[None]:
    """``with validating(seconds):`` bounds every ``ToolSchema.failure`` within: past
    ``seconds`` from now (or ``deadline``, a ``time.monotonic()`` value, if sooner) it
    raises ``TooSlow``."""
    token = _DEADLINE.set(min(time.monotonic() + seconds, deadline))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def _unusable(exc: BaseException) -> str:
    if isinstance(exc, Unresolvable):
        return f"its $ref {exc.ref!r} cannot be resolved within the schema"
    if isinstance(exc, RecursionError):
        return "its $ref loops without end"
    return f"jsonschema could not apply it: {shorten(str(exc), 120)}"


def _dialect(schema: Mapping[str, Any]) -> Dialect:
    return validators.validator_for(schema, default=validators.Draft202012Validator)


def _schema_problem(schema: Mapping[str, Any]) -> str | None:
    size = _size_problem(schema)
    if size is not None:
        return size
    if "$schema" in schema and validators.validator_for(schema, default=None) is None:
        return (
            f"its $schema {shorten(str(schema['$schema']), 80)!r} is not a dialect Casebook knows"
        )
    dialect = _dialect(schema)
    try:
        dialect.check_schema(schema)
    except SchemaError as exc:
        where = "".join(f"[{p!r}]" for p in exc.absolute_path) or "the schema"
        return f"not a valid JSON Schema at {where}: {shorten(exc.message, 160)}"
    for pattern in _patterns(schema, 0):
        try:
            _re2(pattern)
        except PatternError as exc:
            return f"pattern {shorten(pattern, 60)!r}: {exc}"
    if _mixes_unevaluated_and_patterns(schema):
        return (
            "unevaluatedProperties beside patternProperties is not supported: jsonschema "
            "would match those patterns without RE2's time bound"
        )
    return None


def _fast_validator(schema: Mapping[str, Any]) -> jsonschema_rs.Validator | None:
    """jsonschema_rs's validator for ``schema``, or None where it cannot build one (it
    reads some schemas differently, and only a dict: jsonschema alone then decides).
    Nothing is fetched: formats are not checked, as in jsonschema; patterns use Rust's
    linear-time engine."""
    if not isinstance(schema, dict):
        return None
    try:
        return jsonschema_rs.validator_for(
            schema,
            validate_formats=False,
            retriever=_no_retrieval,
            pattern_options=jsonschema_rs.RegexOptions(),
        )
    except (jsonschema_rs.ValidationError, jsonschema_rs.ReferencingError, ValueError):
        return None


def _no_retrieval(uri: str) -> NoReturn:
    raise ValueError(f"{uri} is not fetched")


def _expanded_size(schema: Mapping[str, Any]) -> int:
    """How many values ``schema`` holds with each ``$ref`` replaced by what it points to,
    or 0 when that cannot be bounded: a ``$ref`` that is not a JSON pointer within the
    schema, that loops, a ``$dynamicRef`` or ``$recursiveRef``, or a total past
    ``MAX_SCHEMA_NODES``."""
    sizes: dict[str, int] = {}
    resolving: set[str] = set()

    def size(value: Any) -> int:
        if isinstance(value, Mapping):
            if "$dynamicRef" in value or "$recursiveRef" in value:
                raise _Unbounded
            total = 1 + sum(size(item) for item in value.values())
            ref = value.get("$ref")
            if isinstance(ref, str):
                total += target(ref)
        elif isinstance(value, list):
            total = 1 + sum(size(item) for item in value)
        else:
            total = 1
        if total > MAX_SCHEMA_NODES:
            raise _Unbounded
        return total

    def target(ref: str) -> int:
        if ref in sizes:
            return sizes[ref]
        if not ref.startswith("#") or ref in resolving:
            raise _Unbounded
        resolving.add(ref)
        sizes[ref] = size(_pointed(schema, ref[1:]))
        resolving.discard(ref)
        return sizes[ref]

    try:
        return size(schema)
    except _Unbounded:
        return 0


class _Unbounded(Exception):
    pass


def _pointed(schema: Any, pointer: str) -> Any:
    """The value a JSON pointer (RFC 6901; ``""`` is the whole) names in ``schema``."""
    value = schema
    for part in pointer.split("/")[1:] if pointer else ():
        part = unquote(part).replace("~1", "/").replace("~0", "~")
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            raise _Unbounded
    return value


def _within_size(value: Any, budget: int) -> bool:
    """Whether ``value`` holds at most ``budget`` values (run arguments are plain dicts
    and lists, so their types are compared, not ``isinstance``d: ten times faster)."""
    stack = [value]
    while stack:
        item = stack.pop()
        budget -= 1
        kind = type(item)
        if kind is dict:
            budget -= len(item)
            stack.extend(v for v in item.values() if type(v) is dict or type(v) is list)
        elif kind is list:
            budget -= len(item)
            stack.extend(v for v in item if type(v) is dict or type(v) is list)
        elif isinstance(item, Mapping):  # not from a run file: counted the slow way
            budget -= len(item)
            stack.extend(item.values())
        if budget < 0:
            return False
    return True


def _size_problem(schema: Any) -> str | None:
    nodes = 0
    stack = [(schema, 0)]
    while stack:
        value, depth = stack.pop()
        nodes += 1
        if nodes > MAX_SCHEMA_NODES:
            return f"larger than {MAX_SCHEMA_NODES:,} values, the limit for a tool's schema"
        if depth > MAX_SCHEMA_DEPTH:
            return f"nested deeper than {MAX_SCHEMA_DEPTH} levels, the limit for a tool's schema"
        if isinstance(value, Mapping):
            stack.extend((item, depth + 1) for item in value.values())
        elif isinstance(value, list):
            stack.extend((item, depth + 1) for item in value)
    return None


def _patterns(schema: Any, depth: int) -> Iterator[str]:
    """Every ``pattern`` and ``patternProperties`` key in the schema (a walk over all of
    it: a value of a keyword that is not a schema can only add patterns that are never
    used, which costs nothing but a check)."""
    if isinstance(schema, Mapping):
        pattern = schema.get("pattern")
        if isinstance(pattern, str):
            yield pattern
        properties = schema.get("patternProperties")
        if isinstance(properties, Mapping):
            yield from (key for key in properties if isinstance(key, str))
        for value in schema.values():
            yield from _patterns(value, depth + 1)
    elif isinstance(schema, list):
        for value in schema:
            yield from _patterns(value, depth + 1)


def _mixes_unevaluated_and_patterns(schema: Mapping[str, Any]) -> bool:
    found = {"unevaluatedProperties": False, "patternProperties": False}
    stack: list[Any] = [schema]
    while stack:
        value = stack.pop()
        if isinstance(value, Mapping):
            for key in found:
                found[key] = found[key] or key in value
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return all(found.values())


@lru_cache(maxsize=512)
def _re2(pattern: str) -> Pattern:
    return compile_pattern(pattern)


def _bounded(keyword: Keyword) -> Keyword:
    """``keyword``, checking the deadline each time it is applied."""

    def check(
        validator: Any, value: Any, instance: Any, schema: Mapping[str, Any]
    ) -> Iterator[ValidationError] | None:
        if time.monotonic() > _DEADLINE.get():
            raise TooSlow
        return keyword(validator, value, instance, schema)

    return check


def _pattern(
    validator: Any, pattern: str, instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and not _re2(pattern).search(instance):
        yield ValidationError(f"{shorten(instance, 60)!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, patterns: Mapping[str, Any], instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if _re2(pattern).search(key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(
    validator: Any, additional: Any, instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    properties = schema.get("properties", {})
    patterns = [_re2(p) for p in schema.get("patternProperties", {})]
    extras = sorted(
        (
            key
            for key in instance
            if key not in properties and not any(p.search(key) for p in patterns)
        ),
        key=str,
    )
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif additional is False and extras:
        listed = ", ".join(repr(extra) for extra in extras)
        verb = "was" if len(extras) == 1 else "were"
        yield ValidationError(f"Additional properties are not allowed ({listed} {verb} unexpected)")


# Items of an array ``uniqueItems`` reads between two looks at the deadline.
_ITEMS_PER_CHECK = 256


def _unique_items(
    validator: Any, unique: bool, instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    """``uniqueItems``, each item reduced to a hashable form of its JSON meaning (as
    jsonschema's ``equal`` has it: ``1`` and ``1.0`` alike, ``true`` and ``1`` not, objects
    whatever their keys' order), so that an array costs time linear in its size."""
    if not unique or not validator.is_type(instance, "array"):
        return
    seen: dict[Any, int] = {}
    for index, item in enumerate(instance):
        if index % _ITEMS_PER_CHECK == 0 and time.monotonic() > _DEADLINE.get():
            raise TooSlow
        key = _meaning(item)
        first = seen.setdefault(key, index)
        if first != index:
            yield ValidationError(
                f"items {first} and {index} are equal ({shorten(repr(item), 60)}): the "
                "array has non-unique elements"
            )
            return


def _meaning(value: Any) -> Any:
    """A hashable value equal for values equal by JSON meaning, and only for them."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or value is None:
        return (value,)  # apart from 1, 0 and the strings
    if isinstance(value, Mapping):
        return frozenset((key, _meaning(item)) for key, item in value.items())
    if isinstance(value, list | tuple):
        return tuple(_meaning(item) for item in value)
    return ("number", value)  # 1, 1.0 and Decimal("1.0") hash and compare alike


def _is_integer(checker: Any, instance: Any) -> bool:
    """Integers as JSON means them: ``5``, ``5.0`` and an exact ``Decimal('5E+3')``."""
    if isinstance(instance, bool):
        return False
    if isinstance(instance, int):
        return True
    return (
        isinstance(instance, float | Decimal)
        and is_finite_number(instance)
        and instance == int(instance)
    )


@cache
def _validator_class(dialect: Dialect) -> Dialect:
    keywords = {name: _bounded(check) for name, check in dialect.VALIDATORS.items()}
    for name, check in (
        ("pattern", _pattern),
        ("patternProperties", _pattern_properties),
        ("additionalProperties", _additional_properties),
        ("uniqueItems", _unique_items),
    ):
        if name in keywords:
            keywords[name] = _bounded(check)
    return validators.extend(
        dialect,
        keywords,
        type_checker=dialect.TYPE_CHECKER.redefine("integer", _is_integer),
    )
