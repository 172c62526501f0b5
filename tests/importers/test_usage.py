"""A run's usage, as each format records it (docs/formats.md#usage): every input token in
``input_tokens``, cache reads and writes included; every output token in ``output_tokens``,
reasoning included; each model call counted once; what was not recorded null, never 0."""

import io
import json

import pytest

from scoring.importers import to_canonical, usage
from scoring.runfiles.reader import read_run_lines
from tests.support.otlp_fixtures import VARIANTS, collector_lines, expected

# What the fake model server answered each call with (tests/fixtures/producers/).
SERVED_INPUT, SERVED_OUTPUT = 50, 20
# The model calls each producer's agent made: one a batch and one for the answer, except
# DSPy's ReAct, which asks the model once more to extract the answer.
CALLS = {"weather": 2, "add": 3}
DSPY_CALLS = 4
# Where no span records a model call (their expected.json notes say so): no count of calls.
# Agno's agent span holds the run's totals all the same.
NO_MODEL_CALL = {
    "agno-openllmetry",
    "agno-openllmetry-no-content",
    "autogen-otel",
    "crewai-openinference",
    "crewai-openinference-no-content",
    "crewai-openllmetry",
    "crewai-openllmetry-no-content",
    "litellm-otel-callback-latest",
    "litellm-otel-callback-no-content",
    "llamaindex-openllmetry",
    "llamaindex-openllmetry-no-content",
}
TOTALS_ONLY = {"agno-openllmetry", "agno-openllmetry-no-content"}
# Model calls recorded without their tokens: DSPy's spans keep none, and LlamaIndex streams
# without asking for usage.
NO_TOKENS = {
    "dspy-openinference",
    "dspy-openinference-no-content",
    "llamaindex-openinference",
    "llamaindex-openinference-no-content",
    "llamaindex-traceloop",
    "llamaindex-traceloop-no-content",
}


def usages_of(variant: str) -> list[tuple[str, dict]]:
    body = b"".join(json.dumps(line).encode() + b"\n" for line in collector_lines(variant))
    return [(line.run.case, line.canonical["usage"]) for line in read_run_lines(io.BytesIO(body))]


@pytest.mark.parametrize("variant", VARIANTS)
def test_each_capture_counts_what_the_model_server_reported_once_a_call(variant):
    runs = usages_of(variant)
    assert [case for case, _ in runs] == [run["case"] for run in expected(variant)["runs"]]
    for case, found in runs:
        made = DSPY_CALLS if variant.startswith("dspy") else CALLS[case]
        assert found["duration_ms"] is not None
        assert found["duration_ms"] > 0
        if variant in NO_MODEL_CALL:
            assert found["model_calls"] is None
        else:
            assert found["model_calls"] == made
        if variant in NO_TOKENS or (variant in NO_MODEL_CALL and variant not in TOTALS_ONLY):
            assert (found["input_tokens"], found["output_tokens"]) == (None, None)
        else:
            assert found["input_tokens"] == SERVED_INPUT * made
            assert found["output_tokens"] == SERVED_OUTPUT * made
            assert len(found["models"]) == 1
            assert found["cost_usd"] > 0  # every model the producers ran has a price


@pytest.mark.parametrize("variant", VARIANTS)
def test_each_model_call_gives_its_tokens_and_time_to_one_assistant_turn(variant):
    """An assistant turn carries its model call's tokens and span time, each call once (the
    turns' tokens add up to the run's where every call has its turn in the transcript); a
    call carries its tool span's time, and the run's time in tools is their sum."""
    body = b"".join(json.dumps(line).encode() + b"\n" for line in collector_lines(variant))
    for line in read_run_lines(io.BytesIO(body)):
        run, found = line.run, line.canonical["usage"]
        answers = [t for t in run.transcript if t["role"] == "assistant"]
        counted = [t["usage"] for t in answers if "usage" in t]
        assert all(
            (tokens["input_tokens"], tokens["output_tokens"]) == (SERVED_INPUT, SERVED_OUTPUT)
            for tokens in counted
        )
        if answers and len(answers) == found["model_calls"] and variant not in NO_TOKENS:
            assert sum(tokens["input_tokens"] for tokens in counted) == found["input_tokens"]
        assert all(t["duration_ms"] > 0 for t in answers if "duration_ms" in t)
        timed = [c.duration_ms for c in run.calls if c.duration_ms is not None]
        assert all(took > 0 for took in timed)
        assert found["tool_duration_ms"] == (round(sum(timed), 3) if timed else None)


# Runs of the captures whose every model call has its assistant turn, and whose tools
# recorded their time (of 166 runs; those without content have no transcript).
WHOLE_TURNS, TIMED_TOOLS = 60, 100


def test_most_captures_with_content_give_every_model_call_its_turn_and_tools_their_time():
    whole = timed = 0
    for variant in VARIANTS:
        body = b"".join(json.dumps(line).encode() + b"\n" for line in collector_lines(variant))
        for line in read_run_lines(io.BytesIO(body)):
            given = [t for t in line.run.transcript if "usage" in t]
            whole += bool(given) and len(given) == line.canonical["usage"]["model_calls"]
            timed += line.canonical["usage"]["tool_duration_ms"] is not None
    assert whole >= WHOLE_TURNS
    assert timed >= TIMED_TOOLS


