"""What instrumentations send, read as they send it (docs/formats.md#opentelemetry-genai-spans):
each variant's captured exports (tests/fixtures/otlp/), written as the Collector's file
exporter writes them, give the run the producer was told to make, once, with its calls,
arguments and final text; without content, the run says what was not captured and which
setting records it. The same bytes sent live: tests/live/test_producers.py."""

import io
import json

import pytest
from django.core.management import call_command

from scoring.matcher import load_suite, score
from scoring.runfiles import otlp_files
from scoring.runfiles.reader import read_run_lines
from tests.support.otlp_fixtures import (
    VARIANTS,
    WEATHER_SUITE,
    check_run,
    collector_lines,
    expected,
)

CASE = load_suite(WEATHER_SUITE).case("weather")


@pytest.mark.parametrize("variant", VARIANTS)
def test_each_variant_gives_its_runs_once_as_the_producer_made_them(variant):
    told = expected(variant)
    body = b"".join(json.dumps(line).encode() + b"\n" for line in collector_lines(variant))
    lines = list(read_run_lines(io.BytesIO(body)))
    assert [line.problems for line in lines] == [() for _ in told["runs"]]
    for line, run in zip(lines, told["runs"], strict=True):
        check_run(run | {"content_captured": told["content_captured"]}, line.run,
                  score(CASE, line.run).verdict)  # fmt: skip


def test_a_collector_line_with_no_case_says_so():
    (line,) = collector_lines("openai-v2-latest")
    line["resourceSpans"][0]["resource"]["attributes"] = []
    (run,) = read_run_lines(io.BytesIO(json.dumps(line).encode()))
    assert [p.message for p in run.problems] == [
        f"trace {line['resourceSpans'][0]['scopeSpans'][0]['spans'][0]['traceId']}: no span "
        "nor resource names its case (casebook.case)"
    ]


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
        check_run(expected("pydantic-ai")["runs"][0] | {"content_captured": True}, r.run,
                  score(CASE, r.run).verdict)  # fmt: skip


def test_manage_py_score_reads_collector_files_with_their_case_from_the_spans(tmp_path):
    """The Collector's file exporter, as ``manage.py score`` takes it: the case comes from
    ``casebook.case`` (here on the resource, as the producers set it), the verdicts are the
    live ones."""
    suite_file = tmp_path / "suite.json"
    suite_file.write_text(json.dumps(WEATHER_SUITE))
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
