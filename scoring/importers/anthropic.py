"""Anthropic Messages (docs/formats.md#anthropic-messages): a ``messages`` list (with
``system`` beside it, optionally), a ``Message`` as the SDK's ``model_dump()`` writes it (the
one assistant turn; docs/formats.md#sdk-objects), or a ``{"request", "response": Message}``
pair as request logs record it (docs/formats.md#request-and-response-pairs).

Assistant content is a list of blocks. The ``tool_use`` blocks of one assistant message are
one batch (``input`` is already an object; ``id`` is the call's id). ``tool_result`` blocks,
in the user message that follows, give each call's ``result`` and ``is_error``, joined by
``tool_use_id``. The final text is the text blocks of the last assistant message. Other
block types (``thinking``, ``server_tool_use``, ...) are opaque steps and are skipped. A last
assistant message cut off at the token limit is an error (``stop_reason: "max_tokens"``, which
a ``Message`` carries: alone on its line, as a pair's response, or in the messages list).
"""

from collections.abc import Callable, Mapping
from itertools import repeat
from typing import Any

from scoring.matcher import InvalidInput, json_type

from . import usage
from .common import (
    CallsById,
    JSONObject,
    Run,
    ToolCall,
    Turn,
    arguments_fields,
    content_text,
    cut_off,
    envelope_fields,
    is_join_key,
    list_at,
    name_at,
    object_at,
    turn,
    with_error,
    with_transcript,
)

NAME = "anthropic"
SIGNATURE = "messages"

# Content block types that OpenAI's chat format never uses: a messages list holding one of
# them is Anthropic's.
_ANTHROPIC_BLOCKS = frozenset(
    {"tool_use", "tool_result", "thinking", "redacted_thinking", "server_tool_use"}
)


def has_anthropic_blocks(messages: list[Any]) -> bool:
    """Whether any message's content holds a block type only Anthropic uses."""
    # Every OpenAI line is scanned too (detection tries this format before openai_chat),
    # so this is written for speed: parsed JSON holds dicts, and the contents are gathered
    # in C; an OpenAI line's are text or null, which ends it there.
    try:
        contents = list(map(dict.get, messages, repeat("content")))
    except TypeError:  # a message that is not an object (a dict): it has no content
        contents = [message.get("content") for message in messages if isinstance(message, dict)]
    if list not in set(map(type, contents)):
        return False
    for content in contents:
        if isinstance(content, list):
            for block in content:
                kind = block.get("type") if isinstance(block, dict) else None
                if isinstance(kind, str) and kind in _ANTHROPIC_BLOCKS:
                    return True
    return False


def detect(line: JSONObject) -> bool:
    """A ``messages`` list with a block type only Anthropic uses, a ``Message``, or a
    request and its ``Message``."""
    messages = line.get("messages")
    if isinstance(messages, list):
        return has_anthropic_blocks(messages)
    return is_message(line) or (
        isinstance(line.get("request"), Mapping) and is_message(line.get("response"))
    )


def is_message(value: Any) -> bool:
    """Whether ``value`` is a Messages API response (``{"type": "message", "content": [...]}``)."""
    return (
        isinstance(value, Mapping)
        and value.get("type") == "message"
        and isinstance(value.get("content"), list)
    )


def convert(line: JSONObject) -> Run:
    messages, path_of, system = _conversation(line)
    batches: list[list[ToolCall]] = []
    transcript = [turn("system", content_text(system))] if system is not None else []
    last: JSONObject = {}  # the last assistant message
    awaiting: CallsById = {}  # tool_use id → (its call, its batch), until a tool_result answers it
    request = line.get("request") if "request" in line and "messages" not in line else line
    requested = request.get("model") if isinstance(request, Mapping) else None
    responses: list[usage.Call] = []  # each assistant message's model call
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise InvalidInput.single(path_of(i), f"must be an object, not {json_type(message)}")
        content = message.get("content")
        if message.get("role") != "assistant":
            transcript.extend(_user_turns(message.get("role"), content, i, path_of, awaiting))
            continue
        last = message
        # A ``Message`` (in the list, on its own, or a pair's response) says its usage.
        response = usage.anthropic_call(message.get("usage"), message.get("model"))
        responses.append(response)
        calls: list[ToolCall] = []
        if isinstance(content, list):  # else plain text content: no calls
            for j, block in enumerate(content):
                if not isinstance(block, Mapping):
                    raise InvalidInput.single(
                        _content_path(path_of(i), j), f"must be an object, not {json_type(block)}"
                    )
                if block.get("type") == "tool_use":
                    calls.append(_call(block, _content_path(path_of(i), j)))
        awaiting.update(
            (call["id"], (call, len(batches))) for call in calls if is_join_key(call["id"])
        )
        if calls:
            batches.append(calls)
        batch = len(batches) - 1 if calls else None
        transcript.append(
            turn("assistant", content_text(content), batch, **usage.turn_figures(response))
        )
    run = envelope_fields(line)
    run["batches"] = batches
    run["final_text"] = content_text(last.get("content"))
    with_error(run, cut_off(last))
    run["usage"] = usage.run_usage(responses, requested=requested)
    return with_transcript(run, transcript)


def _conversation(line: JSONObject) -> tuple[list[Any], Callable[[int], str], Any]:
    """The line's messages (a ``Message`` line is one; a pair's response is the last), what
    gives the path of each (only wanted for a problem) and its system prompt."""
    if "messages" not in line and is_message(line):
        return [line], lambda _: "", None
    if "messages" in line or "request" not in line:
        messages = list_at(line.get("messages"), "messages")
        return messages, lambda i: f"messages[{i}]", line.get("system")
    request = object_at(line.get("request"), "request")
    messages = list_at(request.get("messages", []), "request.messages")
    response = object_at(line.get("response"), "response")

    def path_of(i: int) -> str:
        return f"request.messages[{i}]" if i < len(messages) else "response"

    return [*messages, response], path_of, request.get("system")


def _content_path(where: str, j: int) -> str:
    return f"{where}.content[{j}]" if where else f"content[{j}]"


def _call(block: JSONObject, where: str) -> ToolCall:
    call: ToolCall = {"id": block.get("id"), "name": name_at(block, "name", where)}
    call.update(arguments_fields(block.get("input", {})))
    return call


def _user_turns(
    role: Any, content: Any, i: int, path_of: Callable[[int], str], awaiting: CallsById
) -> list[Turn | None]:
    """The turns of user message ``i``: its text, then a tool turn for each ``tool_result``
    block, whose result and ``is_error`` go to the call it answers."""
    if not isinstance(content, list):
        return [turn(role, content_text(content))]
    text = content_text(content)
    turns = [turn(role, text)] if text is not None else []
    for j, block in enumerate(content):
        if not isinstance(block, Mapping) or block.get("type") != "tool_result":
            continue
        key = block.get("tool_use_id")
        if not is_join_key(key):
            where = _content_path(path_of(i), j)
            raise InvalidInput.single(f"{where}.tool_use_id", "required: the tool_use's id")
        result = _result(block.get("content"))
        call, batch = awaiting.pop(key, (None, None))
        turns.append(turn("tool", result, batch))
        if call is None:
            continue
        call["result"] = result
        if block.get("is_error") is True:
            call["is_error"] = True
    return turns


def _result(content: Any) -> Any:
    """A tool result's content: text as text; content with other blocks (images, documents)
    as it came."""
    if isinstance(content, list) and all(
        isinstance(block, Mapping) and block.get("type") == "text" for block in content
    ):
        return content_text(content) if content else ""
    return content
