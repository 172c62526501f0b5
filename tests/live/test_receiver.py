"""``POST /otlp/v1/traces`` in this process (scoring/api/otlp_receiver.py,
scoring/live/traces.py): what is accepted and answered, and how the stored spans become runs
of the live submission. The assembly runs when the test says (the grace period and the timer
are the live tests')."""

from __future__ import annotations

import gzip
import io
import json

import pytest
from django.core.management import call_command
from django.test import TestCase
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from cases import services
from scoring.live import assembly, traces
from scoring.models import Run, Submission, Trace, TraceSpan
from scoring.models import Status as SubmissionStatus
from tests.support.otlp_data import (
    ENDPOINT,
    FIXTURE_SPANS,
    PROTOBUF,
    ROOT_SPAN,
    SPANS_LINE,
    TOKYO_SPAN,
    answer_of,
    assemble_due,
    export,
    live_reports,
    post,
    status_of,
    string_attribute,
    uploaded_reports,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("assembled_when_told")]


def live_submission(suite, label="") -> Submission:
    return Submission.objects.get(suite=suite, label=label, live_day__isnull=False)


# --- the receiver -------------------------------------------------------------------------------


def test_a_protobuf_export_is_stored_at_once_and_answered_with_full_success(sender, suite):
    response = post(sender, export(suite.pk))
    assert response.status_code == 200
    assert not answer_of(response).HasField("partial_success")
    trace = Trace.objects.get()
    assert (trace.suite, trace.has_root, trace.pending, trace.run) == (suite, True, True, None)
    assert trace.spans.count() == len(FIXTURE_SPANS)


@pytest.mark.parametrize("hex_ids", [True, False], ids=["otlp-json", "base64-ids"])
def test_otlp_json_gzipped_stores_the_same_spans_as_protobuf(sender, suite, hex_ids):
    post(sender, export(suite.pk, trace=1))
    response = post(sender, export(suite.pk, trace=2), as_json=True, hex_ids=hex_ids, gzipped=True)
    assert response.status_code == 200, response.content
    assert response["Content-Type"] == "application/json"
    assert json.loads(response.content) == {}
    by_trace = [
        [
            (span_id, start, Span.FromString(bytes(data)))
            for span_id, start, data in trace.spans.order_by("span_hex").values_list(
                "span_hex", "start", "data"
            )
        ]
        for trace in Trace.objects.order_by("trace_id")
    ]
    for spans in by_trace:
        for _, _, span in spans:
            span.ClearField("trace_id")
    assert by_trace[0] == by_trace[1]


def test_an_export_sent_twice_keeps_each_span_once(sender, suite):
    post(sender, export(suite.pk))
    assert post(sender, export(suite.pk)).status_code == 200
    assert TraceSpan.objects.count() == len(FIXTURE_SPANS)


def test_a_span_an_export_racing_this_one_stored_first_is_kept_once(sender, suite, monkeypatch):
    post(sender, export(suite.pk, spans={0}))
    # The other export's spans were stored after this one looked: its COPY fails on them.
    monkeypatch.setattr(traces, "stored_spans", lambda spans: set())
    assert post(sender, export(suite.pk)).status_code == 200
    assert TraceSpan.objects.count() == len(FIXTURE_SPANS)


def test_without_a_token_401_with_a_status_body(client, suite):
    response = post(client, export(suite.pk))
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Token")
    assert status_of(response).code == 16  # UNAUTHENTICATED
    assert not TraceSpan.objects.exists()


def test_a_suite_the_sender_may_not_see_404_and_only_see_403(client_of, suite, outsider, viewer):
    response = post(client_of(outsider), export(suite.pk))
    assert response.status_code == 404
    assert "no such suite" in status_of(response).message
    as_viewer = client_of(viewer)
    response = post(as_viewer, export(suite.pk))
    assert response.status_code == 403
    assert "editors" in status_of(response).message
    response = post(as_viewer, export(suite.pk), as_json=True)
    assert response.status_code == 403
    assert json.loads(response.content)["code"] == 7  # PERMISSION_DENIED, as OTLP/JSON
    assert not TraceSpan.objects.exists()


