"""Ten inputs that once cost a worker or a web process gigabytes, minutes, or a whole upload,
each answered within the costs docs/operations.md#limits-on-hostile-input promises: under
300 MB of memory and 10 s of CPU in the process that takes it (``tests/support/cost.py``
measures both), with everything else in the request or the file kept, on SQLite and on
PostgreSQL.

1. a replay whose reference state doubles every five calls (BFCL's shallow ``cp``);
2. a span, or a log record, of millions of attributes (OTLP);
3. a NUL in an uploaded run's case key;
4. ``uniqueItems`` over thousands of objects;
5. a τ-bench file of a thousand tasks, each writing with its own tool;
6. a gzip of a quarter of a gigabyte of blank lines;
7. a 5,000-digit integer literal in a BFCL result line;
8. "try a run" on a suite whose catalog, environment and suite-level settings decide it;
9. τ-bench kwargs whose keys all start with ``$``;
10. a NUL in a span's ``casebook.case``.
"""

from __future__ import annotations

import gzip
import io
import json
import os

import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord
from opentelemetry.proto.trace.v1.trace_pb2 import Span
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from cases import services
from cases.models import Case, Expectation, ExpectedCall, Membership, Role, Suite
from scoring.environments import replayer_for
from scoring.models import InvalidLine, Result, Run, TraceSpan
from tests.ingest.pipeline.conftest import assert_consistent, jsonl, upload
from tests.support.cost import measured
from tests.support.otlp_data import (
    ENDPOINT,
    FIXTURE_SPANS,
    answer_of,
    assemble_due,
    export,
    post,
    string_attribute,
)
from tests.support.pages import editor_data

pytestmark = pytest.mark.django_db

MiB = 1 << 20


def assert_within_limits(cost) -> None:
    # The figures, for ``pytest -s`` (bench/hostile.py prints them as a table).
    print(f"cost of {os.environ.get('PYTEST_CURRENT_TEST', '').split(' ')[0]}: {cost}")
    assert cost.within_limits, f"cost {cost}: the limits are 300 MB and 10 s of CPU"


@pytest.fixture
def api(user):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


@pytest.fixture
def viewer_of(team, make_user):
    """A viewer of ``team`` (whose admin is ``user``), signed in on the test client."""
    viewer = make_user("vera-viewer")
    Membership.objects.create(team=team, user=viewer, role=Role.VIEWER)
    return viewer


@pytest.fixture
def fresh_replayer():
    """The process's replayers, closed and forgotten before and after: a reference cached by
    an earlier test would hide the cost, and one cached here would outlive the test."""
    replayer_for.cache_clear()
    yield
    for replayer in _replayers():
        replayer.close()
    replayer_for.cache_clear()


def _replayers():
    # lru_cache keeps no list of its values; the one the settings make is the only one used.
    from django.conf import settings

    from scoring.environments import EnvironmentLimits

    return [replayer_for(EnvironmentLimits.from_settings(settings))]


# --- shared by several of the ten ---------------------------------------------------------------


def greetings(count: int) -> list[bytes]:
    """``count`` valid run lines of the demo suite's case ``greeting``."""
    return jsonl(
        [{"case": "greeting", "batches": [], "final_text": f"Hello {n}!"} for n in range(count)]
    ).splitlines(keepends=True)


def file_system(content: str) -> dict:
    root = {"a": {"type": "directory", "contents": {"f.txt": {"type": "file", "content": content}}}}
    return {
        "name": "bfcl",
        "initial_state": {
            "involved_classes": ["GorillaFileSystem"],
            "initial_config": {
                "GorillaFileSystem": {"root": {"alex": {"type": "directory", "contents": root}}}
            },
        },
    }


def try_data(case: dict, run: dict) -> dict:
    return {**editor_data(case), "run": json.dumps(run)}


def tau_results(tasks: int, kwargs=None) -> bytes:
    """A results file of ``tasks`` tasks, task N writing once with its own tool, update_N."""
    return json.dumps(
        [
            {
                "task_id": n,
                "info": {
                    "task": {
                        "instruction": f"t{n}",
                        "actions": [{"name": f"update_{n}", "kwargs": kwargs or {"id": n}}],
                    }
                },
            }
            for n in range(tasks)
        ],
        separators=(",", ":"),
    ).encode()


