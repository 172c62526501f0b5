"""OTLP documents as the OpenTelemetry Collector's file exporter writes them
(docs/formats.md#collector-files): a line per export, ``resourceSpans`` or ``resourceLogs``,
holding spans of any traces, a trace's spans spread over any lines. They are regrouped into
a run line per trace, its case named by ``casebook.case`` as the live receiver reads it: on
a span first, then on the resource.

Reading stays streamed: a trace's spans and log records are held until it is complete (its
root span came, and ``LINGER_LINES`` lines passed without more of it, for log records sent
after their spans) or the file ends; and no more than ``MAX_HELD_ITEMS`` spans and log
records are held in all, the oldest trace going first when more come.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from scoring.importers.otel import CASE_FROM_TRACE
from scoring.matcher import InvalidInput

CASE = "casebook.case"
LINGER_LINES = 64
MAX_HELD_ITEMS = 100_000
# Each signal's keys: of its resources, of their scopes, and of the scopes' items.
_Signal = tuple[str, str, str]
_SIGNALS: tuple[_Signal, ...] = (
    ("resourceSpans", "scopeSpans", "spans"),
    ("resourceLogs", "scopeLogs", "logRecords"),
)


def is_collector_line(value: Any) -> bool:
    """An OTLP export written as it is, with no case of its own."""
    return (
        isinstance(value, Mapping)
        and "case" not in value
        and any(isinstance(value.get(key), list) for key, _, _ in _SIGNALS)
    )


@dataclass
class _Held:
    line: int  # where the trace was first seen
    last: int  # where it was last seen
    case: str = ""
    resource_case: str = ""
    rooted: bool = False
    items: int = 0  # spans and log records held
    document: dict[str, list[dict[str, Any]]] = field(
        default_factory=lambda: {"resourceSpans": [], "resourceLogs": []}
    )

    def run_line(self, trace_id: str) -> dict[str, Any] | InvalidInput:
        case = self.case or self.resource_case
        if not case:
            return InvalidInput.single(
                CASE, f"trace {trace_id}: no span nor resource names its case ({CASE})"
            )
        return {
            "case": case,
            "meta": {"trace_id": trace_id},
            CASE_FROM_TRACE: True,
            **self.document,
        }


def regrouped(records: Iterable[tuple[int, Any]]) -> Iterator[tuple[int, Any]]:
    """The records, Collector lines made into a line per trace (numbered by the line the
    trace was first seen on); others pass as they are."""
    held: dict[str, _Held] = {}
    items_held = 0
    for number, value in records:
        if not is_collector_line(value):
            yield number, value
            continue
        for trace_id, resource, scope, items, signal in _by_trace(value):
            trace = held.get(trace_id)
            if trace is None:
                trace = held[trace_id] = _Held(number, number)
            trace.last = number
            key, scopes_key, items_key = signal
            trace.document[key].append(
                {"resource": resource, scopes_key: [{"scope": scope, items_key: items}]}
            )
            resource_case = _attribute(resource.get("attributes"), CASE)
            trace.resource_case = trace.resource_case or resource_case
            trace.items += len(items)
            items_held += len(items)
            if key == "resourceSpans":
                trace.rooted |= any(not item.get("parentSpanId") for item in items)
                trace.case = trace.case or next(
                    (c for item in items if (c := _attribute(item.get("attributes"), CASE))), ""
                )
        for trace_id in [t for t, h in held.items() if h.rooted and number - h.last > LINGER_LINES]:
            items_held -= held[trace_id].items
            yield _flushed(held, trace_id)
        while items_held > MAX_HELD_ITEMS and held:
            oldest = next(iter(held))
            items_held -= held[oldest].items
            yield _flushed(held, oldest)
    for trace_id in list(held):
        yield _flushed(held, trace_id)


def _flushed(held: dict[str, _Held], trace_id: str) -> tuple[int, dict[str, Any] | InvalidInput]:
    trace = held.pop(trace_id)
    return trace.line, trace.run_line(trace_id)


def _by_trace(value: Mapping[str, Any]) -> Iterator[tuple[str, Any, Any, list[Any], _Signal]]:
    """(trace id, resource, scope, its items of that trace, signal) for every
    scope of the export; items without a trace id are grouped under the empty id."""
    for signal in _SIGNALS:
        key, scopes_key, items_key = signal
        for resource_items in _list(value.get(key)):
            if not isinstance(resource_items, Mapping):
                continue
            resource = resource_items.get("resource")
            resource = resource if isinstance(resource, Mapping) else {}
            for scope_items in _list(resource_items.get(scopes_key)):
                if not isinstance(scope_items, Mapping):
                    continue
                by_trace: dict[str, list[Any]] = {}
                for item in _list(scope_items.get(items_key)):
                    if isinstance(item, Mapping):
                        trace_id = item.get("traceId")
                        by_trace.setdefault(str(trace_id or ""), []).append(item)
                for trace_id, items in by_trace.items():
                    yield trace_id, resource, scope_items.get("scope"), items, signal


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _attribute(attributes: Any, key: str) -> str:
    """An OTLP/JSON attribute's string (or integer) value; "" when absent."""
    for attribute in _list(attributes):
        if isinstance(attribute, Mapping) and attribute.get("key") == key:
            value = attribute.get("value")
            if isinstance(value, Mapping):
                found = value.get("stringValue", value.get("intValue"))
                return str(found) if isinstance(found, str | int) else ""
    return ""
