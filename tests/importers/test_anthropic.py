"""Anthropic Messages (docs/formats.md#anthropic-messages): tool_use blocks of one assistant
turn are a batch."""

import pytest

from scoring.importers import anthropic, detect_format, to_canonical
from scoring.matcher import InvalidInput, load_run

from .examples import ANSWER, LINES, QUESTION
from .examples import anthropic as example


def imported(line, format_name=None):
    canonical = to_canonical(line, format_name)
    load_run(canonical)  # what the matcher accepts
    return canonical


def assistant(*blocks):
    return {"role": "assistant", "content": list(blocks)}


def tool_use(tool_id, name, arguments):
    return {"type": "tool_use", "id": tool_id, "name": name, "input": arguments}


def test_the_tool_use_blocks_of_one_turn_are_one_batch_with_their_results_and_errors():
    run = imported(example())
    assert run["case"] == "weather"
    assert run["batches"] == [
        [
            {
                "id": "toolu_01",
                "name": "get_weather",
                "arguments": {"city": "Paris"},
                "result": "18C",
            },
            {
                "id": "toolu_02",
                "name": "get_weather",
                "arguments": {"city": "Tokyo"},
                "result": "timeout",
                "is_error": True,
            },
        ]
    ]
    assert run["final_text"] == ANSWER


def test_results_are_joined_by_tool_use_id_whatever_their_order():
    line = example()
    line["messages"][2]["content"].reverse()
    batch = imported(line)["batches"][0]
    assert [(call["id"], call["result"]) for call in batch] == [
        ("toolu_01", "18C"),
        ("toolu_02", "timeout"),
    ]


def test_turns_in_sequence_are_batches_in_order_and_text_blocks_beside_calls_are_skipped():
    line = {
        "case": "trip",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Book me to Oslo."}]},
            assistant(
                {"type": "thinking", "thinking": "Find a flight first.", "signature": "EqQB"},
                {"type": "text", "text": "Searching."},
                tool_use("toolu_A", "search_flights", {"to": "OSL"}),
            ),
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_A",
                        "content": [
                            {"type": "text", "text": "SK123 "},
                            {"type": "text", "text": "09:40"},
                        ],
                    }
                ],
            },
            assistant(tool_use("toolu_B", "book", {"flight": "SK123"})),
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_B", "content": "ok"}],
            },
            assistant(
                {"type": "text", "text": "Booked SK123."}, {"type": "text", "text": " Enjoy!"}
            ),
        ],
    }
    run = imported(line)
    assert [[(c["name"], c["result"]) for c in batch] for batch in run["batches"]] == [
        [("search_flights", "SK123 09:40")],
        [("book", "ok")],
    ]
    assert run["final_text"] == "Booked SK123. Enjoy!"


