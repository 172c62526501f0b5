"""Draft cases from recorded runs (docs/review.md#cases-from-runs): what an agent did, as expected
calls for the author to trim before saving. Pure functions (no Django); nothing here saves
anything."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# What ``$text`` ignores in a loosened free-text argument (docs/matcher.md#argument-matchers).
IGNORE_ALL = ("case", "space", "punctuation")


def draft_case(run: Mapping, key: str, tools: list) -> dict:
    """A case (docs/formats.md#cases) whose expected calls are the canonical run's calls
    (docs/formats.md#calls); ``tools`` is the catalog as ``{name, parameters}`` objects
    (``cases.tool_catalog.argument_schemas``).

    The run's batches become order: when there is more than one batch every call is
    ``ordered``, and the first call of each later batch ``depends_on_result`` (its result
    came back before that batch). Call ids and results are dropped; a string argument the
    catalog describes as free text (a string parameter without ``enum``) that holds more
    than one word is loosened to ``$text`` ignoring case, space and punctuation. The prompt
    is the transcript's first user turn."""
    schemas = {
        tool.get("name"): tool.get("parameters") or {}
        for tool in tools
        if isinstance(tool, Mapping)
    }
    batches = [batch for batch in run.get("batches") or () if batch]
    calls = []
    for number, batch in enumerate(batches):
        for position, call in enumerate(batch):
            schema = schemas.get(call.get("name"), {})
            expected = {
                "name": call.get("name"),
                "required_args": _loosened(call.get("arguments") or {}, schema),
                "ordered": len(batches) > 1,
                "depends_on_result": number > 0 and position == 0,
            }
            calls.append(expected)
    trial = run.get("trial")
    return {
        "key": key,
        "title": f"From trial {trial} of {run.get('case')}" if trial is not None else "",
        "prompt": _first_user_turn(run.get("transcript")),
        "expected_calls": calls,
        "extra_calls": "allow",
        "expectations": [],
    }


def _loosened(arguments: Mapping, schema: Mapping) -> dict:
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    properties = properties if isinstance(properties, Mapping) else {}
    loosened = {}
    for name, value in arguments.items():
        parameter = properties.get(name)
        free_text = (
            isinstance(parameter, Mapping)
            and parameter.get("type") == "string"
            and "enum" not in parameter
        )
        if free_text and isinstance(value, str) and len(value.split()) > 1:
            value = {"$text": {"value": value, "ignore": list(IGNORE_ALL)}}
        elif isinstance(value, Mapping) and value and all(str(k).startswith("$") for k in value):
            value = {"$literal": value}  # a recorded object that would read as a matcher
        loosened[name] = value
    return loosened


def _first_user_turn(transcript: Any) -> str:
    for turn in transcript if isinstance(transcript, list) else ():
        if isinstance(turn, Mapping) and turn.get("role") == "user":
            text = turn.get("text")
            return text if isinstance(text, str) else ""
    return ""


def draft_revision(current: Mapping, drafted: Mapping) -> dict:
    """A draft revision of an existing case: its expected calls become the drafted
    ones; its key, title, tags, matching and expectations stay; its prompt is filled from
    the draft only when it has none."""
    revision = {**current, "expected_calls": list(drafted.get("expected_calls") or [])}
    if not current.get("prompt") and drafted.get("prompt"):
        revision["prompt"] = drafted["prompt"]
    return revision
