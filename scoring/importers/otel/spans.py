"""Spans as a line holds them (docs/formats.md#opentelemetry-genai-spans): OTLP/JSON
(``resourceSpans[].scopeSpans[].spans[]``, or a flat ``spans`` list) or the Python SDK's own
JSON (``span.to_json()``), with their events. Log records of the trace (``resourceLogs``:
OTLP's log signal, where some instrumentations send message content) become events of the
span they name, or of a span of their own when that span is not in the line.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from scoring.matcher import InvalidInput, json_type, parse_json

from ..common import list_at, object_at

# OTLP/JSON writes enums as numbers (some exporters as names); the SDK's JSON as its names.
_STATUS_ERROR = frozenset({2, "STATUS_CODE_ERROR", "ERROR", "StatusCode.ERROR"})
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# The scope of a span kept by the live receiver, which stores spans without their scope.
SCOPE_ATTRIBUTE = "otel.scope.name"


@dataclass(slots=True)
class Event:
    """A span event, or a log record joined to its span: its name, attributes and body."""

    where: str
    name: str
    attributes: dict[str, Any]
    body: Any = None

    def value(self, key: str) -> Any:
        """An attribute, else the field of a body that is an object."""
        if key in self.attributes:
            return self.attributes[key]
        return self.body.get(key) if isinstance(self.body, Mapping) else None


@dataclass(slots=True)
class Span:
    """The parts of one span that a run is made of."""

    where: str  # its path in the line
    order: int  # its position in the line, which breaks ties between equal start times
    span_id: str
    parent_id: str
    name: str
    start: int
    scope: str  # its instrumentation scope's name: which library wrote it
    attributes: dict[str, Any]
    attribute_paths: dict[str, str]  # where each attribute's value is in the line
    failed: bool
    status_message: str
    events: list[Event] = field(default_factory=list)
    end: int = 0  # nanoseconds since the epoch, as ``start``; 0 when not recorded

    @property
    def operation(self) -> str | None:
        # The SDK's JSON holds attribute values of any JSON type, a list or map among them.
        operation = self.attributes.get("gen_ai.operation.name")
        return operation if isinstance(operation, str) else None

    @property
    def sort_key(self) -> tuple[int, int]:
        return (self.start, self.order)

    @property
    def key(self) -> str:
        """What the span is known by: its id, or its position when it has none."""
        return self.span_id or f"#{self.order}"

    def path(self, key: str) -> str:
        return self.attribute_paths.get(key, f'{self.where}.attributes["{key}"]')

    def text(self, key: str) -> str | None:
        value = self.attributes.get(key)
        return value if isinstance(value, str) else None

    def json(self, key: str) -> Any:
        """The attribute ``key``, parsed when it is JSON text (see ``parsed``)."""
        return parsed(self.attributes.get(key), self.path(key))


# What instrumentations write in place of content they do not record (OpenInference,
# strands' redaction, google-adk's first schema).
REDACTED = frozenset({"__REDACTED__", "[REDACTED]", "<elided>"})


def parsed(value: Any, where: str) -> Any:
    """``value`` parsed when it is JSON text, as it is otherwise (None when it stands for
    content not recorded); InvalidInput naming ``where`` when the text is not JSON."""
    if not isinstance(value, str):
        return value
    if value in REDACTED:
        return None
    try:
        return parse_json(value)
    except InvalidInput as exc:
        raise InvalidInput.single(where, exc.problems[0].message) from None


def read_spans(line: Mapping[str, Any]) -> list[Span]:
    """The spans of the line, their events and log records included, in line order."""
    if "resourceSpans" in line or "spans" not in line:
        located: list[tuple[str, Any, str]] = []
        for r, resource in enumerate(list_at(line.get("resourceSpans", []), "resourceSpans")):
            where = f"resourceSpans[{r}].scopeSpans"
            scopes = list_at(
                object_at(resource, f"resourceSpans[{r}]").get("scopeSpans", []), where
            )
            for s, scope in enumerate(scopes):
                scope = object_at(scope, f"{where}[{s}]")
                located.append((f"{where}[{s}].spans", scope.get("spans", []), _scope(scope)))
    else:
        located = [("spans", line.get("spans"), "")]
    spans: list[Span] = []
    for where, items, scope in located:
        for k, item in enumerate(list_at(items, where)):
            item_where = f"{where}[{k}]"
            spans.append(_span(object_at(item, item_where), item_where, len(spans), scope))
    _join_log_records(line, spans)
    return spans


def _scope(scope: Mapping[str, Any]) -> str:
    named = scope.get("scope")
    name = named.get("name") if isinstance(named, Mapping) else None
    return name if isinstance(name, str) else ""


def _span(raw: Mapping[str, Any], where: str, order: int, scope: str) -> Span:
    """One span, as OTLP/JSON writes it or as the Python SDK's ``span.to_json()`` does."""
    attributes_where = f"{where}.attributes"
    if isinstance(raw.get("attributes"), Mapping):  # the SDK's own JSON
        attributes = dict(raw["attributes"])
        paths = {key: f'{attributes_where}["{key}"]' for key in attributes}
        context = raw.get("context")
        span_id = context.get("span_id") if isinstance(context, Mapping) else None
        parent_id, start = raw.get("parent_id"), _iso_nanoseconds(raw.get("start_time"))
        end = _iso_nanoseconds(raw.get("end_time"))
    else:
        attributes, index = read_attributes(raw.get("attributes"), attributes_where)
        paths = {
            key: f"{attributes_where}[{k}].value"
            + (".stringValue" if isinstance(attributes[key], str) else "")
            for key, k in index.items()
        }
        span_id, parent_id = raw.get("spanId"), raw.get("parentSpanId")
        start = _nanoseconds(raw.get("startTimeUnixNano"))
        end = _nanoseconds(raw.get("endTimeUnixNano"))
    status = raw.get("status")
    status = status if isinstance(status, Mapping) else {}
    code = status.get("code", status.get("status_code"))
    message = status.get("message", status.get("description"))
    scope = attributes.pop(SCOPE_ATTRIBUTE, None) or scope
    name = raw.get("name")
    return Span(
        where=where,
        order=order,
        span_id=str(span_id or ""),
        parent_id=str(parent_id or ""),
        name=name if isinstance(name, str) else "",
        start=start,
        scope=scope if isinstance(scope, str) else "",
        attributes=attributes,
        attribute_paths=paths,
        failed=isinstance(code, str | int) and code in _STATUS_ERROR,
        status_message=message if isinstance(message, str) else "",
        events=_events(raw.get("events"), f"{where}.events"),
        end=end,
    )


