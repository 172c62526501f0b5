"""Agno (agno 3.1) under OpenLLMetry (opentelemetry-instrumentation-agno), which records the
agent (``<name>.agent``, its answer in ``traceloop.entity.output``) and its tools, not the
model calls. A tool's span holds the arguments themselves in ``traceloop.entity.input``
(not OpenLLMetry's ``{"args", "kwargs"}``), and in ``traceloop.entity.output`` the repr of
Agno's ``ToolExecution``, whose ``result=`` is the result (``status=`` other than
``'success'`` a failed call). The agent's span holds the run's token totals.
"""

from __future__ import annotations

from collections.abc import Mapping

from scoring.matcher import InvalidInput

from .. import openllmetry
from ..spans import Span, must_be_text, parsed
from ..turns import ModelTurn, ToolRun, call

SCOPES = ("opentelemetry.instrumentation.agno",)
INPUT, OUTPUT = "traceloop.entity.input", "traceloop.entity.output"


def model_turn(span: Span) -> ModelTurn | None:
    """The agent's span, read as OpenLLMetry reads it, holding the run's token totals (no
    model call is recorded to hold them)."""
    if span.attributes.get("traceloop.span.kind") != "agent":
        return None
    turn = openllmetry.model_turn(span)
    if turn is not None and turn.agent:
        turn.run_totals = True
    return turn


def tool_run(span: Span) -> ToolRun | None:
    attributes = span.attributes
    if attributes.get("traceloop.span.kind") != "tool":
        return None
    name = attributes.get("gen_ai.tool.name", span.name.removesuffix(".tool"))
    name = must_be_text(name, span.path("gen_ai.tool.name"))
    try:
        arguments = parsed(attributes.get(INPUT), span.path(INPUT))
    except InvalidInput:
        arguments = attributes.get(INPUT)
    made = call(None, name, arguments, captured=isinstance(arguments, Mapping))
    output = attributes.get(OUTPUT)
    if isinstance(output, str):
        made["result"] = _result(output)
    status = output.partition(" ")[0] if isinstance(output, str) else ""
    if span.failed or (status.startswith("status=") and status != "status='success'"):
        made["is_error"] = True
        made.setdefault("result", span.status_message or None)
    return ToolRun(span, made)


def _result(execution: str) -> str:
    """The ``result=...`` of a ToolExecution's repr, else the repr."""
    _, found, rest = execution.partition("result=")
    if not found:
        return execution
    value, found, _ = rest.partition(" error=")
    return value if found else execution
