"""OpenAI Responses API (docs/formats.md#openai-responses): function_call items of one
response are a batch."""

import pytest

from scoring.importers import detect_format, openai_responses, to_canonical
from scoring.matcher import InvalidInput, load_run

from .examples import (
    ANSWER,
    LINES,
    QUESTION,
    function_call,
    function_call_output,
    message,
    response,
)
from .examples import openai_responses as example


def imported(line, format_name=None):
    canonical = to_canonical(line, format_name)
    load_run(canonical)
    return canonical


def test_the_function_calls_of_one_response_are_a_batch_keyed_by_call_id_with_results():
    run = imported(example())
    assert run["batches"] == [
        [
            {
                "id": "call_a1",
                "name": "get_weather",
                "arguments": {"city": "Paris"},
                "result": '{"temp_c": 18}',
            },
            {
                "id": "call_b2",
                "name": "get_weather",
                "arguments": {"city": "Tokyo"},
                "result": '{"error": "timeout"}',
            },
        ]
    ]
    assert run["final_text"] == ANSWER
    assert run["error"] is None


def test_calls_echoed_back_in_the_input_are_not_counted_twice():
    run = imported(example())
    assert sum(len(batch) for batch in run["batches"]) == 2


def test_each_response_may_carry_the_input_of_its_own_request():
    line = {
        "case": "weather",
        "responses": [
            {
                **response(
                    "resp_1",
                    [
                        function_call("fc_1", "call_a1", '{"city":"Paris"}'),
                        function_call("fc_2", "call_b2", '{"city":"Tokyo"}'),
                    ],
                ),
                "input": QUESTION,
            },
            {
                **response("resp_2", [function_call("fc_3", "call_c3", '{"city":"Tokyo"}')]),
                "previous_response_id": "resp_1",
                "input": [
                    function_call_output("call_b2", "timeout"),
                    function_call_output("call_a1", "18C"),
                ],
            },
            {
                **response("resp_3", [message("Paris 18°C, Tokyo 25°C.")]),
                "previous_response_id": "resp_2",
                "input": [function_call_output("call_c3", "25C")],
            },
        ],
    }
    run = imported(line)
    assert [[(c["id"], c["result"]) for c in batch] for batch in run["batches"]] == [
        [("call_a1", "18C"), ("call_b2", "timeout")],
        [("call_c3", "25C")],
    ]
    assert run["final_text"] == "Paris 18°C, Tokyo 25°C."


def test_a_single_response_line_is_the_response_itself():
    line = {
        "case": "weather",
        **response(
            "resp_1",
            [
                {"type": "reasoning", "id": "rs_1", "summary": []},
                function_call("fc_1", "call_a1", '{"city":"Paris"}'),
                function_call("fc_2", "call_b2", '{"city":"Tokyo"}'),
            ],
        ),
    }
    run = imported(line)
    assert [c["id"] for c in run["batches"][0]] == ["call_a1", "call_b2"]
    assert "result" not in run["batches"][0][0]
    assert run["final_text"] is None


def test_malformed_or_truncated_arguments_are_kept_raw():
    truncated = {
        **function_call("fc_1", "call_a1", '{"city":"Par'),
        "status": "incomplete",
    }
    line = {"case": "weather", **response("resp_1", [truncated], status="incomplete")}
    line["incomplete_details"] = {"reason": "max_output_tokens"}
    run = imported(line)
    (call,) = run["batches"][0]
    assert (call["arguments"], call["arguments_raw"]) == (None, '{"city":"Par')
    assert run["error"] == "response incomplete: max_output_tokens"


def test_without_the_responses_status_an_incomplete_last_message_is_the_run_error():
    cut = {**message("Paris is"), "status": "incomplete"}
    line = {"case": "w", "input": "Weather?", "output": [cut]}
    assert imported(line)["error"] == "response incomplete"
    assert imported({**line, "output": [message("Paris is 18°C.")]})["error"] is None


def test_a_failed_last_response_is_the_run_error():
    line = example()
    line["responses"][-1] = response(
        "resp_2",
        [],
        status="failed",
        error={"code": "server_error", "message": "The model failed to generate a response."},
    )
    run = imported(line)
    assert run["error"] == "response failed: server_error: The model failed to generate a response."
    assert run["final_text"] is None
    assert len(run["batches"]) == 1


def test_an_earlier_failed_response_that_was_retried_is_no_run_error():
    line = example()
    failed = response("resp_0", [], status="failed", error={"code": "rate_limit_exceeded"})
    line["responses"].insert(0, failed)
    assert imported(line)["error"] is None


def test_an_error_on_the_line_is_kept_over_the_responses_own():
    line = {**example(), "error": "harness timeout after 600 s"}
    line["responses"][-1]["status"] = "cancelled"
    assert imported(line)["error"] == "harness timeout after 600 s"
    del line["error"]
    assert imported(line)["error"] == "response cancelled"


def test_a_run_with_no_tool_calls_has_its_text_only():
    line = {
        "case": "hello",
        "input": "Say hello",
        "output": [
            {"type": "reasoning", "id": "rs_1", "summary": []},
            message("Hello", "msg_1"),
            message(" there!", "msg_2"),
        ],
        "status": "completed",
    }
    run = imported(line)
    assert (run["batches"], run["final_text"]) == ([], "Hello there!")