def import_tau_bench(api, team, body: bytes):
    url = f"/api/suites/import/?team={team.slug}&from=tau-bench&name=wide"
    return api.post(url, data=body, content_type="application/json")


@pytest.fixture
def sender(api, settings, monkeypatch):
    """The API client of the suite's admin; traces assembled when the test says."""
    from scoring.live import assembly

    settings.CASEBOOK_TRACE_GRACE_SECONDS = 0
    monkeypatch.setattr(assembly.embedded_timer, "wake_in", lambda seconds: None)
    return api


# --- 1. replay ---------------------------------------------------------------------------------

FILE_BYTES = 300_000
# The reference state, as JSON: 300 KB times 2^9, about 150 MB (the sandbox writes it in a
# second or two, well within its wall-clock limit on a loaded machine).
DOUBLINGS = 9


def doubling_calls(times: int) -> list[dict]:
    """BFCL's ``cp`` copies a directory's contents shallowly: ``a`` copied to ``b``, both
    moved into ``c``, ``c`` renamed ``a``, and the state (each directory written out) holds
    twice what it held, in five calls."""
    one = [
        ("cp", {"source": "a", "destination": "b"}),
        ("mkdir", {"dir_name": "c"}),
        ("mv", {"source": "a", "destination": "c"}),
        ("mv", {"source": "b", "destination": "c"}),
        ("mv", {"source": "c", "destination": "a"}),
    ]
    return [{"name": name, "arguments": arguments} for _ in range(times) for name, arguments in one]


def replay_suite() -> dict:
    """A case whose reference calls leave a state of about 300 MB, and one of a few bytes."""
    return {
        "schema": "casebook.suite/1",
        "name": "replays",
        "cases": [
            {
                "key": "bomb",
                "environment": file_system("x" * FILE_BYTES),
                "expectations": [
                    {"type": "end_state_matches", "reference_calls": doubling_calls(DOUBLINGS)}
                ],
            },
            {
                "key": "small",
                "environment": file_system("y"),
                "expectations": [
                    {"type": "end_state_matches", "reference_calls": doubling_calls(1)}
                ],
            },
        ],
    }


def replay_runs() -> bytes:
    small = [[call] for call in doubling_calls(1)]
    return jsonl(
        [
            {"case": "bomb", "batches": [[{"name": "ls", "arguments": {}}]]},
            {"case": "small", "batches": small},
        ]
    )


@pytest.mark.usefixtures("fresh_replayer")
def test_a_replay_whose_state_doubles_is_refused_by_its_size_and_the_rest_scored(team, user):
    suite = services.create_suite(team, replay_suite(), user)

    with measured() as cost:
        submission = upload(suite, replay_runs())

    assert_within_limits(cost)  # was 1,856 MB in a worker, 1.32 GB of it kept after the task
    assert_consistent(submission)
    results = {r.run.case_key: r for r in Result.objects.filter(submission=submission)}
    assert results["small"].verdict == "pass"
    assert results["bomb"].verdict == "error"
    assert "CASEBOOK_ENVIRONMENT_MAX_ANSWER_BYTES" in json.dumps(results["bomb"].report)


@pytest.mark.usefixtures("fresh_replayer")
def test_states_just_within_the_answer_limit_are_compared_within_the_costs(team, user):
    """Fifteen doublings of a directory holding an empty file: 5 MiB of JSON, the run's
    and the reference's alike, of many small objects (the dearest to parse)."""
    document = {
        "name": "replays",
        "cases": [
            {
                "key": "wide",
                "environment": file_system(""),
                "expectations": [
                    {"type": "end_state_matches", "reference_calls": doubling_calls(15)}
                ],
            }
        ],
    }
    suite = services.create_suite(team, document, user)
    run = {"case": "wide", "batches": [[call] for call in doubling_calls(15)]}

    with measured() as cost:
        submission = upload(suite, jsonl([run]))

    assert_within_limits(cost)
    assert Result.objects.get(submission=submission).verdict == "pass"


