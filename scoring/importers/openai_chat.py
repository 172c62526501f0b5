"""OpenAI Chat Completions (docs/formats.md#openai-chat-completions; objects and pairs:
docs/formats.md#sdk-objects, docs/formats.md#request-and-response-pairs).

The line holds the conversation in one of three shapes: a ``messages`` list; a
``ChatCompletion`` object (``choices``, as the SDK's ``model_dump()`` writes it), whose
first choice's message is the one turn; or a ``{"request": {"messages"}, "response":
ChatCompletion}`` pair as request logs and API proxies record them, whose conversation is the
request's messages and then the response's message. A messages list may hold a choice, or a
whole ChatCompletion, where a message would be: it is read as its message.

Each assistant message's ``tool_calls`` is one batch; ``function.arguments`` is a JSON
string, kept as ``arguments_raw`` (with ``arguments: null``) when it is not a JSON object.
Tool results are joined by ``tool_call_id``: a tool message answers the latest call before it
with that id (some harnesses reuse ids across turns: the τ-bench trajectories do). The final
text is the content of the last assistant message without tool calls. The legacy single
``function_call`` of old logs is a batch of one call, its result the next ``function``
message. A last assistant message cut off at the token limit (``finish_reason: "length"``,
on the message or on the choice it came in) is an error.
"""

from collections.abc import Callable, Mapping
from typing import Any

from scoring.matcher import InvalidInput

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

NAME = "openai_chat"
SIGNATURE = "choices"  # and messages, which anthropic lists


def detect(line: JSONObject) -> bool:
    """A ``messages`` list, a ChatCompletion, or a request and its ChatCompletion.

    Detection tries ``anthropic`` first, which takes the messages lists holding its content
    blocks; any other is this format's (a run with only text turns reads the same in both),
    so the messages are not scanned a second time here."""
    if isinstance(line.get("messages"), list):
        return True
    return is_completion(line) or (
        isinstance(line.get("request"), Mapping) and is_completion(line.get("response"))
    )


def is_completion(value: Any) -> bool:
    return isinstance(value, Mapping) and isinstance(value.get("choices"), list)


def convert(line: JSONObject) -> Run:
    messages, base_path, choices = _conversation(line)
    inside: dict[int, str] = {}  # where a message sits in the choice or completion holding it

    def path_of(i: int) -> str:  # only wanted for a problem, so not written out for each
        return base_path(i) + inside.get(i, "")

    batches: list[list[ToolCall]] = []
    transcript: list[Turn | None] = []
    final_text = None
    last, last_choice = None, None  # the last assistant message, and the choice it came in
    awaiting: CallsById = {}  # call id → (the latest call with that id, its batch), until answered
    legacy_call: ToolCall | None = None  # a legacy function_call waiting for its function message
    responses: list[usage.Call] = []  # each assistant message's model call
    # The text is a string or None (content_text), so the turns of known roles are written
    # as they are (``turn`` would check them again: a third of the loop's cost).
    for i, message in enumerate(messages):
        if type(message) is not dict and not isinstance(message, Mapping):
            raise InvalidInput.single(path_of(i), "must be a message object")
        role = message.get("role")
        element = message
        if role is None and (held := _held(message)) is not None:
            choices[i], message, inside[i] = held
            role = message.get("role")
        text = message.get("content")
        if text is not None and type(text) is not str:  # a string is most messages' content
            text = content_text(text)
        if role == "tool":
            call, batch = (None, None)
            call_id = message.get("tool_call_id")
            if type(call_id) is str or is_join_key(call_id):
                call, batch = awaiting.pop(call_id, (None, None))
            if call is not None:
                call["result"] = text
                transcript.append({"role": "tool", "text": text, "batch": batch})
            else:
                transcript.append({"role": "tool", "text": text})
            continue
        if role == "function":
            batch = None
            if legacy_call is not None:
                legacy_call["result"] = text
                legacy_call, batch = None, len(batches) - 1
            transcript.append(turn("tool", text, batch))
            continue
        if role != "assistant":
            transcript.append(turn(role, text))
            continue
        last, last_choice = message, choices.get(i)
        response = _response_usage(element, i, line)
        responses.append(response)
        figures = usage.turn_figures(response)
        tool_calls = message.get("tool_calls") or []
        if type(tool_calls) is not list:
            raise InvalidInput.single(f"{path_of(i)}.tool_calls", "must be a list")
        if tool_calls:
            calls: list[ToolCall] = []
            batch = len(batches)
            for j, raw_call in enumerate(tool_calls):
                call = _call(raw_call, path_of, i, j)
                calls.append(call)
                call_id = call["id"]
                if type(call_id) is str or is_join_key(call_id):
                    awaiting[call_id] = (call, batch)
            batches.append(calls)
        elif message.get("function_call") is not None:
            legacy_call = _function(message["function_call"], f"{path_of(i)}.function_call")
            batches.append([legacy_call])
        else:
            final_text = text
            transcript.append({"role": "assistant", "text": text, **figures})
            continue
        transcript.append({"role": "assistant", "text": text, "batch": len(batches) - 1, **figures})
    run = envelope_fields(line)
    run["batches"] = batches
    run["final_text"] = final_text
    with_error(run, cut_off(last, last_choice))
    request = line.get("request") if "request" in line and "messages" not in line else line
    requested = request.get("model") if isinstance(request, Mapping) else None
    run["usage"] = usage.run_usage(responses, requested=requested)
    return with_transcript(run, transcript)


