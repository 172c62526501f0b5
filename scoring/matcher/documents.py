"""Reading suite documents from JSON or YAML text.

Both parsers mark objects that name a key twice (JSON and YAML parsers otherwise keep the
last silently) so validation can report them by path. YAML is read as plain data in the
spirit of YAML 1.2: ``yes``/``no``/``on``/``off`` stay strings, and dates stay strings
(``date: 2024-05-20`` is the string an argument expects, not a datetime).
"""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal
from typing import Any

import yaml

from .errors import InvalidInput


class KeyedObject(dict[str, Any]):
    """A parsed JSON object that named some keys more than once (the last value stands)."""

    duplicate_keys: tuple[str, ...] = ()


def _object_with_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = KeyedObject(pairs) if len({key for key, _ in pairs}) != len(pairs) else dict(pairs)
    if isinstance(obj, KeyedObject):
        seen: set[str] = set()
        duplicates: list[str] = []
        for key, _ in pairs:
            if key in seen:
                duplicates.append(key)
            else:
                seen.add(key)
        obj.duplicate_keys = tuple(duplicates)
    return obj


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def parse_json_document(text: str | bytes) -> Any:
    """Parse a JSON suite document, marking duplicate keys; numbers stay exact."""
    try:
        return json.loads(
            text,
            object_pairs_hook=_object_with_duplicates,
            parse_float=_float_or_decimal,
            parse_constant=_reject_constant,
        )
    except RecursionError:
        raise InvalidInput.single("", "invalid JSON: nested too deeply") from None
    except ValueError as exc:
        raise InvalidInput.single("", f"invalid JSON: {exc}") from None


def _float_or_decimal(text: str) -> float | Decimal:
    number = float(text)
    # Keep the written value when a float would not read back as it
    # (docs/formats.md#file-shapes).
    if math.isfinite(number) and Decimal(repr(number)) == Decimal(text):
        return number
    return Decimal(text)


class _SuiteLoader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2 booleans, no timestamps, duplicate keys marked, and no
    aliases."""

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        # ``*ref`` lets a few bytes expand to millions of values ("billion laughs"), and
        # suite files have no need of it.
        if self.check_event(yaml.AliasEvent):
            # The PyYAML stubs leave peek_event untyped.
            mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
            raise yaml.composer.ComposerError(
                None, None, "aliases (*name) are not supported in suite files", mark
            )
        return super().compose_node(parent, index)


_REPLACED_TAGS = {f"tag:yaml.org,2002:{name}" for name in ("bool", "int", "float", "timestamp")}
_SuiteLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag not in _REPLACED_TAGS]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
# YAML 1.2 core schema scalars, as JSON reads them: decimal integers (a leading zero is
# not octal), floats with or without a dot (1e5), and only true/false as booleans.
_SuiteLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)
_SuiteLoader.add_implicit_resolver(
    "tag:yaml.org,2002:int", re.compile(r"^[-+]?[0-9]+$"), list("-+0123456789")
)
_SuiteLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
    ),
    list("-+.0123456789"),
)


def _construct_mapping(loader: _SuiteLoader, node: yaml.MappingNode) -> dict[str, Any]:
    loader.flatten_mapping(node)
    pairs = []
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if not isinstance(key, str):
            mark = key_node.start_mark
            raise yaml.constructor.ConstructorError(
                None, None, f"keys must be strings, found {key!r}", mark
            )
        pairs.append((key, loader.construct_object(value_node, deep=True)))
    return _object_with_duplicates(pairs)


def _construct_int(loader: _SuiteLoader, node: yaml.ScalarNode) -> int:
    return int(loader.construct_scalar(node))


def _construct_float(loader: _SuiteLoader, node: yaml.ScalarNode) -> float | Decimal:
    text = loader.construct_scalar(node)
    if text.lstrip("+-").lower() in (".inf", ".nan"):
        raise yaml.constructor.ConstructorError(
            None, None, "infinity and NaN are not JSON numbers", node.start_mark
        )
    return _float_or_decimal(text)


_SuiteLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_SuiteLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)
_SuiteLoader.add_constructor("tag:yaml.org,2002:float", _construct_float)


def _refuse(loader: _SuiteLoader, node: yaml.Node) -> Any:
    raise yaml.constructor.ConstructorError(
        None, None, f"{node.tag} values are not JSON data", node.start_mark
    )


for _tag in ("binary", "set", "omap", "pairs", "timestamp"):
    _SuiteLoader.add_constructor(f"tag:yaml.org,2002:{_tag}", _refuse)


def parse_yaml_document(text: str | bytes) -> Any:
    """Parse a YAML suite document into JSON-shaped data."""
    try:
        return yaml.load(text, Loader=_SuiteLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        raise InvalidInput.single("", f"invalid YAML: {where}{exc.problem or exc}") from None
    except yaml.YAMLError as exc:
        raise InvalidInput.single("", f"invalid YAML: {exc}") from None
    except RecursionError:
        raise InvalidInput.single("", "invalid YAML: nested too deeply") from None


def parse_suite_document(text: str | bytes, filename: str = "") -> Any:
    """Parse a suite file: YAML when its name says so (or it does not look like JSON)."""
    lowered = filename.lower()
    if lowered.endswith((".yaml", ".yml")):
        return parse_yaml_document(text)
    if lowered.endswith(".json"):
        return parse_json_document(text)
    head = text.lstrip()[:1]
    if head in ("{", "[", b"{", b"["):
        return parse_json_document(text)
    return parse_yaml_document(text)