def test_a_call_two_instrumentations_record_side_by_side_is_counted_once():
    """The anthropic SDK's own span and OpenLLMetry's describe each call, as siblings."""
    for _, found in usages_of("openllmetry-anthropic"):
        assert found["model_calls"] == 2
        assert found["input_tokens"] == 2 * SERVED_INPUT
        assert found["models"] == ["claude-sonnet-4-5"]


def test_a_root_span_repeating_its_calls_totals_is_not_added_again():
    for variant in ("vercel-ai", "pydantic-ai"):
        for case, found in usages_of(variant):
            assert found["input_tokens"] == SERVED_INPUT * CALLS[case], variant


def otlp_span(span_id, parent, name, start, end, attributes):
    return {
        "traceId": "t1",
        "spanId": span_id,
        "parentSpanId": parent,
        "name": name,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(end),
        "attributes": [
            {"key": k, "value": {"intValue": str(v)} if isinstance(v, int) else {"stringValue": v}}
            for k, v in attributes.items()
        ],
    }


def test_span_times_give_the_wall_time_and_each_conventions_tokens_are_read():
    ms = 1_000_000
    line = {
        "case": "weather",
        "spans": [
            otlp_span("a", "", "agent", 0 + 10**18, 900 * ms + 10**18, {}),
            otlp_span("b", "a", "chat", 10**18 + ms, 10**18 + 200 * ms, {
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "gpt-4o",
                "gen_ai.response.model": "gpt-4o-2024-08-06",
                "gen_ai.usage.input_tokens": 120,
                "gen_ai.usage.output_tokens": 30,
                "gen_ai.usage.cache_read.input_tokens": 100,
                "gen_ai.usage.reasoning.output_tokens": 10,
            }),
            otlp_span("c", "a", "llm", 10**18 + 300 * ms, 10**18 + 400 * ms, {
                "openinference.span.kind": "LLM",
                "llm.model_name": "claude-sonnet-4-5",
                "llm.token_count.prompt": 7,
                "llm.token_count.completion": 3,
            }),
        ],
    }  # fmt: skip
    found = to_canonical(line)["usage"]
    assert found["duration_ms"] == 900.0
    assert found["model_calls"] == 2
    assert (found["input_tokens"], found["output_tokens"]) == (127, 33)
    assert (found["cached_input_tokens"], found["reasoning_tokens"]) == (100, 10)
    assert found["models"] == ["gpt-4o-2024-08-06", "claude-sonnet-4-5"]
    assert found["by_model"]["claude-sonnet-4-5"]["input_tokens"] == 7


def test_span_times_past_what_otlp_holds_leave_the_time_unrecorded():
    """OTLP/JSON writes times as text of any length; one past fixed64 overflowed the float
    of the wall time (the fuzz found it), losing the line."""
    line = {
        "case": "weather",
        "spans": [otlp_span("a", "", "agent", 10**18, 10**400, {})],
    }
    assert to_canonical(line)["usage"]["duration_ms"] is None


def test_anthropic_cache_reads_and_writes_are_input_tokens():
    line = {
        "case": "c",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": "hi"}],
        "usage": {
            "input_tokens": 10,
            "cache_read_input_tokens": 1000,
            "cache_creation_input_tokens": 200,
            "output_tokens": 5,
        },
    }
    run = to_canonical(line)
    found = run["usage"]
    assert (found["input_tokens"], found["cached_input_tokens"]) == (1210, 1000)
    assert (found["output_tokens"], found["reasoning_tokens"]) == (5, None)
    assert found["model_calls"] == 1
    (reply,) = run["transcript"]
    assert reply["usage"] == {
        "input_tokens": 1210,
        "output_tokens": 5,
        "cached_input_tokens": 1000,
        "reasoning_tokens": None,
    }


def test_gemini_thoughts_are_output_tokens():
    line = {
        "case": "c",
        "modelVersion": "gemini-2.5-flash",
        "candidates": [{"content": {"role": "model", "parts": [{"text": "hi"}]}}],
        "usageMetadata": {
            "promptTokenCount": 40,
            "cachedContentTokenCount": 30,
            "candidatesTokenCount": 8,
            "thoughtsTokenCount": 12,
        },
    }
    run = to_canonical(line)
    found = run["usage"]
    assert (found["input_tokens"], found["cached_input_tokens"]) == (40, 30)
    assert (found["output_tokens"], found["reasoning_tokens"]) == (20, 12)
    assert found["models"] == ["gemini-2.5-flash"]
    (reply,) = run["transcript"]
    assert (reply["usage"]["input_tokens"], reply["usage"]["output_tokens"]) == (40, 20)


