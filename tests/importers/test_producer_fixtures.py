"""Files made by the producers themselves (docs/formats.md#sdk-objects): the openai, anthropic
and google-genai SDKs' own objects and the OpenTelemetry SDK's spans, written by
``tests/fixtures/producers/*_fixtures.py`` against a fake server. Each is read and scored by
``manage.py score`` and compared with what the fake server told the producer to produce."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command

from scoring.runfiles.reader import read_run_lines
from tests.fixtures.producers.fake_server import CALLS, FINAL_TEXT, QUESTION
from tests.support.producers import FIXTURES, GENERIC_SETTING, OPENAI_V2_SETTING, SUITE

# What each file's runs must read as: (case, verdict) in file order.
VERDICTS = {
    "openai/chat_completions.jsonl": [
        ("weather-calls", "pass"),
        ("weather-answer", "pass"),
        ("weather-truncated", "fail"),
    ],
    "openai/request_response.jsonl": [("weather-calls", "pass"), ("weather", "pass")],
    "openai/responses_state.jsonl": [
        ("weather", "pass"),
        ("weather-pair", "pass"),
        ("weather-truncated", "fail"),
    ],
    "anthropic/messages.jsonl": [
        ("weather-calls", "pass"),
        ("weather-answer", "pass"),
        ("weather-truncated", "fail"),
        ("weather", "pass"),
    ],
    "gemini/generate_content.jsonl": [
        ("weather-calls", "pass"),
        ("weather-calls-camel", "pass"),
        ("weather-answer", "pass"),
        ("weather-truncated", "fail"),
    ],
    # The OTel run made a third call whose arguments broke: two expected calls still pass.
    "otel/sdk_spans.jsonl": [("weather", "pass")],
    "otel/otlp.jsonl": [("weather", "pass")],
    # Not the agent's fault: the arguments and the final text were not captured.
    "otel/sdk_spans_no_content.jsonl": [("weather-no-content", "error")],
    "otel/otlp_no_content.jsonl": [("weather-no-content", "error")],
}


@pytest.fixture(scope="module")
def suite_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("producers") / "suite.json"
    path.write_text(json.dumps(SUITE))
    return path


def score_json(suite_file: Path, run_file: Path) -> list[dict]:
    out, err = io.StringIO(), io.StringIO()
    with pytest.raises(SystemExit):
        call_command("score", str(suite_file), str(run_file), "--json", stdout=out, stderr=err)
    assert err.getvalue() == ""
    return json.loads(out.getvalue())


def runs_of(name: str) -> list[dict]:
    with open(FIXTURES / name, "rb") as lines:
        read = list(read_run_lines(lines))
    assert [item.problems for item in read] == [()] * len(read)
    return [item.canonical for item in read]


def recorded_calls(run: dict) -> list[tuple]:
    return [(c["name"], c["arguments"]) for batch in run["batches"] for c in batch]


CANNED = [(name, arguments) for _, name, arguments in CALLS]


@pytest.mark.parametrize("name", sorted(VERDICTS))
def test_the_producers_files_score_as_they_were_told_to_run(suite_file, name):
    reports = score_json(suite_file, FIXTURES / name)
    assert [(r["case"], r["verdict"]) for r in reports] == VERDICTS[name]
    for report in reports:
        if report["case"] == "weather-truncated":
            run_predicate = report["predicates"][0]
            assert run_predicate["passed"] is False
            assert "cut off at the token limit" in run_predicate["detail"] or (
                "response incomplete: max_output_tokens" in run_predicate["detail"]
            )


@pytest.mark.parametrize(
    "name",
    [
        "openai/request_response.jsonl",
        "openai/responses_state.jsonl",
        "anthropic/messages.jsonl",
        "otel/sdk_spans.jsonl",
        "otel/otlp.jsonl",
    ],
)
def test_whole_conversations_read_as_one_batch_of_the_canned_calls_with_results(name):
    run = next(run for run in runs_of(name) if run["case"] in ("weather", "weather-pair"))
    assert run["final_text"] == FINAL_TEXT
    (batch,) = run["batches"]
    assert [(c["name"], c["arguments"]) for c in batch[:2]] == CANNED
    assert json.loads(batch[0]["result"]) == {"temp_c": 18}
    transcript = run["transcript"]
    assert transcript[0] == {"role": "user", "text": QUESTION}
    assert (transcript[1]["role"], transcript[1]["batch"]) == ("assistant", 0)
    assert [t["batch"] for t in transcript if t["role"] == "tool"] == [0] * len(batch)
    assert (transcript[-1]["role"], transcript[-1]["text"]) == ("assistant", FINAL_TEXT)


@pytest.mark.parametrize("name", ["otel/sdk_spans.jsonl", "otel/otlp.jsonl"])
def test_a_call_whose_tool_never_ran_stays_beside_those_whose_tools_did(name):
    (run,) = runs_of(name)
    (batch,) = run["batches"]
    assert [c["id"] for c in batch] == ["call_a1", "call_b2", "call_c3"]
    broken = batch[2]
    assert (broken["arguments"], broken["arguments_raw"]) == (None, '{"city": "Osl')
    assert batch[1]["is_error"] is True  # Tokyo's tool span failed
    assert "notes" not in run


@pytest.mark.parametrize(
    ("name", "setting"),
    [
        ("otel/sdk_spans_no_content.jsonl", GENERIC_SETTING),
        ("otel/otlp_no_content.jsonl", OPENAI_V2_SETTING),
    ],
)
def test_without_content_capture_arguments_are_unknown_and_the_report_says_why(
    suite_file, name, setting
):
    (run,) = runs_of(name)
    assert [(c["name"], c["arguments"]) for batch in run["batches"] for c in batch] == [
        ("get_weather", None),
        ("get_weather", None),
    ]
    assert "transcript" not in run
    (report,) = score_json(suite_file, FIXTURES / name)
    assert report["notes"] == [
        f"tool arguments were not captured: {setting}",
        f"the final text was not captured: {setting}",
    ]
    assert report["verdict"] == "error"
    assert [p["passed"] for p in report["predicates"]] == [True, False, False]
    assert [p.get("cause", {}).get("kind") for p in report["predicates"][1:]] == [
        "not_captured",
        "not_captured",
    ]


@pytest.mark.parametrize(
    ("name", "case"),
    [
        ("openai/chat_completions.jsonl", "weather-calls"),
        ("anthropic/messages.jsonl", "weather-calls"),
        ("gemini/generate_content.jsonl", "weather-calls"),
        ("gemini/generate_content.jsonl", "weather-calls-camel"),
    ],
)
def test_one_response_per_line_is_its_one_turn(name, case):
    run = next(run for run in runs_of(name) if run["case"] == case)
    assert recorded_calls(run) == CANNED
    assert [t["batch"] for t in run["transcript"] if t["role"] == "assistant"] == [0]
