"""OTLP/HTTP trace exports (``/otlp/v1/traces``, docs/live-traces.md#the-receiver): their
bodies decoded with the OpenTelemetry project's own messages (``opentelemetry-proto``), and
the answers encoded as the exporters expect them, protobuf or JSON as they were sent.

OTLP/JSON is protobuf's JSON mapping but for two things, which ``decode`` undoes before
protobuf's ``json_format`` reads it: trace and span ids are hex, not base64 (ids as base64,
which ``json_format.MessageToJson`` writes, are read too: the two have different lengths),
and enums may be numbers. Unknown fields are ignored, as the specification asks.

Nesting is bounded before anything walks it recursively (``json_format`` does, and so do the
importer and the matcher once the spans are a run): an OTLP/JSON body nested deeper than the
limit is refused whole, and ``measure`` measures a span (or log record) of a decoded export
as OTLP/JSON would nest it, so that a protobuf body is held to the same limit, item by item.

So is what an item holds (docs/live-traces.md#limits). A protobuf body of 16 MiB can hold
3,300,000 attributes, which protobuf reads compactly; what costs is what is built of each,
and ``measure`` counts them before anything is built (a repeated field's length is read
without making its elements), refusing an item past its caps on events, links and attribute
values. An OTLP/JSON body is parsed into Python objects whole, so it is refused before it
is parsed when it holds more objects and arrays than ``max_containers``.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import math
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import DecodeError, Message
from google.rpc.status_pb2 import Status
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord
from opentelemetry.proto.trace.v1.trace_pb2 import Span
from opentelemetry.proto.trace.v1.trace_pb2 import Status as SpanStatus

from scoring.matcher import InvalidInput, json_containers, nested_deeper_than, parse_json

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
_ID_BYTES = {"traceId": 16, "spanId": 8, "parentSpanId": 8}
# How deep OTLP/JSON nests, at: a span ({"resourceSpans": [{"scopeSpans": [{"spans": [{),
# the value of one of its attributes ("attributes": [{"value": {), and the value of an
# attribute of one of its events or links ("events": [{"attributes": [{"value": {).
_SPAN_DEPTH = 7
_ATTRIBUTE_DEPTH = _SPAN_DEPTH + 3
_EVENT_ATTRIBUTE_DEPTH = _SPAN_DEPTH + 5
# How much deeper than a value the values inside it are: {"arrayValue": {"values": [VALUE]}}
# and {"kvlistValue": {"values": [{"key": ..., "value": VALUE}]}}.
_NESTED_IN: dict[str | None, int] = {"array_value": 3, "kvlist_value": 4}
_WBITS = {"gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}
_CHUNK_LINE = 1024  # a chunk's size line, or a trailer, is read no longer than this
_TRAILERS = 100


class BadExport(Exception):
    """The body is not an OTLP trace export that can be read; the message says why."""


class ExportTooLarge(BadExport):
    pass


def is_json(content_type: str) -> bool:
    return content_type.split(";")[0].strip().lower() == JSON


@dataclass(frozen=True)
class Signal:
    """What an OTLP/HTTP path receives: its request and response messages, and what its
    items are called."""

    name: str  # "trace", "logs"
    request: type
    response: type
    items: str  # how the partial success counts them: "spans", "log records"
    rejected_field: str  # its field in the partial success


TRACES = Signal(
    "trace", ExportTraceServiceRequest, ExportTraceServiceResponse, "spans", "rejected_spans"
)
LOGS = Signal(
    "logs",
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
    "log records",
    "rejected_log_records",
)


def decode(
    body: bytes,
    *,
    content_type: str,
    encoding: str,
    max_bytes: int,
    max_depth: int,
    max_containers: int,
    signal: Signal = TRACES,
) -> Any:
    """The export request of ``signal`` of a body as sent (``encoding``: the
    Content-Encoding); raises ``BadExport`` (for OTLP/JSON nested more than ``max_depth``
    levels too), or ``ExportTooLarge`` past ``max_bytes``, and for OTLP/JSON of more than
    ``max_containers`` objects and arrays. Protobuf is read no deeper than its own parser's
    limit (100 messages); ``measure`` tells the items within that but past ``max_depth``."""
    data = _decompressed(body, encoding.strip().lower(), max_bytes)
    media = content_type.split(";")[0].strip().lower()
    request = signal.request()
    if media == PROTOBUF:
        try:
            request.ParseFromString(data)
        except DecodeError as exc:
            raise BadExport(
                f"the body is not an OTLP protobuf {signal.name} export: {exc}"
            ) from None
    elif media == JSON:
        # Before parsing: the parser's own limit would call a deep document "not JSON".
        if nested_deeper_than(data, max_depth):
            raise BadExport(
                f"the JSON is nested more than {max_depth} levels deep, the limit "
                "(CASEBOOK_MAX_JSON_DEPTH)"
            )
        # Before parsing too: each object or array would be one of Python's, then protobuf's.
        if (containers := json_containers(data, max_containers)) > max_containers:
            raise ExportTooLarge(
                f"the OTLP/JSON holds {containers:,} objects and arrays: over "
                f"{max_containers:,}, four for each attribute value CASEBOOK_OTLP_MAX_ATTRIBUTES "
                "lets an export hold"
            )
        try:
            document = parse_json(data)
        except InvalidInput as exc:
            raise BadExport(f"the body is not JSON: {exc}") from None
        if not isinstance(document, Mapping):
            raise BadExport(
                f"the body is not an OTLP/JSON {signal.name} export: it is not a JSON object"
            )
        _hex_ids_as_base64(document)
        try:
            json_format.ParseDict(document, request, ignore_unknown_fields=True)
        except (json_format.ParseError, TypeError, ValueError) as exc:
            raise BadExport(f"the body is not an OTLP/JSON {signal.name} export: {exc}") from None
    else:
        raise BadExport(f"Content-Type must be {PROTOBUF} or {JSON}, not {media or 'missing'}")
    return request


def _decompressed(body: bytes, encoding: str, max_bytes: int) -> bytes:
    if encoding in ("", "identity"):
        if len(body) > max_bytes:
            raise ExportTooLarge(f"the body is over {max_bytes:,} bytes, the limit")
        return body
    if encoding not in _WBITS:
        raise BadExport(f"Content-Encoding must be gzip, deflate or identity, not {encoding}")
    inflater = zlib.decompressobj(_WBITS[encoding])
    try:
        data = inflater.decompress(body, max_bytes + 1)
    except zlib.error as exc:
        raise BadExport(f"the {encoding} data is broken: {exc}") from None
    if len(data) > max_bytes:
        raise ExportTooLarge(f"the body expands past {max_bytes:,} bytes, the limit")
    if not inflater.eof:
        raise BadExport(f"the {encoding} data ends too soon")
    return data


def _hex_ids_as_base64(document: Mapping) -> None:
    """Rewrite, in place, OTLP/JSON's hex ids as protobuf's JSON mapping has bytes (base64):
    those of the spans, of their links and of log records, the only ids of an export."""
    for resource_spans in _items(document, "resourceSpans"):
        for scope_spans in _items(resource_spans, "scopeSpans"):
            for span in _items(scope_spans, "spans"):
                _ids_as_base64(span)
                for link in _items(span, "links"):
                    _ids_as_base64(link)
    for resource_logs in _items(document, "resourceLogs"):
        for scope_logs in _items(resource_logs, "scopeLogs"):
            for record in _items(scope_logs, "logRecords"):
                _ids_as_base64(record)


def _ids_as_base64(holder: dict) -> None:
    for key, size in _ID_BYTES.items():
        value = holder.get(key)
        if isinstance(value, str) and len(value) == 2 * size:
            # Not hex: left for json_format to read as base64, or to refuse.
            with contextlib.suppress(ValueError):
                holder[key] = binascii.b2a_base64(bytes.fromhex(value), newline=False).decode()


def _items(holder: Any, key: str) -> Iterator[dict]:
    """The objects in ``holder``'s list ``key``; none where either is something else, which
    ``json_format`` then refuses, saying where."""
    items = holder.get(key) if isinstance(holder, Mapping) else None
    if isinstance(items, list):
        yield from (item for item in items if isinstance(item, dict))


def attributes(key_values) -> dict[str, Any]:
    """The plain values (strings, numbers, booleans) of a list of ``KeyValue``; others are
    left out (nothing here reads them)."""
    values = {}
    for item in key_values:
        kind = item.value.WhichOneof("value")
        if kind in ("string_value", "int_value", "double_value", "bool_value"):
            values[item.key] = getattr(item.value, kind)
    return values


@dataclass(frozen=True, slots=True)
class ItemLimits:
    """What one span or log record may hold (docs/live-traces.md#limits): how deep its
    values may nest as OTLP/JSON, its attribute values (those of its events and links, and
    the values inside arrays and key-value lists, included), and a span's events and
    links. The names of the settings, for the reasons given."""

    depth: int
    attributes: int
    events: int
    links: int


@dataclass(frozen=True, slots=True)
class Measured:
    """A span's or log record's attribute values, events and links, counted; or why it is
    refused (``values`` then counts no further than the cap that refused it)."""

    values: int = 0
    problem: str | None = None


def measure(item, limits: ItemLimits) -> Measured:
    """A span or log record measured against ``limits`` before anything is built of it: a
    repeated field's length is read without making its elements, and the walk through the
    values nested in arrays and key-value lists (without recursion) stops at the cap, or
    where the export, as OTLP/JSON, would nest deeper than ``limits.depth`` (the limit an
    OTLP/JSON body is held to). A log record's body is as deep as an attribute's value."""
    noun = "log record" if isinstance(item, LogRecord) else "span"
    holders: tuple[Span.Event | Span.Link, ...] = ()
    if noun == "span":
        for repeated, count, cap, setting in (
            ("events", len(item.events), limits.events, "CASEBOOK_OTLP_MAX_ITEM_EVENTS"),
            ("links", len(item.links), limits.links, "CASEBOOK_OTLP_MAX_ITEM_LINKS"),
        ):
            if count > cap:
                return Measured(0, f"a span of more {repeated} than the cap, {setting} = {cap:,}")
        holders = (*item.events, *item.links)
    values = len(item.attributes) + sum(len(holder.attributes) for holder in holders)
    if noun == "log record":
        values += 1  # the body
    too_many = (
        f"a {noun} of more attribute values than the cap, CASEBOOK_OTLP_MAX_ITEM_ATTRIBUTES = "
        f"{limits.attributes:,}"
    )
    if values > limits.attributes:
        return Measured(limits.attributes, too_many)
    walk: list[tuple[AnyValue, int]] = [
        (attribute.value, _ATTRIBUTE_DEPTH) for attribute in item.attributes
    ]
    if noun == "log record":
        walk.append((item.body, _ATTRIBUTE_DEPTH - 2))
    for holder in holders:
        walk.extend((kv.value, _EVENT_ATTRIBUTE_DEPTH) for kv in holder.attributes)
    while walk:
        value, depth = walk.pop()
        kind = value.WhichOneof("value")
        step = _NESTED_IN.get(kind)
        if depth + (step is not None) > limits.depth:  # a list's own object is inside
            return Measured(values, (
                f"a {noun} nested more than {limits.depth} levels deep as OTLP/JSON: over "
                f"the limit, CASEBOOK_MAX_JSON_DEPTH = {limits.depth}"
            ))  # fmt: skip
        if step is None:
            continue
        inner = value.array_value.values if kind == "array_value" else value.kvlist_value.values
        values += len(inner)
        if values > limits.attributes:
            return Measured(limits.attributes, too_many)
        if kind == "array_value":
            walk.extend((item, depth + step) for item in inner)
        else:
            walk.extend((item.value, depth + step) for item in inner)
    return Measured(values + (len(holders) if noun == "span" else 0))


def span_document(span: Span) -> dict:
    """A span as OTLP/JSON (``scoring.importers.otel`` reads it as a file's span), exactly as
    ``json_format.MessageToDict`` writes it (a test holds them equal on every captured
    instrumentation's spans) in well under half the time: it is made for every span of
    every live trace (docs/live-traces.md#throughput). Fields are read by name, so one a
    newer ``opentelemetry-proto`` adds is left out until named here."""
    document: dict[str, Any] = {}
    if span.trace_id:
        document["traceId"] = _base64(span.trace_id)
    if span.span_id:
        document["spanId"] = _base64(span.span_id)
    if span.trace_state:
        document["traceState"] = span.trace_state
    if span.parent_span_id:
        document["parentSpanId"] = _base64(span.parent_span_id)
    if span.flags:
        document["flags"] = span.flags
    if span.name:
        document["name"] = span.name
    if span.kind:
        document["kind"] = _enum_name(Span.SpanKind, span.kind)
    if span.start_time_unix_nano:
        document["startTimeUnixNano"] = str(span.start_time_unix_nano)
    if span.end_time_unix_nano:
        document["endTimeUnixNano"] = str(span.end_time_unix_nano)
    _add_attributes(document, span)
    if span.events:
        document["events"] = [_event(event) for event in span.events]
    if span.dropped_events_count:
        document["droppedEventsCount"] = span.dropped_events_count
    if span.links:
        document["links"] = [_link(link) for link in span.links]
    if span.dropped_links_count:
        document["droppedLinksCount"] = span.dropped_links_count
    if span.HasField("status"):
        status: dict[str, Any] = {}
        document["status"] = status
        if span.status.message:
            status["message"] = span.status.message
        if span.status.code:
            status["code"] = _enum_name(SpanStatus.StatusCode, span.status.code)
    return document


def _event(event: Span.Event) -> dict:
    document: dict[str, Any] = {}
    if event.time_unix_nano:
        document["timeUnixNano"] = str(event.time_unix_nano)
    if event.name:
        document["name"] = event.name
    _add_attributes(document, event)
    return document


def _link(link: Span.Link) -> dict:
    document: dict[str, Any] = {}
    if link.trace_id:
        document["traceId"] = _base64(link.trace_id)
    if link.span_id:
        document["spanId"] = _base64(link.span_id)
    if link.trace_state:
        document["traceState"] = link.trace_state
    _add_attributes(document, link)
    if link.flags:
        document["flags"] = link.flags
    return document


def _add_attributes(document: dict, holder) -> None:
    if holder.attributes:
        pending: list[tuple[AnyValue, dict]] = []
        document["attributes"] = _key_values(holder.attributes, pending)
        _fill_values(pending)
    if holder.dropped_attributes_count:
        document["droppedAttributesCount"] = holder.dropped_attributes_count


def _key_values(items, pending: list[tuple[AnyValue, dict]]) -> list[dict]:
    """``KeyValue``s (attributes, or a key-value list's) as OTLP/JSON, each value an empty
    object put in ``pending`` with the ``AnyValue`` to fill it from."""
    pairs = []
    for item in items:
        pair = {"key": item.key} if item.key else {}
        if item.HasField("value"):
            pair["value"] = {}
            pending.append((item.value, pair["value"]))
        pairs.append(pair)
    return pairs


def _fill_values(pending: list[tuple[AnyValue, dict]]) -> None:
    """Fill each object of ``pending`` from its ``AnyValue``, those nested inside too.
    Iterative, not recursive: a value nested as deep as the limit lets it be (the spans were
    measured as they were stored, ``measure``) is within Python's stack, but
    costs no frames either way."""
    while pending:
        value, into = pending.pop()
        kind = value.WhichOneof("value")
        if kind == "string_value":
            into["stringValue"] = value.string_value
        elif kind == "bool_value":
            into["boolValue"] = value.bool_value
        elif kind == "int_value":
            into["intValue"] = str(value.int_value)
        elif kind == "double_value":
            into["doubleValue"] = _double(value.double_value)
        elif kind == "bytes_value":
            into["bytesValue"] = _base64(value.bytes_value)
        elif kind == "array_value":
            values: dict[str, Any] = {}
            into["arrayValue"] = values
            if value.array_value.values:
                values["values"] = [{} for _ in value.array_value.values]
                pending.extend(zip(value.array_value.values, values["values"], strict=True))
        elif kind == "kvlist_value":
            values = {}
            into["kvlistValue"] = values
            if value.kvlist_value.values:
                values["values"] = _key_values(value.kvlist_value.values, pending)


def _base64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _double(number: float) -> float | str:
    if math.isnan(number):
        return "NaN"
    if math.isinf(number):
        return "Infinity" if number > 0 else "-Infinity"
    return number


def _enum_name(enum, number: int) -> str | int:
    """The enum value's name; a number the proto does not know stays a number (as
    ``json_format`` writes it)."""
    try:
        return enum.Name(number)
    except ValueError:
        return number


def log_record_document(record) -> dict:
    """A log record as OTLP/JSON (its ids base64, as ``span_document`` writes a span's)."""
    return json_format.MessageToDict(record)


def dechunked(stream, max_bytes: int) -> bytes:
    """A body sent with ``Transfer-Encoding: chunked`` (Node's OTLP exporters send no
    Content-Length), read from the server's raw input: at most ``max_bytes`` + 1 bytes, so
    that a caller sees it is over; ``BadExport`` when the framing is broken."""
    body = bytearray()
    while len(body) <= max_bytes:
        size_line = stream.readline(_CHUNK_LINE)
        try:
            size = int(size_line.split(b";")[0].strip(), 16)
        except ValueError:
            raise BadExport("the chunked body's framing is broken") from None
        if size == 0:
            for _ in range(_TRAILERS):  # the trailer section, up to its blank line
                if stream.readline(_CHUNK_LINE) in (b"\r\n", b"\n", b""):
                    break
            return bytes(body)
        chunk = stream.read(min(size, max_bytes + 1 - len(body)))
        body += chunk
        if len(chunk) < size:
            break  # over the limit, or the body ended too soon: the caller says which
        stream.readline(_CHUNK_LINE)  # the CRLF after the chunk
    return bytes(body)


def hex_id(value: bytes, size: int) -> str | None:
    """A trace or span id as hex; None when it is not ``size`` bytes, or all zeros (invalid
    in OpenTelemetry)."""
    if len(value) != size or not any(value):
        return None
    return binascii.hexlify(value).decode()


def response(
    rejected: int, message: str, *, as_json: bool, signal: Signal = TRACES
) -> tuple[bytes, str]:
    """The body of a 200 answer, and its content type: partial success when items were
    rejected."""
    answer = signal.response()
    if rejected:
        setattr(answer.partial_success, signal.rejected_field, rejected)
        answer.partial_success.error_message = message
    return encode(answer, as_json=as_json)


def error(code: int, message: str, *, as_json: bool) -> tuple[bytes, str]:
    """The body of an error answer (a ``google.rpc.Status``, as OTLP asks), and its type.
    ``code`` is the gRPC code that goes with the HTTP status."""
    return encode(Status(code=code, message=message), as_json=as_json)


def encode(message: Message, *, as_json: bool) -> tuple[bytes, str]:
    if as_json:
        return json_format.MessageToJson(message, indent=None).encode(), JSON
    return message.SerializeToString(), PROTOBUF
