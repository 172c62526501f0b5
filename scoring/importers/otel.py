"""OpenTelemetry GenAI spans (docs/formats.md#opentelemetry-genai-spans; the SDK's own JSON:
docs/formats.md#sdk-objects).

The line holds ``resourceSpans`` (OTLP/JSON's ``resourceSpans[].scopeSpans[].spans[]``) or a
flat ``spans`` list, of OTLP/JSON spans or of spans as the Python SDK's own JSON writes them
(``span.to_json()``: attributes an object, ``context.span_id``, ``parent_id``, ISO
``start_time``, ``status.status_code``). Calls come from tool-execution spans
(``gen_ai.operation.name = execute_tool``): name ``gen_ai.tool.name`` (else the span name
``execute_tool {name}``), arguments ``gen_ai.tool.call.arguments`` (a JSON string), id
``gen_ai.tool.call.id``, result ``gen_ai.tool.call.result``; a span with status ERROR (or an
``error.type``) is a failed call, its status message standing in for a result that was not
recorded.

A batch is the tool spans one model call led to. Instrumentations nest them in two ways:
under the chat span itself, or beside the chat spans under an agent span (``invoke_agent``).
So tool spans whose siblings include chat spans belong to the latest chat sibling that
started before them; the others are grouped by their parent. Batches follow the start of
that chat span (or parent), calls within a batch their own start (``startTimeUnixNano``).

Each chat span's ``gen_ai.output.messages`` ``tool_call`` parts are a batch too, and
``tool_call_response`` parts of ``gen_ai.input.messages`` give results by id. Calls of both
kinds are merged by call id: a tool span fills in the result (and arguments the message
lacked) of the message's call, and a call with no tool span (its arguments broke, so the tool
never ran) stays where its message put it; tool spans that no message names keep their own
batches. The transcript is the last chat span's input and output messages. The final text
is the text parts (whose text is in ``content``) of the output messages of the last chat span
that has them, else of the agent span. A root span with status ERROR gives the run its error;
so does a final message cut off at the token limit: that span's last output message with
``finish_reason`` ``length``, or, its messages not captured, the last chat span's
``gen_ai.response.finish_reasons``.

Content capture is opt-in, so arguments are often absent: such a call has no arguments
(``arguments: null``, no raw text; a predicate naming an argument fails for that reason) and
the run's notes say how to capture them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from scoring.matcher import InvalidInput, json_type, parse_json

from .common import (
    arguments_fields,
    cut_off,
    envelope_fields,
    is_cut_off,
    is_join_key,
    list_at,
    name_at,
    object_at,
    truncation_error,
    turn,
    with_error,
    with_note,
    with_transcript,
)

NAME = "otel"
SIGNATURE = "resourceSpans or spans"
ARGUMENTS_NOT_CAPTURED = (
    "tool arguments were not captured: set OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true"
)

_TOOL_OPERATION = "execute_tool"
_CHAT_OPERATIONS = frozenset({"chat", "text_completion", "generate_content"})
_AGENT_OPERATION = "invoke_agent"
_OUTPUT = "gen_ai.output.messages"
_FINISH_REASONS = "gen_ai.response.finish_reasons"
# OTLP/JSON writes enums as numbers (some exporters as names); the SDK's JSON as its names.
_STATUS_ERROR = frozenset({2, "STATUS_CODE_ERROR", "ERROR", "StatusCode.ERROR"})
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_UNCAPTURED = "_arguments_not_captured"  # marks a call until convert() notes it in meta


def detect(line: Mapping) -> bool:
    return isinstance(line.get("resourceSpans"), list) or isinstance(line.get("spans"), list)


@dataclass(slots=True)
class Span:
    """The parts of one OTLP span that a run is made of."""

    where: str  # its path in the line
    order: int  # its position in the line, which breaks ties between equal start times
    span_id: str
    parent_id: str
    name: str
    start: int
    attributes: dict[str, Any]
    attribute_paths: dict[str, str]  # where each attribute's value is in the line
    failed: bool
    status_message: str
    # Each messages attribute parsed once, however many readers want it.
    parsed: dict[str, list] = field(default_factory=dict)

    @property
    def operation(self) -> str | None:
        # The SDK's JSON holds attribute values of any JSON type, a list or map among them.
        operation = self.attributes.get("gen_ai.operation.name")
        return operation if isinstance(operation, str) else None

    @property
    def sort_key(self) -> tuple[int, int]:
        return (self.start, self.order)

    def attribute_path(self, key: str) -> str:
        return self.attribute_paths[key]

    def messages(self, key: str) -> tuple[list, str]:
        """The messages of a ``gen_ai.*.messages`` attribute (JSON text, or structured) and
        the path they are at."""
        if key not in self.attributes:
            return [], self.where
        where = self.attribute_path(key)
        if key not in self.parsed:
            value = self.attributes[key]
            if isinstance(value, str):
                try:
                    value = parse_json(value)
                except InvalidInput as exc:
                    raise InvalidInput.single(where, exc.problems[0].message) from None
            self.parsed[key] = list_at(value, where)
        return self.parsed[key], where


def convert(line: Mapping) -> dict:
    spans = _spans(line)
    tool_spans = [span for span in spans if span.operation == _TOOL_OPERATION]
    chat_spans = sorted(
        (span for span in spans if span.operation in _CHAT_OPERATIONS), key=lambda s: s.sort_key
    )
    batches = _batches(tool_spans, chat_spans, spans)
    run = envelope_fields(line)
    run["batches"] = batches
    final = _final_span(chat_spans, spans)
    run["final_text"] = _final_text(final)
    with_error(run, _run_error(spans))
    with_error(run, _cut_off(final, chat_spans))
    uncaptured = False
    for batch in batches:
        for call in batch:
            uncaptured |= call.pop(_UNCAPTURED, False)
    if uncaptured:
        with_note(run, ARGUMENTS_NOT_CAPTURED)
    transcript = _transcript(chat_spans, batches)
    return with_transcript(run, transcript) if transcript else run


def _spans(line: Mapping) -> list[Span]:
    if "resourceSpans" in line:
        located = []
        for r, resource in enumerate(list_at(line["resourceSpans"], "resourceSpans")):
            where = f"resourceSpans[{r}].scopeSpans"
            scopes = list_at(
                object_at(resource, f"resourceSpans[{r}]").get("scopeSpans", []), where
            )
            for s, scope in enumerate(scopes):
                spans = object_at(scope, f"{where}[{s}]").get("spans", [])
                located.append((f"{where}[{s}].spans", spans))
    else:
        located = [("spans", line.get("spans"))]
    spans = []
    for where, items in located:
        for k, item in enumerate(list_at(items, where)):
            spans.append(_span(object_at(item, f"{where}[{k}]"), f"{where}[{k}]", len(spans)))
    return spans


def _span(raw: Mapping, where: str, order: int) -> Span:
    """One span, as OTLP/JSON writes it or as the Python SDK's ``span.to_json()`` does."""
    attributes_where = f"{where}.attributes"
    if isinstance(raw.get("attributes"), Mapping):  # the SDK's own JSON
        attributes = dict(raw["attributes"])
        paths = {key: f'{attributes_where}["{key}"]' for key in attributes}
        context = raw.get("context")
        span_id = context.get("span_id") if isinstance(context, Mapping) else None
        parent_id, start = raw.get("parent_id"), _iso_nanoseconds(raw.get("start_time"))
    else:
        attributes, index = read_attributes(raw.get("attributes"), attributes_where)
        paths = {
            key: f"{attributes_where}[{k}].value"
            + (".stringValue" if isinstance(attributes[key], str) else "")
            for key, k in index.items()
        }
        span_id, parent_id = raw.get("spanId"), raw.get("parentSpanId")
        start = _nanoseconds(raw.get("startTimeUnixNano"))
    status = raw.get("status")
    status = status if isinstance(status, Mapping) else {}
    code = status.get("code", status.get("status_code"))
    message = status.get("message", status.get("description"))
    return Span(
        where=where,
        order=order,
        span_id=str(span_id or ""),
        parent_id=str(parent_id or ""),
        name=raw.get("name") if isinstance(raw.get("name"), str) else "",
        start=start,
        attributes=attributes,
        attribute_paths=paths,
        failed=is_join_key(code) and code in _STATUS_ERROR,
        status_message=message if isinstance(message, str) else "",
    )


