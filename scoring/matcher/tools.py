"""The suite's tool catalog (docs/formats.md#tool-catalog): checked for shape, kept on the
suite, never used for scoring. Authoring reads it (``warnings``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from .errors import Problems, field_path
from .fields import FieldReader
from .jsonvalue import json_type

SCHEMA_TYPES = ("string", "number", "integer", "boolean", "array", "object", "null")


@dataclass(frozen=True, slots=True)
class Tool:
    """One tool as OpenAI's function tools describe it: ``parameters`` is a JSON Schema
    object (``{"type": "object", "properties": {...}, "required": [...]}``)."""

    name: str
    description: str = ""
    parameters: Mapping = field(default_factory=dict, repr=False, compare=False)

    @property
    def properties(self) -> Mapping:
        properties = self.parameters.get("properties")
        return properties if isinstance(properties, Mapping) else {}

    @property
    def required(self) -> tuple[str, ...]:
        required = self.parameters.get("required")
        return tuple(name for name in required or () if isinstance(name, str))


def load_tools(data: Mapping, reader: FieldReader, problems: Problems) -> tuple[Tool, ...]:
    """The document's ``tools`` list, each problem of its shape recorded by path."""
    tools = []
    seen: dict[str, int] = {}
    for index, path, raw in reader.objects("tools", what="a tool object"):
        fields = FieldReader(raw, path, problems)
        name = fields.string("name", required=True, nonempty=True)
        description = fields.string("description", default="")
        parameters = fields.object("parameters", default={})
        if name is not None and name in seen:
            problems.add(fields.at("name"), f"duplicate tool {name!r} (also tools[{seen[name]}])")
        elif name is not None:
            seen[name] = index
        _check_schema(parameters, fields.at("parameters"), problems, top=True)
        if name is not None:
            tools.append(Tool(name, description, parameters))
    return tuple(tools)


def _check_schema(schema: Mapping, path: str, problems: Problems, *, top: bool = False) -> None:
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
        else:
            problems.add(where, f"must be a JSON Schema object, not {json_type(sub)}")
    reader.strings("required", nonempty=True)
    items = schema.get("items")
    if isinstance(items, Mapping):
        _check_schema(items, reader.at("items"), problems)
    reader.list("enum")
