"""What no export to ``/otlp/v1/traces`` can break (docs/live-traces.md#limits): a body that
cannot be read is answered 400, a span that cannot be kept is rejected with a partial
success, never a 500; and an export costs what its size does, whatever its count of spans
and traces. The memory asserted is what Python allocated on the way (``tracemalloc``); the
times have a wide margin for a slow shared machine, and the costs they guard against were a
minute and more."""

from __future__ import annotations

import json
import time
import tracemalloc

import pytest
from django.test import Client
from google.protobuf.json_format import MessageToJson
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from scoring.live.otlp_codec import ItemLimits, measure
from scoring.matcher import nested_deeper_than
from scoring.models import Run, Trace, TraceSpan
from tests.support.otlp_data import (
    ENDPOINT,
    FIXTURE_SPANS,
    PROTOBUF,
    answer_of,
    assemble_due,
    body_of,
    export,
    post,
    status_of,
    string_attribute,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("assembled_when_told")]

MiB = 1 << 20
DEPTH = 64  # CASEBOOK_MAX_JSON_DEPTH's default, which the tests run with


def spans_of(request: ExportTraceServiceRequest) -> list[Span]:
    return [span for rs in request.resource_spans for ss in rs.scope_spans for span in ss.spans]


# --- the suite's id -----------------------------------------------------------------------------


def post_with_suite_id(sender, **value):
    """The fixture's export, its resource's ``casebook.suite`` set to ``value`` (an
    ``AnyValue`` field and what it holds), as the sender posts it."""
    item = KeyValue(key="casebook.suite")
    for kind, given in value.items():
        setattr(item.value, kind, given)
    request = export(None)
    request.resource_spans[0].resource.attributes.append(item)
    return post(sender, request)


@pytest.mark.parametrize(
    "value",
    [
        {"double_value": float("inf")},
        {"double_value": float("nan")},
        {"double_value": 1.5},
        {"bool_value": True},
        {"string_value": "12abc"},
        {"string_value": "1" * 5000},
    ],
    ids=["inf", "nan", "fraction", "bool", "text", "5000-digits"],
)
def test_a_suite_id_that_is_no_whole_number_rejects_the_spans_400(sender, suite, value):
    response = post_with_suite_id(sender, **value)
    assert response.status_code == 400
    assert "casebook.suite must be a suite's id" in status_of(response).message
    assert not TraceSpan.objects.exists()


@pytest.mark.parametrize(
    "value",
    [{"int_value": (1 << 63) - 1}, {"double_value": 1e300}, {"string_value": "9" * 19}],
    ids=["int64-max", "huge-double", "19-digits"],
)
def test_a_suite_id_past_the_databases_integers_is_no_such_suite_404(sender, suite, value):
    response = post_with_suite_id(sender, **value)
    assert response.status_code == 404
    assert "no such suite" in status_of(response).message


def test_a_suite_id_as_a_whole_double_routes_like_an_integer(sender, suite):
    assert post_with_suite_id(sender, double_value=suite.pk).status_code == 200
    assert TraceSpan.objects.count() == len(FIXTURE_SPANS)


# --- nesting ------------------------------------------------------------------------------------


def nested(levels: int, kind: str = "array_value") -> AnyValue:
    """A string inside ``levels`` arrays (or key-value lists)."""
    value = AnyValue(string_value="x")
    for _ in range(levels):
        outer = AnyValue()
        if kind == "array_value":
            outer.array_value.values.append(value)
        else:
            outer.kvlist_value.values.add(key="k").value.CopyFrom(value)
        value = outer
    return value


def deep_attribute(levels: int, kind: str = "array_value") -> KeyValue:
    item = KeyValue(key="deep")
    item.value.CopyFrom(nested(levels, kind))
    return item


@pytest.mark.parametrize("kind", ["array_value", "kvlist_value"])
@pytest.mark.parametrize("on", ["span", "event", "link"])
def test_a_spans_depth_is_the_depth_of_the_export_as_otlp_json(kind, on):
    for levels in range(12):
        request = ExportTraceServiceRequest()
        span = request.resource_spans.add().scope_spans.add().spans.add(name="s")
        holder = span if on == "span" else getattr(span, f"{on}s").add()
        holder.attributes.append(deep_attribute(levels, kind))
        text = MessageToJson(request).encode()
        for limit in range(10, 60):
            too_deep = measure(span, ItemLimits(limit, 10**6, 10**6, 10**6)).problem is not None
            assert too_deep == nested_deeper_than(text, limit), (levels, limit)


