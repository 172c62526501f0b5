"""OpenTelemetry GenAI spans exported as OTLP/JSON (formats.md §5).

The line holds ``resourceSpans`` (OTLP's ``resourceSpans[].scopeSpans[].spans[]``) or a flat
``spans`` list. Calls come from tool-execution spans (``gen_ai.operation.name =
execute_tool``): name ``gen_ai.tool.name`` (else the span name ``execute_tool {name}``),
arguments ``gen_ai.tool.call.arguments`` (a JSON string), id ``gen_ai.tool.call.id``, result
``gen_ai.tool.call.result``; a span with status ERROR (or an ``error.type``) is a failed
call, its status message standing in for a result that was not recorded.

A batch is the tool spans one model call led to. Instrumentations nest them in two ways:
under the chat span itself, or beside the chat spans under an agent span (``invoke_agent``).
So tool spans whose siblings include chat spans belong to the latest chat sibling that
started before them; the others are grouped by their parent. Batches follow the start of
that chat span (or parent), calls within a batch their own start (``startTimeUnixNano``).

With no tool spans at all, each chat span's ``gen_ai.output.messages`` ``tool_call`` parts
are a batch, and ``tool_call_response`` parts of ``gen_ai.input.messages`` give results by
id. The final text is the text parts (whose text is in ``content``) of the output messages
of the last chat span that has them, else of the agent span. A root span with status ERROR
gives the run its error.

Content capture is opt-in, so arguments are often absent: such a call keeps empty arguments
and ``meta["otel"]`` says the arguments were not captured.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from scoring.matcher import InvalidInput, json_type, parse_json

from .common import (
    arguments_fields,
    envelope_fields,
    is_join_key,
    list_at,
    name_at,
    object_at,
    with_error,
    with_meta,
)

NAME = "otel"
SIGNATURE = "resourceSpans or spans"
ARGUMENTS_NOT_CAPTURED = "arguments not captured (the instrumentation records them only on opt-in)"

_TOOL_OPERATION = "execute_tool"
_CHAT_OPERATIONS = frozenset({"chat", "text_completion", "generate_content"})
_AGENT_OPERATION = "invoke_agent"
_STATUS_ERROR = (2, "STATUS_CODE_ERROR")  # OTLP/JSON writes enums as numbers; some as names
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
    attribute_index: dict[str, int]
    failed: bool
    status_message: str

    @property
    def operation(self) -> Any:
        return self.attributes.get("gen_ai.operation.name")

    @property
    def sort_key(self) -> tuple[int, int]:
        return (self.start, self.order)

    def attribute_path(self, key: str) -> str:
        return f"{self.where}.attributes[{self.attribute_index[key]}].value"

    def messages(self, key: str) -> tuple[list, str]:
        """The messages of a ``gen_ai.*.messages`` attribute (JSON text, or structured) and
        the path they are at."""
        if key not in self.attributes:
            return [], self.where
        value = self.attributes[key]
        where = self.attribute_path(key)
        if isinstance(value, str):
            where = f"{where}.stringValue"
            try:
                value = parse_json(value)
            except InvalidInput as exc:
                raise InvalidInput.single(where, exc.problems[0].message) from None
        return list_at(value, where), where


def convert(line: Mapping) -> dict:
    spans = _spans(line)
    tool_spans = [span for span in spans if span.operation == _TOOL_OPERATION]
    chat_spans = sorted(
        (span for span in spans if span.operation in _CHAT_OPERATIONS), key=lambda s: s.sort_key
    )
    if tool_spans:
        batches = _batches_of_tool_spans(tool_spans, chat_spans, spans)
    else:
        batches = _batches_of_chat_messages(chat_spans)
    run = envelope_fields(line)
    run["batches"] = batches
    run["final_text"] = _final_text(chat_spans, spans)
    with_error(run, _run_error(spans))
    uncaptured = False
    for batch in batches:
        for call in batch:
            uncaptured |= call.pop(_UNCAPTURED, False)
    if uncaptured:
        with_meta(run, {"otel": ARGUMENTS_NOT_CAPTURED})
    return run


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
        located = [("spans", line["spans"])]
    spans = []
    for where, items in located:
        for k, item in enumerate(list_at(items, where)):
            spans.append(_span(object_at(item, f"{where}[{k}]"), f"{where}[{k}]", len(spans)))
    return spans


def _span(raw: Mapping, where: str, order: int) -> Span:
    attributes, attribute_index = read_attributes(raw.get("attributes"), f"{where}.attributes")
    status = raw.get("status")
    status = status if isinstance(status, Mapping) else {}
    return Span(
        where=where,
        order=order,
        span_id=str(raw.get("spanId") or ""),
        parent_id=str(raw.get("parentSpanId") or ""),
        name=raw.get("name") if isinstance(raw.get("name"), str) else "",
        start=_nanoseconds(raw.get("startTimeUnixNano")),
        attributes=attributes,
        attribute_index=attribute_index,
        failed=status.get("code") in _STATUS_ERROR,
        status_message=status.get("message") if isinstance(status.get("message"), str) else "",
    )


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
        return value["stringValue"]
    if "boolValue" in value:
        return value["boolValue"]
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


# --- batches from tool-execution spans ----------------------------------------------------------


def _batches_of_tool_spans(
    tool_spans: list[Span], chat_spans: list[Span], spans: list[Span]
) -> list[list[dict]]:
    by_id = {span.span_id: span for span in spans if span.span_id}
    groups: dict[str, list[Span]] = {}
    for tool in tool_spans:
        groups.setdefault(_model_turn(tool, chat_spans), []).append(tool)

    def batch_start(group: tuple[str, list[Span]]) -> tuple[int, int]:
        turn_id, members = group
        turn = by_id.get(turn_id)
        return turn.sort_key if turn is not None else min(m.sort_key for m in members)

    return [
        [_tool_call(span) for span in sorted(members, key=lambda s: s.sort_key)]
        for _, members in sorted(groups.items(), key=batch_start)
    ]


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
        call.update({"arguments": {}, _UNCAPTURED: True})
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


def _batches_of_chat_messages(chat_spans: list[Span]) -> list[list[dict]]:
    results = {
        part["id"]: part.get("result", part.get("response"))
        for span in chat_spans
        for part in _parts(span, "gen_ai.input.messages")
        if part.get("type") == "tool_call_response" and is_join_key(part.get("id"))
    }
    batches = []
    for span in chat_spans:
        calls = [
            _message_call(part, where, results)
            for part, where in _located_parts(span, "gen_ai.output.messages")
            if part.get("type") == "tool_call"
        ]
        if calls:
            batches.append(calls)
    return batches


def _message_call(part: Mapping, where: str, results: dict) -> dict:
    call: dict[str, Any] = {"id": _join_key(part.get("id")), "name": name_at(part, "name", where)}
    if part.get("arguments") is None:
        call.update({"arguments": {}, _UNCAPTURED: True})
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


# --- final text and run error -------------------------------------------------------------------


def _final_text(chat_spans: list[Span], spans: list[Span]) -> str | None:
    key = "gen_ai.output.messages"
    answering = [span for span in chat_spans if key in span.attributes] or sorted(
        (span for span in spans if span.operation == _AGENT_OPERATION and key in span.attributes),
        key=lambda s: s.sort_key,
    )
    if not answering:
        return None
    texts = [
        part["content"]
        for part in _parts(answering[-1], key)
        if part.get("type") == "text" and isinstance(part.get("content"), str)
    ]
    return "".join(texts) if texts else None


def _run_error(spans: list[Span]) -> str | None:
    """The status of a failed root span (one whose parent is not in the line)."""
    ids = {span.span_id for span in spans if span.span_id}
    for span in sorted(spans, key=lambda s: s.sort_key):
        if span.failed and span.parent_id not in ids and span.operation != _TOOL_OPERATION:
            reason = span.status_message or span.attributes.get("error.type") or "failed"
            return f"{span.name}: {reason}" if span.name else str(reason)
    return None
