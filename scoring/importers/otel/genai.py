"""OpenTelemetry's GenAI semantic conventions (docs/formats.md#opentelemetry-genai-spans), in
every shape they have had, and the MCP conventions for tool calls.

Model turns (a span with ``gen_ai.operation.name`` ``chat``, ``text_completion`` or
``generate_content``, or any span carrying messages; ``invoke_agent``, an agent's turn):

- 1.37 and later: the attributes ``gen_ai.input.messages``, ``gen_ai.output.messages`` and
  ``gen_ai.system_instructions`` (JSON text or structured), or the same as attributes of a
  ``gen_ai.client.inference.operation.details`` event. A message is ``{role, parts,
  finish_reason}``; parts are ``{"type": "text", "content"}``, ``{"type": "tool_call", id,
  name, arguments}`` and ``{"type": "tool_call_response", id, response | result}``.
- 1.36 and earlier: events, on the span or sent as log records, named
  ``gen_ai.{system,user,assistant,tool}.message`` (body ``{content, tool_calls, id}``) and
  ``gen_ai.choice`` (body ``{finish_reason, message: {content, tool_calls}}``); a tool
  call is ``{id, function: {name, arguments}}``, its arguments left out when content is not
  captured. Content given as Bedrock's blocks (``[{"text"}, {"toolUse": {toolUseId, name,
  input}}, {"toolResult": {toolUseId, content}}]``, as strands writes it) is read too.

Tool runs: ``execute_tool`` spans (``gen_ai.tool.name``, else the span name ``execute_tool
{name}``; ``gen_ai.tool.call.{id,arguments,result}``), and MCP client spans with
``mcp.method.name = tools/call``. A span with status ERROR, or an ``error.type``
(``tool_error`` for an MCP result with ``isError``), is a failed call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from scoring.matcher import InvalidInput

from ..common import list_at, object_at
from .spans import REDACTED, Event, Span, must_be_text, parsed
from .turns import CallDict, Message, ModelTurn, ToolRun, call, text_of

NAME = "gen_ai"
TOOL_OPERATION = "execute_tool"
AGENT_OPERATION = "invoke_agent"
MODEL_OPERATIONS = frozenset({"chat", "text_completion", "generate_content", AGENT_OPERATION})
INPUT, OUTPUT, SYSTEM = (
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.system_instructions",
)
FINISH_REASONS = "gen_ai.response.finish_reasons"
DETAILS_EVENT = "gen_ai.client.inference.operation.details"
_MESSAGE_EVENTS = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}
CHOICE_EVENT = "gen_ai.choice"
# google-adk: a span summing up a turn's tool calls, which are spans of their own too; and
# its first telemetry schema's tool attributes, "{}" or "N/A" when content is not captured.
ADK_MERGED = "(merged tools)"
ADK_ARGUMENTS, ADK_RESULT = "gcp.vertex.agent.tool_call_args", "gcp.vertex.agent.tool_response"
ADK_NOT_CAPTURED = frozenset({"{}", "N/A"})


def model_turn(span: Span) -> ModelTurn | None:
    # One event with every attribute, or (strands) an event per attribute.
    details = [e for e in span.events if e.name == DETAILS_EVENT]
    message_events = [e for e in span.events if e.name in _MESSAGE_EVENTS or e.name == CHOICE_EVENT]
    has_messages = INPUT in span.attributes or OUTPUT in span.attributes
    if not (has_messages or details or message_events or span.operation in MODEL_OPERATIONS):
        return None
    turn = ModelTurn(
        span,
        finish_reasons=_finish_reasons(span.attributes.get(FINISH_REASONS)),
        agent=span.operation == AGENT_OPERATION,
    )
    if has_messages:
        _read_messages(turn, lambda key: (span.attributes.get(key), span.path(key)))
    elif details:
        located = {
            key: (e.attributes[key], f"{e.where}.{key}") for e in details for key in e.attributes
        }
        _read_messages(turn, lambda key: located.get(key, (None, "")))
    elif message_events:
        for event in message_events:
            _read_event(turn, event)
    return turn


def tool_run(span: Span) -> ToolRun | None:
    attributes = span.attributes
    is_mcp_call = attributes.get("mcp.method.name") == "tools/call"
    if span.operation != TOOL_OPERATION and not is_mcp_call:
        return None
    name = attributes.get("gen_ai.tool.name")
    if name is None and span.name.startswith(f"{TOOL_OPERATION} "):
        name = span.name.removeprefix(f"{TOOL_OPERATION} ")
    if name is None and is_mcp_call and "tools/call " in span.name:
        name = span.name.partition("tools/call ")[2]  # "MCP send tools/call {name}" too
    if name is None:
        raise InvalidInput.single(
            f"{span.where}.attributes", "required: gen_ai.tool.name (the tool's name)"
        )
    name = must_be_text(name, span.path("gen_ai.tool.name"))
    if name == ADK_MERGED:
        return None
    arguments = attributes.get("gen_ai.tool.call.arguments", attributes.get(ADK_ARGUMENTS))
    made = call(
        attributes.get("gen_ai.tool.call.id") or attributes.get("mcp.request.id"),
        name,
        arguments,
        captured=arguments is not None
        and not (isinstance(arguments, str) and arguments in ADK_NOT_CAPTURED),
    )
    failed = span.failed or "error.type" in attributes
    result = attributes.get("gen_ai.tool.call.result", attributes.get(ADK_RESULT))
    if result is not None and not (
        isinstance(result, str) and result in ADK_NOT_CAPTURED | REDACTED
    ):
        made["result"] = result
    elif failed:
        made["result"] = span.status_message or attributes.get("error.type")
    if failed:
        made["is_error"] = True
    return ToolRun(span, made)


# --- 1.37 and later: messages as attributes ------------------------------------------------


def _read_messages(turn: ModelTurn, read: Callable[[str], tuple[Any, str]]) -> None:
    """Messages of the 1.37 shape; ``read(key)`` gives an attribute's value and path."""
    for key, into in ((SYSTEM, turn.input), (INPUT, turn.input), (OUTPUT, turn.output)):
        value, where = read(key)
        if value is None:
            continue
        value = parsed(value, where)
        if value is None:  # redacted
            continue
        if key == SYSTEM:
            text = text_of(value) if isinstance(value, list) else value
            into.append(Message("system", text if isinstance(text, str) else None))
            continue
        for m, message in enumerate(list_at(value, where)):
            into.append(_message(turn, object_at(message, f"{where}[{m}]"), f"{where}[{m}]", key))


