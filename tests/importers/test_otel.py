"""OpenTelemetry GenAI spans as OTLP/JSON (docs/formats.md#opentelemetry-genai-spans): tool
spans grouped by model turn."""

import json
from datetime import UTC, datetime

import pytest

from scoring.importers import detect_format, otel, to_canonical
from scoring.matcher import InvalidInput, load_run
from tests.support.producers import GENERIC_SETTING

from .examples import ANSWER, LINES, otlp_attributes, otlp_export, otlp_span
from .examples import otel as example

AGENT = "a000000000000001"


def imported(line, format_name=None):
    canonical = to_canonical(line, format_name)
    load_run(canonical)
    return canonical


def chat(span_id, start, end, parent=AGENT, **attributes):
    return otlp_span(
        span_id, parent, "chat gpt-4o", start, end, gen_ai__operation__name="chat", **attributes
    )


def tool(span_id, parent, start, name, arguments=None, call_id=None, **attributes):
    fields = {"gen_ai__operation__name": "execute_tool", "gen_ai__tool__name": name}
    if arguments is not None:
        fields["gen_ai__tool__call__arguments"] = arguments
    if call_id is not None:
        fields["gen_ai__tool__call__id"] = call_id
    return otlp_span(
        span_id, parent, f"execute_tool {name}", start, start + 20, **fields, **attributes
    )


def agent(*, error=None):
    return otlp_span(
        AGENT,
        "",
        "invoke_agent weather",
        0,
        1000,
        error=error,
        gen_ai__operation__name="invoke_agent",
    )


def messages(*parts, role="assistant", finish_reason="stop"):
    return json.dumps([{"role": role, "parts": list(parts), "finish_reason": finish_reason}])


def test_tool_spans_beside_the_chat_spans_are_batched_by_the_chat_span_before_them():
    run = imported(example())
    assert run["batches"] == [
        [
            {
                "id": "call_a1",
                "name": "get_weather",
                "arguments": {"city": "Paris"},
                "result": '{"temp_c": 18}',
                "duration_ms": 40.0,  # its tool span's time
            },
            {
                "id": "call_b2",
                "name": "get_weather",
                "arguments": {"city": "Tokyo"},
                "result": "timeout",
                "is_error": True,
                "duration_ms": 389.0,
            },
        ]
    ]
    assert run["usage"]["tool_duration_ms"] == 40.0 + 389.0
    assert run["final_text"] == ANSWER
    assert run["error"] is None
    assert "meta" not in run


def test_tool_spans_nested_under_their_chat_span_form_its_batch_in_the_chat_spans_order():
    line = {
        "case": "trip",
        **otlp_export(
            agent(),
            # written out of order: the batches follow the chat spans' start times
            tool("t3", "c2", 520, "book", '{"flight":"SK123"}', "call_3"),
            chat("c2", 500, 600),
            chat("c1", 100, 400),
            tool("t2", "c1", 310, "search_hotels", '{"city":"Oslo"}', "call_2"),
            tool("t1", "c1", 300, "search_flights", '{"to":"OSL"}', "call_1"),
        ),
    }
    run = imported(line)
    assert [[c["name"] for c in batch] for batch in run["batches"]] == [
        ["search_flights", "search_hotels"],
        ["book"],
    ]


def test_sibling_tool_spans_after_each_chat_span_are_its_batch():
    line = {
        "case": "trip",
        **otlp_export(
            agent(),
            chat("c1", 100, 200),
            tool("t1", AGENT, 210, "search_flights", '{"to":"OSL"}', "call_1"),
            tool("t2", AGENT, 215, "search_hotels", '{"city":"Oslo"}', "call_2"),
            chat("c2", 300, 400),
            tool("t3", AGENT, 410, "book", '{"flight":"SK123"}', "call_3"),
            chat(
                "c3",
                500,
                600,
                gen_ai__output__messages=messages({"type": "text", "content": "Booked."}),
            ),
        ),
    }
    run = imported(line)
    assert [[c["id"] for c in batch] for batch in run["batches"]] == [
        ["call_1", "call_2"],
        ["call_3"],
    ]
    assert run["final_text"] == "Booked."


def test_a_flat_spans_list_is_read_like_the_otlp_nesting():
    nested = example()
    spans = nested.pop("resourceSpans")[0]["scopeSpans"][0]["spans"]
    flat = {"case": "weather", "spans": spans}
    assert detect_format(flat) == "otel"
    assert imported(flat) == imported(example())


