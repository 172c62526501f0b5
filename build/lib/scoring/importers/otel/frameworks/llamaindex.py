"""LlamaIndex (llama-index 0.14) under OpenInference (openinference-instrumentation-llama-index).
A tool's span (``FunctionTool.acall``) gives its output as LlamaIndex's ``ToolOutput``,
``{"blocks", "tool_name", "raw_input", "raw_output", "is_error"}``: the result is
``raw_output``, and ``is_error`` a failed call. Its input, ``{"kwargs": {...}}``, is opened
by OpenInference's reader.
"""

from __future__ import annotations

from collections.abc import Mapping

from .. import openinference
from ..spans import Span
from ..turns import ModelTurn, ToolRun

SCOPES = ("openinference.instrumentation.llama_index",)


def model_turn(span: Span) -> ModelTurn | None:
    return None


def tool_run(span: Span) -> ToolRun | None:
    run = openinference.tool_run(span)
    if run is None or not isinstance(run.call.get("result"), str):
        return run
    output = span.json("output.value") if run.call["result"].startswith("{") else None
    if isinstance(output, Mapping) and "raw_output" in output:
        run.call["result"] = output["raw_output"]
        if output.get("is_error") is True:
            run.call["is_error"] = True
    return run
