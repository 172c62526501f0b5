"""The suite's tool catalog (docs/formats.md#tool-catalog): checked for shape and kept on the
suite. Authoring reads it (``warnings``); the catalog expectations score calls against it
(``tool_checks``).

A catalog comes in two shapes, kept as they came: Casebook's (OpenAI's function tools:
``{"name", "description", "parameters"}``) and an MCP server's ``tools/list`` answer
(``{"name", "title", "description", "inputSchema", "outputSchema", "annotations"}``), as its
result, as the JSON-RPC response holding it, or as several such pages.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import Problem, Problems, field_path
from ..fields import FieldReader
from ..jsonvalue import json_type, render_short
from ..options import MatchOptions
from .schemas import ToolSchema

SCHEMA_TYPES = ("string", "number", "integer", "boolean", "array", "object", "null")


@dataclass(frozen=True, slots=True)
class Tool:
    """One tool of the catalog. ``parameters`` is its input schema (Casebook's
    ``parameters``, MCP's ``inputSchema``): a JSON Schema object
    (``{"type": "object", "properties": {...}, "required": [...]}``); ``schema_path`` is
    where it sits in the suite document."""

    name: str
    description: str = ""
    parameters: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)
    title: str = ""
    output_schema: Mapping[str, Any] | None = field(default=None, repr=False, compare=False)
    annotations: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)
    schema_path: str = field(default="", repr=False, compare=False)

    @property
    def properties(self) -> Mapping[str, Any]:
        properties = self.parameters.get("properties")
        return properties if isinstance(properties, Mapping) else {}

    @property
    def required(self) -> tuple[str, ...]:
        required = self.parameters.get("required")
        return tuple(name for name in required or () if isinstance(name, str))


class Catalog:
    """The suite's tools, looked up by name as a case compares names, each with its input
    schema compiled for validation on first use."""

    __slots__ = ("_by_key", "_schemas", "tools")

    def __init__(self, tools: tuple[Tool, ...] = ()):
        self.tools = tools
        self._by_key: dict[bool, dict[str, Tool]] = {}
        self._schemas: dict[str, ToolSchema] = {}

    def __bool__(self) -> bool:
        return bool(self.tools)

    def find(self, name: str, options: MatchOptions) -> Tool | None:
        """The tool ``name`` names under ``options``' tool-name rule, or None."""
        fold = options.ignore_tool_case
        by_key = self._by_key.get(fold)
        if by_key is None:
            by_key = self._by_key[fold] = {options.tool_key(t.name): t for t in self.tools}
        return by_key.get(options.tool_key(name))

    def schema(self, tool: Tool) -> ToolSchema:
        """``tool``'s input schema, compiled (once) for validation."""
        schema = self._schemas.get(tool.name)
        if schema is None:
            schema = self._schemas[tool.name] = ToolSchema(tool.parameters)
        return schema


EMPTY_CATALOG = Catalog()


def catalog_entries(
    raw: Any, path: str = ""
) -> tuple[list[tuple[str, Mapping[str, Any]]], list[Problem]]:
    """The tool objects of a suite file's ``tools`` value in any form it may take (a list of
    tools, an MCP ``tools/list`` page, the JSON-RPC answer holding it, or a list of pages),
    each with its path under ``path``, and the problems of that form."""
    problems = Problems()
    return list(_tool_objects(raw, path, problems)), problems.items


def load_tools(
    data: Mapping[str, Any], reader: FieldReader, problems: Problems
) -> tuple[Tool, ...]:
    """The document's ``tools``, each problem of its shape recorded by path."""
    tools = []
    seen: dict[str, str] = {}
    for path, raw in _tool_objects(data.get("tools"), reader.at("tools"), problems):
        fields = FieldReader(raw, path, problems)
        name = fields.string("name", required=True, nonempty=True)
        mcp = "inputSchema" in raw
        schema_key = "inputSchema" if mcp else "parameters"
        parameters = fields.object(schema_key, required=mcp, default={})
        description = fields.string("description", default="")
        title = fields.string("title", default="") if mcp else ""
        output_schema = fields.object("outputSchema") if mcp else None
        annotations = fields.object("annotations", default={}) if mcp else {}
        if name is not None and name in seen:
            problems.add(fields.at("name"), f"duplicate tool {name!r} (also {seen[name]})")
        elif name is not None:
            seen[name] = path
        _check_schema(parameters, fields.at(schema_key), problems, top=True)
        if name is not None:
            tools.append(
                Tool(
                    name,
                    description,
                    parameters,
                    title,
                    output_schema,
                    annotations,
                    fields.at(schema_key),
                )
            )
    return tuple(tools)


def _tool_objects(
    raw: Any, path: str, problems: Problems
) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Each tool object of the catalog with its path: ``raw`` is a list of tools, an MCP
    ``tools/list`` page (its result, or the JSON-RPC response holding it), or a list of
    pages, merged in order."""
    if raw is None:
        return
    if isinstance(raw, Mapping):
        yield from _page_tools(raw, path, problems)
        return
    if not isinstance(raw, list):
        problems.add(
            path, f"must be a list of tools or an MCP tools/list result, not {json_type(raw)}"
        )
        return
    for index, item in enumerate(raw):
        where = field_path(path, index)
        if not isinstance(item, Mapping):
            problems.add(where, f"must be a tool object, not {json_type(item)}")
        elif "name" not in item and ("tools" in item or "result" in item or "error" in item):
            yield from _page_tools(item, where, problems)
        else:
            yield where, item


def _page_tools(
    page: Mapping[str, Any], path: str, problems: Problems
) -> Iterator[tuple[str, Mapping[str, Any]]]:
    if "result" in page or "error" in page:  # a JSON-RPC response
        error = page.get("error")
        if error is not None:
            message = error.get("message") if isinstance(error, Mapping) else None
            problems.add(
                field_path(path, "error"),
                f"a JSON-RPC error answer, not a tools/list result: {render_short(message, 200)}",
            )
            return
        result, path = page.get("result"), field_path(path, "result")
        if not isinstance(result, Mapping):
            problems.add(path, f"must be a tools/list result object, not {json_type(result)}")
            return
        page = result
    tools = page.get("tools")
    where = field_path(path, "tools")
    if not isinstance(tools, list):
        what = "required" if tools is None else f"must be a list, not {json_type(tools)}"
        problems.add(where, f"{what}: a tools/list result holds its tools in tools")
        return
    for index, item in enumerate(tools):
        if isinstance(item, Mapping):
            yield field_path(where, index), item
        else:
            problems.add(field_path(where, index), f"must be a tool object, not {json_type(item)}")


def _check_schema(
    schema: Mapping[str, Any], path: str, problems: Problems, *, top: bool = False
) -> None:
    """The parts of a JSON Schema authoring reads: ``type``, ``properties``, ``required``,
    ``items`` and ``enum``; other keywords are kept unread."""
    reader = FieldReader(schema, path, problems)
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind] if kind is not None else []
    unknown = [item for item in kinds if item not in SCHEMA_TYPES]
    if unknown:
        allowed = ", ".join(SCHEMA_TYPES)
        problems.add(
            reader.at("type"), f"unknown JSON Schema type {unknown[0]!r}; one of {allowed}"
        )
    elif top and kinds and kinds != ["object"]:
        problems.add(reader.at("type"), 'a tool\'s parameters must be of type "object"')
    properties = reader.object("properties", default={})
    for name, sub in properties.items():
        where = field_path(reader.at("properties"), name)
        if isinstance(sub, Mapping):
            _check_schema(sub, where, problems)
        elif not isinstance(sub, bool):  # true and false are schemas too
            problems.add(where, f"must be a JSON Schema object, not {json_type(sub)}")
    reader.strings("required", nonempty=True)
    items = schema.get("items")
    if isinstance(items, Mapping):
        _check_schema(items, reader.at("items"), problems)
    reader.list("enum")
