"""Traceloop's OpenLLMetry (docs/formats.md#opentelemetry-genai-spans), in the shapes its
releases up to 0.47 write (later ones write the GenAI conventions, ``genai``), and its
entity spans.

- A model turn's messages are flattened into attributes: ``gen_ai.prompt.N.{role,content,
  tool_call_id}`` and ``gen_ai.completion.N.{role,content,finish_reason}``, calls as
  ``….tool_calls.M.{id,name,arguments}`` (arguments a JSON string). Without content
  (``TRACELOOP_TRACE_CONTENT=false``) only the span is left.
- ``traceloop.span.kind`` ``agent`` or ``workflow``: an agent's turn, its question and
  answer ``traceloop.entity.input`` / ``….output`` when they are text (not JSON).
- ``traceloop.span.kind = tool``: a tool run (the ``@tool`` decorator, its MCP
  instrumentation), named ``traceloop.entity.name``; its arguments in
  ``traceloop.entity.input`` (``{"args", "kwargs"}``, or MCP's ``{"tool_name",
  "arguments"}``), its result in ``traceloop.entity.output`` (MCP's ``{"result",
  "is_error"}``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from scoring.matcher import InvalidInput

from .spans import Span, must_be_text, parsed
from .turns import Message, ModelTurn, ToolRun, call

REQUEST_TYPE = "llm.request.type"
KIND = "traceloop.span.kind"
AGENT_KINDS = frozenset({"agent", "workflow"})
_MESSAGE_KEY = re.compile(r"gen_ai\.(prompt|completion)\.(\d+)\.(.+)")
_CALL_KEY = re.compile(r"tool_calls\.(\d+)\.(id|name|arguments)")


def model_turn(span: Span) -> ModelTurn | None:
    if span.attributes.get(KIND) in AGENT_KINDS:
        return agent_turn(span)
    if REQUEST_TYPE not in span.attributes:  # on every model span it writes
        return None
    messages: dict[tuple[str, int], dict[str, Any]] = {}
    for key, value in span.attributes.items():
        if matched := _MESSAGE_KEY.fullmatch(key):
            side, n, rest = matched.groups()
            messages.setdefault((side, int(n)), {})[rest] = value
    turn = ModelTurn(span, finish_field="gen_ai.completion.N.finish_reason")
    for (side, _), fields in sorted(
        messages.items(), key=lambda item: (item[0][0] != "prompt", item[0][1])
    ):
        role = fields.get("role")
        message = Message(role if isinstance(role, str) else "assistant")
        content = fields.get("content")
        calls: dict[int, dict[str, Any]] = {}
        for rest, value in fields.items():
            if matched := _CALL_KEY.fullmatch(rest):
                calls.setdefault(int(matched.group(1)), {})[matched.group(2)] = value
        for _, found in sorted(calls.items()):
            if not isinstance(found.get("name"), str):
                continue
            made = call(
                found.get("id"),
                found["name"],
                found.get("arguments"),
                captured="arguments" in found,
            )
            message.call_ids.append(made["id"])
            if side == "completion":
                turn.calls.append(made)
        if role == "tool":
            message.answers.append((fields.get("tool_call_id"), content))
        elif isinstance(content, str):
            message.text = content
        reason = fields.get("finish_reason")
        if side == "completion" and isinstance(reason, str):
            message.finish_reason = reason
            turn.finish_reasons.append(reason)
        (turn.output if side == "completion" else turn.input).append(message)
    return turn


def agent_turn(span: Span, answer: str | None = None) -> ModelTurn:
    """An agent's span as its turn: ``answer`` its final text, else its output's text."""
    turn = ModelTurn(span, agent=True)
    question, output = (_entity_text(span, f"traceloop.entity.{k}") for k in ("input", "output"))
    if question is not None:
        turn.input.append(Message("user", question))
    if (answer := answer if answer is not None else output) is not None:
        turn.output.append(Message("assistant", answer))
    return turn


def _entity_text(span: Span, key: str) -> str | None:
    value = span.attributes.get(key)
    if not isinstance(value, str) or value.startswith(("{", "[")):
        return None
    return value


def tool_run(span: Span) -> ToolRun | None:
    attributes = span.attributes
    if attributes.get(KIND) != "tool":
        return None
    name = attributes.get("traceloop.entity.name", span.name.removesuffix(".tool"))
    name = must_be_text(name, span.path("traceloop.entity.name"))
    given = _json(span, "traceloop.entity.input")
    arguments = None
    if isinstance(given, Mapping):
        arguments = given.get("arguments", given.get("kwargs"))
    made = call(None, name, arguments, captured=arguments is not None)
    output = _json(span, "traceloop.entity.output")
    failed = span.failed or "error.type" in attributes
    if isinstance(output, Mapping) and "result" in output:
        failed = failed or output.get("is_error") is True
        output = output["result"]
    if output is not None:
        made["result"] = output
    elif failed:
        made["result"] = span.status_message or attributes.get("error.type")
    if failed:
        made["is_error"] = True
    return ToolRun(span, made)


def _json(span: Span, key: str) -> Any:
    try:
        return parsed(span.attributes.get(key), span.path(key))
    except InvalidInput:  # not JSON: what the library wrote, as text
        return span.attributes.get(key)
