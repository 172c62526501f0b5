"""LiteLLM's own OpenTelemetry callback (docs/formats.md#opentelemetry-genai-spans; litellm
1.110, ``litellm.callbacks = [OpenTelemetry()]``):

- ``raw_gen_ai_request`` (scope ``litellm``), one per model call: the request and response
  as LiteLLM logged them, ``llm.openai.messages`` and ``llm.openai.choices``, OpenAI's chat
  messages and choices written as Python reprs (single quotes, ``None``), the calls with
  their ids. The only whole record of a call: a model turn.
- ``litellm_request`` (with ``USE_OTEL_LITELLM_REQUEST_SPAN=true``), its parent: LiteLLM's
  attributes of the call, ``gen_ai.input.messages`` / ``gen_ai.output.messages`` (the GenAI
  shape, whose output leaves the calls out) and ``gen_ai.completion.N.function_call.{name,
  arguments}`` (no id). A model turn too; where both are there, one call described twice.
- Without the request span LiteLLM writes those attributes onto the caller's span
  (``litellm.call_id`` marks it), each call's over the last one's, from a background thread
  that may come after the span ended: what that span holds is one of the calls, not the run.
  It is an agent's turn, and nothing of it is read.

Without content (``litellm.turn_off_message_logging``) the spans keep usage and costs only.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from typing import Any

from scoring.matcher import InvalidInput, parse_json

from . import genai
from .spans import Span
from .turns import Message, ModelTurn, call, text_of

SCOPE = "litellm"
MARKER = "litellm.call_id"
RAW_SPAN = "raw_gen_ai_request"
# Past this a repr is not read: a Python parse of it costs far more than JSON's.
MAX_REPR_BYTES = 4 << 20
_FUNCTION_CALL = re.compile(r"gen_ai\.completion\.(\d+)\.function_call\.(name|arguments)")


def model_turn(span: Span) -> ModelTurn | None:
    if span.scope != SCOPE and MARKER not in span.attributes:
        return None
    if span.scope != SCOPE:  # the caller's span, written over by every call
        return ModelTurn(span, agent=True)
    if span.name == RAW_SPAN or "llm.openai.choices" in span.attributes:
        return _raw_request(span)
    turn = genai.model_turn(span) or ModelTurn(span)
    if not turn.calls:
        _function_calls(span, turn)
    return turn


def _raw_request(span: Span) -> ModelTurn:
    turn = ModelTurn(span, finish_field="llm.openai.choices[0].finish_reason")
    for message in _listed(span, "llm.openai.messages"):
        turn.input.append(_message(message, None))
    for choice in _listed(span, "llm.openai.choices")[:1]:
        answer = choice.get("message")
        read = _message(answer if isinstance(answer, Mapping) else {}, turn)
        reason = choice.get("finish_reason")
        if isinstance(reason, str):
            read.finish_reason = reason
            turn.finish_reasons.append(reason)
        turn.output.append(read)
    return turn


def _message(message: Mapping[Any, Any], turn: ModelTurn | None) -> Message:
    """An OpenAI chat message; its calls are ``turn``'s when it is the turn's output."""
    role = message.get("role")
    read = Message(role if isinstance(role, str) else "assistant", text_of(message.get("content")))
    for tool_call in message.get("tool_calls") or ():
        function = tool_call.get("function") if isinstance(tool_call, Mapping) else None
        if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
            continue
        made = call(tool_call.get("id"), function["name"], function.get("arguments"))
        read.call_ids.append(made["id"])
        if turn is not None:
            turn.calls.append(made)
    if read.role == "tool":
        read.answers.append((message.get("tool_call_id"), message.get("content")))
        read.text = None
    return read


def _listed(span: Span, key: str) -> list[Mapping[Any, Any]]:
    """The attribute's list of objects, read from JSON or a Python repr; none if neither."""
    value = _python_value(span.attributes.get(key))
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []


def _python_value(text: Any) -> Any:
    """A value LiteLLM wrote with ``str()``: JSON when it is, else a Python literal."""
    if not isinstance(text, str) or len(text) > MAX_REPR_BYTES:
        return text
    try:
        return parse_json(text)
    except InvalidInput:
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _function_calls(span: Span, turn: ModelTurn) -> None:
    """The calls LiteLLM lists as ``gen_ai.completion.N.function_call.*`` (no ids)."""
    found: dict[int, dict[str, Any]] = {}
    for key, value in span.attributes.items():
        if matched := _FUNCTION_CALL.fullmatch(key):
            found.setdefault(int(matched[1]), {})[matched[2]] = value
    for _, parts in sorted(found.items()):
        if isinstance(parts.get("name"), str):
            turn.calls.append(
                call(None, parts["name"], parts.get("arguments"), captured="arguments" in parts)
            )
