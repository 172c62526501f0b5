"""Semantic Kernel's own diagnostics (semantic-kernel 1.45), which write the GenAI
conventions (``genai``) their own way:

- the model's messages are log records whose body is the message as JSON text, their name in
  the ``event.name`` attribute (``gen_ai.user.message``, ``gen_ai.choice``, ...);
- a chat span's finish reason is ``gen_ai.response.finish_reason``, the enum's repr
  (``FinishReason.TOOL_CALLS``);
- the agent's span (``invoke_agent``) gives its answer in ``gen_ai.output.messages`` as
  ``{"role", "content"}``, not in parts;
- a function is named by its plugin, ``Plugin-function`` (``Tools-get_weather``): the
  function's name is read, and the run's notes say so (docs/live-traces.md#tool-names).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from contextlib import suppress
from typing import Any

from scoring.matcher import InvalidInput

from .. import genai
from ..spans import Span, parsed
from ..turns import Message, ModelTurn, ToolRun, text_of

SCOPES = ("semantic_kernel",)
FINISH_REASON = "gen_ai.response.finish_reason"
_ENUM = "FinishReason."
# Semantic Kernel's plugin and function names are letters, digits and underscores.
_QUALIFIED = re.compile(r"([0-9A-Za-z_]+)-([0-9A-Za-z_]+)")


def model_turn(span: Span) -> ModelTurn | None:
    for event in span.events:
        if isinstance(event.body, str) and event.body.startswith("{"):
            with suppress(InvalidInput):
                event.body = parsed(event.body, event.where)
    if span.operation == genai.AGENT_OPERATION:
        return _agent_turn(span)
    turn = genai.model_turn(span)
    if turn is None:
        return None
    reason = span.attributes.get(FINISH_REASON)
    if isinstance(reason, str) and not turn.finish_reasons:
        turn.finish_reasons.append(reason.removeprefix(_ENUM).lower())
        turn.finish_field = FINISH_REASON
    for made in turn.calls:
        _unqualified(made, turn.notes)
    return turn


def tool_run(span: Span) -> ToolRun | None:
    run = genai.tool_run(span)
    if run is not None:
        _unqualified(run.call, run.notes)
    return run


def _agent_turn(span: Span) -> ModelTurn:
    turn = ModelTurn(span, agent=True)
    for key, into in ((genai.INPUT, turn.input), (genai.OUTPUT, turn.output)):
        messages = parsed(span.attributes.get(key), span.path(key))
        for message in messages if isinstance(messages, list) else ():
            if isinstance(message, Mapping):
                role = message.get("role")
                text = text_of(message.get("content"))
                into.append(Message(role if isinstance(role, str) else "assistant", text))
    return turn


def _unqualified(made: dict[str, Any], notes: list[str]) -> None:
    """The function's name of a call named ``Plugin-function``, the run's notes saying so."""
    matched = _QUALIFIED.fullmatch(made["name"])
    if matched:
        notes.append(
            f"Semantic Kernel names functions by their plugin: {made['name']} is read as "
            f"{matched[2]} (docs/live-traces.md#tool-names)"
        )
        made["name"] = matched[2]
