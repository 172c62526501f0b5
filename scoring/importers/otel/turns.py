"""What every convention reads a span as (docs/formats.md#opentelemetry-genai-spans): a
model turn (the messages a model call was given, what it answered, the calls it asked for),
an agent's turn (an agent invocation's span: what it was asked and answered, no model call
of its own), or a tool run (one tool executed, or a framework's own control step).
Conventions differ in where they write these; the run is assembled from these alone
(``assembly.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from scoring.matcher import InvalidInput, parse_json

from ..common import arguments_fields, is_join_key
from .spans import REDACTED, Span

# A canonical call's mark that the instrumentation did not record its arguments.
CAPTURED = "arguments_captured"
# Finish reasons that say the model asked for tool calls, as each provider spells them.
CALLS_ASKED = frozenset({"tool_calls", "tool_call", "tool_use", "function_call", "tool-calls"})
# Providers whose finish reason does not say whether calls were asked for: Gemini's is
# STOP on a turn that returns function calls, and its instrumentations pass it on.
_SILENT_PROVIDERS = frozenset({"gemini", "gcp.gemini", "gcp.gen_ai", "gcp.vertex_ai", "google"})
_PROVIDER_KEYS = ("gen_ai.provider.name", "gen_ai.system", "llm.provider", "llm.system")
# A call as a run file holds it (docs/formats.md#calls): what ``call`` makes.
CallDict = dict[str, Any]


class NotARun(InvalidInput):
    """A trace that is no run of an agent (docs/live-traces.md#assembly): no span of it is a
    model call, an agent's turn or a tool call, and none names its case."""


@dataclass(slots=True)
class Message:
    """A message of a model turn: its role, text, the ids of the calls it asked for and the
    results it gave (``(call id, result)``)."""

    role: str
    text: str | None = None
    call_ids: list[Any] = field(default_factory=list)
    answers: list[tuple[Any, Any]] = field(default_factory=list)
    finish_reason: str | None = None


@dataclass(slots=True)
class ModelTurn:
    """One model call: ``calls`` are canonical call dicts (see ``call``)."""

    span: Span
    calls: list[CallDict] = field(default_factory=list)
    input: list[Message] = field(default_factory=list)
    output: list[Message] = field(default_factory=list)
    finish_reasons: list[str] = field(default_factory=list)
    finish_field: str = "gen_ai.response.finish_reasons"  # where the convention keeps them
    # An agent's turn: its span is the agent's invocation, around model calls or in place of
    # them (the only record of the final text where no model call was recorded).
    agent: bool = False
    notes: list[str] = field(default_factory=list)  # what the reader assumed, for the run
    # The same call's span from another instrumentation, read for what this one lacks.
    also: Span | None = None
    # False for a framework's step that holds a model's messages but is no call of it.
    model_call: bool = True
    # An agent's turn whose span holds the run's token totals where no model call is
    # recorded (Agno under OpenLLMetry).
    run_totals: bool = False

    @property
    def text(self) -> str | None:
        texts = [m.text for m in self.output if m.text is not None]
        return "".join(texts) if texts else None

    @property
    def captured(self) -> bool:
        """Whether message content was recorded: some text, result or call arguments
        (instrumentations that leave content out keep at most names, ids and reasons)."""
        messages = [*self.input, *self.output]
        return (
            any(m.text is not None for m in messages)
            or any(result is not None for m in messages for _, result in m.answers)
            or any(c.get(CAPTURED) is not False for c in self.calls)
        )

    @property
    def asked_for_calls(self) -> bool:
        return bool(CALLS_ASKED.intersection(self.finish_reasons))

    @property
    def tells_calls(self) -> bool:
        """Whether its finish reasons say if it asked for tool calls."""
        if not self.finish_reasons:
            return False
        attributes = self.span.attributes
        provider = next((attributes[k] for k in _PROVIDER_KEYS if k in attributes), None)
        return not (isinstance(provider, str) and provider.lower() in _SILENT_PROVIDERS)

    @property
    def results(self) -> dict[Any, Any]:
        """The results its input messages gave, by call id."""
        return {
            call_id: result
            for message in self.input
            for call_id, result in message.answers
            if is_join_key(call_id)
        }


@dataclass(slots=True)
class ToolRun:
    """One tool executed: its span and its call (a canonical call dict). A ``control`` step
    is the framework's own (smolagents' ``final_answer``, DSPy's ``finish``): not a call of
    the agent's."""

    span: Span
    call: CallDict
    control: bool = False
    notes: list[str] = field(default_factory=list)  # what the reader assumed, for the run


def call(call_id: Any, name: str, arguments: Any, *, captured: bool = True) -> CallDict:
    """A canonical call; ``arguments`` as sent (a JSON string, an object, or a string of a
    JSON string: double-encoded arguments are read through). Not ``captured``: no arguments,
    and ``arguments_captured: false``."""
    made: CallDict = {"id": call_id if is_join_key(call_id) else None, "name": name}
    if not captured or (isinstance(arguments, str) and arguments in REDACTED):
        made.update({"arguments": None, CAPTURED: False})
        return made
    made.update(arguments_fields(arguments))
    if made["arguments"] is None and isinstance(arguments, str):
        inner = _double_encoded(arguments)
        if inner is not None:
            made.pop("arguments_raw", None)
            made["arguments"] = inner
    return made


def _double_encoded(raw: str) -> Mapping[str, Any] | None:
    """The arguments of a JSON string holding an object's JSON text (some instrumentations
    encode arguments twice); None when ``raw`` is not one."""
    try:
        inner = parse_json(raw)
    except InvalidInput:
        return None
    return arguments_fields(inner)["arguments"] if isinstance(inner, str) else None


# The envelope some Python instrumentations write a function's arguments in: its bound
# positional and keyword arguments (``{"kwargs": {...}}``, smolagents' ``{"args": [],
# "sanitize_inputs_outputs": true, "kwargs": {...}}``).
_ENVELOPE_KEYS = frozenset({"args", "kwargs", "sanitize_inputs_outputs"})


def unwrapped(arguments: Any) -> Any:
    """The keyword arguments of an envelope of bound arguments with no positional ones;
    anything else as it is. JSON text is read first."""
    value = arguments
    if isinstance(value, str) and value.startswith("{") and '"kwargs"' in value:
        try:
            value = parse_json(value)
        except InvalidInput:
            return arguments
    if (
        isinstance(value, Mapping)
        and isinstance(value.get("kwargs"), Mapping)
        and not value.get("args")
        and _ENVELOPE_KEYS.issuperset(value)
    ):
        return value["kwargs"]
    return arguments


def text_of(content: Any) -> str | None:
    """Message content as text: a string, or the text of its text parts (``{"type":
    "text", "text" | "content"}``, or ``{"text"}`` alone as Bedrock writes them)."""
    if content is None or isinstance(content, str):
        return None if content in REDACTED else content
    if isinstance(content, list):
        texts = []
        for part in content:
            if not isinstance(part, Mapping):
                continue
            kind = part.get("type")
            text = part.get("text", part.get("content"))
            if (kind in (None, "text", "output_text", "input_text")) and isinstance(text, str):
                texts.append(text)
        return "".join(texts) if texts else None
    return None