def _events(raw: Any, where: str) -> list[Event]:
    events = []
    for e, event in enumerate(raw if isinstance(raw, list) else ()):
        if not isinstance(event, Mapping):
            continue
        attributes = event.get("attributes")
        if isinstance(attributes, Mapping):  # the SDK's own JSON
            attributes = dict(attributes)
        else:
            attributes = read_attributes(attributes, f"{where}[{e}].attributes")[0]
        name = event.get("name")
        events.append(Event(f"{where}[{e}]", name if isinstance(name, str) else "", attributes))
    return events


def _join_log_records(line: Mapping[str, Any], spans: list[Span]) -> None:
    """Each log record of the line as an event of the span it names; records of a span
    not in the line go to a span of their own, one per span id, with no parent known."""
    by_id = {span.span_id: span for span in spans if span.span_id}
    resources = list_at(line.get("resourceLogs", []), "resourceLogs")
    for r, resource in enumerate(resources):
        where = f"resourceLogs[{r}].scopeLogs"
        scopes = list_at(object_at(resource, f"resourceLogs[{r}]").get("scopeLogs", []), where)
        for s, scope in enumerate(scopes):
            scope = object_at(scope, f"{where}[{s}]")
            records_where = f"{where}[{s}].logRecords"
            for k, record in enumerate(list_at(scope.get("logRecords", []), records_where)):
                record_where = f"{records_where}[{k}]"
                record = object_at(record, record_where)
                attributes = read_attributes(
                    record.get("attributes"), f"{record_where}.attributes"
                )[0]
                scope_name = attributes.pop(SCOPE_ATTRIBUTE, None) or _scope(scope)
                name = record.get("eventName") or attributes.pop("event.name", "")
                event = Event(
                    record_where,
                    name if isinstance(name, str) else "",
                    attributes,
                    any_value(record.get("body")),
                )
                span_id = str(record.get("spanId") or "")
                span = by_id.get(span_id) if span_id else None
                if span is None:
                    start = _nanoseconds(record.get("timeUnixNano"))
                    span = Span(record_where, len(spans), span_id, "", "", start, scope_name,
                                {}, {}, failed=False, status_message="")  # fmt: skip
                    spans.append(span)
                    if span_id:
                        by_id[span_id] = span
                span.events.append(event)


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


def _values(container: Any) -> list[Any]:
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


def must_be_text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise InvalidInput.single(where, f"must be a string, not {json_type(value)}")
    return value
