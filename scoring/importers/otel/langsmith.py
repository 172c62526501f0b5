"""LangSmith's OpenTelemetry mode (docs/formats.md#opentelemetry-genai-spans; langsmith 0.15,
``LANGSMITH_TRACING_MODE=otel``), scope ``langsmith``. Each span says what it is in
``langsmith.span.kind``; what it was given and gave back is JSON in ``gen_ai.prompt`` and
``gen_ai.completion``:

- ``llm``, a model turn: the prompt is ``{"messages": [[message, ...]]}`` and the completion
  ``{"generations": [[{"text", "generation_info": {"finish_reason"}, "message"}]]}``, each
  message LangChain's serialisation (``{"lc": 1, "type": "constructor", "id": [...,
  "AIMessage"], "kwargs": {"content", "tool_calls": [{"name", "args", "id"}],
  "tool_call_id"}}``) or the plain dict of it.
- ``tool``, a tool run: ``gen_ai.tool.name``, ``gen_ai.tool.call.id``, the arguments in
  ``gen_ai.prompt``, the result in ``gen_ai.completion`` (``{"output": ToolMessage}``).

With inputs and outputs hidden (``LANGSMITH_HIDE_INPUTS`` / ``_OUTPUTS``) every prompt and
completion is ``{}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .spans import Span, must_be_text, parsed
from .turns import Message, ModelTurn, ToolRun, call, text_of

SCOPES = ("langsmith",)
KIND = "langsmith.span.kind"
PROMPT, COMPLETION = "gen_ai.prompt", "gen_ai.completion"
_ROLES = {"system": "system", "human": "user", "ai": "assistant", "tool": "tool"}


def model_turn(span: Span) -> ModelTurn | None:
    if span.attributes.get(KIND) != "llm":
        return None
    turn = ModelTurn(span, finish_field=f"{COMPLETION}.generations[0][0].generation_info")
    prompt = _json(span, PROMPT)
    for batch in _list(prompt.get("messages")):
        for message in _list(batch) if isinstance(batch, list) else [batch]:
            turn.input.append(_message(message, None))
    for generations in _list(_json(span, COMPLETION).get("generations"))[:1]:
        for generation in _list(generations)[:1]:
            if not isinstance(generation, Mapping):
                continue
            read = _message(generation.get("message"), turn)
            if read.text is None and isinstance(generation.get("text"), str):
                read.text = generation["text"] or None
            info = generation.get("generation_info")
            reason = info.get("finish_reason") if isinstance(info, Mapping) else None
            if isinstance(reason, str):
                read.finish_reason = reason
                turn.finish_reasons.append(reason)
            turn.output.append(read)
    return turn


def tool_run(span: Span) -> ToolRun | None:
    if span.attributes.get(KIND) != "tool":
        return None
    name = span.attributes.get("gen_ai.tool.name", span.name)
    name = must_be_text(name, span.path("gen_ai.tool.name"))
    arguments = _json(span, PROMPT)
    made = call(span.attributes.get("gen_ai.tool.call.id"), name, arguments or None,
                captured=bool(arguments))  # fmt: skip
    output = _json(span, COMPLETION).get("output")
    if output is not None:
        made["result"] = _kwargs(output).get("content", output)
    if span.failed:
        made["is_error"] = True
        made.setdefault("result", span.status_message or None)
    return ToolRun(span, made)


def _message(raw: Any, turn: ModelTurn | None) -> Message:
    """A LangChain message; its calls are ``turn``'s when it is the turn's output."""
    fields = _kwargs(raw)
    kind = fields.get("type")
    if not isinstance(kind, str) and isinstance(raw, Mapping) and isinstance(raw.get("id"), list):
        kind = str(raw["id"][-1]).removesuffix("Message").lower()  # the class: AIMessage
    role = _ROLES.get(kind if isinstance(kind, str) else "", "assistant")
    read = Message(role, text_of(fields.get("content")) or None)
    for tool_call in _list(fields.get("tool_calls")):
        if isinstance(tool_call, Mapping) and isinstance(tool_call.get("name"), str):
            made = call(tool_call.get("id"), tool_call["name"], tool_call.get("args"))
            read.call_ids.append(made["id"])
            if turn is not None:
                turn.calls.append(made)
    if role == "tool":
        read.answers.append((fields.get("tool_call_id"), fields.get("content")))
        read.text = None
    return read


def _kwargs(message: Any) -> Mapping[str, Any]:
    """A LangChain message's fields: its serialisation's ``kwargs``, or the dict itself."""
    if not isinstance(message, Mapping):
        return {}
    fields = message.get("kwargs") if message.get("lc") is not None else message
    return fields if isinstance(fields, Mapping) else {}


def _json(span: Span, key: str) -> Mapping[str, Any]:
    value = parsed(span.attributes.get(key), span.path(key))
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
