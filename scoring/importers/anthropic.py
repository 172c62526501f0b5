"""Anthropic Messages ``messages`` (formats.md §3).

Assistant content is a list of blocks. The ``tool_use`` blocks of one assistant message are
one batch (``input`` is already an object; ``id`` is the call's id). ``tool_result`` blocks,
in the user message that follows, give each call's ``result`` and ``is_error``, joined by
``tool_use_id``. The final text is the text blocks of the last assistant message. Other
block types (``thinking``, ``server_tool_use``, ...) are opaque steps and are skipped.
"""

from collections.abc import Mapping
from typing import Any

from scoring.matcher import InvalidInput

from .common import (
    arguments_fields,
    content_text,
    envelope_fields,
    is_join_key,
    list_at,
    name_at,
    object_at,
)

NAME = "anthropic"
SIGNATURE = "messages"

# Content block types that OpenAI's chat format never uses: a messages list holding one of
# them is Anthropic's.
_ANTHROPIC_BLOCKS = frozenset(
    {"tool_use", "tool_result", "thinking", "redacted_thinking", "server_tool_use"}
)


def has_anthropic_blocks(messages: list) -> bool:
    """Whether any message's content holds a block type only Anthropic uses."""
    # Every OpenAI line is scanned too, so this is written for speed: parsed JSON holds
    # dicts, and an isinstance check against dict is a fraction of one against Mapping.
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") in _ANTHROPIC_BLOCKS:
                    return True
    return False


def detect(line: Mapping) -> bool:
    messages = line.get("messages")
    return isinstance(messages, list) and has_anthropic_blocks(messages)


def convert(line: Mapping) -> dict:
    messages = list_at(line.get("messages"), "messages")
    batches = []
    last_content: Any = None
    awaiting: dict = {}  # tool_use id → its call, until a tool_result answers it
    for i, message in enumerate(messages):
        content = object_at(message, f"messages[{i}]").get("content")
        if message.get("role") != "assistant":
            _take_results(content, f"messages[{i}].content", awaiting)
            continue
        last_content = content
        if not isinstance(content, list):  # plain text content: no calls
            continue
        calls = [
            _call(block, f"messages[{i}].content[{j}]")
            for j, block in enumerate(content)
            if object_at(block, f"messages[{i}].content[{j}]").get("type") == "tool_use"
        ]
        awaiting.update((call["id"], call) for call in calls if is_join_key(call["id"]))
        if calls:
            batches.append(calls)
    run = envelope_fields(line)
    run["batches"] = batches
    run["final_text"] = content_text(last_content)
    return run


def _call(block: Mapping, where: str) -> dict:
    call = {"id": block.get("id"), "name": name_at(block, "name", where)}
    call.update(arguments_fields(block.get("input", {})))
    return call


def _take_results(content: Any, where: str, awaiting: dict) -> None:
    """Give each ``tool_result`` block of a user turn to the call it answers."""
    if not isinstance(content, list):
        return
    for j, block in enumerate(content):
        if not isinstance(block, Mapping) or block.get("type") != "tool_result":
            continue
        key = block.get("tool_use_id")
        if not is_join_key(key):
            raise InvalidInput.single(f"{where}[{j}].tool_use_id", "required: the tool_use's id")
        call = awaiting.pop(key, None)
        if call is None:
            continue
        call["result"] = _result(block.get("content"))
        if block.get("is_error") is True:
            call["is_error"] = True


def _result(content: Any) -> Any:
    """A tool result's content: text as text; content with other blocks (images, documents)
    as it came."""
    if isinstance(content, list) and all(
        isinstance(block, Mapping) and block.get("type") == "text" for block in content
    ):
        return content_text(content) if content else ""
    return content