@pytest.mark.parametrize(
    ("body", "headers", "expected"),
    [
        (b"\xff\xff\xff", {}, "not an OTLP protobuf trace export"),
        (b'{"resourceSpans": 3}', {"content_type": "application/json"}, "OTLP/JSON"),
        (b"null", {"content_type": "application/json"}, "not a JSON object"),
        (b"[1, 2]", {"content_type": "application/json"}, "not a JSON object"),
        (b'{"resourceSpans": [null]}', {"content_type": "application/json"}, "OTLP/JSON"),
        (b"not gzip", {"HTTP_CONTENT_ENCODING": "gzip"}, "gzip data is broken"),
        (b"x", {"content_type": "text/plain"}, "Content-Type must be"),
    ],
    ids=["protobuf", "json", "json-null", "json-array", "json-null-inside", "gzip", "content-type"],
)
def test_a_body_that_cannot_be_read_400_saying_why(sender, suite, body, headers, expected):
    headers.setdefault("content_type", PROTOBUF)
    response = sender.post(ENDPOINT, data=body, **headers)
    assert response.status_code == 400
    assert expected in status_of(response).message


def test_a_body_over_the_limit_413_compressed_or_expanded(sender, suite, settings):
    body = export(suite.pk).SerializeToString()
    settings.CASEBOOK_OTLP_MAX_BYTES = len(body) - 1
    response = sender.post(ENDPOINT, data=body, content_type=PROTOBUF)
    assert response.status_code == 413
    small = gzip.compress(body)
    assert len(small) < settings.CASEBOOK_OTLP_MAX_BYTES
    response = sender.post(
        ENDPOINT, data=small, content_type=PROTOBUF, HTTP_CONTENT_ENCODING="gzip"
    )
    assert response.status_code == 413
    assert "expands past" in status_of(response).message


def test_spans_that_name_no_suite_are_rejected_and_the_rest_kept(sender, suite):
    request = export(suite.pk, trace=1)
    request.resource_spans.extend(export(None, trace=2).resource_spans)
    response = post(sender, request)
    assert response.status_code == 200
    partial = answer_of(response).partial_success
    assert partial.rejected_spans == len(FIXTURE_SPANS)
    assert "no casebook.suite resource attribute" in partial.error_message
    assert TraceSpan.objects.count() == len(FIXTURE_SPANS)
    # Nothing routed at all: the whole export is refused.
    assert post(sender, export(None)).status_code == 400
    assert post(sender, export("twelve")).status_code == 400


# --- traces become runs -------------------------------------------------------------------------


def test_a_trace_becomes_a_run_scored_as_the_same_spans_uploaded_as_a_file(sender, suite, editor):
    post(sender, export(suite.pk, label="gpt-4o"))
    assert assemble_due() == 1
    live = live_submission(suite, "gpt-4o")
    assert live.status == SubmissionStatus.DONE
    assert (live.stored_runs, live.scored, live.passed) == (1, 1, 1)
    assert live.formats_seen == ["otel"]
    assert live_reports(live) == uploaded_reports(suite, editor, [SPANS_LINE])
    run = Run.objects.get(submission=live)
    assert (run.case_key, run.trial) == ("weather", 0)
    assert run.meta_values == {"trace_id": Trace.objects.get().trace_id}
    assert assemble_due() == 0  # done once


def test_spans_split_across_exports_and_out_of_order_make_the_same_run(sender, suite, editor):
    for position in reversed(range(len(FIXTURE_SPANS))):  # the root first, then the rest
        post(sender, export(suite.pk, spans={position}))
    assert Trace.objects.get().spans.count() == len(FIXTURE_SPANS)
    assert assemble_due() == 1
    assert live_reports(live_submission(suite)) == uploaded_reports(suite, editor, [SPANS_LINE])