def test_arguments_not_captured_are_absent_and_the_notes_say_how_to_capture_them():
    line = {
        "case": "weather",
        "meta": {"model": "gpt-4o"},
        **otlp_export(
            agent(),
            chat("c1", 100, 200),
            tool("t1", AGENT, 210, "get_weather", call_id="call_a1"),
            tool("t2", AGENT, 211, "get_weather", call_id="call_b2"),
        ),
    }
    run = imported(line)
    assert [c["arguments"] for c in run["batches"][0]] == [None, None]
    assert run["meta"] == {"model": "gpt-4o"}
    assert run["not_captured"] == {
        "arguments": f"tool arguments were not captured: {GENERIC_SETTING}",
        "final_text": f"the final text was not captured: {GENERIC_SETTING}",
    }
    assert run["notes"] == list(run["not_captured"].values())
    assert all(
        set(call) == {"id", "name", "arguments", "arguments_captured", "duration_ms"}
        for call in run["batches"][0]
    )
    assert [call["arguments_captured"] for call in run["batches"][0]] == [False, False]


def test_malformed_arguments_are_kept_raw_and_the_tool_name_may_come_from_the_span_name():
    broken = tool("t1", AGENT, 210, "get_weather", '{"city": "Par', "call_a1")
    broken["attributes"] = [a for a in broken["attributes"] if a["key"] != "gen_ai.tool.name"]
    line = {"case": "weather", **otlp_export(agent(), chat("c1", 100, 200), broken)}
    (call,) = imported(line)["batches"][0]
    assert call["name"] == "get_weather"
    assert (call["arguments"], call["arguments_raw"]) == (None, '{"city": "Par')


def test_with_no_tool_spans_the_chat_spans_messages_give_batches_and_results():
    first = messages(
        {
            "type": "tool_call",
            "id": "call_a1",
            "name": "get_weather",
            "arguments": {"city": "Paris"},
        },
        {
            "type": "tool_call",
            "id": "call_b2",
            "name": "get_weather",
            "arguments": {"city": "Tokyo"},
        },
        finish_reason="tool_call",
    )
    results = json.dumps(
        [
            {"role": "user", "parts": [{"type": "text", "content": "Weather in Paris and Tokyo?"}]},
            {
                "role": "tool",
                "parts": [
                    {"type": "tool_call_response", "id": "call_a1", "result": {"temp_c": 18}},
                    {"type": "tool_call_response", "id": "call_b2", "result": "timeout"},
                ],
            },
        ]
    )
    line = {
        "case": "weather",
        **otlp_export(
            chat("c1", 100, 200, parent="", gen_ai__output__messages=first),
            chat(
                "c2",
                300,
                400,
                parent="",
                gen_ai__input__messages=results,
                gen_ai__output__messages=messages({"type": "text", "content": ANSWER}),
            ),
        ),
    }
    run = imported(line)
    assert run["batches"] == [
        [
            {
                "id": "call_a1",
                "name": "get_weather",
                "arguments": {"city": "Paris"},
                "result": {"temp_c": 18},
            },
            {
                "id": "call_b2",
                "name": "get_weather",
                "arguments": {"city": "Tokyo"},
                "result": "timeout",
            },
        ]
    ]
    assert run["final_text"] == ANSWER


def test_without_output_messages_on_chat_spans_the_agent_spans_answer_is_the_final_text():
    answered = otlp_span(
        AGENT,
        "",
        "invoke_agent weather",
        0,
        1000,
        gen_ai__operation__name="invoke_agent",
        gen_ai__output__messages=messages({"type": "text", "content": ANSWER}),
    )
    line = {"case": "weather", **otlp_export(answered, chat("c1", 10, 90))}
    assert imported(line)["final_text"] == ANSWER


def test_a_failed_root_span_is_the_run_error():
    line = example()
    spans = line["resourceSpans"][0]["scopeSpans"][0]["spans"]
    spans[0]["status"] = {"code": 2, "message": "agent exceeded max turns"}
    del spans[-1]  # the answering chat span never happened
    run = imported(line)
    assert run["error"] == "invoke_agent weather: agent exceeded max turns"
    assert run["final_text"] is None
    assert load_run(run).error == "invoke_agent weather: agent exceeded max turns"


