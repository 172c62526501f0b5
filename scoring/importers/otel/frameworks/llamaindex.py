"""LlamaIndex (llama-index 0.14) under OpenInference (openinference-instrumentation-llama-index)
and OpenLLMetry (opentelemetry-instrumentation-llamaindex).

OpenInference: a tool's span (``FunctionTool.acall``) gives its output as LlamaIndex's
``ToolOutput``, ``{"blocks", "tool_name", "raw_input", "raw_output", "is_error"}``: the result
is ``raw_output``, and ``is_error`` a failed call. Its input, ``{"kwargs": {...}}``, is opened
by OpenInference's reader.

OpenLLMetry writes every step of the agent's workflow as a ``BaseWorkflowAgent.task`` span,
and leaves the model calls to the SDK's instrumentation (none when it is not installed). The
step that calls a tool names it in ``tool.name`` and ``tool.arguments``, even with content
off; with content on, its output holds the call's id (``tool_id``) and the ``ToolOutput``.
The workflow's last step holds the answer (``{"result": {"response": {"blocks": ...}}}``).
The tool's own span (``FunctionTool.task``) repeats the call without its id, and is not read.
OpenInference writes LlamaIndex preparing each model call as an LLM span of its own, which
is no model call (docs/formats.md#usage).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scoring.matcher import InvalidInput

from .. import openinference, openllmetry
from ..spans import Span
from ..turns import ModelTurn, ToolRun, call

SCOPES = ("openinference.instrumentation.llama_index", "opentelemetry.instrumentation.llamaindex")
OPENLLMETRY = "opentelemetry.instrumentation.llamaindex"
STEP_OUTPUT = "traceloop.entity.output"


def model_turn(span: Span) -> ModelTurn | None:
    if span.scope != OPENLLMETRY:
        return _preparing(span)
    output = _step_output(span)
    result = output.get("result")
    response = result.get("response") if isinstance(result, Mapping) else None
    if not isinstance(response, Mapping):
        return None
    return openllmetry.agent_turn(span, answer=_text(response.get("blocks")))


def _preparing(span: Span) -> ModelTurn | None:
    """OpenInference's span of LlamaIndex preparing a model call (``_prepare_chat_with_tools``):
    an LLM span with the call's messages, before the call's own; no model call itself."""
    if not span.name.endswith("._prepare_chat_with_tools"):
        return None
    turn = openinference.model_turn(span)
    if turn is not None:
        turn.model_call = False
    return turn


def tool_run(span: Span) -> ToolRun | None:
    if span.scope == OPENLLMETRY:
        return _step_tool_run(span)
    run = openinference.tool_run(span)
    if run is None or not isinstance(run.call.get("result"), str):
        return run
    output = span.json("output.value") if run.call["result"].startswith("{") else None
    if isinstance(output, Mapping) and "raw_output" in output:
        run.call["result"] = output["raw_output"]
        if output.get("is_error") is True:
            run.call["is_error"] = True
    return run


def _step_tool_run(span: Span) -> ToolRun | None:
    name = span.attributes.get("tool.name")
    if not isinstance(name, str):
        return None
    output = _step_output(span)
    made = call(output.get("tool_id"), name, span.attributes.get("tool.arguments"))
    tool_output = output.get("tool_output")
    if isinstance(tool_output, Mapping) and "raw_output" in tool_output:
        made["result"] = tool_output["raw_output"]
        if tool_output.get("is_error") is True:
            made["is_error"] = True
    elif span.failed:
        made.update(result=span.status_message, is_error=True)
    return ToolRun(span, made)


def _step_output(span: Span) -> Mapping[str, Any]:
    """A step's output object; empty when content was off, or it is not a JSON object."""
    try:
        output = span.json(STEP_OUTPUT)
    except InvalidInput:
        return {}
    return output if isinstance(output, Mapping) else {}


def _text(blocks: Any) -> str | None:
    """The text of a LlamaIndex message's blocks, or None when it has none."""
    if not isinstance(blocks, list):
        return None
    texts = [b["text"] for b in blocks if isinstance(b, Mapping) and isinstance(b.get("text"), str)]
    return "".join(texts) if texts else None