def test_detected_automatically_and_forced_by_name():
    assert detect_format(example()) == "openai_responses"
    assert imported(example(), "openai_responses") == imported(example())


@pytest.mark.parametrize("other", sorted(set(LINES) - {"openai_responses"}))
def test_lines_of_other_formats_are_not_taken_for_responses(other):
    assert not openai_responses.detect(LINES[other]())


@pytest.mark.parametrize(
    ("mutate", "path"),
    [
        (lambda r: r[0]["output"][1].pop("name"), "responses[0].output[1].name"),
        (lambda r: r[0]["output"].__setitem__(2, "call"), "responses[0].output[2]"),
        (lambda r: r[1].__setitem__("output", {}), "responses[1].output"),
        (lambda r: r.__setitem__(1, []), "responses[1]"),
    ],
)
def test_malformed_lines_name_the_field(mutate, path):
    line = example()
    mutate(line["responses"])
    with pytest.raises(InvalidInput) as caught:
        to_canonical(line)
    assert caught.value.problems[0].path == path


def test_a_single_response_names_output_paths_from_the_line():
    line = {"case": "weather", **response("resp_1", [{"type": "function_call", "call_id": "c"}])}
    with pytest.raises(InvalidInput) as caught:
        to_canonical(line)
    assert caught.value.problems[0].path == "output[0].name"


# --- conversation state: the input list beside the last response ---------------------------


def test_calls_in_the_input_list_are_batched_by_turn_before_the_outputs():
    line = {
        "case": "weather",
        "input": [
            {"role": "developer", "content": "Be brief."},
            {"role": "user", "content": [{"type": "input_text", "text": QUESTION}]},
            {"type": "reasoning", "id": "rs_1", "summary": []},
            function_call("fc_1", "call_a1", '{"city": "Paris"}'),
            {"type": "reasoning", "id": "rs_2", "summary": []},
            function_call("fc_2", "call_b2", '{"city": "Tokyo"}'),
            function_call_output("call_a1", '{"temp_c": 18}'),
            function_call_output("call_b2", '{"error": "timeout"}'),
            function_call("fc_3", "call_c3", '{"city": "Tokyo", "retry": true}'),
            function_call_output("call_c3", '{"temp_c": 21}'),
        ],
        **response("resp_3", [message(ANSWER)]),
    }
    run = imported(line)
    assert [[c["id"] for c in batch] for batch in run["batches"]] == [
        ["call_a1", "call_b2"],
        ["call_c3"],
    ]
    assert run["batches"][1][0]["result"] == '{"temp_c": 21}'
    assert run["final_text"] == ANSWER
    assert run["transcript"] == [
        {"role": "system", "text": "Be brief."},
        {"role": "user", "text": QUESTION},
        {"role": "assistant", "text": None, "batch": 0},
        {"role": "tool", "text": '{"temp_c": 18}', "batch": 0},
        {"role": "tool", "text": '{"error": "timeout"}', "batch": 0},
        {"role": "assistant", "text": None, "batch": 1},
        {"role": "tool", "text": '{"temp_c": 21}', "batch": 1},
        # The response says what its model call used (examples.response's usage).
        {"role": "assistant", "text": ANSWER, "usage": {
            "input_tokens": 82, "output_tokens": 41,
            "cached_input_tokens": None, "reasoning_tokens": None,
        }},
    ]  # fmt: skip


def test_a_call_both_echoed_in_the_input_and_in_a_response_is_counted_once():
    first = response("resp_1", [function_call("fc_1", "call_a1", '{"city": "Paris"}')])
    line = {
        "case": "weather",
        "input": [
            {"role": "user", "content": QUESTION},
            function_call("fc_1", "call_a1", '{"city": "Paris"}'),
            function_call_output("call_a1", '{"temp_c": 18}'),
        ],
        "responses": [first, response("resp_2", [message(ANSWER)])],
    }
    run = imported(line)
    assert [[c["id"] for c in batch] for batch in run["batches"]] == [["call_a1"]]
    assert run["batches"][0][0]["result"] == '{"temp_c": 18}'


def test_a_request_and_its_response_as_a_proxy_records_them():
    request = {
        "model": "gpt-4o",
        "input": [
            {"role": "user", "content": QUESTION},
            function_call("fc_1", "call_a1", '{"city": "Paris"}'),
            function_call_output("call_a1", '{"temp_c": 18}'),
        ],
    }
    line = {"case": "weather", "request": request, "response": response("r", [message(ANSWER)])}
    assert detect_format(line) == "openai_responses"
    run = imported(line)
    assert run["batches"][0][0]["result"] == '{"temp_c": 18}'
    assert run["final_text"] == ANSWER
    bad = {"case": "w", "request": request, "response": {"output": ["x"]}}
    with pytest.raises(InvalidInput) as caught:
        imported(bad, openai_responses.NAME)
    assert caught.value.problems[0].path == "response.output[0]"


def test_an_input_call_whose_id_is_no_id_is_read_not_crashed_on():
    odd = {**function_call("fc_1", "call_a1", '{"city": "Paris"}'), "call_id": ["x"]}
    line = {"case": "weather", "input": [odd], **response("resp_2", [message(ANSWER)])}
    run = to_canonical(line)
    assert [[c["name"] for c in batch] for batch in run["batches"]] == [["get_weather"]]
    with pytest.raises(InvalidInput) as caught:
        load_run(run)
    assert caught.value.problems[0].path == "batches[0][0].id"