def json_export(suite_id, attribute_value: str) -> bytes:
    """An OTLP/JSON export of one span, its attribute's value written as given."""
    span = (
        f'{{"traceId": "{"01" * 16}", "spanId": "{"02" * 8}", "name": "agent", '
        f'"attributes": [{{"key": "deep", "value": {attribute_value}}}]}}'
    )
    resource = (
        f'{{"attributes": [{{"key": "casebook.suite", "value": {{"intValue": {suite_id}}}}}]}}'
    )
    return (
        f'{{"resourceSpans": [{{"resource": {resource}, "scopeSpans": [{{"spans": [{span}]}}]}}]}}'
    ).encode()


def nested_json(levels: int) -> str:
    return '{"arrayValue": {"values": [' * levels + '{"stringValue": "x"}' + "]}}" * levels


@pytest.mark.parametrize(
    "body",
    [
        b'{"resourceSpans": ' + b"[" * 500 + b"]" * 500 + b"}",
        "attribute-990-deep",
    ],
    ids=["json-500-deep", "attribute-990-deep"],
)
def test_json_nested_past_the_limit_400_before_anything_walks_it(sender, suite, body):
    if body == "attribute-990-deep":
        body = json_export(suite.pk, nested_json(990))
    response = sender.post(ENDPOINT, data=body, content_type="application/json")
    assert response.status_code == 400
    assert json.loads(response.content)["message"] == (
        f"the JSON is nested more than {DEPTH} levels deep, the limit (CASEBOOK_MAX_JSON_DEPTH)"
    )


def test_json_within_the_limit_is_read(sender, suite):
    body = json_export(suite.pk, nested_json(18))  # 10 + 3 * 18 = 64 levels
    assert sender.post(ENDPOINT, data=body, content_type="application/json").status_code == 200
    assert TraceSpan.objects.count() == 1


def test_protobuf_spans_nested_past_the_limit_are_rejected_and_the_rest_kept(sender, suite):
    request = export(suite.pk)
    spans_of(request)[0].attributes.append(deep_attribute(19))  # 10 + 3 * 19 = 67 levels
    event = spans_of(request)[1].events.add(name="e")
    event.attributes.append(deep_attribute(14, "kvlist_value"))  # 12 + 4 * 14 = 68 levels
    response = post(sender, request)
    assert response.status_code == 200
    partial = answer_of(response).partial_success
    assert partial.rejected_spans == 2
    assert partial.error_message == (
        f"a span nested more than {DEPTH} levels deep as OTLP/JSON: over the limit, "
        f"CASEBOOK_MAX_JSON_DEPTH = {DEPTH} (2 spans)"
    )
    assert TraceSpan.objects.count() == len(FIXTURE_SPANS) - 2


def length_delimited(field: int, payload: bytes) -> bytes:
    """A protobuf field of wire type 2 (a message, bytes or a string)."""
    size, length = bytearray(), len(payload)
    while True:
        size.append(length & 0x7F | (0x80 if length > 0x7F else 0))
        length >>= 7
        if not length:
            break
    return bytes([field << 3 | 2]) + bytes(size) + payload


def test_protobuf_nested_990_deep_400(sender, suite):
    value = length_delimited(1, b"x")  # AnyValue.string_value
    for _ in range(990):  # AnyValue.array_value, of ArrayValue.values
        value = length_delimited(5, length_delimited(1, value))
    attribute = length_delimited(1, b"deep") + length_delimited(2, value)
    span = length_delimited(1, b"\1" * 16) + length_delimited(2, b"\2" * 8)
    span += length_delimited(9, attribute)
    body = length_delimited(1, length_delimited(2, length_delimited(2, span)))
    response = sender.post(ENDPOINT, data=body, content_type=PROTOBUF)
    assert response.status_code == 400
    assert "not an OTLP protobuf trace export" in status_of(response).message


# --- what columns hold --------------------------------------------------------------------------


def test_a_start_past_a_signed_64_bit_integer_rejects_the_span(sender, suite):
    request = export(suite.pk)
    spans = spans_of(request)
    spans[0].start_time_unix_nano = 1 << 63
    spans[1].start_time_unix_nano = (1 << 64) - 1
    spans[2].start_time_unix_nano = (1 << 63) - 1  # the last nanosecond kept
    response = post(sender, request)
    assert response.status_code == 200
    partial = answer_of(response).partial_success
    assert partial.rejected_spans == 2
    assert "startTimeUnixNano is past 9,223,372,036,854,775,807" in partial.error_message
    assert TraceSpan.objects.filter(start=(1 << 63) - 1).count() == 1
    assert TraceSpan.objects.count() == len(FIXTURE_SPANS) - 2