@pytest.mark.usefixtures("fresh_replayer")
def test_a_viewer_cannot_try_a_run_that_replays_and_an_editor_tries_it_within_bounds(
    team, user, viewer_of, client
):
    suite = services.create_suite(team, replay_suite(), user)
    bomb = services.case_document(suite.cases.get(key="bomb"))
    run = {"batches": [[{"name": "ls", "arguments": {}}]]}

    client.force_login(viewer_of)
    with measured() as cost:
        refused = client.post(f"/suites/{suite.pk}/cases/try/", try_data(bomb, run))
    assert_within_limits(cost)  # a viewer grew a gunicorn worker by 650 MB in one request
    assert refused.status_code == 403
    assert "editors" in refused.content.decode()

    client.force_login(user)
    with measured() as cost:
        tried = client.post(f"/suites/{suite.pk}/cases/try/", try_data(bomb, run))
    assert_within_limits(cost)
    assert '<span class="verdict error">error</span>' in tried.content.decode()
    assert "CASEBOOK_ENVIRONMENT_MAX_ANSWER_BYTES" in tried.content.decode()


# --- 2. OTLP attributes --------------------------------------------------------------------------

BOMB_ATTRIBUTES = 3_300_000
# A KeyValue of key "a" and no value, as a repeated field of a Span (field 9) or a LogRecord
# (field 6): five bytes each, 16.5 MB for 3,300,000, 24 KB gzipped.
SPAN_ATTRIBUTE = b"\x4a\x03\x0a\x01a"
RECORD_ATTRIBUTE = b"\x32\x03\x0a\x01a"


@pytest.fixture
def otlp_suite(team, user):
    from tests.support.producers import SUITE

    return services.create_suite(team, SUITE, user)


def test_a_span_of_millions_of_attributes_is_rejected_and_the_export_kept(otlp_suite, sender):
    request = export(otlp_suite.pk)  # the weather run: five spans of trace 1
    bomb = Span(trace_id=(2).to_bytes(16, "big"), span_id=b"\x01" * 8, name="bomb")
    bomb.attributes.append(string_attribute("casebook.case", "weather"))
    bomb = Span.FromString(bomb.SerializeToString() + SPAN_ATTRIBUTE * BOMB_ATTRIBUTES)
    request.resource_spans[0].scope_spans[0].spans.append(bomb)
    body = gzip.compress(request.SerializeToString())

    with measured() as cost:
        response = sender.post(
            ENDPOINT, body, content_type="application/x-protobuf", HTTP_CONTENT_ENCODING="gzip"
        )
        assemble_due()

    assert_within_limits(cost)  # was 2,404 MB and 25 s of CPU in a web worker, 1 GB more later
    assert response.status_code == 200
    answer = answer_of(response)
    assert answer.partial_success.rejected_spans == 1
    assert "CASEBOOK_OTLP_MAX_ITEM_ATTRIBUTES" in answer.partial_success.error_message
    assert TraceSpan.objects.count() == len(FIXTURE_SPANS)
    assert Result.objects.get(run__case_key="weather").verdict == "pass"


def test_a_log_record_of_millions_of_attributes_is_rejected_and_the_export_kept(otlp_suite, sender):
    request = ExportLogsServiceRequest()
    resource_logs = request.resource_logs.add()
    resource_logs.resource.attributes.append(string_attribute("casebook.suite", str(otlp_suite.pk)))
    records = resource_logs.scope_logs.add().log_records
    trace_id = (3).to_bytes(16, "big")
    records.add(trace_id=trace_id, span_id=b"\x02" * 8).body.string_value = "kept"
    bomb = LogRecord(trace_id=trace_id, span_id=b"\x03" * 8)
    records.append(LogRecord.FromString(bomb.SerializeToString() + RECORD_ATTRIBUTE * 3_000_000))
    body = gzip.compress(request.SerializeToString())

    with measured() as cost:
        response = sender.post(
            "/otlp/v1/logs",
            body,
            content_type="application/x-protobuf",
            HTTP_CONTENT_ENCODING="gzip",
        )

    assert_within_limits(cost)  # was 2,640 MB in a web worker
    assert response.status_code == 200
    assert b"CASEBOOK_OTLP_MAX_ITEM_ATTRIBUTES" in response.content
    assert TraceSpan.objects.count() == 1  # the other record is kept