def _iso_nanoseconds(raw: Any) -> int:
    """Nanoseconds since the epoch of an ISO 8601 time (the SDK's ``start_time``); 0 when it
    is not one."""
    try:
        moment = datetime.fromisoformat(raw)
    except (TypeError, ValueError):
        return 0
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    delta = moment - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1000


def read_attributes(attributes: Any, where: str) -> tuple[dict[str, Any], dict[str, int]]:
    """OTLP ``[{key, value: AnyValue}]`` as ``{key: value}``, and each key's index."""
    values: dict[str, Any] = {}
    index: dict[str, int] = {}
    for k, attribute in enumerate(list_at(attributes or [], where)):
        key = object_at(attribute, f"{where}[{k}]").get("key")
        if isinstance(key, str):
            values[key] = any_value(attribute.get("value"))
            index[key] = k
    return values, index


def any_value(value: Any) -> Any:
    """The Python value of an OTLP/JSON ``AnyValue``; None for an empty or unknown one.

    64-bit integers come as strings in OTLP/JSON. Values are read leniently: an attribute
    nobody uses must not make a run invalid."""
    if not isinstance(value, Mapping):
        return None
    if "stringValue" in value:
        text = value["stringValue"]
        return text if isinstance(text, str) else None
    if "boolValue" in value:
        flag = value["boolValue"]
        return flag if isinstance(flag, bool) else None
    if "intValue" in value:
        return _number(value["intValue"], int)
    if "doubleValue" in value:
        return _number(value["doubleValue"], float)
    if "arrayValue" in value:
        return [any_value(item) for item in _values(value["arrayValue"])]
    if "kvlistValue" in value:
        return {
            item["key"]: any_value(item.get("value"))
            for item in _values(value["kvlistValue"])
            if isinstance(item, Mapping) and isinstance(item.get("key"), str)
        }
    return value.get("bytesValue")


