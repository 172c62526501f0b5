"""OTLP/HTTP trace exports (``/otlp/v1/traces``, docs/live-traces.md#the-receiver): their
bodies decoded with the OpenTelemetry project's own messages (``opentelemetry-proto``), and
the answers encoded as the exporters expect them, protobuf or JSON as they were sent.

OTLP/JSON is protobuf's JSON mapping but for two things, which ``decode`` undoes before
protobuf's ``json_format`` reads it: trace and span ids are hex, not base64 (ids as base64,
which ``json_format.MessageToJson`` writes, are read too: the two have different lengths),
and enums may be numbers. Unknown fields are ignored, as the specification asks.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import zlib
from collections.abc import Mapping
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import DecodeError, Message
from google.rpc.status_pb2 import Status
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from scoring.matcher import InvalidInput, parse_json

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
_ID_BYTES = {"traceId": 16, "spanId": 8, "parentSpanId": 8}
_WBITS = {"gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}


class BadExport(Exception):
    """The body is not an OTLP trace export that can be read; the message says why."""


class ExportTooLarge(BadExport):
    pass


def is_json(content_type: str) -> bool:
    return content_type.split(";")[0].strip().lower() == JSON


def decode(body: bytes, *, content_type: str, encoding: str, max_bytes: int) -> Any:
    """The ``ExportTraceServiceRequest`` of a body as sent (``encoding``: the
    Content-Encoding); raises ``BadExport``, or ``ExportTooLarge`` past ``max_bytes``."""
    data = _decompressed(body, encoding.strip().lower(), max_bytes)
    media = content_type.split(";")[0].strip().lower()
    request = ExportTraceServiceRequest()
    if media == PROTOBUF:
        try:
            request.ParseFromString(data)
        except DecodeError as exc:
            raise BadExport(f"the body is not an OTLP protobuf trace export: {exc}") from None
    elif media == JSON:
        try:
            document = parse_json(data)
        except InvalidInput as exc:
            raise BadExport(f"the body is not JSON: {exc}") from None
        if not isinstance(document, Mapping):
            raise BadExport("the body is not an OTLP/JSON trace export: it is not a JSON object")
        try:
            json_format.ParseDict(_with_base64_ids(document), request, ignore_unknown_fields=True)
        except (json_format.ParseError, TypeError, ValueError) as exc:
            raise BadExport(f"the body is not an OTLP/JSON trace export: {exc}") from None
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


def _with_base64_ids(value: Any) -> Any:
    """OTLP/JSON with its hex ids as protobuf's JSON mapping has bytes (base64)."""
    if isinstance(value, list):
        return [_with_base64_ids(item) for item in value]
    if not isinstance(value, Mapping):
        return value
    out = {}
    for key, item in value.items():
        size = _ID_BYTES.get(key)
        if size and isinstance(item, str) and len(item) == 2 * size:
            # Not hex: left for json_format to read as base64, or to refuse.
            with contextlib.suppress(ValueError):
                item = base64.b64encode(bytes.fromhex(item)).decode()
        out[key] = _with_base64_ids(item)
    return out


def attributes(key_values) -> dict[str, Any]:
    """The plain values (strings, numbers, booleans) of a list of ``KeyValue``; others are
    left out (nothing here reads them)."""
    values = {}
    for item in key_values:
        kind = item.value.WhichOneof("value")
        if kind in ("string_value", "int_value", "double_value", "bool_value"):
            values[item.key] = getattr(item.value, kind)
    return values


def span_document(span) -> dict:
    """A span as OTLP/JSON (``scoring.importers.otel`` reads it as a file's span)."""
    return json_format.MessageToDict(span)


def hex_id(value: bytes, size: int) -> str | None:
    """A trace or span id as hex; None when it is not ``size`` bytes, or all zeros (invalid
    in OpenTelemetry)."""
    if len(value) != size or not any(value):
        return None
    return binascii.hexlify(value).decode()


def response(rejected: int, message: str, *, as_json: bool) -> tuple[bytes, str]:
    """The body of a 200 answer, and its content type: partial success when spans were
    rejected."""
    answer = ExportTraceServiceResponse()
    if rejected:
        answer.partial_success.rejected_spans = rejected
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
