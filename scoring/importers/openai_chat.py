"""OpenAI Chat Completions ``messages`` (formats.md §1).

Each assistant message's ``tool_calls`` is one batch; ``function.arguments`` is a JSON
string, kept as ``arguments_raw`` (with ``arguments: null``) when it is not a JSON object.
Tool results are joined by ``tool_call_id``: a tool message answers the latest call before it
with that id (some harnesses reuse ids across turns: the τ-bench trajectories do). The final
text is the content of the last assistant message without tool calls. The legacy single
``function_call`` of old logs is a batch of one call, its result the next ``function``
message.
"""

from collections.abc import Mapping
from typing import Any

from scoring.matcher import InvalidInput

from .anthropic import has_anthropic_blocks
from .common import arguments_fields, content_text, envelope_fields, is_join_key, name_at

NAME = "openai_chat"
SIGNATURE = "messages"


def detect(line: Mapping) -> bool:
    """A ``messages`` list without Anthropic content blocks: a run with only text turns
    reads the same in both formats, so it is this one's."""
    messages = line.get("messages")
    return isinstance(messages, list) and not has_anthropic_blocks(messages)


def convert(line: Mapping) -> dict:
    messages = line.get("messages")
    if not isinstance(messages, list):
        raise InvalidInput.single("messages", "must be a list of chat messages")
    batches = []
    final_text = None
    awaiting: dict = {}  # call id → the latest call with that id, until its tool message
    legacy_call = None  # a legacy function_call waiting for its function message
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise InvalidInput.single(f"messages[{i}]", "must be a message object")
        role = message.get("role")
        if role == "tool" and is_join_key(message.get("tool_call_id")):
            call = awaiting.pop(message["tool_call_id"], None)
            if call is not None:
                call["result"] = content_text(message.get("content"))
        elif role == "function" and legacy_call is not None:
            legacy_call["result"] = content_text(message.get("content"))
            legacy_call = None
        if role != "assistant":
            continue
        tool_calls = message.get("tool_calls") or []
        if not isinstance(tool_calls, list):
            raise InvalidInput.single(f"messages[{i}].tool_calls", "must be a list")
        if tool_calls:
            calls = [
                _call(call, f"messages[{i}].tool_calls[{j}]") for j, call in enumerate(tool_calls)
            ]
            awaiting.update((call["id"], call) for call in calls if is_join_key(call["id"]))
            batches.append(calls)
        elif message.get("function_call") is not None:
            legacy_call = _function(message["function_call"], f"messages[{i}].function_call")
            batches.append([legacy_call])
        else:
            final_text = content_text(message.get("content"))
    run = envelope_fields(line)
    run["batches"] = batches
    run["final_text"] = final_text
    return run


def _call(call: Any, where: str) -> dict:
    if not isinstance(call, Mapping):
        raise InvalidInput.single(where, "must be a tool call with a function object")
    return {"id": call.get("id"), **_function(call.get("function"), f"{where}.function")}


def _function(function: Any, where: str) -> dict:
    if not isinstance(function, Mapping):
        raise InvalidInput.single(where, "must be a function object with a name and arguments")
    return {"name": name_at(function, "name", where), **arguments_fields(function.get("arguments"))}
