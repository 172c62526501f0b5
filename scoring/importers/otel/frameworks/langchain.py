"""LangChain and LangGraph (langchain 1.5) under OpenInference and OpenLLMetry. Their tool
spans carry LangChain's own objects, not a call id beside the arguments:

- OpenInference (openinference-instrumentation-langchain): a ``TOOL`` span's input is the
  bare argument for a tool of one parameter (``"Paris"``), and its output the ToolMessage,
  ``{"type": "tool", "data": {"content", "tool_call_id"}}``: the call's id and result.
- OpenLLMetry (opentelemetry-instrumentation-langchain): an ``execute_tool`` span's
  ``gen_ai.tool.call.arguments`` is the callback's payload, ``{"input_str": "{'city':
  'Paris'}", "inputs": {"city": "Paris"}, "tags", "metadata", "kwargs": {"tool_call_id"}}``:
  the arguments are ``inputs``, the id ``kwargs.tool_call_id``; its result is
  ``{"output": ToolMessage}``, LangChain's serialisation (``{"lc": 1, "kwargs": {"content",
  "tool_call_id"}}``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scoring.matcher import InvalidInput

from .. import genai, openinference
from ..spans import REDACTED, Span, parsed
from ..turns import ModelTurn, ToolRun, call

SCOPES = ("openinference.instrumentation.langchain", "opentelemetry.instrumentation.langchain")
ARGUMENTS, RESULT = "gen_ai.tool.call.arguments", "gen_ai.tool.call.result"


def model_turn(span: Span) -> ModelTurn | None:
    return None


def tool_run(span: Span) -> ToolRun | None:
    if (run := openinference.tool_run(span)) is not None:
        return _openinference_tool(span, run)
    if span.operation == genai.TOOL_OPERATION and (run := genai.tool_run(span)) is not None:
        return _openllmetry_tool(span, run)
    return None


def _openinference_tool(span: Span, run: ToolRun) -> ToolRun:
    """OpenInference's reading of the ``TOOL`` span, with the id and result of its
    ToolMessage."""
    message = _json(span, "output.value")
    data = message.get("data") if isinstance(message, Mapping) else None
    if isinstance(data, Mapping):
        if run.call["id"] is None:
            run.call["id"] = call(data.get("tool_call_id"), "", None)["id"]
        if "content" in data:
            run.call["result"] = data["content"]
    return run


def _openllmetry_tool(span: Span, run: ToolRun) -> ToolRun:
    """The GenAI reading of the ``execute_tool`` span, its call read from the callback's
    payload."""
    payload = _json(span, ARGUMENTS)
    payload = payload if isinstance(payload, Mapping) else {}
    kwargs = payload.get("kwargs")
    kwargs = kwargs if isinstance(kwargs, Mapping) else {}
    inputs = payload.get("inputs")
    output = _json(span, RESULT)
    message = output.get("output") if isinstance(output, Mapping) else None
    fields = message.get("kwargs") if isinstance(message, Mapping) else None
    fields = fields if isinstance(fields, Mapping) else {}
    made = call(
        kwargs.get("tool_call_id", fields.get("tool_call_id")),
        run.call["name"],
        inputs,
        captured=isinstance(inputs, Mapping),
    )
    made.update((key, run.call[key]) for key in ("result", "is_error") if key in run.call)
    if "content" in fields:
        made["result"] = fields["content"]
    run.call = made
    return run


def _json(span: Span, key: str) -> Any:
    value = span.attributes.get(key)
    if not isinstance(value, str) or value in REDACTED:
        return None
    try:
        return parsed(value, span.path(key))
    except InvalidInput:
        return None
