"""The Vercel AI SDK's own telemetry (docs/formats.md#opentelemetry-genai-spans; ``ai`` 6, and 7's
``LegacyOpenTelemetry``), OTLP/JSON from Node. A span says what it is in ``ai.operationId``:

- ``ai.generateText.doGenerate`` / ``ai.streamText.doStream``: a model turn. Input messages
  in ``ai.prompt.messages`` (the SDK's own shape: content parts ``text``, ``tool-call``
  ``{toolCallId, toolName, input}``, ``tool-result`` ``{toolCallId, output: {type,
  value}}``), the calls in ``ai.response.toolCalls`` (``[{toolCallId, toolName, input |
  args}]``, the input as JSON text or an object), the text in ``ai.response.text``, the
  finish reason in ``ai.response.finishReason``.
- ``ai.generateText`` / ``ai.streamText``: the whole call, around its turns (its text is
  the final text).
- ``ai.toolCall``: a tool run, ``ai.toolCall.{name,id,args,result}`` (``input`` / ``output``
  in later versions); a thrown error is status ERROR.

Without ``recordInputs`` / ``recordOutputs`` only names, ids and finish reasons are left.
AI SDK 7's own integration writes the GenAI conventions (``genai``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .spans import Span, must_be_text, parsed
from .turns import Message, ModelTurn, ToolRun, call, text_of

OPERATION = "ai.operationId"
_TURN_OPERATIONS = frozenset(
    {"ai.generateText.doGenerate", "ai.streamText.doStream", "ai.generateText", "ai.streamText"}
)


def model_turn(span: Span) -> ModelTurn | None:
    if span.attributes.get(OPERATION) not in _TURN_OPERATIONS:
        return None
    reason = span.attributes.get("ai.response.finishReason")
    turn = ModelTurn(span, finish_reasons=[reason] if isinstance(reason, str) else [])
    turn.finish_field = "ai.response.finishReason"
    messages = parsed(span.attributes.get("ai.prompt.messages"), span.path("ai.prompt.messages"))
    for message in messages if isinstance(messages, list) else ():
        if isinstance(message, Mapping):
            turn.input.append(_message(message))
    output = Message("assistant", span.text("ai.response.text") or None)
    calls = parsed(span.attributes.get("ai.response.toolCalls"), span.path("ai.response.toolCalls"))
    for found in calls if isinstance(calls, list) else ():
        if isinstance(found, Mapping) and isinstance(found.get("toolName"), str):
            arguments = found.get("input", found.get("args"))
            made = call(found.get("toolCallId"), found["toolName"], arguments)
            turn.calls.append(made)
            output.call_ids.append(made["id"])
    if output.text is not None or output.call_ids:
        turn.output.append(output)
    return turn


def _message(message: Mapping[str, Any]) -> Message:
    role = message.get("role")
    content = message.get("content")
    read = Message(role if isinstance(role, str) else "user", text_of(content))
    for part in content if isinstance(content, list) else ():
        if not isinstance(part, Mapping):
            continue
        if part.get("type") == "tool-call":
            read.call_ids.append(part.get("toolCallId"))
        elif part.get("type") == "tool-result":
            output = part.get("output", part.get("result"))
            value = output.get("value") if isinstance(output, Mapping) else output
            read.answers.append((part.get("toolCallId"), value))
    return read


def tool_run(span: Span) -> ToolRun | None:
    attributes = span.attributes
    if attributes.get(OPERATION) != "ai.toolCall":
        return None
    name = must_be_text(attributes.get("ai.toolCall.name"), span.path("ai.toolCall.name"))
    arguments: Any = attributes.get("ai.toolCall.args", attributes.get("ai.toolCall.input"))
    made = call(attributes.get("ai.toolCall.id"), name, arguments, captured=arguments is not None)
    result = attributes.get("ai.toolCall.result", attributes.get("ai.toolCall.output"))
    if span.failed:
        made["is_error"] = True
        made["result"] = result if result is not None else span.status_message or None
    elif result is not None:
        made["result"] = result
    return ToolRun(span, made)
