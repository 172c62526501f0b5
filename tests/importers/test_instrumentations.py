"""What instrumentations send, read as they send it (docs/formats.md#opentelemetry-genai-spans):
each variant's captured exports (tests/fixtures/otlp/), written as the Collector's file
exporter writes them, give the runs the producer was told to make, once each, with their
calls, arguments and final text, scored against the cases it was told to run; without
content, or where the instrumentation never records something, the run says what was not
captured and what records it, and is not failed for it. The same bytes sent live:
tests/live/test_producers.py."""

import io
import json

import pytest
from django.core.management import call_command

from scoring.importers.otel import INSTRUMENTATIONS
from scoring.importers.otel.capture import instrumentation_of
from scoring.importers.otel.spans import read_spans
from scoring.matcher import load_suite, score
from scoring.runfiles import otlp_files
from scoring.runfiles.reader import RecordReader, read_run_lines
from tests.support.otlp_fixtures import (
    PRODUCER_SUITE,
    VARIANTS,
    check_run,
    collector_lines,
    expected,
)

SUITE = load_suite(PRODUCER_SUITE)


def runs_of(variant: str) -> list:
    body = b"".join(json.dumps(line).encode() + b"\n" for line in collector_lines(variant))
    return list(read_run_lines(io.BytesIO(body)))


@pytest.mark.parametrize("variant", VARIANTS)
def test_each_variant_gives_its_runs_once_as_the_producer_made_them(variant):
    told = expected(variant)
    lines = runs_of(variant)
    assert [(line.problems, line.run.case) for line in lines] == [
        ((), run["case"]) for run in told["runs"]
    ]
    for line, run in zip(lines, told["runs"], strict=True):
        check_run(variant, run, line.run, score(SUITE.case(run["case"]), line.run).verdict)


def test_every_capture_is_checked_under_the_instrumentation_that_lists_it():
    """The panel's and the docs' entries (capture.py) each name the captures they were
    checked against; each capture is one entry's, and its spans are known as that entry's,
    whose settings its run's notes name."""
    listed = [variant for each in INSTRUMENTATIONS for variant in each.variants]
    assert sorted(listed) == VARIANTS
    for each in INSTRUMENTATIONS:
        for variant in each.variants:
            spans = [span for line in collector_lines(variant) for span in read_spans(line)]
            assert instrumentation_of(spans) is each, variant


def test_a_trace_with_no_call_whose_case_only_the_resource_names_is_no_run():
    """AutoGen makes a trace of one span when an agent is made, before its run: the case
    the process's resource names is on it too, but it is no run. Named on the span, the
    case makes it one, which says nothing of it could be read."""
    lines = collector_lines("autogen-otel")
    reader = RecordReader(None, None)
    runs = list(reader.runs(enumerate(lines, 1), "line"))
    assert [r.run.case for r in runs] == ["weather", "add"]
    assert reader.not_runs == 2
    resource, scope, span = next(
        (r["resource"], s["scope"], span)
        for line in lines
        for r in line["resourceSpans"]
        for s in r["scopeSpans"]
        for span in s["spans"]
        if span["name"].startswith("create_agent")
    )
    named = {"key": "casebook.case", "value": {"stringValue": "weather"}}
    span["attributes"] = [*span.get("attributes", []), named]
    line = {
        "resourceSpans": [{"resource": resource, "scopeSpans": [{"scope": scope, "spans": [span]}]}]
    }
    (made,) = RecordReader(None, None).runs([(1, line)], "line")
    assert made.run.not_captured["calls"].startswith("no span of the trace is a model call")


def test_spans_of_two_traces_on_one_line_and_a_trace_over_two_lines_regroup_by_trace():
    a, b = (collector_lines(v)[0] for v in ("openai-v2-latest", "pydantic-ai"))
    resource_a = a["resourceSpans"][0]["resource"]
    spans_a = [
        {"scope": scope.get("scope"), "spans": [span]}
        for scope in a["resourceSpans"][0]["scopeSpans"]
        for span in scope["spans"]
    ]
    half = len(spans_a) // 2
    first = {"resourceSpans": [{"resource": resource_a, "scopeSpans": spans_a[:half]}]}
    first["resourceSpans"] += b["resourceSpans"]
    second = {"resourceSpans": [{"resource": resource_a, "scopeSpans": spans_a[half:]}]}
    body = b"\n".join(json.dumps(line).encode() for line in (first, second))
    runs = list(read_run_lines(io.BytesIO(body)))
    assert [r.problems for r in runs] == [(), ()]
    trace_of = {line["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"] for line in (a, b)}
    assert {r.run.meta["trace_id"] for r in runs} == trace_of
    assert [r.line for r in runs] == [1, 1]  # the line each trace was first seen on
    for r in runs:
        told = expected("pydantic-ai")["runs"][0]
        check_run("pydantic-ai", told, r.run, score(SUITE.case("weather"), r.run).verdict)


def test_manage_py_score_reads_collector_files_with_their_case_from_the_spans(tmp_path):
    """The Collector's file exporter, as ``manage.py score`` takes it: the case comes from
    ``casebook.case`` (here on the resource, as the producers set it), the verdicts are the
    live ones."""
    suite_file = tmp_path / "suite.json"
    suite_file.write_text(json.dumps(PRODUCER_SUITE))
    run_file = tmp_path / "otel.jsonl"
    lines = [*collector_lines("google-adk"), *collector_lines("vercel-ai-no-content")]
    run_file.write_text("".join(json.dumps(line) + "\n" for line in lines))
    out, err = io.StringIO(), io.StringIO()
    with pytest.raises(SystemExit):
        call_command("score", str(suite_file), str(run_file), "--json", stdout=out, stderr=err)
    assert err.getvalue() == ""
    reports = json.loads(out.getvalue())
    assert [(r["case"], r["verdict"]) for r in reports] == [
        ("weather", "pass"),
        ("weather", "error"),
    ]


def test_log_records_count_towards_what_a_collector_file_may_hold(monkeypatch):
    """A file of log records only (no root ever comes) is held no more than the cap: the
    oldest trace is given up first, before the file ends."""
    monkeypatch.setattr(otlp_files, "MAX_HELD_ITEMS", 3)
    (logs,) = [line for line in collector_lines("openai-v2-events") if "resourceLogs" in line]
    records = logs["resourceLogs"][0]["scopeLogs"][0]["logRecords"]
    lines = [
        (
            n,
            {
                "resourceLogs": [
                    {"scopeLogs": [{"logRecords": [{**record, "traceId": f"{n:032x}"}]}]}
                ]
            },
        )
        for n, record in enumerate(records * 2, 1)
    ]
    read = []

    def sent():
        for line in lines:
            read.append(line[0])
            yield line

    first, _ = next(otlp_files.regrouped(sent()))
    assert (first, len(read)) == (1, 4)  # the fourth record's trace took the count past 3