def _message(turn: ModelTurn, message: Mapping[str, Any], where: str, key: str) -> Message:
    role = message.get("role")
    read = Message(role if isinstance(role, str) else "assistant")
    texts = []
    for p, part in enumerate(list_at(message.get("parts", []), f"{where}.parts")):
        part = object_at(part, f"{where}.parts[{p}]")
        kind = part.get("type")
        if kind == "text" and isinstance(part.get("content"), str):
            texts.append(part["content"])
        elif kind == "tool_call" and key == OUTPUT:
            made = call(
                part.get("id"),
                must_be_text(part.get("name"), f"{where}.parts[{p}].name"),
                part.get("arguments"),
                captured="arguments" in part,
            )
            turn.calls.append(made)
            read.call_ids.append(made["id"])
        elif kind == "tool_call" and key == INPUT:
            read.call_ids.append(part.get("id"))
        elif kind == "tool_call_response":
            read.answers.append((part.get("id"), part.get("result", part.get("response"))))
    read.text = "".join(texts) if texts else None
    reason = message.get("finish_reason")
    if key == OUTPUT and isinstance(reason, str):
        read.finish_reason = reason
        if reason not in turn.finish_reasons:
            turn.finish_reasons.append(reason)
    return read


# --- 1.36 and earlier: messages as events -------------------------------------------------


def _read_event(turn: ModelTurn, event: Event) -> None:
    if event.name == CHOICE_EVENT:
        message = parsed_content(event.value("message"), f"{event.where}.message")
        if isinstance(message, str | list):  # strands: the text itself, or content blocks
            message = {"content": message}
        elif message is None:  # google-adk's first schema: {content: Content, finish_reason}
            message = {"content": event.value("content")}
        reason = event.value("finish_reason")
        if isinstance(reason, str) and reason not in turn.finish_reasons:
            turn.finish_reasons.append(reason)
        turn.output.append(_event_message(turn, event, message, "assistant", output=True))
        return
    role = _MESSAGE_EVENTS[event.name]
    body = event.body if isinstance(event.body, Mapping) else event.attributes
    turn.input.append(_event_message(turn, event, body, role, output=False))


def _event_message(turn: ModelTurn, event: Event, body: Any, role: str, *, output: bool) -> Message:
    body = body if isinstance(body, Mapping) else {}
    content = parsed_content(body.get("content"), f"{event.where}.content")
    read = Message(role, text_of(content))
    if isinstance(content, Mapping):  # google-genai's Content: {role, parts}
        _read_gemini_parts(turn, read, content.get("parts"), output)
    for tool_call in body.get("tool_calls") or ():
        if isinstance(tool_call, Mapping):
            function = tool_call.get("function")
            function = function if isinstance(function, Mapping) else {}
            name = function.get("name")
            if not isinstance(name, str):
                continue
            made = call(
                tool_call.get("id"),
                name,
                function.get("arguments"),
                captured="arguments" in function,
            )
            _keep(turn, read, made, output)
    for block in content if isinstance(content, list) else ():  # Bedrock's content blocks
        if not isinstance(block, Mapping):
            continue
        if isinstance(use := block.get("toolUse"), Mapping) and isinstance(use.get("name"), str):
            _keep(turn, read, call(use.get("toolUseId"), use["name"], use.get("input")), output)
        elif isinstance(answer := block.get("toolResult"), Mapping):
            read.answers.append((answer.get("toolUseId"), answer.get("content")))
    if role == "tool":
        read.answers.append((body.get("id", body.get("tool_call_id")), content))
        read.text = None
    return read


def parsed_content(content: Any, where: str) -> Any:
    """Content that is a list of blocks or an object written as JSON text is read as such;
    text that is not JSON is the message's text."""
    if isinstance(content, str) and (content in REDACTED or content.startswith(("[{", "{"))):
        try:
            return parsed(content, where)
        except InvalidInput:
            return content
    return content


def _read_gemini_parts(turn: ModelTurn, read: Message, parts: Any, output: bool) -> None:
    texts = []
    for part in parts if isinstance(parts, list) else ():
        if not isinstance(part, Mapping):
            continue
        if isinstance(part.get("text"), str):
            texts.append(part["text"])
        function = part.get("function_call")
        if isinstance(function, Mapping) and isinstance(function.get("name"), str):
            _keep(
                turn, read, call(function.get("id"), function["name"], function.get("args")), output
            )
        answer = part.get("function_response")
        if isinstance(answer, Mapping):
            read.answers.append((answer.get("id"), answer.get("response")))
    if texts:
        read.text = "".join(texts)


def _keep(turn: ModelTurn, message: Message, made: CallDict, output: bool) -> None:
    """A call a message names: the turn's own when it is the turn's output."""
    if output:
        turn.calls.append(made)
    message.call_ids.append(made["id"])


def _finish_reasons(value: Any) -> list[str]:
    if isinstance(value, str):  # one reason, not in a list
        return [value]
    return [r for r in value if isinstance(r, str)] if isinstance(value, list) else []
