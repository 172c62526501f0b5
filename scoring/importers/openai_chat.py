"""OpenAI Chat Completions ``messages`` (formats.md §1).

Each assistant message's ``tool_calls`` is one batch; ``function.arguments`` is a JSON
string, kept as ``arguments_raw`` (with ``arguments: null``) when it is not a JSON object.
Tool results are joined by ``tool_call_id``. The final text is the content of the last
assistant message without tool calls.
"""

from collections.abc import Mapping
from typing import Any

from scoring.matcher import InvalidInput
from scoring.matcher.jsonvalue import parse_json

from .common import envelope_fields

NAME = "openai_chat"
SIGNATURE = "messages"


def detect(line: Mapping) -> bool:
    messages = line.get("messages")
    return isinstance(messages, list) and all(
        isinstance(m, Mapping) and not _has_content_blocks(m, ("tool_use", "tool_result"))
        for m in messages
    )


def _has_content_blocks(message: Mapping, types: tuple[str, ...]) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(part, Mapping) and part.get("type") in types for part in content
    )


def convert(line: Mapping) -> dict:
    messages = line.get("messages")
    if not isinstance(messages, list):
        raise InvalidInput.single("messages", "must be a list of chat messages")
    results = _tool_results(messages)
    batches = []
    final_text = None
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise InvalidInput.single(f"messages[{i}]", "must be a message object")
        if message.get("role") != "assistant":
            continue
        tool_calls = message.get("tool_calls") or []
        if not isinstance(tool_calls, list):
            raise InvalidInput.single(f"messages[{i}].tool_calls", "must be a list")
        if tool_calls:
            batches.append(
                [
                    _call(call, f"messages[{i}].tool_calls[{j}]", results)
                    for j, call in enumerate(tool_calls)
                ]
            )
        else:
            final_text = _text(message.get("content"))
    run = envelope_fields(line)
    run["batches"] = batches
    run["final_text"] = final_text
    return run


def _call(call: Any, where: str, results: dict) -> dict:
    if not isinstance(call, Mapping) or not isinstance(call.get("function"), Mapping):
        raise InvalidInput.single(where, "must be a tool call with a function object")
    function = call["function"]
    name = function.get("name")
    if not isinstance(name, str):
        raise InvalidInput.single(f"{where}.function.name", "must be a string")
    out: dict = {"id": call.get("id"), "name": name}
    out.update(arguments_fields(function.get("arguments")))
    if call.get("id") in results:
        out["result"] = results[call["id"]]
    return out


def arguments_fields(raw: Any) -> dict:
    """``arguments`` of a call whose arguments came as an object or a JSON string; text
    that is not a JSON object is kept as ``arguments_raw`` with ``arguments: null``."""
    if isinstance(raw, Mapping):
        return {"arguments": raw}
    if not isinstance(raw, str):
        return {"arguments": None, "arguments_raw": None if raw is None else str(raw)}
    try:
        parsed = parse_json(raw) if raw.strip() else {}
    except InvalidInput:
        parsed = None
    if isinstance(parsed, Mapping):
        return {"arguments": parsed}
    return {"arguments": None, "arguments_raw": raw}


def _tool_results(messages: list) -> dict:
    return {
        m["tool_call_id"]: _text(m.get("content"))
        for m in messages
        if isinstance(m, Mapping) and m.get("role") == "tool" and m.get("tool_call_id") is not None
    }


def _text(content: Any) -> str | None:
    """Message content as text: a string, or the text parts of a list of parts."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            p.get("text", "") for p in content if isinstance(p, Mapping) and p.get("type") == "text"
        ]
        return "".join(parts) if parts else None
    return None