def _values(container: Any) -> list:
    """The ``values`` of an ``arrayValue`` or ``kvlistValue``."""
    values = container.get("values") if isinstance(container, Mapping) else None
    return values if isinstance(values, list) else []


def _number(raw: Any, kind: type) -> Any:
    try:
        return kind(raw)
    except (TypeError, ValueError):
        return None


def _nanoseconds(raw: Any) -> int:
    number = _number(raw, int)
    return number if isinstance(number, int) else 0


# --- batches: the chat spans' tool_call parts and the tool-execution spans, merged -----------


def _batches(tool_spans: list[Span], chat_spans: list[Span], spans: list[Span]) -> list[list[dict]]:
    """A batch per model turn: the calls its chat span's output messages name, each completed
    by the tool span of its id, then the turn's tool spans that no message named."""
    message_batches = _batches_of_chat_messages(chat_spans)
    named = {
        call["id"]: call
        for calls in message_batches.values()
        for call in calls
        if call["id"] is not None
    }
    groups: dict[str, list[tuple[Span, dict]]] = {}
    for tool in tool_spans:
        call = _tool_call(tool)
        if call["id"] in named:
            _complete(named[call["id"]], call)
        else:
            groups.setdefault(_model_turn(tool, chat_spans), []).append((tool, call))
    by_id = {_turn_key(span): span for span in spans}

    def turn_start(turn_id: str) -> tuple[int, int]:
        turn_span = by_id.get(turn_id)
        if turn_span is not None:
            return turn_span.sort_key
        return min(tool.sort_key for tool, _ in groups[turn_id])

    batches = []
    for turn_id in sorted(message_batches.keys() | groups.keys(), key=turn_start):
        unnamed = sorted(groups.get(turn_id, []), key=lambda pair: pair[0].sort_key)
        batches.append([*message_batches.get(turn_id, []), *(call for _, call in unnamed)])
    return batches