def test_no_run_before_the_root_and_the_grace_period(sender, suite, settings):
    without_root = set(range(len(FIXTURE_SPANS))) - {ROOT_SPAN}
    post(sender, export(suite.pk, spans=without_root))
    assert assemble_due() == 0
    settings.CASEBOOK_TRACE_GRACE_SECONDS = 60
    post(sender, export(suite.pk, spans={ROOT_SPAN}))
    assert assemble_due() == 0
    settings.CASEBOOK_TRACE_GRACE_SECONDS = 0
    assert assemble_due() == 1


def test_a_trace_whose_root_never_comes_is_a_run_after_the_rootless_wait(sender, suite, settings):
    post(sender, export(suite.pk, spans=set(range(len(FIXTURE_SPANS))) - {ROOT_SPAN}, case=None))
    assert assemble_due() == 0
    settings.CASEBOOK_TRACE_ROOTLESS_SECONDS = 0
    assert assemble_due() == 1


def test_runs_of_a_label_collect_in_one_live_submission_trials_in_arrival_order(sender, suite):
    for trace, (case, label) in enumerate(
        [("weather", "a"), ("weather-answer", "a"), ("weather", "a"), ("weather", "b")], start=1
    ):
        post(sender, export(suite.pk, case=case, label=label, trace=trace))
        assemble_due()
    first = live_submission(suite, "a")
    runs = first.runs.order_by("seq").values_list("case_key", "trial")
    assert list(runs) == [("weather", 0), ("weather-answer", 0), ("weather", 1)]
    assert (first.scored, first.passed, first.failed) == (3, 2, 1)
    assert live_submission(suite, "b").stored_runs == 1


def test_a_late_span_makes_the_run_again_and_scores_it_again(sender, suite):
    post(sender, export(suite.pk, spans=set(range(len(FIXTURE_SPANS))) - {TOKYO_SPAN}))
    assemble_due()
    live = live_submission(suite)
    run = Run.objects.get(submission=live)
    assert run.result.verdict == "pass"  # Tokyo's call is in the chat span's message
    assert "is_error" not in json.dumps(run.document["batches"])
    post(sender, export(suite.pk, spans={TOKYO_SPAN}))
    assert Trace.objects.get().pending
    assert assemble_due() == 1
    run = Run.objects.get(submission=live)  # the same run, remade
    assert run.document["batches"][0][1]["is_error"] is True
    live.refresh_from_db()
    assert (live.stored_runs, live.scored, live.passed, live.status) == (1, 1, 1, "done")


def test_a_trace_naming_no_case_is_an_unassigned_run_a_case_can_be_drafted_from(
    sender, suite, client, editor, password
):
    post(sender, export(suite.pk, case=None))
    assert assemble_due() == 1
    live = live_submission(suite)
    run = Run.objects.get(submission=live)
    assert (run.case_key, live.total, live.unknown_cases, live.status) == ("", 0, {}, "done")
    assert not hasattr(run, "result")
    client.login(username=editor.username, password=password)
    page = client.get(f"/suites/{suite.pk}/unassigned/")
    assert page.status_code == 200
    assert f"/submissions/{live.pk}/runs/{run.pk}/".encode() in page.content
    draft = client.get(f"/submissions/{live.pk}/runs/{run.pk}/draft/")
    assert draft.status_code == 200
    assert b"get_weather" in draft.content


def test_a_late_span_naming_the_case_assigns_the_run(sender, suite):
    post(sender, export(suite.pk, case=None, spans={ROOT_SPAN}))
    assemble_due()
    request = export(suite.pk, case=None, spans={0})
    request.resource_spans[0].scope_spans[0].spans[0].attributes.append(
        string_attribute("casebook.case", "weather")
    )
    post(sender, request)
    assemble_due()
    live = live_submission(suite)
    run = Run.objects.get(submission=live)
    assert (run.case_key, run.trial, live.total, live.scored) == ("weather", 0, 1, 1)


