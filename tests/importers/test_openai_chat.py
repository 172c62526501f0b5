"""OpenAI Chat Completions (docs/formats.md#openai-chat-completions): each assistant
message's tool_calls is a batch."""

import pytest

from scoring.importers import detect_format, openai_chat, to_canonical
from scoring.matcher import InvalidInput, load_run

from .examples import ANSWER, LINES, QUESTION
from .examples import openai_chat as example


def imported(line, format_name=None):
    canonical = to_canonical(line, format_name)
    load_run(canonical)
    return canonical


def tool_call(call_id, name, arguments):
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def test_parallel_tool_calls_are_one_batch_with_results_joined_by_tool_call_id():
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


def test_a_reused_call_id_joins_each_result_to_the_latest_call_before_it():
    line = {
        "case": "c",
        "messages": [
            {"role": "user", "content": "Add 1 and 2, then double it."},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [tool_call("call_x", "add", '{"a":1,"b":2}')],
            },
            {"role": "tool", "tool_call_id": "call_x", "name": "add", "content": "3"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [tool_call("call_x", "double", '{"n":3}')],
            },
            {"role": "tool", "tool_call_id": "call_x", "name": "double", "content": "6"},
            {"role": "assistant", "content": "6"},
        ],
    }
    run = imported(line)
    assert [[(c["name"], c["result"]) for c in b] for b in run["batches"]] == [
        [("add", "3")],
        [("double", "6")],
    ]


def test_malformed_arguments_are_kept_raw():
    line = example()
    line["messages"][2]["tool_calls"][1]["function"]["arguments"] = '{"city": "Tok'
    call = imported(line)["batches"][0][1]
    assert (call["arguments"], call["arguments_raw"]) == (None, '{"city": "Tok')


def test_a_legacy_function_call_is_a_batch_of_one_with_its_function_message():
    line = {
        "case": "weather",
        "messages": [
            {"role": "user", "content": QUESTION},
            {
                "role": "assistant",
                "content": None,
                "function_call": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
            },
            {"role": "function", "name": "get_weather", "content": "18C"},
            {"role": "assistant", "content": "18°C in Paris."},
        ],
    }
    run = imported(line)
    assert run["batches"] == [
        [{"name": "get_weather", "arguments": {"city": "Paris"}, "result": "18C"}]
    ]
    assert run["final_text"] == "18°C in Paris."


def test_a_run_with_no_tool_calls_and_a_run_error():
    line = {
        "case": "hello",
        "messages": [
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": [{"type": "text", "text": "Hello!"}]},
        ],
        "error": "context_length_exceeded",
    }
    run = imported(line)
    assert (run["batches"], run["final_text"], run["error"]) == (
        [],
        "Hello!",
        "context_length_exceeded",
    )


def test_detected_automatically_and_forced_by_name():
    assert detect_format(example()) == "openai_chat"
    assert imported(example(), "openai_chat") == imported(example())


@pytest.mark.parametrize("other", sorted(set(LINES) - {"openai_chat", "inspect_ai", "anthropic"}))
def test_lines_of_other_formats_are_not_taken_for_openai_chat(other):
    # An Inspect sample and an Anthropic conversation have chat messages too; detection
    # tries inspect_ai and anthropic first (test_detection).
    assert not openai_chat.detect(LINES[other]())


@pytest.mark.parametrize(
    ("mutate", "path"),
    [
        (
            lambda m: m[2]["tool_calls"][0]["function"].pop("name"),
            "messages[2].tool_calls[0].function.name",
        ),
        (lambda m: m[2]["tool_calls"][1].pop("function"), "messages[2].tool_calls[1].function"),
        (lambda m: m[2].__setitem__("tool_calls", "x"), "messages[2].tool_calls"),
        (lambda m: m.__setitem__(0, "system"), "messages[0]"),
    ],
)
def test_malformed_lines_name_the_field(mutate, path):
    line = example()
    mutate(line["messages"])
    with pytest.raises(InvalidInput) as caught:
        to_canonical(line)
    assert caught.value.problems[0].path == path


# --- the transcript, SDK objects and request logs --------------------------------------------


