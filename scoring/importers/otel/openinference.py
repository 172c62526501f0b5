"""OpenInference, Arize Phoenix's conventions (docs/formats.md#opentelemetry-genai-spans), as its
instrumentations write them (openai, anthropic, openai-agents, ...).

A span says what it is in ``openinference.span.kind``:

- ``LLM``, a model turn. Messages are flattened into attributes:
  ``llm.{input,output}_messages.N.message.{role,content,tool_call_id}``, calls as
  ``….message.tool_calls.M.tool_call.{id,function.name,function.arguments}`` (arguments a
  JSON string), and content parts as ``….message.contents.K.message_content.{type,text}``;
  anthropic's instrumentation names each call again as ``….contents.K.tool_call.*``, which
  is the same call. The finish reason is ``llm.finish_reason``. With inputs and outputs
  hidden (``OPENINFERENCE_HIDE_INPUTS`` / ``_OUTPUTS``) there are no messages, and
  ``input.value`` / ``output.value`` are ``__REDACTED__``.
- ``TOOL``, a tool run: ``tool.name``, its arguments in ``input.value`` (JSON text; the
  envelope of bound arguments that Python instrumentations write, ``{"kwargs": {...}}``,
  is opened), its result in ``output.value``; no call id. Status ERROR is a failed call.
- ``AGENT``, an agent's turn: what it was asked in ``input.value`` and answered in
  ``output.value``, read as text unless ``….mime_type`` is JSON.

Its gen_ai option writes the GenAI attributes on the same spans: a span is read once, by
this convention.
"""

from __future__ import annotations

import re
from typing import Any

from .spans import REDACTED, Span, must_be_text
from .turns import Message, ModelTurn, ToolRun, call, unwrapped

KIND = "openinference.span.kind"
_MESSAGE_KEY = re.compile(r"llm\.(input|output)_messages\.(\d+)\.message\.(.+)")
_CALL_KEY = re.compile(
    r"(?:tool_calls|contents)\.(\d+)\.tool_call\.(id|function\.name|function\.arguments)"
)
_PART_KEY = re.compile(r"contents\.(\d+)\.message_content\.(type|text)")


def model_turn(span: Span) -> ModelTurn | None:
    kind = span.attributes.get(KIND)
    if kind == "AGENT":
        return agent_turn(span)
    if kind != "LLM":
        return None
    messages: dict[tuple[str, int], dict[str, Any]] = {}
    for key, value in span.attributes.items():
        matched = _MESSAGE_KEY.fullmatch(key)
        if matched:
            side, n, rest = matched.group(1), int(matched.group(2)), matched.group(3)
            messages.setdefault((side, n), {})[rest] = (value, key)
    reason = span.attributes.get("llm.finish_reason")
    turn = ModelTurn(span, finish_reasons=[reason] if isinstance(reason, str) else [])
    turn.finish_field = "llm.finish_reason"
    for (side, _), fields in sorted(messages.items(), key=lambda item: item[0][1]):
        message = _message(span, fields, turn if side == "output" else None)
        (turn.output if side == "output" else turn.input).append(message)
    return turn


def _message(span: Span, fields: dict[str, tuple[Any, str]], turn: ModelTurn | None) -> Message:
    """One flattened message; the calls of an output message are ``turn``'s."""
    role = fields.get("role", ("assistant", ""))[0]
    message = Message(role if isinstance(role, str) else "assistant")
    calls: dict[str, dict[str, Any]] = {}  # by the call's own key, "M" of tool_calls.M first
    parts: dict[int, dict[str, Any]] = {}
    for rest, (value, _) in fields.items():
        if matched := _CALL_KEY.fullmatch(rest):
            listed = "tool_calls" if rest.startswith("tool_calls.") else "contents"
            calls.setdefault(f"{listed}.{matched.group(1)}", {})[matched.group(2)] = value
        elif matched := _PART_KEY.fullmatch(rest):
            parts.setdefault(int(matched.group(1)), {})[matched.group(2)] = value
    texts = [p.get("text") for _, p in sorted(parts.items()) if p.get("type") == "text"]
    content = fields.get("content", (None, ""))[0]
    if isinstance(content, str):
        texts = [content]
    message.text = "".join(t for t in texts if isinstance(t, str)) or None
    seen = set()
    for key in sorted(calls, key=lambda k: (not k.startswith("tool_calls"), int(k.split(".")[1]))):
        found = calls[key]
        call_id = found.get("id")
        if isinstance(call_id, str):
            if call_id in seen:
                continue  # the same call named again among the contents
            seen.add(call_id)
        name = must_be_text(found.get("function.name"), _where(span, fields, key))
        made = call(
            call_id, name, found.get("function.arguments"), captured="function.arguments" in found
        )
        message.call_ids.append(made["id"])
        if turn is not None:
            turn.calls.append(made)
    if role == "tool":
        message.answers.append((fields.get("tool_call_id", (None, ""))[0], content))
        message.text = None
    return message


def _where(span: Span, fields: dict[str, Any], key: str) -> str:
    some_key = next(iter(fields.values()))[1]
    prefix = some_key[: some_key.index(".message.") + len(".message.")]
    return span.path(f"{prefix}{key}.tool_call.function.name")


def agent_turn(span: Span, answer: str | None = None) -> ModelTurn:
    """An agent's span as its turn: ``answer`` its final text, else its output's text."""
    turn = ModelTurn(span, agent=True)
    for role, key in (("user", "input"), ("assistant", "output")):
        text = answer if role == "assistant" and answer is not None else _text(span, key)
        if text is not None:
            (turn.output if role == "assistant" else turn.input).append(Message(role, text))
    return turn


def _text(span: Span, key: str) -> str | None:
    value = span.attributes.get(f"{key}.value")
    if not isinstance(value, str) or value in REDACTED:
        return None
    return None if span.attributes.get(f"{key}.mime_type") == "application/json" else value


def tool_run(span: Span) -> ToolRun | None:
    if span.attributes.get(KIND) != "TOOL":
        return None
    name = must_be_text(span.attributes.get("tool.name", span.name), span.path("tool.name"))
    arguments = unwrapped(span.attributes.get("input.value"))
    made = call(None, name, arguments, captured=arguments is not None)
    result = span.attributes.get("output.value")
    if isinstance(result, str) and result in REDACTED:
        result = None
    if span.failed:
        made["is_error"] = True
        made["result"] = span.status_message or result
    elif result is not None:
        made["result"] = result
    return ToolRun(span, made)