def test_spans_that_make_no_valid_run_are_listed_as_an_invalid_trace(sender, suite):
    request = export(suite.pk)
    tool = request.resource_spans[0].scope_spans[1].spans[0]
    for item in tool.attributes:
        if item.key == "gen_ai.tool.name":
            item.value.int_value = 7
    post(sender, request)
    assert assemble_due() == 0
    trace = Trace.objects.get()
    assert "attributes[1].value: must be a string, not number" in trace.problem
    live = live_submission(suite)
    assert live.invalid == 1
    assert trace.trace_id in live.invalid_lines.get().reason


def test_a_json_export_is_answered_in_json(sender, suite):
    response = post(sender, export(None), as_json=True)
    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert json.loads(response.content)["message"].startswith("no casebook.suite")
    request = export(suite.pk, trace=1)
    request.resource_spans.extend(export(None, trace=2).resource_spans)
    answer = json.loads(post(sender, request, as_json=True).content)
    assert answer["partialSuccess"]["rejectedSpans"] == str(len(FIXTURE_SPANS))


def test_the_command_assembles_what_is_due(sender, suite):
    post(sender, export(suite.pk))
    with TestCase.captureOnCommitCallbacks(execute=True):
        assert call_command_output("assemble_traces") == "1 trace(s) made into runs\n"
    assert live_submission(suite).scored == 1


def call_command_output(*arguments) -> str:
    out = io.StringIO()
    call_command(*arguments, stdout=out)
    return out.getvalue()


def test_the_suite_can_name_the_span_attribute_that_holds_the_case(sender, suite):
    suite.trace_case_attribute = "gen_ai.conversation.id"
    suite.save()
    request = export(suite.pk, case=None)
    chat = request.resource_spans[0].scope_spans[0].spans[1]
    chat.attributes.append(string_attribute("gen_ai.conversation.id", "weather"))
    post(sender, request)
    assemble_due()
    run = Run.objects.get()
    assert (run.case_key, run.result.verdict) == ("weather", "pass")


def test_the_case_attribute_is_a_setting_of_the_suite_page(client, suite, admin, password):
    client.login(username=admin.username, password=password)
    form = {"name": suite.name, "visibility": "team", "match_preset": ""}
    response = client.post(
        f"/suites/{suite.pk}/settings/", form | {"trace_case_attribute": "gen_ai.conversation.id"}
    )
    assert response.status_code == 302
    suite.refresh_from_db()
    assert suite.trace_case_attribute == "gen_ai.conversation.id"
    assert suite.versions.count() == 1  # the suite file did not change


# --- a trace's caps -----------------------------------------------------------------------------


def test_spans_over_a_traces_span_cap_are_rejected_naming_it_and_the_rest_kept(
    sender, suite, settings
):
    settings.CASEBOOK_TRACE_MAX_SPANS = 3
    request = export(suite.pk, trace=1)
    request.resource_spans.extend(export(suite.pk, trace=2, spans={0, 1}).resource_spans)
    response = post(sender, request)
    assert response.status_code == 200
    partial = answer_of(response).partial_success
    over = len(FIXTURE_SPANS) - 3
    assert partial.rejected_spans == over
    first = Trace.objects.get(trace_id=f"{1:032x}")
    assert partial.error_message == (
        f"trace {first.trace_id}: over the cap, CASEBOOK_TRACE_MAX_SPANS = 3 ({over} spans)"
    )
    assert (first.spans.count(), first.span_count) == (3, 3)
    assert Trace.objects.get(trace_id=f"{2:032x}").spans.count() == 2  # nothing valid lost
    # A full trace's later spans are rejected too, even when nothing else is sent.
    response = post(sender, export(suite.pk, trace=1, spans={len(FIXTURE_SPANS) - 1}))
    assert response.status_code == 200
    assert answer_of(response).partial_success.rejected_spans == 1
    # Sent again, the spans it holds are accepted as before, not counted again.
    response = post(sender, export(suite.pk, trace=1, spans={0}))
    assert not answer_of(response).HasField("partial_success")
    assert first.spans.count() == 3