def _complete(call: dict, from_tool_span: dict) -> None:
    """Give a message's call what its tool span knows: the result, whether it failed, and
    the arguments when the message did not carry them."""
    if call.get(_UNCAPTURED) and not from_tool_span.get(_UNCAPTURED):
        del call[_UNCAPTURED]
        call.pop("arguments_raw", None)
        call.update(
            (key, from_tool_span[key])
            for key in ("arguments", "arguments_raw")
            if key in from_tool_span
        )
    if "result" in from_tool_span:
        call["result"] = from_tool_span["result"]
    if from_tool_span.get("is_error"):
        call["is_error"] = True


def _model_turn(tool: Span, chat_spans: list[Span]) -> str:
    """The span whose model turn ``tool`` belongs to: the latest chat span beside it that
    started before it, else its parent."""
    earlier = [
        chat
        for chat in chat_spans
        if chat.parent_id == tool.parent_id and chat.span_id and chat.start <= tool.start
    ]
    return earlier[-1].span_id if earlier else tool.parent_id  # chat_spans are in start order


def _tool_call(span: Span) -> dict:
    attributes = span.attributes
    name = attributes.get("gen_ai.tool.name")
    if name is None and span.name.startswith(f"{_TOOL_OPERATION} "):
        name = span.name.removeprefix(f"{_TOOL_OPERATION} ")
    if name is None:
        raise InvalidInput.single(
            f"{span.where}.attributes", "required: gen_ai.tool.name (the tool's name)"
        )
    if not isinstance(name, str):
        raise InvalidInput.single(
            span.attribute_path("gen_ai.tool.name"), f"must be a string, not {json_type(name)}"
        )
    call: dict[str, Any] = {"id": _join_key(attributes.get("gen_ai.tool.call.id")), "name": name}
    if "gen_ai.tool.call.arguments" in attributes:
        call.update(arguments_fields(attributes["gen_ai.tool.call.arguments"]))
    else:
        call.update({"arguments": None, _UNCAPTURED: True})
    failed = span.failed or "error.type" in attributes
    if "gen_ai.tool.call.result" in attributes:
        call["result"] = attributes["gen_ai.tool.call.result"]
    elif failed:
        call["result"] = span.status_message or attributes.get("error.type")
    if failed:
        call["is_error"] = True
    return call


def _join_key(value: Any) -> Any:
    return value if is_join_key(value) else None


# --- batches from the messages on chat spans ----------------------------------------------------


def _batches_of_chat_messages(chat_spans: list[Span]) -> dict[str, list[dict]]:
    """The calls of each chat span's output messages, by the span's id (chat spans without
    an id are keyed by their position), in start order."""
    results = {
        part["id"]: part.get("result", part.get("response"))
        for span in chat_spans
        for part in _parts(span, "gen_ai.input.messages")
        if part.get("type") == "tool_call_response" and is_join_key(part.get("id"))
    }
    batches = {}
    for span in chat_spans:
        calls = [
            _message_call(part, where, results)
            for part, where in _located_parts(span, _OUTPUT)
            if part.get("type") == "tool_call"
        ]
        if calls:
            batches[_turn_key(span)] = calls
    return batches


def _turn_key(span: Span) -> str:
    """What a model turn is known by: its span's id, or its position when it has none."""
    return span.span_id or f"#{span.order}"


def _message_call(part: Mapping, where: str, results: dict) -> dict:
    call: dict[str, Any] = {"id": _join_key(part.get("id")), "name": name_at(part, "name", where)}
    if part.get("arguments") is None:
        call.update({"arguments": None, _UNCAPTURED: True})
    else:
        call.update(arguments_fields(part["arguments"]))
    if call["id"] in results:
        call["result"] = results[call["id"]]
    return call


def _located_parts(span: Span, key: str) -> list[tuple[Mapping, str]]:
    """The parts of every message of attribute ``key``, each with its path."""
    messages, where = span.messages(key)
    located = []
    for m, message in enumerate(messages):
        message_where = f"{where}[{m}]"
        parts = object_at(message, message_where).get("parts", [])
        for p, part in enumerate(list_at(parts, f"{message_where}.parts")):
            part_where = f"{message_where}.parts[{p}]"
            located.append((object_at(part, part_where), part_where))
    return located


