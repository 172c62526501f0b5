"""A stored span made into the OTLP/JSON the importer reads (``otlp_codec.span_document``):
exactly what protobuf's own ``json_format.MessageToDict`` writes, for the spans every
captured instrumentation sent and for a span using every field."""

from __future__ import annotations

import math

import pytest
from google.protobuf.json_format import MessageToDict
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from scoring.live.otlp_codec import TRACES, decode, span_document
from tests.support.otlp_fixtures import VARIANTS, requests


def spans_sent(variant: str) -> list[Span]:
    spans = []
    for signal, body, content_type, compressed in requests(variant):
        if signal != "traces":
            continue
        export = decode(
            body,
            content_type=content_type,
            encoding="gzip" if compressed else "",
            max_bytes=1 << 30,
            max_depth=1000,
            max_containers=1 << 30,
            signal=TRACES,
        )
        for resource_spans in export.resource_spans:
            for scope_spans in resource_spans.scope_spans:
                spans.extend(scope_spans.spans)
    return spans


@pytest.mark.parametrize("variant", VARIANTS)
def test_each_captured_span_reads_as_protobuf_writes_it(variant):
    spans = spans_sent(variant)
    for span in spans:
        assert span_document(span) == MessageToDict(span)


def test_the_captured_spans_are_many_and_varied():
    """The comparison above means something: it covers many spans, with events and
    statuses among them."""
    spans = [span for variant in VARIANTS for span in spans_sent(variant)]
    assert len(spans) > 200
    assert any(span.events for span in spans)
    assert any(span.HasField("status") for span in spans)
    assert any(span.parent_span_id for span in spans)


def test_a_span_using_every_field_reads_as_protobuf_writes_it():
    nested = AnyValue()
    nested.array_value.values.extend(
        [
            AnyValue(string_value=""),
            AnyValue(int_value=-(2**63)),
            AnyValue(double_value=math.nan),
            AnyValue(double_value=math.inf),
            AnyValue(double_value=-math.inf),
            AnyValue(double_value=0.1),
            AnyValue(bool_value=False),
            AnyValue(bytes_value=b"\x00\xff"),
            AnyValue(),  # no value set
        ]
    )
    deeper = nested.array_value.values.add()
    deeper.kvlist_value.values.extend(
        [
            KeyValue(key="inner", value=AnyValue(string_value="x")),
            KeyValue(key="", value=AnyValue(int_value=0)),
            KeyValue(key="no value"),
        ]
    )
    nested.array_value.values.add().array_value.SetInParent()  # an empty array
    nested.array_value.values.add().kvlist_value.SetInParent()  # an empty list of pairs
    span = Span(
        trace_id=bytes(range(16)),
        span_id=bytes(range(8)),
        parent_span_id=bytes(range(8, 16)),
        trace_state="a=b",
        flags=257,
        name="chat",
        kind=Span.SPAN_KIND_CLIENT,
        start_time_unix_nano=2**63 + 5,
        end_time_unix_nano=1,
        attributes=[KeyValue(key="nested", value=nested), KeyValue(key="empty")],
        dropped_attributes_count=3,
        events=[
            Span.Event(time_unix_nano=7, name="e", attributes=[KeyValue(key="k")]),
            Span.Event(dropped_attributes_count=1),
        ],
        dropped_events_count=2,
        links=[Span.Link(trace_id=b"\x01" * 16, span_id=b"\x02" * 8, trace_state="s", flags=1)],
        dropped_links_count=4,
        status=Status(message="broke", code=Status.STATUS_CODE_ERROR),
    )
    assert span_document(span) == MessageToDict(span)

    bare = Span(kind=99)  # an enum value the proto does not know, and an empty status
    bare.status.SetInParent()
    assert span_document(bare) == MessageToDict(bare) == {"kind": 99, "status": {}}
    assert span_document(Span()) == MessageToDict(Span()) == {}