def _response_usage(element: JSONObject, i: int, line: JSONObject) -> usage.Call:
    """The usage of the model call that gave assistant message ``i``: its ChatCompletion's,
    where the line holds one (the whole line, a pair's response, or an element of the
    messages list); none recorded for a plain message."""
    if "messages" in line:  # most lines: a completion only where the list holds one
        if type(element.get("choices")) is not list:
            return usage.NOTHING
        completion: Any = element
    else:
        response = line.get("response") if "request" in line else line
        request = line.get("request")
        earlier = len(request.get("messages", [])) if isinstance(request, Mapping) else 0
        if not is_completion(response) or i < earlier:
            return usage.NOTHING
        completion = response
    return usage.openai_call(completion.get("usage"), completion.get("model"))


def _conversation(
    line: JSONObject,
) -> tuple[list[Any], Callable[[int], str], dict[int, JSONObject]]:
    """The line's messages, what gives the path of each (only wanted for a problem, so not
    written out for every message), and the choice a message came in, by its position (a
    ChatCompletion's, or a response's; none for a plain messages list)."""
    if "messages" not in line and is_completion(line):
        choice = _first_choice(line, "")
        return [choice.get("message")], lambda _: "choices[0].message", {0: choice}
    if "messages" in line or "request" not in line:
        messages = line.get("messages")
        if not isinstance(messages, list):
            raise InvalidInput.single("messages", "must be a list of chat messages")
        return messages, lambda i: f"messages[{i}]", {}
    request = object_at(line.get("request"), "request")
    messages = list_at(request.get("messages", []), "request.messages")
    choice = _first_choice(object_at(line.get("response"), "response"), "response")

    def path_of(i: int) -> str:
        return f"request.messages[{i}]" if i < len(messages) else "response.choices[0].message"

    return [*messages, choice.get("message")], path_of, {len(messages): choice}


def _first_choice(completion: JSONObject, where: str) -> JSONObject:
    """The first choice of a ChatCompletion."""
    prefix = f"{where}.choices" if where else "choices"
    choices = list_at(completion.get("choices"), prefix)
    if not choices:
        raise InvalidInput.single(prefix, "holds no choice: the response has no message")
    return object_at(choices[0], f"{prefix}[0]")


def _held(element: JSONObject) -> tuple[JSONObject, JSONObject, str] | None:
    """When a messages list holds a choice, or a ChatCompletion, where a message would be:
    the choice, its message, and the message's path inside the element; else None."""
    choice, inside = element, ".message"
    choices = element.get("choices")
    if isinstance(choices, list) and choices:
        choice, inside = choices[0], ".choices[0].message"
    message = choice.get("message") if isinstance(choice, Mapping) else None
    if not isinstance(message, Mapping):
        return None
    return choice, message, inside


def _call(call: Any, path_of: Callable[[int], str], i: int, j: int) -> ToolCall:
    """Call ``j`` of message ``i``'s ``tool_calls``; its path is written only for a problem."""
    if type(call) is dict:
        function = call.get("function")
        if type(function) is dict:
            name = function.get("name")
            if type(name) is str:
                return {
                    "id": call.get("id"),
                    "name": name,
                    **arguments_fields(function.get("arguments")),
                }
    where = f"{path_of(i)}.tool_calls[{j}]"
    if not isinstance(call, Mapping):
        raise InvalidInput.single(where, "must be a tool call with a function object")
    return {"id": call.get("id"), **_function(call.get("function"), f"{where}.function")}


def _function(function: Any, where: str) -> ToolCall:
    if type(function) is not dict and not isinstance(function, Mapping):
        raise InvalidInput.single(where, "must be a function object with a name and arguments")
    return {"name": name_at(function, "name", where), **arguments_fields(function.get("arguments"))}
