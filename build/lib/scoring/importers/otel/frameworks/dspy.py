"""DSPy under OpenInference (openinference-instrumentation-dspy; dspy 3.4). DSPy's modules talk
to the model in its adapters' text protocol, not in tool calls:

- a model call (``LM.__call__``) answers with fields, ``[[ ## next_tool_name ## ]]`` ...
  (ChatAdapter's text) or a JSON object (JSONAdapter's). A step that picks a tool gives no
  text; the final step's ``answer`` field (else its last field other than ``reasoning``) is
  the final text;
- a tool runs as the span ``<tool>.__call__`` with no ``tool.name``, its arguments as
  ``{"kwargs": {...}}``; ReAct's own ``finish`` is its control step, no call.
"""

from __future__ import annotations

import re
from typing import Any

from scoring.matcher import InvalidInput, parse_json

from .. import openinference
from ..spans import Span
from ..turns import ModelTurn, ToolRun

SCOPES = ("openinference.instrumentation.dspy",)
FINISH = "finish"
_CALL_SUFFIX = ".__call__"
_FIELD = re.compile(r"\[\[ ## (\w+) ## \]\]")
_STEP_FIELDS = frozenset({"next_thought", "next_tool_name", "next_tool_args"})
_NOT_ANSWERS = frozenset({"reasoning", "completed"})


def model_turn(span: Span) -> ModelTurn | None:
    turn = openinference.model_turn(span)
    if turn is None or turn.agent:
        return turn
    for message in turn.output:
        if message.text is not None:
            message.text = _answer(message.text)
    return turn


def tool_run(span: Span) -> ToolRun | None:
    run = openinference.tool_run(span)
    if run is None:
        return None
    if "tool.name" not in span.attributes:
        run.call["name"] = run.call["name"].removesuffix(_CALL_SUFFIX)
    run.control = run.call["name"] == FINISH
    return run


def _answer(text: str) -> str | None:
    """The answer in a model's output fields: None for a step that picks a tool; the text
    as it is when it holds no fields."""
    fields = _fields(text)
    if fields is None:
        return text
    if _STEP_FIELDS & fields.keys():
        return None
    if "answer" in fields:
        return str(fields["answer"])
    answers = [value for key, value in fields.items() if key not in _NOT_ANSWERS]
    return str(answers[-1]) if answers else None


def _fields(text: str) -> dict[str, Any] | None:
    """ChatAdapter's ``[[ ## name ## ]]`` sections, or JSONAdapter's object; None for text
    that is neither."""
    parts = _FIELD.split(text)
    if len(parts) > 1:
        return {parts[i]: parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}
    if text.lstrip().startswith("{"):
        try:
            value = parse_json(text)
        except InvalidInput:
            return None
        return value if isinstance(value, dict) else None
    return None