def test_a_label_holding_a_nul_rejects_its_spans_400(sender, suite):
    response = post(sender, export(suite.pk, label="gpt\x00-4o"))
    assert response.status_code == 400
    assert (
        status_of(response).message
        == f"casebook.label holds a NUL character ({len(FIXTURE_SPANS)} spans)"
    )
    assert not Trace.objects.exists()


def test_a_case_key_holding_a_nul_rejects_its_span_never_naming_another_case(sender, suite):
    """Read without the NUL, ``wea\\x00ther`` was scored as the case ``weather``."""
    response = post(sender, export(suite.pk, case="wea\x00ther"))
    assert response.status_code == 200
    answer = answer_of(response).partial_success
    assert answer.rejected_spans == 1  # the root, which names the case
    assert "casebook.case holds a NUL character" in answer.error_message
    # the other spans are kept, naming no case; the trace waits for its root
    assert set(TraceSpan.objects.values_list("case_key", flat=True)) == {""}
    assert assemble_due() == 0


def test_a_resource_naming_a_case_with_a_nul_rejects_its_spans(sender, suite):
    request = export(suite.pk, case=None)
    request.resource_spans[0].resource.attributes.append(
        string_attribute("casebook.case", "wea\x00ther")
    )
    response = post(sender, request)
    assert response.status_code == 400
    assert "casebook.case holds a NUL character" in status_of(response).message
    assert not TraceSpan.objects.exists()


def test_a_case_attribute_value_holding_a_nul_rejects_its_span(sender, suite):
    suite.trace_case_attribute = "gen_ai.conversation.id"
    suite.save(update_fields=["trace_case_attribute"])
    request = export(suite.pk, case=None)
    spans = request.resource_spans[0].scope_spans[0].spans
    spans[0].attributes.append(string_attribute("gen_ai.conversation.id", "conv\x001"))
    answer = answer_of(post(sender, request)).partial_success
    assert answer.rejected_spans == 1
    assert "gen_ai.conversation.id (the suite's case attribute) holds a NUL" in answer.error_message


# --- authentication -----------------------------------------------------------------------------


@pytest.mark.parametrize("as_json", [False, True], ids=["protobuf", "json"])
def test_a_session_without_a_token_401_saying_which_token_is_wanted(
    suite, editor, password, as_json
):
    browser = Client(enforce_csrf_checks=True)
    browser.login(username=editor.username, password=password)
    response = post(browser, export(suite.pk), as_json=as_json)
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"
    status = status_of(response)
    assert status.code == 16  # UNAUTHENTICATED
    assert '"Authorization: Token KEY"' in status.message
    assert "session is not accepted" in status.message
    assert not TraceSpan.objects.exists()


def test_a_bad_token_401_saying_so_and_which_is_wanted(client, suite):
    response = post(client, export(suite.pk), HTTP_AUTHORIZATION="Token nope")
    assert response.status_code == 401
    message = status_of(response).message
    assert message.startswith("Invalid token. An API token of one of the suite's editors")


# --- an export's traces -------------------------------------------------------------------------


def test_spans_of_traces_past_the_exports_cap_are_rejected_naming_it(sender, suite, settings):
    settings.CASEBOOK_OTLP_MAX_TRACES = 2
    request = export(suite.pk, trace=1, spans={0, 1})
    for trace in (2, 3):
        request.resource_spans.extend(export(suite.pk, trace=trace).resource_spans)
    # A trace already counted takes more spans after the cap is reached.
    request.resource_spans.extend(export(suite.pk, trace=1, spans={2, 3}).resource_spans)
    response = post(sender, request)
    assert response.status_code == 200
    partial = answer_of(response).partial_success
    assert partial.rejected_spans == len(FIXTURE_SPANS)
    assert partial.error_message == (
        "spans of traces past the export's first 2: over the cap, CASEBOOK_OTLP_MAX_TRACES = 2 "
        f"({len(FIXTURE_SPANS)} spans)"
    )
    kept = dict(Trace.objects.values_list("trace_id", "span_count"))
    assert kept == {f"{1:032x}": 4, f"{2:032x}": len(FIXTURE_SPANS)}