def test_an_otlp_json_export_of_millions_of_attributes_is_refused_before_it_is_parsed(
    otlp_suite, sender
):
    span = {"traceId": "ab" * 16, "spanId": "cd" * 8, "name": "bomb"}
    head = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]})
    attributes = ', "attributes": [' + ",".join(['{"key":"a"}'] * 1_300_000) + "]"
    body = (head[: -len("}]}]}]}")] + attributes + "}]}]}]}").encode()
    assert len(body) < 16 * MiB

    with measured() as cost:
        response = sender.post(ENDPOINT, body, content_type="application/json")

    assert_within_limits(cost)
    assert response.status_code == 413
    assert "CASEBOOK_OTLP_MAX_ATTRIBUTES" in response.json()["message"]


def wide_export(suite, spans: int, first_id: int, case: str | None = None):
    """An export of ``spans`` spans of one trace, each of 4,999 attribute values."""
    template = Span(trace_id=(5).to_bytes(16, "big"), name="tool")
    for n in range(4999):
        template.attributes.add(key=f"attribute.{n}").value.string_value = "value"
    request = ExportTraceServiceRequest()
    resource_spans = request.resource_spans.add()
    resource_spans.resource.attributes.append(string_attribute("casebook.suite", str(suite.pk)))
    added = resource_spans.scope_spans.add().spans
    for n in range(spans):
        span = added.add()
        span.CopyFrom(template)
        span.span_id = (first_id + n).to_bytes(8, "big")
    if case:
        added[0].attributes.append(string_attribute("casebook.case", case))
    return request


def test_a_trace_at_its_cap_of_attribute_values_is_assembled_within_the_costs(team, user, sender):
    """Assembling the trace of the span of 3,300,000 attributes cost a worker 1 GB more."""
    suite = services.create_suite(team, {"name": "wide", "cases": [{"key": "c"}]}, user)
    with measured() as cost:
        first = post(sender, wide_export(suite, 40, 1, case="c"))
    assert_within_limits(cost)
    assert answer_of(first).partial_success.rejected_spans == 0  # 200,000 values: the cap
    more = post(sender, wide_export(suite, 2, 100))
    assert "CASEBOOK_TRACE_MAX_ATTRIBUTES = 200,000" in (
        answer_of(more).partial_success.error_message
    )

    with measured() as cost:
        assert assemble_due() == 1

    assert_within_limits(cost)
    assert Run.objects.get().case_key == "c"


# --- 3. NUL in a case key -----------------------------------------------------------------------


def test_a_nul_in_a_case_key_is_that_lines_problem_alone(demo_suite):
    lines = greetings(10)
    data = b"".join(lines[:5]) + jsonl([{"case": "k\x002", "batches": []}]) + b"".join(lines[5:])

    with measured() as cost:
        submission = upload(demo_suite, data)

    assert_within_limits(cost)
    assert_consistent(submission)  # was failed, with no run, on PostgreSQL
    assert submission.stored_runs == 10
    (invalid,) = InvalidLine.objects.filter(submission=submission)
    assert invalid.line == 6
    assert "NUL" in invalid.reason


# --- 4. uniqueItems ---------------------------------------------------------------------------


def test_unique_items_over_thousands_of_objects_is_bounded_by_the_deadline(team, user):
    tool = {
        "name": "tag",
        "parameters": {
            "type": "object",
            "properties": {"items": {"type": "array", "uniqueItems": True}},
        },
    }
    document = {
        "name": "schemas",
        "tools": [tool],
        "cases": [
            {"key": "many", "expectations": [{"type": "arguments_match_schema"}]},
            {"key": "few", "expectations": [{"type": "arguments_match_schema"}]},
        ],
    }
    suite = services.create_suite(team, document, user)
    items = [{"id": n, "tags": [str(n)]} for n in range(6000)] + [{"id": 0, "tags": ["0"]}]
    runs = [
        {"case": "many", "batches": [[{"name": "tag", "arguments": {"items": items}}]]},
        {"case": "few", "batches": [[{"name": "tag", "arguments": {"items": [{"a": 1}]}}]]},
    ]

    with measured() as cost:
        submission = upload(suite, jsonl(runs))

    assert_within_limits(cost)  # was 46 s of a worker's CPU
    assert_consistent(submission)
    verdicts = dict(Result.objects.values_list("run__case_key", "verdict"))
    assert verdicts["few"] == "pass"
    assert verdicts["many"] in ("fail", "error")