def test_spans_over_a_traces_byte_cap_are_rejected_naming_it(sender, suite, settings):
    sizes = [
        len(traces.stored(span, scope.scope.name))
        for resource in export(suite.pk).resource_spans
        for scope in resource.scope_spans
        for span in scope.spans
    ]
    settings.CASEBOOK_TRACE_MAX_BYTES = sum(sizes[:2])
    response = post(sender, export(suite.pk))
    partial = answer_of(response).partial_success
    assert partial.rejected_spans == len(FIXTURE_SPANS) - 2
    assert f"CASEBOOK_TRACE_MAX_BYTES = {sum(sizes[:2]):,}" in partial.error_message
    trace = Trace.objects.get()
    assert trace.trace_id in partial.error_message
    assert (trace.spans.count(), trace.span_bytes) == (2, sum(sizes[:2]))


def test_a_capped_trace_whose_root_was_rejected_is_still_made_into_a_run(sender, suite, settings):
    settings.CASEBOOK_TRACE_MAX_SPANS = len(FIXTURE_SPANS) - 1
    others = set(range(len(FIXTURE_SPANS))) - {ROOT_SPAN}
    post(sender, export(suite.pk, spans=others, case=None))
    response = post(sender, export(suite.pk, spans={ROOT_SPAN}))
    assert answer_of(response).partial_success.rejected_spans == 1
    assert assemble_due() == 1  # the root came: no rootless wait
    assert Run.objects.get().submission.live_day is not None


def test_a_racing_exports_spans_are_counted_once(sender, suite, monkeypatch):
    post(sender, export(suite.pk, spans={0}))
    monkeypatch.setattr(traces, "stored_spans", lambda spans: set())
    post(sender, export(suite.pk))
    trace = Trace.objects.get()
    stored = [bytes(data) for data in trace.spans.values_list("data", flat=True)]
    assert (trace.span_count, trace.span_bytes) == (len(stored), sum(map(len, stored)))


def test_assembly_reads_no_more_spans_than_the_cap(sender, suite, settings, monkeypatch):
    post(sender, export(suite.pk))
    settings.CASEBOOK_TRACE_MAX_SPANS = 2  # lowered after the spans were kept
    read = []
    to_canonical = assembly.to_canonical
    monkeypatch.setattr(
        assembly, "to_canonical", lambda line, name: read.append(line) or to_canonical(line, name)
    )
    assemble_due()
    first = sorted(FIXTURE_SPANS, key=lambda span: int(span["startTimeUnixNano"]))[:2]
    assert [span["spanId"] for span in read[0]["spans"]] == [span["spanId"] for span in first]


def spans_of(request: ExportTraceServiceRequest) -> list[Span]:
    return [
        span
        for resource in request.resource_spans
        for scope in resource.scope_spans
        for span in scope.spans
    ]


# --- the case attribute's values mapped to cases ------------------------------------------------


def conversation_export(suite, value: str, *, trace=1, case=None):
    """The fixture's trace, its chat span holding ``gen_ai.conversation.id`` = ``value``."""
    request = export(suite.pk, case=case, trace=trace)
    chat = request.resource_spans[0].scope_spans[0].spans[1]
    chat.attributes.append(string_attribute("gen_ai.conversation.id", value))
    return request


@pytest.fixture
def mapped_suite(suite, admin):
    services.update_settings(
        suite,
        admin,
        trace_case_attribute="gen_ai.conversation.id",
        trace_case_map={"conv-17": "weather", "conv-18": "weather-answer"},
    )
    return suite


def test_a_mapped_value_names_its_case_and_an_unmapped_case_key_its_own(sender, mapped_suite):
    for trace, value in enumerate(["conv-17", "conv-18", "weather"], start=1):
        post(sender, conversation_export(mapped_suite, value, trace=trace))
    assert assemble_due() == 3
    runs = Run.objects.order_by("seq")
    assert [(run.case_key, run.result.verdict) for run in runs] == [
        ("weather", "pass"),
        ("weather-answer", "fail"),
        ("weather", "pass"),
    ]
    assert runs[0].meta_values["case_value"] == "conv-17"


