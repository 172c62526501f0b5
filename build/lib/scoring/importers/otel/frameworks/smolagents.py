"""smolagents under OpenInference (openinference-instrumentation-smolagents; smolagents 1.26).
An agent ends by calling its own ``final_answer`` tool, whose ``answer`` is the final text:
that step is no call of the agent's, neither in the model's output nor as the tool's span
(``FinalAnswerTool``). Tool spans wrap their arguments in ``{"args": [],
"sanitize_inputs_outputs": true, "kwargs": {...}}``, which OpenInference's reader opens.
"""

from __future__ import annotations

from typing import Any

import orjson

from .. import openinference
from ..spans import Span
from ..turns import ModelTurn, ToolRun

SCOPES = ("openinference.instrumentation.smolagents",)
FINAL_ANSWER = "final_answer"


def model_turn(span: Span) -> ModelTurn | None:
    turn = openinference.model_turn(span)
    if turn is None or turn.agent:
        return turn
    answers = [c for c in turn.calls if c["name"] == FINAL_ANSWER]
    if not answers:
        return turn
    turn.calls = [c for c in turn.calls if c["name"] != FINAL_ANSWER]
    for message in turn.output:
        message.call_ids = [i for i in message.call_ids if i not in {c["id"] for c in answers}]
    arguments = answers[-1].get("arguments")
    if isinstance(arguments, dict) and "answer" in arguments and turn.output:
        turn.output[-1].text = _text(arguments["answer"])
    return turn


def tool_run(span: Span) -> ToolRun | None:
    run = openinference.tool_run(span)
    if run is not None and run.call["name"] == FINAL_ANSWER:
        run.control = True
    return run


def _text(answer: Any) -> str:
    return answer if isinstance(answer, str) else orjson.dumps(answer).decode()