def _parts(span: Span, key: str) -> list[Mapping]:
    return [part for part, _ in _located_parts(span, key)]


# --- transcript -------------------------------------------------------------------------------


def _transcript(chat_spans: list[Span], batches: list[list[dict]]) -> list:
    """The conversation as the last chat span with messages saw it: its input messages, then
    its output messages (none when content was not captured)."""
    keys = ("gen_ai.input.messages", "gen_ai.output.messages")
    last = next((s for s in reversed(chat_spans) if any(k in s.attributes for k in keys)), None)
    if last is None:
        return []
    batch_of = {call["id"]: b for b, batch in enumerate(batches) for call in batch if call["id"]}
    turns = []
    for key in keys:
        for message in last.messages(key)[0]:
            parts = message.get("parts") if isinstance(message, Mapping) else None
            parts = [p for p in parts if isinstance(p, Mapping)] if isinstance(parts, list) else []
            texts = [p["content"] for p in parts if p.get("type") == "text" and "content" in p]
            call_ids = [p.get("id") for p in parts if p.get("type") == "tool_call"]
            answers = [p for p in parts if p.get("type") == "tool_call_response"]
            for answer in answers:
                result = answer.get("result", answer.get("response"))
                turns.append(turn("tool", result, _batch_of(answer.get("id"), batch_of)))
            if texts or call_ids or not answers:
                batch = _batch_of(call_ids[0], batch_of) if call_ids else None
                text = "".join(t for t in texts if isinstance(t, str)) if texts else None
                turns.append(turn(message.get("role"), text, batch))
    return turns


def _batch_of(call_id: Any, batch_of: dict) -> int | None:
    return batch_of.get(call_id) if is_join_key(call_id) else None


# --- final text and run error -------------------------------------------------------------------


def _final_span(chat_spans: list[Span], spans: list[Span]) -> Span | None:
    """The span holding the final message: the last chat span with output messages, else
    the last agent span with them."""
    answering = [span for span in chat_spans if _OUTPUT in span.attributes] or sorted(
        (
            span
            for span in spans
            if span.operation == _AGENT_OPERATION and _OUTPUT in span.attributes
        ),
        key=lambda s: s.sort_key,
    )
    return answering[-1] if answering else None


def _final_text(final: Span | None) -> str | None:
    if final is None:
        return None
    texts = [
        part["content"]
        for part in _parts(final, _OUTPUT)
        if part.get("type") == "text" and isinstance(part.get("content"), str)
    ]
    return "".join(texts) if texts else None


def _cut_off(final: Span | None, chat_spans: list[Span]) -> str | None:
    """The run error when the final message was cut off at the token limit, as its span
    says: the last output message's ``finish_reason``, or the span's finish reasons (all
    there is when content was not captured, and then the span is the last chat span)."""
    span = final or (chat_spans[-1] if chat_spans else None)
    if span is None:
        return None
    messages = span.messages(_OUTPUT)[0]
    if messages and (error := cut_off(messages[-1])):
        return error
    reasons = span.attributes.get(_FINISH_REASONS)
    if isinstance(reasons, str):  # one reason, not in a list
        reasons = [reasons]
    for reason in reasons if isinstance(reasons, list) else ():
        if is_cut_off("finish_reason", reason):
            return truncation_error(_FINISH_REASONS, reason)
    return None


def _run_error(spans: list[Span]) -> str | None:
    """The status of a failed root span (one whose parent is not in the line)."""
    ids = {span.span_id for span in spans if span.span_id}
    for span in sorted(spans, key=lambda s: s.sort_key):
        if span.failed and span.parent_id not in ids and span.operation != _TOOL_OPERATION:
            reason = span.status_message or span.attributes.get("error.type") or "failed"
            return f"{span.name}: {reason}" if span.name else str(reason)
    return None