def test_openai_chat_sums_each_completion_in_a_messages_list_and_counts_every_reply():
    def completion(text, prompt, reasoning):
        return {
            "object": "chat.completion",
            "model": "o3-2025-04-16",
            "choices": [{"message": {"role": "assistant", "content": text}}],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": 50,
                "prompt_tokens_details": {"cached_tokens": 0},
                "completion_tokens_details": {"reasoning_tokens": reasoning},
            },
        }

    line = {
        "case": "c",
        "model": "o3",
        "messages": [
            {"role": "user", "content": "hi"},
            completion("a", 10, 40),
            {"role": "user", "content": "more"},
            completion("b", 30, 0),
            {"role": "user", "content": "and?"},
            {"role": "assistant", "content": "c"},  # no usage recorded for this one
        ],
    }
    run = to_canonical(line)
    found = run["usage"]
    assert found["model_calls"] == 3
    assert (found["input_tokens"], found["output_tokens"]) == (40, 100)
    assert (found["cached_input_tokens"], found["reasoning_tokens"]) == (0, 40)
    assert found["models"] == ["o3-2025-04-16"]
    # Each reply says what its own completion used; the plain one, nothing.
    replies = [t for t in run["transcript"] if t["role"] == "assistant"]
    assert [t.get("usage", {}).get("input_tokens") for t in replies] == [10, 30, None]
    assert [t.get("usage", {}).get("reasoning_tokens") for t in replies] == [40, 0, None]
    assert "usage" not in replies[2]
    assert "duration_ms" not in replies[2]


def test_openai_responses_counts_each_response():
    response = {
        "model": "gpt-4o",
        "output": [{"type": "message", "content": [{"type": "output_text", "text": "x"}]}],
        "usage": {
            "input_tokens": 9,
            "output_tokens": 4,
            "input_tokens_details": {"cached_tokens": 2},
        },
    }
    run = to_canonical({"case": "c", "responses": [response, response]})
    found = run["usage"]
    assert (found["model_calls"], found["input_tokens"], found["cached_input_tokens"]) == (2, 18, 4)
    replies = [t for t in run["transcript"] if t["role"] == "assistant"]
    assert [t["usage"]["input_tokens"] for t in replies] == [9, 9]


def test_a_plain_messages_list_counts_replies_and_records_no_tokens():
    line = {
        "case": "c",
        "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}],
    }
    run = to_canonical(line)
    found = run["usage"]
    assert found["model_calls"] == 1
    assert all(found[key] is None for key in usage.TOKEN_KEYS)
    assert "usage" not in run["transcript"][-1]


def test_inspect_model_usage_and_total_time():
    sample = {
        "id": "c",
        "epoch": 1,
        "messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}],
        "total_time": 2.5,
        "model_usage": {
            "anthropic/claude-sonnet-4-5": {
                "input_tokens": 10,
                "output_tokens": 5,
                "input_tokens_cache_read": 100,
                "input_tokens_cache_write": 20,
                "total_tokens": 135,
            }
        },
    }
    found = to_canonical(sample)["usage"]
    assert found["duration_ms"] == 2500.0
    assert (found["input_tokens"], found["cached_input_tokens"], found["output_tokens"]) == (
        130,
        100,
        5,
    )
    assert found["models"] == ["anthropic/claude-sonnet-4-5"]
    assert found["model_calls"] == 1


def test_bfcl_counts_and_latency_of_each_step():
    line = {
        "id": "multi_turn_base_0",
        "result": [[[{"f": {}}]], [[{"g": {}}], "done"]],
        "input_token_count": [[100], [120, 130]],
        "output_token_count": [[10], [12, 13]],
        "latency": [[0.5], [0.25, 0.25]],
    }
    found = to_canonical(line, "bfcl")["usage"]
    assert (found["model_calls"], found["input_tokens"], found["output_tokens"]) == (3, 350, 35)
    assert found["duration_ms"] == 1000.0


def test_a_figure_that_is_not_a_count_is_not_recorded():
    assert (
        usage.openai_call({"prompt_tokens": "many", "completion_tokens": -1})["input_tokens"]
        is None
    )
    assert usage.count(True) is None
    assert usage.count("12") == 12


def test_a_canonical_turns_and_calls_figures_are_checked_by_their_field_paths():
    good = {
        "case": "weather",
        "batches": [[{"name": "get_weather", "duration_ms": 12.5}]],
        "transcript": [
            {"role": "assistant", "text": None, "batch": 0, "duration_ms": 800,
             "usage": {"input_tokens": 1234, "output_tokens": 56, "cached_input_tokens": None}},
        ],
    }  # fmt: skip
    bad = json.loads(json.dumps(good))
    bad["batches"][0][0]["duration_ms"] = -1
    bad["transcript"][0]["usage"]["output_tokens"] = 5.5
    bad["transcript"][0]["duration_ms"] = "fast"
    body = b"".join(json.dumps(line).encode() + b"\n" for line in (good, bad))
    first, second = read_run_lines(io.BytesIO(body))
    assert first.problems == ()
    assert first.run.calls[0].duration_ms == 12.5
    assert first.run.transcript[0]["usage"]["input_tokens"] == 1234
    assert sorted(str(p).split(":")[0] for p in second.problems) == [
        "line 2, batches[0][0].duration_ms",
        "line 2, transcript[0].duration_ms",
        "line 2, transcript[0].usage.output_tokens",
    ]