def test_the_transcript_is_the_conversation_with_each_turns_batch():
    assert imported(example())["transcript"] == [
        {"role": "system", "text": "You are a helpful weather assistant."},
        {"role": "user", "text": QUESTION},
        {"role": "assistant", "text": None, "batch": 0},
        {"role": "tool", "text": '{"temp_c": 18}', "batch": 0},
        {"role": "tool", "text": '{"error": "timeout"}', "batch": 0},
        {"role": "assistant", "text": ANSWER},
    ]


def completion(message, finish_reason="stop"):
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
    }


def test_a_chat_completion_per_line_is_its_one_turn():
    calls = example()["messages"][2]
    line = {"case": "weather", **completion(calls, "tool_calls")}
    assert detect_format(line) == "openai_chat"
    run = imported(line)
    assert [[c["arguments"] for c in batch] for batch in run["batches"]] == [
        [{"city": "Paris"}, {"city": "Tokyo"}]
    ]
    assert run.get("error") is None


def test_a_request_and_its_chat_completion_are_the_requests_messages_then_the_response():
    messages = example()["messages"]
    line = {
        "case": "weather",
        "request": {"model": "gpt-4o", "messages": messages[:-1]},
        "response": completion(messages[-1]),
    }
    assert detect_format(line) == "openai_chat"
    run, plain = imported(line), imported(example())
    # The request names its model, where the plain messages name none.
    assert run.pop("usage")["models"] == ["gpt-4o"]
    assert plain.pop("usage")["models"] == []
    assert run == {**plain, "case": "weather"}


def test_a_response_cut_off_at_the_token_limit_is_an_error_unless_the_line_gives_one():
    line = {"case": "weather", **completion({"role": "assistant", "content": "Paris is"}, "length")}
    run = imported(line)
    assert run["error"] == "the response was cut off at the token limit (finish_reason length)"
    assert run["final_text"] == "Paris is"
    assert imported({**line, "error": "crashed"})["error"] == "crashed"


def test_a_choice_or_a_completion_in_a_messages_list_reads_as_its_message():
    messages = example()["messages"]  # system, user, the calls, two results, the answer
    as_choices = [*messages[:2], completion(messages[2])["choices"][0], *messages[3:5]]
    last = completion(messages[5])
    assert imported({**example(), "messages": [*as_choices, last]}) == imported(example())


def test_a_messages_list_whose_last_assistant_message_was_cut_off_is_an_error():
    messages = example()["messages"]
    cut = {"role": "assistant", "content": "Paris is"}
    expected = "the response was cut off at the token limit (finish_reason length)"
    for last in (  # the choice in the list, the completion in the list, the message itself
        completion(cut, "length")["choices"][0],
        completion(cut, "length"),
        {**cut, "finish_reason": "length"},
    ):
        run = imported({"case": "w", "messages": [*messages[:-1], last]})
        assert (run["error"], run["final_text"]) == (expected, "Paris is")


def test_a_cut_off_assistant_message_the_run_went_on_from_is_no_error():
    messages = example()["messages"]
    calls = completion(messages[2], "length")["choices"][0]
    assert (
        imported({"case": "w", "messages": [*messages[:2], calls, *messages[3:]]})["error"] is None
    )


def test_a_problem_inside_a_choice_in_a_messages_list_is_named_by_its_path():
    messages = example()["messages"]
    held = completion({**messages[2], "tool_calls": "x"})
    with pytest.raises(InvalidInput) as caught:
        to_canonical({"case": "w", "messages": [*messages[:2], held]})
    assert caught.value.problems[0].path == "messages[2].choices[0].message.tool_calls"


def test_a_completion_without_choices_or_a_bad_request_is_a_problem_by_path():
    with pytest.raises(InvalidInput) as caught:
        imported({"case": "w", "id": "x", "choices": []})
    assert caught.value.problems[0].path == "choices"
    with pytest.raises(InvalidInput) as caught:
        imported({"case": "w", "request": {"messages": "hi"}, "response": completion({})})
    assert caught.value.problems[0].path == "request.messages"