def test_a_status_code_written_as_its_name_counts_too():
    line = example()
    line["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["status"] = {"code": "STATUS_CODE_ERROR"}
    assert imported(line)["error"] == "invoke_agent weather: failed"


def test_a_run_with_no_tool_calls_is_its_chat_span_text():
    line = {
        "case": "hello",
        **otlp_export(
            chat(
                "c1",
                0,
                100,
                parent="",
                gen_ai__output__messages=messages({"type": "text", "content": "Hello!"}),
            )
        ),
    }
    run = imported(line)
    assert (run["batches"], run["final_text"], run["error"]) == ([], "Hello!", None)


def test_a_final_message_cut_off_at_the_token_limit_is_the_run_error():
    text = {"type": "text", "content": "Paris is"}
    earlier = chat("c1", 0, 50, parent="", gen_ai__output__messages=messages(text))
    cut = messages(text, finish_reason="length")
    run = imported(
        {"case": "w", **otlp_export(earlier, chat("c2", 60, 100, gen_ai__output__messages=cut))}
    )
    assert run["error"] == "the response was cut off at the token limit (finish_reason length)"
    # A cut-off turn before the final one is not the run's end.
    first = chat("c1", 0, 50, parent="", gen_ai__output__messages=cut)
    ended = chat("c2", 60, 100, gen_ai__output__messages=messages(text))
    assert imported({"case": "w", **otlp_export(first, ended)})["error"] is None


def test_without_captured_messages_the_last_chat_spans_finish_reasons_say_it_was_cut_off():
    def run_ending(first: str, last: str) -> dict:
        return imported(
            {
                "case": "w",
                **otlp_export(
                    chat("c1", 0, 50, parent="", gen_ai__response__finish_reasons=[first]),
                    chat("c2", 60, 100, gen_ai__response__finish_reasons=[last]),
                ),
            }
        )

    assert run_ending("tool_call", "max_tokens")["error"] == (
        "the response was cut off at the token limit (gen_ai.response.finish_reasons max_tokens)"
    )
    assert run_ending("length", "stop")["error"] is None


def test_otlp_any_values_are_read_into_python_values():
    attributes = otlp_attributes(text="a", count=3, ratio=0.5, flag=True, tags=["x", "y"])
    attributes.append({"key": "nested", "value": {"kvlistValue": {"values": otlp_attributes(k=1)}}})
    attributes.append({"key": "empty", "value": {}})
    values, index = otel.read_attributes(attributes, "attributes")
    assert values == {
        "text": "a",
        "count": 3,
        "ratio": 0.5,
        "flag": True,
        "tags": ["x", "y"],
        "nested": {"k": 1},
        "empty": None,
    }
    assert index["tags"] == 4


def test_detected_automatically_and_forced_by_name():
    assert detect_format(example()) == "otel"
    assert imported(example(), "otel") == imported(example())


@pytest.mark.parametrize("other", sorted(set(LINES) - {"otel"}))
def test_lines_of_other_formats_are_not_taken_for_otel(other):
    assert not otel.detect(LINES[other]())


def test_malformed_lines_name_the_field():
    line = example()
    spans = line["resourceSpans"][0]["scopeSpans"][0]["spans"]
    spans[4]["attributes"][-1]["value"]["stringValue"] = '[{"role": "assistant", "parts": [{"ty'
    with pytest.raises(InvalidInput) as caught:
        to_canonical(line)
    problem = caught.value.problems[0]
    assert problem.path == "resourceSpans[0].scopeSpans[0].spans[4].attributes[2].value.stringValue"
    assert problem.message.startswith("invalid JSON")

    line = example()
    nameless = line["resourceSpans"][0]["scopeSpans"][0]["spans"][3]
    nameless["name"] = "tool"
    nameless["attributes"] = [a for a in nameless["attributes"] if a["key"] != "gen_ai.tool.name"]
    with pytest.raises(InvalidInput) as caught:
        to_canonical(line)
    assert caught.value.problems[0].path == "resourceSpans[0].scopeSpans[0].spans[3].attributes"

    line = example()
    line["resourceSpans"][0]["scopeSpans"][0]["spans"][2] = "span"
    with pytest.raises(InvalidInput) as caught:
        to_canonical(line)
    assert caught.value.problems[0].path == "resourceSpans[0].scopeSpans[0].spans[2]"


# --- the SDK's own JSON, merged calls, notes and the transcript ------------------------------


def sdk_span(span: dict) -> dict:
    """An OTLP/JSON span as the Python SDK's ``span.to_json()`` writes it."""
    attributes, _ = otel.read_attributes(span["attributes"], "attributes")
    failed = span["status"].get("code") == 2
    start, end = int(span["startTimeUnixNano"]), int(span["endTimeUnixNano"])
    return {
        "name": span["name"],
        "context": {"trace_id": "0x" + span["traceId"], "span_id": "0x" + span["spanId"]},
        "kind": "SpanKind.CLIENT" if span["kind"] == 3 else "SpanKind.INTERNAL",
        "parent_id": "0x" + span["parentSpanId"] if span["parentSpanId"] else None,
        "start_time": f"{datetime.fromtimestamp(start // 10**9, UTC):%Y-%m-%dT%H:%M:%S}"
        f".{start % 10**9 // 1000:06d}Z",
        "end_time": f"{datetime.fromtimestamp(end // 10**9, UTC):%Y-%m-%dT%H:%M:%S}"
        f".{end % 10**9 // 1000:06d}Z",
        "status": {"status_code": "ERROR", "description": span["status"]["message"]}
        if failed
        else {"status_code": "UNSET"},
        "attributes": attributes,
        "events": [],
        "links": [],
        "resource": {"attributes": {"service.name": "weather-agent"}, "schema_url": ""},
    }


def test_spans_in_the_sdks_own_json_read_like_otlp_json():
    otlp = example()
    spans = otlp.pop("resourceSpans")[0]["scopeSpans"][0]["spans"]
    line = {**otlp, "spans": [sdk_span(span) for span in reversed(spans)]}
    assert imported(line) == imported(example())


def test_arguments_written_as_an_object_in_the_sdks_json_are_the_arguments():
    """The SDK's JSON holds attributes as a mapping, where a value can be an object: the
    fuzz found one crashing the reader (an object is no member of a set of texts)."""
    otlp = example()
    spans = [sdk_span(span) for span in otlp.pop("resourceSpans")[0]["scopeSpans"][0]["spans"]]
    tool_span = next(span for span in spans if "gen_ai.tool.name" in span["attributes"])
    tool_span["attributes"]["gen_ai.tool.call.arguments"] = {"city": "Paris"}
    run = imported({**otlp, "spans": spans})
    called = [call for batch in run["batches"] for call in batch if call["name"] == "get_weather"]
    assert {"city": "Paris"} in [call["arguments"] for call in called]


def test_a_call_with_no_tool_span_stays_beside_calls_whose_tools_ran():
    calls = messages(
        *(
            {"type": "tool_call", "id": f"call_{k}", "name": "get_weather", "arguments": arguments}
            for k, arguments in enumerate(({"city": "Paris"}, {"city": "Tokyo"}, '{"city": "Os'))
        ),
        finish_reason="tool_call",
    )
    line = {
        "case": "weather",
        **otlp_export(
            agent(),
            chat("c1", 100, 200, gen_ai__output__messages=calls),
            tool(
                "t1", AGENT, 210, "get_weather", call_id="call_0", gen_ai__tool__call__result="18"
            ),
            tool("t2", AGENT, 211, "get_weather", call_id="call_1", error="timeout"),
            tool("t3", AGENT, 212, "lookup", '{"q": "x"}', call_id="call_9"),
        ),
    }
    run = imported(line)
    assert run["batches"] == [
        [
            {
                "id": "call_0",
                "name": "get_weather",
                "arguments": {"city": "Paris"},
                "result": "18",
                "duration_ms": 20.0,
            },
            {
                "id": "call_1",
                "name": "get_weather",
                "arguments": {"city": "Tokyo"},
                "result": "timeout",
                "is_error": True,
                "duration_ms": 20.0,
            },
            {  # no tool span: no time
                "id": "call_2",
                "name": "get_weather",
                "arguments": None,
                "arguments_raw": '{"city": "Os',
            },
            {"id": "call_9", "name": "lookup", "arguments": {"q": "x"}, "duration_ms": 20.0},
        ]
    ]
    assert run["usage"]["tool_duration_ms"] == 60.0
    assert "notes" not in run


def test_a_tool_span_gives_the_arguments_its_message_lacked():
    call = {"type": "tool_call", "id": "call_0", "name": "get_weather"}
    line = {
        "case": "weather",
        **otlp_export(
            agent(),
            chat("c1", 100, 200, gen_ai__output__messages=messages(call)),
            tool("t1", AGENT, 210, "get_weather", '{"city": "Paris"}', "call_0"),
        ),
    }
    run = imported(line)
    assert run["batches"] == [
        [
            {
                "id": "call_0",
                "name": "get_weather",
                "arguments": {"city": "Paris"},
                "duration_ms": 20.0,
            }
        ]
    ]
    assert "notes" not in run


def test_notes_already_on_the_line_are_kept_before_the_importers():
    line = {
        "case": "weather",
        "notes": ["replayed from a cache"],
        **otlp_export(agent(), chat("c1", 100, 200), tool("t1", AGENT, 210, "get_weather")),
    }
    notes = imported(line)["notes"]
    assert notes[:2] == [
        "replayed from a cache",
        f"tool arguments were not captured: {GENERIC_SETTING}",
    ]


def test_the_transcript_is_the_last_chat_spans_messages():
    conversation = json.dumps(
        [
            {"role": "system", "parts": [{"type": "text", "content": "Be brief."}]},
            {"role": "user", "parts": [{"type": "text", "content": "Paris?"}]},
            {
                "role": "assistant",
                "parts": [
                    {"type": "tool_call", "id": "call_0", "name": "get_weather", "arguments": {}}
                ],
            },
            {
                "role": "tool",
                "parts": [{"type": "tool_call_response", "id": "call_0", "response": {"t": 18}}],
            },
        ]
    )
    first = messages(
        {"type": "tool_call", "id": "call_0", "name": "get_weather", "arguments": {}},
        finish_reason="tool_call",
    )
    line = {
        "case": "weather",
        **otlp_export(
            agent(),
            chat("c1", 100, 200, gen_ai__output__messages=first),
            chat(
                "c2",
                300,
                400,
                gen_ai__input__messages=conversation,
                gen_ai__output__messages=messages({"type": "text", "content": "18°C."}),
            ),
        ),
    }
    assert imported(line)["transcript"] == [
        {"role": "system", "text": "Be brief."},
        {"role": "user", "text": "Paris?"},
        {"role": "assistant", "text": None, "batch": 0, "duration_ms": 100.0},
        {"role": "tool", "text": '{"t":18}', "batch": 0},
        {"role": "assistant", "text": "18°C.", "duration_ms": 100.0},
    ]


def test_each_assistant_turn_carries_its_model_calls_tokens_and_time():
    first = messages(
        {"type": "tool_call", "id": "call_0", "name": "get_weather", "arguments": {}},
        finish_reason="tool_call",
    )
    conversation = json.dumps(
        [
            {"role": "user", "parts": [{"type": "text", "content": "Paris?"}]},
            {"role": "assistant", "parts": [json.loads(first)[0]["parts"][0]]},
            {
                "role": "tool",
                "parts": [{"type": "tool_call_response", "id": "call_0", "response": "18"}],
            },
        ]
    )
    line = {
        "case": "weather",
        **otlp_export(
            agent(),
            chat(
                "c1",
                100,
                350,
                gen_ai__output__messages=first,
                gen_ai__usage__input_tokens=1234,
                gen_ai__usage__output_tokens=56,
            ),
            tool("t1", AGENT, 360, "get_weather", "{}", "call_0"),
            chat(
                "c2",
                400,
                500,
                gen_ai__input__messages=conversation,
                gen_ai__output__messages=messages({"type": "text", "content": "18°C."}),
                gen_ai__usage__input_tokens=1300,
                gen_ai__usage__cache_read__input_tokens=1200,
            ),
        ),
    }
    run = imported(line)
    said = [
        (t.get("usage"), t.get("duration_ms"))
        for t in run["transcript"]
        if t["role"] == "assistant"
    ]
    tokens = {"output_tokens": None, "cached_input_tokens": None, "reasoning_tokens": None}
    assert said == [
        ({**tokens, "input_tokens": 1234, "output_tokens": 56}, 250.0),
        ({**tokens, "input_tokens": 1300, "cached_input_tokens": 1200}, 100.0),
    ]
    assert [t for t in run["transcript"] if t["role"] != "assistant"] == [
        {"role": "user", "text": "Paris?"},
        {"role": "tool", "text": "18", "batch": 0},
    ]
    assert run["batches"][0][0]["duration_ms"] == 20.0
    assert (run["usage"]["input_tokens"], run["usage"]["tool_duration_ms"]) == (2534, 20.0)


def test_a_trace_of_no_span_casebook_reads_says_so_and_blames_no_one():
    line = {"case": "weather", "spans": [{"name": "GET /", "attributes": {"http.method": "GET"}}]}
    run = imported(line)
    why = (
        "no span of the trace is a model call or a tool call in a convention Casebook reads "
        "(docs/formats.md#opentelemetry-genai-spans)"
    )
    assert run["not_captured"] == {"calls": why, "final_text": why}
    assert run["notes"] == [why]


def call_part(call_id, name, arguments):
    return {"type": "tool_call", "id": call_id, "name": name, "arguments": arguments}


def test_an_id_two_turns_give_their_calls_is_no_id_and_their_results_answer_in_order():
    """google-genai's instrumentation numbers the calls of each response: both turns' add is
    ``add_0``. Neither call is dropped, and each gets its result."""
    first = messages(call_part("add_0", "add", {"a": 2, "b": 3}), finish_reason="tool_call")
    second_in = json.dumps(
        [{"role": "tool", "parts": [{"type": "tool_call_response", "id": "add_0", "result": 5}]}]
    )
    second = messages(call_part("add_0", "add", {"a": 5, "b": 5}), finish_reason="tool_call")
    spans = [
        agent(),
        chat("c1", 10, 20, gen_ai__output__messages=first),
        chat("c2", 30, 40, gen_ai__input__messages=second_in, gen_ai__output__messages=second),
    ]
    run = imported({"case": "add", **otlp_export(*spans)})
    assert [[(c["id"], c["arguments"], c.get("result")) for c in b] for b in run["batches"]] == [
        [(None, {"a": 2, "b": 3}, 5)],
        [(None, {"a": 5, "b": 5}, None)],
    ]


def test_a_tool_span_with_no_id_completes_its_turns_call_of_the_same_tool_and_arguments():
    """Tools run in parallel may start in any order: with no id, the call of the same
    arguments is completed, and the envelope of bound arguments is opened first."""
    output = messages(
        call_part("call_a1", "get_weather", {"city": "Paris"}),
        call_part("call_b2", "get_weather", {"city": "Tokyo"}),
        finish_reason="tool_call",
    )
    tokyo = json.dumps({"args": [], "kwargs": {"city": "Tokyo"}})
    spans = [
        agent(),
        chat("c1", 10, 20, gen_ai__output__messages=output),
        otlp_span("t1", AGENT, "Tokyo", 30, 40, openinference__span__kind="TOOL",
                  tool__name="get_weather", input__value=tokyo, output__value="timeout"),
        otlp_span("t2", AGENT, "Paris", 31, 40, openinference__span__kind="TOOL",
                  tool__name="get_weather", input__value='{"city": "Paris"}',
                  output__value='{"temp_c": 18}'),
    ]  # fmt: skip
    run = imported({"case": "weather", **otlp_export(*spans)})
    assert [[(c["id"], c.get("result")) for c in batch] for batch in run["batches"]] == [
        [("call_a1", '{"temp_c": 18}'), ("call_b2", "timeout")]
    ]


def test_a_litellm_repr_past_its_limit_is_not_read(monkeypatch):
    """LiteLLM writes the messages as Python reprs: read as literals, within a bound."""
    choices = str([{"finish_reason": "stop", "message": {"role": "assistant", "content": "Hi"}}])
    span = otlp_span("r1", "", "raw_gen_ai_request", 0, 10, llm__openai__choices=choices)
    line = {"case": "c", "resourceSpans": [{"scopeSpans": [{"scope": {"name": "litellm"},
                                                            "spans": [span]}]}]}  # fmt: skip
    assert imported(line)["final_text"] == "Hi"
    monkeypatch.setattr(otel.litellm, "MAX_REPR_BYTES", len(choices) - 1)
    assert imported(line)["final_text"] is None


def test_openinference_messages_missing_a_parts_text_or_with_an_object_for_an_id_are_read():
    """Two fuzz findings: a text part without its text raised KeyError, and a call id sent
    as a key-value list (an object, not a text) raised TypeError; both lost the export."""
    output = "llm.output_messages.0.message."
    attributes = otlp_attributes(
        openinference__span__kind="LLM",
        **{
            f"{output}role".replace(".", "__"): "assistant",
            f"{output}contents.0.message_content.type".replace(".", "__"): "text",
            f"{output}tool_calls.0.tool_call.function.name".replace(".", "__"): "get_weather",
            f"{output}tool_calls.0.tool_call.function.arguments".replace(".", "__"): (
                '{"city": "Paris"}'
            ),
        },
    )
    attributes.append(
        {
            "key": f"{output}tool_calls.0.tool_call.id",
            "value": {"kvlistValue": {"values": [{"key": "a", "value": {"stringValue": "b"}}]}},
        }
    )
    span = otlp_span("c1", "", "ChatCompletion", 100, 200)
    span["attributes"] = attributes
    run = imported({"case": "weather", **otlp_export(span)})
    assert [call["arguments"] for batch in run["batches"] for call in batch] == [{"city": "Paris"}]