# --- what an item, an export and a trace may hold --------------------------------------------


def one_span(suite_id, *, trace: int = 7, span: int = 1, values: int = 0) -> Span:
    """A span of trace ``trace`` holding ``values`` string attributes."""
    made = Span(trace_id=trace.to_bytes(16, "big"), span_id=span.to_bytes(8, "big"), name="s")
    for n in range(values):
        made.attributes.append(string_attribute(f"a{n}", "v"))
    return made


def export_of(suite_id, *spans: Span) -> ExportTraceServiceRequest:
    request = ExportTraceServiceRequest()
    resource_spans = request.resource_spans.add()
    resource_spans.resource.attributes.append(string_attribute("casebook.suite", str(suite_id)))
    resource_spans.scope_spans.add().spans.extend(spans)
    return request


def nested_values(count: int) -> KeyValue:
    """An attribute whose value is an array of ``count`` values inside a key-value list."""
    item = KeyValue(key="list")
    inner = item.value.kvlist_value.values.add(key="inner").value.array_value.values
    for n in range(count):
        inner.add(int_value=n)
    return item


def limited(settings, **caps):
    settings.CASEBOOK_OTLP_MAX_ITEM_ATTRIBUTES = caps.get("attributes", 10)
    settings.CASEBOOK_OTLP_MAX_ITEM_EVENTS = caps.get("events", 3)
    settings.CASEBOOK_OTLP_MAX_ITEM_LINKS = caps.get("links", 3)
    settings.CASEBOOK_OTLP_MAX_ATTRIBUTES = caps.get("export", 1000)


def refused_spans(sender, suite, bad: Span) -> str:
    """The answer's reasons for an export of a good span and ``bad``, which alone is
    rejected."""
    response = post(sender, export_of(suite.pk, one_span(suite.pk, span=9, values=2), bad))
    assert response.status_code == 200
    partial = answer_of(response).partial_success
    assert partial.rejected_spans == 1
    assert TraceSpan.objects.get().span_hex == f"{9:016x}"
    return partial.error_message


def test_a_span_of_more_attribute_values_than_its_cap_is_rejected_before_they_are_read(
    sender, suite, settings
):
    limited(settings)
    message = refused_spans(sender, suite, one_span(suite.pk, values=11))
    assert "a span of more attribute values than the cap, " in message
    assert "CASEBOOK_OTLP_MAX_ITEM_ATTRIBUTES = 10" in message


@pytest.mark.parametrize("on", ["span", "event", "link"])
def test_values_inside_lists_and_those_of_events_and_links_count_as_the_spans(
    sender, suite, settings, on
):
    limited(settings)
    bad = one_span(suite.pk, values=2)
    holder = bad if on == "span" else getattr(bad, f"{on}s").add()
    holder.attributes.append(nested_values(8))  # 2 + 1 + 1 + 8 values, and the event's 1
    message = refused_spans(sender, suite, bad)
    assert "CASEBOOK_OTLP_MAX_ITEM_ATTRIBUTES = 10" in message


@pytest.mark.parametrize(("kind", "setting"), [("events", "EVENTS"), ("links", "LINKS")])
def test_a_span_of_more_events_or_links_than_their_caps_is_rejected(
    sender, suite, settings, kind, setting
):
    limited(settings)
    bad = one_span(suite.pk)
    for _ in range(4):
        getattr(bad, kind).add()
    message = refused_spans(sender, suite, bad)
    assert f"a span of more {kind} than the cap, CASEBOOK_OTLP_MAX_ITEM_{setting} = 3" in message


def test_a_resource_of_more_attributes_than_an_item_may_hold_rejects_its_spans(
    sender, suite, settings
):
    limited(settings)
    request = export_of(suite.pk, one_span(suite.pk))
    for n in range(11):
        request.resource_spans[0].resource.attributes.append(string_attribute(f"r{n}", "v"))
    response = post(sender, request)
    assert response.status_code == 400
    assert "a resource of more attributes than the cap" in status_of(response).message


def test_items_past_the_exports_attribute_values_are_rejected_and_the_first_kept(
    sender, suite, settings
):
    limited(settings, export=25)
    spans = [one_span(suite.pk, span=n, values=10) for n in range(1, 5)]  # 10 values each
    response = post(sender, export_of(suite.pk, *spans))
    partial = answer_of(response).partial_success
    assert partial.rejected_spans == 2
    assert partial.error_message == (
        "spans past the export's first 25 attribute values, events and links: over the cap, "
        "CASEBOOK_OTLP_MAX_ATTRIBUTES = 25 (2 spans)"
    )
    assert TraceSpan.objects.count() == 2
    assert Trace.objects.get().attribute_count == 2 * 10 + 0  # as counted, the scope's none