def test_casebook_case_wins_over_the_mapped_attribute(sender, mapped_suite):
    post(sender, conversation_export(mapped_suite, "conv-18", case="weather"))
    assemble_due()
    assert Run.objects.get().case_key == "weather"


def test_a_value_neither_mapped_nor_a_case_key_is_unassigned_and_listed_so(
    sender, mapped_suite, client, editor, password
):
    post(sender, conversation_export(mapped_suite, "conv-<99>"))
    assert assemble_due() == 1
    live = live_submission(mapped_suite)
    run = Run.objects.get()
    assert (run.case_key, live.unknown_cases, live.total) == ("", {}, 0)
    client.login(username=editor.username, password=password)
    page = client.get(f"/suites/{mapped_suite.pk}/unassigned/").content.decode()
    assert "no value of <code>gen_ai.conversation.id</code> that the suite" in page
    assert "<code>conv-&lt;99&gt;</code>" in page


def test_the_map_applies_to_traces_assembled_after_it_is_edited(sender, mapped_suite, admin):
    post(sender, conversation_export(mapped_suite, "conv-20"))
    assemble_due()
    assert Run.objects.get().case_key == ""
    services.update_settings(mapped_suite, admin, trace_case_map={"conv-20": "weather"})
    post(sender, conversation_export(mapped_suite, "conv-20", trace=2))
    assemble_due()
    assert Run.objects.order_by("seq").last().case_key == "weather"


def settings_form(suite, **fields) -> dict:
    return {"name": suite.name, "visibility": "team", "match_preset": ""} | fields


def test_the_map_is_edited_on_the_settings_page_with_clear_errors(client, suite, admin, password):
    client.login(username=admin.username, password=password)
    url = f"/suites/{suite.pk}/settings/"
    form = settings_form(suite, trace_case_attribute="gen_ai.conversation.id")
    response = client.post(url, form | {"trace_case_map": '{"conv-17": "weather"}'})
    assert response.status_code == 302
    suite.refresh_from_db()
    assert suite.trace_case_map == {"conv-17": "weather"}
    assert suite.versions.count() == 1
    assert "&quot;conv-17&quot;: &quot;weather&quot;" in client.get(url).content.decode()

    response = client.post(url, form | {"trace_case_map": '{"a": "nope", "b": "weather", "c": 3}'})
    page = response.content.decode()
    assert response.status_code == 200
    assert "<code>trace_case_map.a</code>: no case &#x27;nope&#x27; in the suite" in page
    assert "<code>trace_case_map.c</code>: must be a case key (text)" in page
    assert "trace_case_map.b" not in page
    response = client.post(url, form | {"trace_case_map": '{"a": '})
    assert "Not JSON" in response.content.decode()
    many = json.dumps({f"conv-{k}": "weather" for k in range(services.TRACE_CASE_MAP_LIMIT + 1)})
    response = client.post(url, form | {"trace_case_map": many})
    assert f"{services.TRACE_CASE_MAP_LIMIT:,}" in response.content.decode()
    suite.refresh_from_db()
    assert suite.trace_case_map == {"conv-17": "weather"}  # none of those saved


def test_the_map_is_edited_through_the_api(client_of, suite, editor, viewer):
    as_editor = client_of(editor)
    url = f"/api/suites/{suite.pk}/"
    body = {"trace_case_attribute": "gen_ai.conversation.id", "trace_case_map": {"c1": "weather"}}
    response = as_editor.patch(url, body, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["trace_case_map"] == {"c1": "weather"}
    assert response.json()["trace_case_attribute"] == "gen_ai.conversation.id"
    response = as_editor.patch(url, {"trace_case_map": {"c1": "missing"}}, format="json")
    assert response.status_code == 400
    assert response.json() == {
        "trace_case_map": ["trace_case_map.c1: no case 'missing' in the suite"]
    }
    assert client_of(viewer).patch(url, body, format="json").status_code == 403