# --- 5. τ-bench: a thousand tasks, each writing with its own tool -------------------------------


def rows_of(suite: Suite) -> int:
    cases = Case.objects.filter(suite=suite)
    return (
        cases.count()
        + ExpectedCall.objects.filter(case__in=cases).count()
        + Expectation.objects.filter(case__in=cases).count()
    )


def test_a_thousand_tasks_each_writing_with_its_own_tool_import_as_a_thousand_cases(
    api, team, user, client
):
    body = tau_results(1000)
    assert len(body) < 160_000

    with measured() as cost:
        response = import_tau_bench(api, team, body)
    assert_within_limits(cost)  # was 151 s and 65 s of CPU, making 1,000,020 rows
    assert response.status_code == 201, response.content[:300]
    suite = Suite.objects.get(pk=response.json()["id"])
    assert rows_of(suite) <= 2 * 1000

    client.force_login(user)
    for page in (suite.get_absolute_url(), f"/suites/{suite.pk}/versions/1/"):
        with measured() as cost:
            answer = client.get(page)
        assert answer.status_code == 200
        assert_within_limits(cost)  # the suite page took 13 s, the version page 25 s


def test_a_tau_bench_import_past_the_row_cap_is_refused_saying_so(api, team, settings):
    settings.CASEBOOK_MAX_SUITE_ROWS = 500

    with measured() as cost:
        response = import_tau_bench(api, team, tau_results(1000))

    assert_within_limits(cost)
    assert response.status_code == 400
    assert "CASEBOOK_MAX_SUITE_ROWS" in json.dumps(response.json())
    assert not Suite.objects.filter(name="wide").exists()


# --- 6. blank lines ---------------------------------------------------------------------------


def blank_flood() -> bytes:
    """256 MiB of newlines between 20 runs, gzipped to about 261 KB."""
    runs = greetings(20)
    zipped = io.BytesIO()
    with gzip.GzipFile(fileobj=zipped, mode="wb", compresslevel=9) as out:
        out.writelines(runs[:10])
        block = b"\n" * MiB
        for _ in range(256):
            out.write(block)
        out.writelines(runs[10:])
    return zipped.getvalue()


def test_a_gzip_of_a_quarter_gigabyte_of_blank_lines_is_read_in_seconds(demo_suite):
    data = blank_flood()
    assert len(data) < 300_000

    with measured() as cost:
        submission = upload(demo_suite, data)

    assert_within_limits(cost)  # was 64 s of a worker's CPU
    assert_consistent(submission)
    assert submission.stored_runs == 20
    lines = list(Run.objects.filter(submission=submission).order_by("seq").values_list("line"))
    assert lines[10] == (10 + 256 * MiB + 1,)  # the blank lines are counted as lines


def test_the_run_file_reader_skips_blank_lines_in_bulk():
    from scoring.runfiles.reader import read_run_lines

    stream = gzip.GzipFile(fileobj=io.BytesIO(blank_flood()))

    with measured() as cost:
        items = list(read_run_lines(stream))

    assert_within_limits(cost)
    assert [item.line for item in items][9:11] == [10, 10 + 256 * MiB + 1]
    assert all(item.run is not None for item in items)


# --- 7. a 5,000-digit integer in a BFCL line ---------------------------------------------------