def test_spans_past_a_traces_attribute_values_are_rejected_naming_the_trace(
    sender, suite, settings
):
    limited(settings)
    settings.CASEBOOK_TRACE_MAX_ATTRIBUTES = 25
    for batch in range(2):
        request = export_of(suite.pk, *(
            one_span(suite.pk, span=10 * batch + n, values=10) for n in (1, 2)
        ))  # fmt: skip
        partial = answer_of(post(sender, request)).partial_success
    assert partial.rejected_spans == 2
    assert f"trace {7:032x}: over the cap, CASEBOOK_TRACE_MAX_ATTRIBUTES = 25" in (
        partial.error_message
    )
    assert Trace.objects.get().attribute_count == 20


def test_an_otlp_json_body_of_more_objects_and_arrays_than_its_cap_is_413_unparsed(
    sender, suite, settings
):
    settings.CASEBOOK_OTLP_MAX_ATTRIBUTES = 20  # 80 objects and arrays
    span = one_span(suite.pk, values=5)  # 15 objects and arrays, with the export's
    span.attributes.append(string_attribute("braces", "{[" * 500))  # inside a string: none
    small, content_type = body_of(export_of(suite.pk, span), as_json=True)
    body, content_type = body_of(export_of(suite.pk, one_span(suite.pk, values=40)), as_json=True)
    response = sender.post(ENDPOINT, body, content_type=content_type)
    assert response.status_code == 413
    assert status_of(response).message == (
        "the OTLP/JSON holds 92 objects and arrays: over 80, four for each attribute "
        "value CASEBOOK_OTLP_MAX_ATTRIBUTES lets an export hold"
    )
    assert sender.post(ENDPOINT, small, content_type=content_type).status_code == 200


def test_assembly_reads_no_more_of_a_trace_than_its_cap_of_values(sender, suite, settings):
    post(sender, export(suite.pk))
    settings.CASEBOOK_TRACE_MAX_ATTRIBUTES = 3  # lowered after the spans were kept
    assert assemble_due() == 1
    run = Run.objects.get()
    assert len(run.document["batches"]) < 2  # the spans past the cap are not read


def many_traces_export(suite_id, traces: int) -> ExportTraceServiceRequest:
    """One span in each of ``traces`` traces, as an exporter batching them would send it."""
    request = ExportTraceServiceRequest()
    resource_spans = request.resource_spans.add()
    resource_spans.resource.attributes.append(string_attribute("casebook.suite", str(suite_id)))
    spans = resource_spans.scope_spans.add().spans
    for number in range(1, traces + 1):
        spans.add(
            trace_id=number.to_bytes(16, "big"),
            span_id=number.to_bytes(8, "big"),
            name="invoke_agent",
            start_time_unix_nano=1_700_000_000_000_000_000 + number,
        )
    return request


@pytest.mark.parametrize(
    ("as_json", "traced", "size"),
    [(False, False, (4, 6)), (False, True, (4, 6)), (True, False, (13, 15))],
    ids=["protobuf-time", "protobuf-memory", "json-time"],
)
def test_an_export_of_100000_traces_costs_its_size_not_its_count(
    sender, suite, settings, as_json, traced, size
):
    cap = settings.CASEBOOK_OTLP_MAX_TRACES
    body, content_type = body_of(many_traces_export(suite.pk, 100_000), as_json=as_json)
    assert size[0] * MiB < len(body) < size[1] * MiB
    post(sender, export(suite.pk, trace=1 << 100))  # the first request's imports, not counted
    if traced:  # tracing slows Python down several times: the time is measured untraced
        tracemalloc.start()
    started = time.perf_counter()
    try:
        response = sender.post(ENDPOINT, data=body, content_type=content_type)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    seconds = time.perf_counter() - started

    assert response.status_code == 200
    partial = answer_of(response).partial_success
    assert partial.rejected_spans == 100_000 - cap
    assert f"CASEBOOK_OTLP_MAX_TRACES = {cap:,}" in partial.error_message
    assert Trace.objects.count() == cap + 1
    if traced:
        assert peak < 64 * MiB  # was 846 MB (the whole process)
    else:
        assert seconds < (20 if as_json else 5)  # was 81 s
