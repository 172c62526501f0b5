"""Tool catalogs (docs/formats.md#tool-catalog) from the schemas agents already have: an OpenAI
``tools`` array, Anthropic tool definitions, an MCP ``tools/list`` result, or BFCL function
docs. Pure functions (no Django): the suite pages and API, ``manage.py import_mcp_tools``
and ``scoring.benchmarks.bfcl_suites`` use them.

MCP tools are kept as the server gave them (``inputSchema``, ``outputSchema``, ``title``,
``annotations``...), the pages of a paginated ``tools/list`` merged in order; every other
shape becomes ``{"name", "description", "parameters"}`` with ``parameters`` a JSON Schema
object. The catalog is then checked as part of the suite (``load_suite``), so its problems are
named by the suite's JSON paths (``tools[2].name: required``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from scoring.matcher import (
    SCHEMA_TYPES,
    InvalidInput,
    catalog_entries,
    is_finite_number,
    json_equal,
    json_type,
    render_short,
)

# BFCL writes Python's type names; JSON Schema's are these. ``any`` has no JSON Schema type.
BFCL_TYPES = {
    "dict": "object",
    "float": "number",
    "int": "integer",
    "str": "string",
    "bool": "boolean",
    "list": "array",
    "tuple": "array",
    "any": None,
}
SHAPES = {
    "openai": "OpenAI tools",
    "anthropic": "Anthropic tool definitions",
    "mcp": "an MCP tools/list result",
    "bfcl": "BFCL function docs",  # or any docs writing types JSON Schema lacks
    "casebook": "a Casebook tool catalog",
    "mixed": "tool definitions of several shapes",
}


@dataclass(frozen=True)
class ImportedTools:
    tools: list[dict]
    shape: str  # a key of SHAPES

    @property
    def message(self) -> str:
        """The version message that records the import."""
        return f"tools: imported {len(self.tools)} from {SHAPES[self.shape]}"


def tools_from_any(data: Any) -> ImportedTools:
    """The catalog that ``data`` (parsed JSON) describes, its shape detected: a list of
    tools, one tool, a suite file holding ``tools``, or an MCP listing in any of the forms
    a suite file's ``tools`` may take.

    Raises ``InvalidInput`` (by JSON path into ``data``) when no known shape fits."""
    if isinstance(data, Mapping) and "name" in data:  # one tool
        data = [data]
    entries, problems = catalog_entries(data)
    if problems:
        raise InvalidInput(problems)
    if not entries:
        raise InvalidInput.single("", "holds no tools")
    tools, shapes = [], set()
    for where, item in entries:
        shape, tool = _one_tool(item, where)
        shapes.add(shape)
        tools.append(tool)
    return ImportedTools(tools, shapes.pop() if len(shapes) == 1 else "mixed")


def catalog_tools(tools: Any) -> list[Mapping]:
    """The tool objects of a suite file's ``tools`` in any form it may take
    (docs/formats.md#tool-catalog), pages merged in order. For reading a stored catalog:
    the suite's rules checked it when it was saved."""
    return [tool for _, tool in catalog_entries(tools)[0]]


def input_schema(tool: Mapping) -> Mapping:
    """The JSON Schema of a tool's arguments: ``parameters``, or an MCP tool's ``inputSchema``."""
    schema = tool.get("inputSchema") if "inputSchema" in tool else tool.get("parameters")
    return schema if isinstance(schema, Mapping) else {}


def argument_schemas(tools: Any) -> list[dict]:
    """Each tool's name, description and input schema as ``parameters``, whatever its shape:
    the catalog as the case editor's argument builder and drafting read it."""
    return [
        {
            "name": tool.get("name"),
            "description": tool.get("description") or "",
            "parameters": input_schema(tool),
        }
        for tool in catalog_tools(tools)
    ]


def _one_tool(item: Mapping, path: str) -> tuple[str, dict]:
    function = item.get("function")
    if item.get("type") == "function" and isinstance(function, Mapping):
        return "openai", _tool(function, "parameters")
    if item.get("type") == "function" and "name" in item:  # the Responses API's flat form
        return "openai", _tool(item, "parameters")
    if "input_schema" in item:
        return "anthropic", _tool(item, "input_schema")
    if "inputSchema" in item:
        return "mcp", dict(item)  # kept as the server gave it
    if "parameters" in item or "name" in item:
        parameters = item.get("parameters")
        if isinstance(parameters, Mapping) and _has_bfcl_types(parameters):
            return "bfcl", bfcl_tool(item)
        return "casebook", _tool(item, "parameters")
    raise InvalidInput.single(
        path,
        "not a tool in a known shape: OpenAI ({type: function, function: {...}}), Anthropic "
        "({name, input_schema}), MCP ({name, inputSchema}) or BFCL ({name, parameters})",
    )


def _tool(item: Mapping, schema_key: str) -> dict:
    # A missing name stays missing, so the suite's check says "required" at its path.
    tool = {key: item[key] for key in ("name", "description") if key in item}
    tool["parameters"] = item.get(schema_key) if item.get(schema_key) is not None else {}
    # MCP's hints (readOnlyHint, destructiveHint, …) are kept: which tools only read decides
    # what a suite made from τ-bench's results expects (cases.tau_bench).
    if isinstance(item.get("annotations"), Mapping):
        tool["annotations"] = item["annotations"]
    return tool


def bfcl_tools(docs: list) -> list[dict]:
    """BFCL function docs (every question's, repeats included) as one catalog: the first
    doc of each name, its Python type names made JSON Schema's."""
    tools: dict[str, dict] = {}
    for doc in docs:
        if isinstance(doc, Mapping) and isinstance(doc.get("name"), str):
            tools.setdefault(doc["name"], bfcl_tool(doc))
    return list(tools.values())


def bfcl_tool(doc: Mapping) -> dict:
    """One BFCL function doc as a catalog tool, its Python type names made JSON Schema's."""
    tool = _tool(doc, "parameters")
    if isinstance(tool["parameters"], Mapping):
        tool["parameters"] = _json_schema(tool["parameters"])
    return tool


def _json_schema(schema: Mapping) -> dict:
    converted = dict(schema)
    kind = schema.get("type")
    if isinstance(kind, str) and kind not in SCHEMA_TYPES:
        # A type JSON Schema lacks (BFCL's Java and JavaScript docs write ``HashMap``,
        # ``long``...) constrains nothing here; it is kept aside, not lost.
        del converted["type"]
        if BFCL_TYPES.get(kind) is not None:
            converted["type"] = BFCL_TYPES[kind]
        elif kind not in BFCL_TYPES:
            converted["x-bfcl-type"] = kind
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        converted["properties"] = {
            name: _json_schema(sub) if isinstance(sub, Mapping) else sub
            for name, sub in properties.items()
        }
    if isinstance(schema.get("items"), Mapping):
        converted["items"] = _json_schema(schema["items"])
    return converted


def _has_bfcl_types(schema: Mapping) -> bool:
    kind = schema.get("type")
    if isinstance(kind, str) and kind not in SCHEMA_TYPES:
        return True
    properties = schema.get("properties")
    subs = list(properties.values()) if isinstance(properties, Mapping) else []
    subs.append(schema.get("items"))
    return any(_has_bfcl_types(sub) for sub in subs if isinstance(sub, Mapping))


# MCP's tool annotations (docs/formats.md#tool-catalog) the catalog shows, as the server
# claims them: a hint is shown when it is true.
HINTS = {
    "readOnlyHint": "read-only",
    "destructiveHint": "destructive",
    "idempotentHint": "idempotent",
    "openWorldHint": "open-world",
}


def catalog_rows(tools: Any) -> list[dict]:
    """The catalog as the suite page's table shows it: each tool's name, title, description,
    parameters (name, type, required or not, description, allowed values), the hints its
    annotations set, and what its output schema declares."""
    rows = []
    for tool in catalog_tools(tools):
        annotations = tool.get("annotations")
        annotations = annotations if isinstance(annotations, Mapping) else {}
        title = tool.get("title") or annotations.get("title")
        output = tool.get("outputSchema")
        rows.append(
            {
                "name": tool.get("name"),
                "title": title if isinstance(title, str) else "",
                "description": tool.get("description") or "",
                "parameters": schema_rows(input_schema(tool)),
                "hints": [word for key, word in HINTS.items() if annotations.get(key) is True],
                "output": schema_rows(output) if isinstance(output, Mapping) else None,
            }
        )
    return rows


def schema_rows(schema: Mapping) -> list[dict]:
    """An object schema's properties: name, type, required or not, description, enum."""
    properties = schema.get("properties")
    required = schema.get("required")
    required = set(required) if isinstance(required, list) else set()
    return [
        _parameter_row(name, sub, name in required)
        for name, sub in (properties.items() if isinstance(properties, Mapping) else ())
    ]


def _parameter_row(name: str, schema: Any, required: bool) -> dict:
    schema = schema if isinstance(schema, Mapping) else {}
    enum = schema.get("enum")
    return {
        "name": name,
        "type": schema_type(schema),
        "required": required,
        "description": schema.get("description")
        if isinstance(schema.get("description"), str)
        else "",
        "enum": [render_short(value, 40) for value in enum[:20]] if isinstance(enum, list) else [],
    }


def schema_type(schema: Any) -> str:
    """A schema's type in a few words: ``string``, ``integer | null``, ``array of string``;
    the alternatives of ``anyOf`` or ``oneOf`` (how Pydantic writes an optional argument) when
    it has no ``type``; ``any`` when it says none."""
    schema = schema if isinstance(schema, Mapping) else {}
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(map(str, kind))
    if kind is None:
        alternatives = schema.get("anyOf", schema.get("oneOf"))
        if isinstance(alternatives, list) and alternatives:
            return " | ".join(schema_type(alternative) for alternative in alternatives)
        return "any"
    items = schema.get("items")
    if kind == "array" and isinstance(items, Mapping) and isinstance(items.get("type"), str):
        return f"array of {items['type']}"
    return str(kind)


# Inferring a catalog from recorded calls: how many distinct example values each argument keeps.
EXAMPLES_KEPT = 3


def infer_tools(calls: Iterable[tuple[str, Any]]) -> list[dict]:
    """A catalog drafted from recorded calls (``(name, arguments)`` pairs), for an agent
    whose schemas are not at hand: each tool's arguments with the JSON types seen (numbers
    that were always whole are ``integer``), a few example values, and as ``required`` the
    arguments every call sent. The author reviews it before it is saved."""
    seen: dict[str, dict] = {}
    for name, arguments in calls:
        if not isinstance(name, str) or not name:
            continue
        tool = seen.setdefault(name, {"calls": 0, "args": {}, "always": None})
        tool["calls"] += 1
        arguments = arguments if isinstance(arguments, Mapping) else {}
        names = set(arguments)
        tool["always"] = names if tool["always"] is None else tool["always"] & names
        for arg, value in arguments.items():
            entry = tool["args"].setdefault(arg, {"types": [], "examples": []})
            kind = _inferred_type(value)
            if kind not in entry["types"]:
                entry["types"].append(kind)
            examples = entry["examples"]
            if len(examples) < EXAMPLES_KEPT and not any(json_equal(value, e) for e in examples):
                examples.append(value)
    return [_inferred_tool(name, tool) for name, tool in seen.items()]


def _inferred_type(value: Any) -> str:
    kind = json_type(value)
    if kind == "number" and is_finite_number(value) and value == int(value):
        return "integer"
    return kind


def _inferred_tool(name: str, tool: dict) -> dict:
    properties = {}
    for arg, entry in tool["args"].items():
        types = entry["types"]
        if "integer" in types and "number" in types:
            types = [t for t in types if t != "integer"]
        properties[arg] = {
            "type": types[0] if len(types) == 1 else types,
            "examples": entry["examples"],
        }
    plural = "s" if tool["calls"] != 1 else ""
    return {
        "name": name,
        "description": f"inferred from {tool['calls']} recorded call{plural}",
        "parameters": {
            "type": "object",
            "properties": properties,
            "required": sorted(tool["always"] or ()),
        },
    }
