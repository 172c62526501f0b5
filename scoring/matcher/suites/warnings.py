"""Authoring warnings against the suite's tool catalog (docs/formats.md#tool-catalog): an expected
call or expectation naming a tool or argument the catalog lacks, a value of the wrong JSON type or
outside the schema's ``enum``, a parameter the tool requires that a call never constrains.

Warnings never reject anything: the suite is saved and scored as written. A suite without ``tools``
has none. Parts of the document that break the suite file's rules are skipped here: ``load_suite``
reports those as problems.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping
from typing import Any

from ..arguments.matchers import is_matcher
from ..arguments.tools import Tool, load_tools
from ..errors import Problem, Problems, field_path
from ..fields import FieldReader
from ..jsonvalue import json_equal, json_type, render_short
from ..options import DEFAULT, MatchOptions, read_match_options

# The JSON type each matcher accepts, when it implies one.
MATCHER_TYPES = {"$regex": "string", "$text": "string", "$approx": "number"}


def suite_warnings(document: Any) -> list[Problem]:
    """Every warning of a suite document (a parsed JSON or YAML object), by JSON path."""
    if not isinstance(document, Mapping):
        return []
    ignored = Problems()
    top = FieldReader(document, "", ignored)
    tools = load_tools(document, top, ignored)
    if not tools:
        return []
    suite_match = read_match_options(document, "match", top, ignored, DEFAULT)
    found: list[Problem] = []
    for _, path, case in top.objects("cases"):
        reader = FieldReader(case, path, ignored)
        match = read_match_options(case, "match", reader, ignored, suite_match)
        found += _Catalog(tools, match).case_warnings(reader)
    return found


class _Catalog:
    """The tools as one case compares names (its ``match`` options)."""

    def __init__(self, tools: tuple[Tool, ...], match: MatchOptions):
        self.match = match
        self.by_key = {match.tool_key(tool.name): tool for tool in tools}
        self.names = [tool.name for tool in tools]

    def case_warnings(self, case: FieldReader) -> list[Problem]:
        found: list[Problem] = []
        for _, path, call in case.objects("expected_calls"):
            tool = self.tool(call.get("name"), field_path(path, "name"), found)
            args = call.get("required_args")
            if tool is not None and isinstance(args, Mapping):
                where = field_path(path, "required_args")
                found += self.argument_warnings(tool, args, where, every_required=True)
        for _, path, item in case.objects("expectations"):
            found += self.expectation_warnings(item, path)
        return found

    def expectation_warnings(self, item: Mapping[str, Any], path: str) -> list[Problem]:
        found: list[Problem] = []
        names = item.get("tools")
        if item.get("type") == "called_tools_in_order" and isinstance(names, list):
            for index, name in enumerate(names):
                self.tool(name, field_path(field_path(path, "tools"), index), found)
            return found
        if "tool" not in item or item.get("tool") is None:
            return found
        tool = self.tool(item["tool"], field_path(path, "tool"), found)
        args = item.get("args")
        if (
            tool is not None
            and item.get("type") == "called_tool_with"
            and isinstance(args, Mapping)
        ):
            found += self.argument_warnings(tool, args, field_path(path, "args"))
        return found

    def tool(self, name: Any, path: str, found: list[Problem]) -> Tool | None:
        """The catalog's tool of that name; an unknown name is a warning."""
        if not isinstance(name, str) or not name:
            return None
        tool = self.by_key.get(self.match.tool_key(name))
        if tool is None:
            found.append(Problem(path, f"unknown tool `{name}`{_suggestion(name, self.names)}"))
        return tool

    def argument_warnings(
        self, tool: Tool, args: Mapping[str, Any], path: str, *, every_required: bool = False
    ) -> list[Problem]:
        properties = {self.match.arg_key(name): name for name in tool.properties}
        found = []
        mentioned = set()
        for name, value in args.items():
            where = field_path(path, name)
            known = properties.get(self.match.arg_key(name))
            if known is None:
                hint = _suggestion(name, list(tool.properties))
                found.append(Problem(where, f"unknown argument `{name}` of `{tool.name}`{hint}"))
                continue
            mentioned.add(known)
            if is_matcher(value) and "$absent" in value:
                if known in tool.required:
                    message = f"`{tool.name}` requires `{known}`: a call without it is invalid"
                    found.append(Problem(where, message))
                continue
            found += _value_warnings(value, tool.properties[known], where)
        if every_required:
            for name in tool.required:
                if name not in mentioned:
                    message = f"`{tool.name}` requires `{name}`, which this call never constrains"
                    found.append(Problem(path, message))
        return found