def test_a_five_thousand_digit_integer_literal_is_its_lines_problem_alone(team, user):
    document = {
        "name": "bfcl",
        "cases": [
            {"key": f"simple_{n}", "expected_calls": [{"name": "f", "required_args": {"x": 1}}]}
            for n in range(4)
        ],
    }
    suite = services.create_suite(team, document, user)
    digits = "9" * 5000
    lines = [
        {"id": "simple_0", "result": [{"f": {"x": 1}}]},
        {"id": "simple_1", "result": f"[f(x=0x{'f' * 5000})]"},  # 6,021 decimal digits
        {"id": "simple_2", "result": f"[f(x={digits})]"},
        {"id": "simple_3", "result": [{"f": {"x": 1}}]},
    ]

    with measured() as cost:
        submission = upload(suite, jsonl(lines))

    assert_within_limits(cost)
    assert_consistent(submission)  # was failed: ValueError, Exceeds the limit (4300 digits)
    verdicts = dict(Result.objects.values_list("run__case_key", "verdict"))
    assert verdicts["simple_0"] == verdicts["simple_3"] == "pass"


# --- 8. "try a run" scores as the suite scores -------------------------------------------------


@pytest.mark.usefixtures("fresh_replayer")
def test_try_a_run_scores_with_the_suites_catalog_environment_and_settings(team, user, client):
    mkdir = {
        "name": "mkdir",
        "parameters": {"type": "object", "properties": {"dir_name": {"type": "string"}}},
    }
    document = {
        "name": "suite-level",
        "tools": [mkdir],
        "catalog_checks": True,
        "environment": file_system("z"),
        "cases": [
            {
                "key": "c",
                "expected_calls": [{"name": "mkdir"}],
                "expectations": [
                    {
                        "type": "end_state_matches",
                        "reference_calls": [{"name": "mkdir", "arguments": {"dir_name": "x"}}],
                    }
                ],
            }
        ],
    }
    suite = services.create_suite(team, document, user)
    case = services.case_document(suite.cases.get())
    good = {"batches": [[{"name": "mkdir", "arguments": {"dir_name": "x"}}]]}
    bad = {"batches": [[{"name": "mkdir", "arguments": {"dir_name": 7}}]]}
    client.force_login(user)

    with measured() as cost:
        passed = client.post(f"/suites/{suite.pk}/cases/try/", try_data(case, good)).content
        failed = client.post(f"/suites/{suite.pk}/cases/try/", try_data(case, bad)).content

    assert_within_limits(cost)
    assert b'<span class="verdict pass">pass</span>' in passed, passed.decode()[:3000]
    assert b'<span class="verdict fail">fail</span>' in failed
    # catalog_checks add arguments_match_schema, against the suite's catalog
    assert b"is not of type" in failed


# --- 9. τ-bench kwargs keyed by $ ----------------------------------------------------------------


def test_tau_bench_kwargs_whose_keys_start_with_a_dollar_import_literally(api, team):
    response = import_tau_bench(api, team, tau_results(2, kwargs={"$set": 1, "$inc": 2}))

    assert response.status_code == 201, response.content[:500]
    suite = Suite.objects.get(pk=response.json()["id"])
    call = ExpectedCall.objects.get(case__suite=suite, case__key="0")
    assert call.required_args == {"$set": 1, "$inc": 2}  # argument names, not a matcher
    run = {
        "case": "0",
        "batches": [[{"name": "update_0", "arguments": {"$set": 1, "$inc": 2}}]],
    }
    submission = upload(suite, jsonl([run]))
    assert Result.objects.get(submission=submission).verdict == "pass"


# --- 10. NUL in casebook.case on a span ----------------------------------------------------------


def test_a_nul_in_a_spans_case_is_never_read_as_another_case(team, user, sender):
    document = {
        "name": "nul",
        "cases": [{"key": "k2", "expectations": [{"type": "no_tool_calls"}]}],
    }
    suite = services.create_suite(team, document, user)
    request = export(suite.pk, case="k\x002")
    kept = export(suite.pk, case="k2", trace=2)
    request.resource_spans.extend(kept.resource_spans)

    with measured() as cost:
        response = post(sender, request)
        assemble_due()

    assert_within_limits(cost)
    assert response.status_code == 200
    # was ["k2", "k2"]: trace 1 read as the case k2; now the span naming it is rejected (its
    # root: the others wait for one)
    assert list(Run.objects.values_list("case_key", flat=True)) == ["k2"]
    assert "casebook.case holds a NUL" in answer_of(response).partial_success.error_message