def test_server_tools_and_other_unknown_blocks_are_opaque_steps():
    line = {
        "case": "news",
        "messages": [
            {"role": "user", "content": "Any news on the Artemis launch?"},
            assistant(
                {
                    "type": "server_tool_use",
                    "id": "srvtoolu_1",
                    "name": "web_search",
                    "input": {"query": "Artemis"},
                },
                {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
                {"type": "text", "text": "It launched on time."},
            ),
        ],
    }
    run = imported(line)
    assert run["batches"] == []
    assert run["final_text"] == "It launched on time."


def test_input_that_is_not_an_object_is_kept_as_arguments_raw():
    line = {
        "case": "weather",
        "messages": [
            {"role": "user", "content": QUESTION},
            assistant(tool_use("toolu_01", "get_weather", '{"city": "Par')),
        ],
    }
    (call,) = imported(line)["batches"][0]
    assert call["arguments"] is None
    assert call["arguments_raw"] == '{"city": "Par'
    assert load_run(imported(line)).calls[0].arguments is None


def test_a_run_with_no_tool_calls_has_no_batches_and_its_text():
    line = {
        "case": "hello",
        "messages": [
            {"role": "user", "content": "Hi"},
            # a thinking block makes the line Anthropic's even with no tool call
            assistant(
                {"type": "thinking", "thinking": "Greet back.", "signature": "x"},
                {"type": "text", "text": "Hello!"},
            ),
        ],
    }
    assert detect_format(line) == "anthropic"
    run = imported(line)
    assert (run["batches"], run["final_text"]) == ([], "Hello!")


def test_a_run_that_ended_in_an_error_keeps_it_and_has_no_final_text():
    line = example()
    del line["messages"][3]  # the API failed before the last turn
    line["error"] = "overloaded_error: Overloaded"
    run = imported(line)
    assert run["error"] == "overloaded_error: Overloaded"
    assert run["final_text"] == "Checking both cities."  # the last assistant turn's text
    assert load_run(run).error == "overloaded_error: Overloaded"


def test_trial_and_meta_are_kept():
    run = imported({**example(), "trial": 2, "meta": {"model": "claude-sonnet-4-5"}})
    assert (run["trial"], run["meta"]) == (2, {"model": "claude-sonnet-4-5"})


def test_detected_automatically_and_forced_by_name():
    assert detect_format(example()) == "anthropic"
    assert imported(example(), "anthropic") == imported(example())


@pytest.mark.parametrize("other", sorted(set(LINES) - {"anthropic"}))
def test_lines_of_other_formats_are_not_taken_for_anthropic(other):
    assert not anthropic.detect(LINES[other]())


def test_an_openai_chat_run_is_not_anthropic_and_a_text_only_one_reads_the_same_either_way():
    text_only = {
        "case": "hello",
        "messages": [
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": [{"type": "text", "text": "Hello!"}]},
        ],
    }
    assert detect_format(text_only) == "openai_chat"
    assert imported(text_only, "anthropic") == imported(text_only)


@pytest.mark.parametrize(
    ("mutate", "path"),
    [
        (lambda m: m[1]["content"][1].pop("name"), "messages[1].content[1].name"),
        (lambda m: m[1]["content"].__setitem__(2, "tool_use"), "messages[1].content[2]"),
        (lambda m: m.__setitem__(3, None), "messages[3]"),
        (lambda m: m[2]["content"][0].pop("tool_use_id"), "messages[2].content[0].tool_use_id"),
    ],
)
def test_malformed_lines_name_the_field(mutate, path):
    line = example()
    mutate(line["messages"])
    with pytest.raises(InvalidInput) as caught:
        to_canonical(line, "anthropic")
    assert caught.value.problems[0].path == path


# --- the transcript, Message objects and truncation ------------------------------------------


def test_the_transcript_has_the_system_prompt_each_turn_and_a_tool_turn_per_result():
    line = {**example(), "system": [{"type": "text", "text": "Be brief."}]}
    assert imported(line)["transcript"] == [
        {"role": "system", "text": "Be brief."},
        {"role": "user", "text": QUESTION},
        {"role": "assistant", "text": "Checking both cities.", "batch": 0},
        {"role": "tool", "text": "18C", "batch": 0},
        {"role": "tool", "text": "timeout", "batch": 0},
        {"role": "assistant", "text": ANSWER},
    ]


def message(content, stop_reason):
    return {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": 5, "output_tokens": 9},
    }


def test_a_message_per_line_is_its_one_turn():
    line = {"case": "weather", **message(example()["messages"][1]["content"], "tool_use")}
    assert detect_format(line) == "anthropic"
    run = imported(line)
    assert [[c["id"] for c in batch] for batch in run["batches"]] == [["toolu_01", "toolu_02"]]
    assert run.get("error") is None


def test_a_request_and_its_message_are_the_requests_messages_then_the_response():
    messages = example()["messages"]
    line = {
        "case": "weather",
        "request": {"model": "claude-sonnet-4-5", "messages": messages[:-1]},
        "response": message(messages[-1]["content"], "end_turn"),
    }
    assert detect_format(line) == "anthropic"
    assert imported(line)["batches"] == imported(example())["batches"]
    assert imported(line)["final_text"] == ANSWER


def test_a_message_cut_off_at_max_tokens_is_an_error():
    run = imported(
        {"case": "weather", **message([{"type": "text", "text": "Paris"}], "max_tokens")}
    )
    assert run["error"] == "the response was cut off at the token limit (stop_reason max_tokens)"
    with pytest.raises(InvalidInput) as caught:
        imported({"case": "w", **message(["oops"], "end_turn")})
    assert caught.value.problems[0].path == "content[0]"


def test_a_messages_list_whose_last_assistant_message_was_cut_off_is_an_error():
    # A Message as the SDK dumps it, appended to the conversation as it is.
    messages = example()["messages"]
    truncated = message([{"type": "text", "text": "Paris is 1"}], "max_tokens")
    run = imported({"case": "weather", "messages": [*messages[:-1], truncated]})
    assert run["error"] == "the response was cut off at the token limit (stop_reason max_tokens)"
    assert run["final_text"] == "Paris is 1"


def test_only_the_last_assistant_message_says_whether_the_run_was_cut_off():
    messages = example()["messages"]
    cut = {**messages[1], "stop_reason": "max_tokens"}  # then its calls ran: the run went on
    run = imported({"case": "weather", "messages": [messages[0], cut, *messages[2:]]})
    assert run.get("error") is None
    finished = message(messages[-1]["content"], "end_turn")
    assert imported({"case": "w", "messages": [*messages[:-1], finished]}).get("error") is None


def test_a_context_window_exceeded_is_cut_off_too_and_the_lines_own_error_comes_first():
    cut = message([{"type": "text", "text": "Par"}], "model_context_window_exceeded")
    run = imported({"case": "w", "messages": [{"role": "user", "content": "Hi"}, cut]})
    assert run["error"] == (
        "the response was cut off at the token limit (stop_reason model_context_window_exceeded)"
    )
    assert imported({"case": "w", "error": "crashed", **cut})["error"] == "crashed"