def _suggestion(name: str, known: list[str]) -> str:
    close = difflib.get_close_matches(name, known, n=1)
    return f"; did you mean `{close[0]}`?" if close else ""


def _schema_types(schema: Mapping[str, Any]) -> tuple[str, ...]:
    kind = schema.get("type")
    if isinstance(kind, str):
        return (kind,)
    if isinstance(kind, list):
        return tuple(item for item in kind if isinstance(item, str))
    return ()


def _literal_fits(value: Any, allowed: tuple[str, ...]) -> bool:
    """Whether a literal value has one of the schema's types (an integral number is also an
    ``integer``, as in JSON Schema)."""
    kind = json_type(value)
    if not allowed or kind in allowed:
        return True
    return kind == "number" and "integer" in allowed and value == int(value)


def _matcher_fits(kind: str, allowed: tuple[str, ...]) -> bool:
    """Whether a matcher accepting values of type ``kind`` can accept some allowed value."""
    numeric = ("number", "integer")
    if not allowed or kind in allowed:
        return True
    return kind in numeric and any(t in numeric for t in allowed)


def _value_warnings(value: Any, schema: Any, path: str, *, literal: bool = False) -> list[Problem]:
    """What an expected value (a literal, a matcher, or a value holding matchers) says that
    the parameter's schema rules out. ``literal``: ``$`` keys are plain keys here."""
    if not isinstance(schema, Mapping):
        return []
    if is_matcher(value) and not literal:
        return list(_matcher_warnings(value, schema, path))
    allowed = _schema_types(schema)
    if not _literal_fits(value, allowed):
        return [Problem(path, f"must be {_or(allowed)}, not {json_type(value)}")]
    enum = schema.get("enum")
    if isinstance(enum, list) and enum and not any(json_equal(value, item) for item in enum):
        options = ", ".join(render_short(item, 30) for item in enum[:10])
        return [Problem(path, f"not one of the values the schema allows: {options}")]
    found = []
    if isinstance(value, Mapping):
        properties = schema.get("properties")
        for key, item in value.items():
            if isinstance(properties, Mapping) and key in properties:
                where = field_path(path, key)
                found += _value_warnings(item, properties[key], where, literal=literal)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            where = field_path(path, index)
            found += _value_warnings(item, schema.get("items"), where, literal=literal)
    return found


def _matcher_warnings(
    value: Mapping[str, Any], schema: Mapping[str, Any], path: str
) -> Iterator[Problem]:
    allowed = _schema_types(schema)
    for key, argument in value.items():
        where = field_path(path, key)
        implied = MATCHER_TYPES.get(key)
        if key == "$type" and isinstance(argument, str):
            implied = argument
        if implied is not None:
            if not _matcher_fits(implied, allowed):
                message = f"matches only {implied} values; the schema says {_or(allowed)}"
                yield Problem(where, message)
        elif key == "$one_of" and isinstance(argument, list):
            for index, item in enumerate(argument):
                yield from _value_warnings(item, schema, field_path(where, index))
        elif key in ("$optional", "$subset"):
            yield from _value_warnings(argument, schema, where)
        elif key == "$literal":
            yield from _value_warnings(argument, schema, where, literal=True)


def _or(types: tuple[str, ...]) -> str:
    return " or ".join(types)
