"""Gemini ``contents`` (docs/formats.md#gemini): functionCall parts of one model turn are a
batch."""

import pytest

from scoring.importers import detect_format, gemini, to_canonical
from scoring.matcher import InvalidInput, load_run

from .examples import ANSWER, LINES, QUESTION
from .examples import gemini as example


def imported(line, format_name=None):
    canonical = to_canonical(line, format_name)
    load_run(canonical)
    return canonical


def model(*parts):
    return {"role": "model", "parts": list(parts)}


def user(*parts):
    return {"role": "user", "parts": list(parts)}


def call(name, args, call_id=None, key="functionCall"):
    body = {"name": name, "args": args}
    if call_id:
        body["id"] = call_id
    return {key: body}


def response(name, result, call_id=None, key="functionResponse"):
    body = {"name": name, "response": result}
    if call_id:
        body["id"] = call_id
    return {key: body}


def test_the_function_calls_of_one_model_turn_are_one_batch_with_results_by_id():
    run = imported(example())
    assert run["batches"] == [
        [
            {
                "id": "fc-1",
                "name": "get_weather",
                "arguments": {"city": "Paris"},
                "result": {"temp_c": 18},
            },
            {
                "id": "fc-2",
                "name": "get_weather",
                "arguments": {"city": "Tokyo"},
                "result": {"error": "timeout"},
                "is_error": True,
            },
        ]
    ]
    assert run["final_text"] == ANSWER


def test_results_are_joined_by_id_whatever_their_order():
    line = example()
    line["contents"][2]["parts"].reverse()
    batch = imported(line)["batches"][0]
    assert [(c["id"], c["result"]) for c in batch] == [
        ("fc-1", {"temp_c": 18}),
        ("fc-2", {"error": "timeout"}),
    ]


def test_without_ids_parallel_calls_of_one_tool_are_paired_by_order_and_name():
    line = {
        "case": "weather",
        "contents": [
            user({"text": QUESTION + " And is it raining in Paris?"}),
            model(
                call("get_weather", {"city": "Paris"}),
                call("get_rain", {"city": "Paris"}),
                call("get_weather", {"city": "Tokyo"}),
            ),
            user(
                response("get_rain", {"raining": False}),
                response("get_weather", {"temp_c": 18}),
                response("get_weather", {"error": "timeout"}),
            ),
            model(call("get_weather", {"city": "Lyon"})),
            user(response("get_weather", {"temp_c": 15})),
            model({"text": "Paris 18°C and dry, Lyon 15°C; "}, {"text": "Tokyo unavailable."}),
        ],
    }
    run = imported(line)
    assert [[(c["arguments"]["city"], c["result"]) for c in b] for b in run["batches"]] == [
        [("Paris", {"temp_c": 18}), ("Paris", {"raining": False}), ("Tokyo", {"error": "timeout"})],
        [("Lyon", {"temp_c": 15})],
    ]
    assert [c["id"] for c in run["batches"][0]] == [None, None, None]
    assert run["batches"][0][2]["is_error"] is True
    assert run["final_text"] == "Paris 18°C and dry, Lyon 15°C; Tokyo unavailable."


def test_the_python_sdks_snake_case_parts_are_read_too():
    line = {
        "case": "weather",
        "contents": [
            user({"text": QUESTION}),
            model(
                call("get_weather", {"city": "Paris"}, "a", key="function_call"),
                call("get_weather", {"city": "Tokyo"}, "b", key="function_call"),
            ),
            user(
                response("get_weather", {"output": "18C"}, "a", key="function_response"),
                response("get_weather", {"error": "timeout"}, "b", key="function_response"),
            ),
            model({"text": ANSWER}),
        ],
    }
    assert imported(line) == imported(line, "gemini")
    batch = imported(line)["batches"][0]
    assert [(c["name"], c["result"], c.get("is_error", False)) for c in batch] == [
        ("get_weather", {"output": "18C"}, False),
        ("get_weather", {"error": "timeout"}, True),
    ]


def test_a_call_without_args_has_empty_arguments_and_args_text_is_parsed_or_kept_raw():
    line = {
        "case": "clock",
        "contents": [
            user({"text": "What time is it, and convert 3 km?"}),
            model(
                {"functionCall": {"name": "get_time"}},
                call("convert", '{"km": 3}'),
                call("convert", '{"km": 3'),
            ),
        ],
    }
    batch = imported(line)["batches"][0]
    assert [c["arguments"] for c in batch] == [{}, {"km": 3}, None]
    assert batch[2]["arguments_raw"] == '{"km": 3'


def test_thought_summaries_are_not_final_text():
    line = {
        "case": "hello",
        "contents": [
            user({"text": "Hi"}),
            model({"text": "The user greets me.", "thought": True}, {"text": "Hello!"}),
        ],
    }
    run = imported(line)
    assert (run["batches"], run["final_text"]) == ([], "Hello!")


def test_a_run_that_ended_in_an_error_keeps_it():
    line = example()
    line["contents"] = line["contents"][:3]  # no answer: the model call failed
    line["error"] = "503 UNAVAILABLE: The model is overloaded."
    run = imported(line)
    assert run["error"] == "503 UNAVAILABLE: The model is overloaded."
    assert run["final_text"] is None
    assert len(run["batches"][0]) == 2


def test_detected_automatically_and_forced_by_name():
    assert detect_format(example()) == "gemini"
    assert imported(example(), "gemini") == imported(example())


@pytest.mark.parametrize("other", sorted(set(LINES) - {"gemini"}))
def test_lines_of_other_formats_are_not_taken_for_gemini(other):
    assert not gemini.detect(LINES[other]())


@pytest.mark.parametrize(
    ("mutate", "path"),
    [
        (
            lambda c: c[1]["parts"][0]["functionCall"].pop("name"),
            "contents[1].parts[0].functionCall.name",
        ),
        (lambda c: c[1]["parts"].__setitem__(1, "fc"), "contents[1].parts[1]"),
        (lambda c: c[1].__setitem__("parts", {}), "contents[1].parts"),
        (
            lambda c: c[1]["parts"][1].__setitem__("functionCall", []),
            "contents[1].parts[1].functionCall",
        ),
    ],
)
def test_malformed_lines_name_the_field(mutate, path):
    line = example()
    mutate(line["contents"])
    with pytest.raises(InvalidInput) as caught:
        to_canonical(line)
    assert caught.value.problems[0].path == path


# --- the transcript and GenerateContentResponse -----------------------------------------------


def test_the_transcript_has_each_turn_and_a_tool_turn_per_function_response():
    assert imported(example())["transcript"] == [
        {"role": "user", "text": QUESTION},
        {"role": "assistant", "text": None, "batch": 0},
        {"role": "tool", "text": '{"temp_c":18}', "batch": 0},
        {"role": "tool", "text": '{"error":"timeout"}', "batch": 0},
        {"role": "assistant", "text": ANSWER},
    ]


def generated(parts, finish_key="finishReason", finish="STOP", role="model"):
    content = {"parts": parts, **({"role": role} if role else {})}
    return {"candidates": [{"content": content, finish_key: finish, "index": 0}]}


@pytest.mark.parametrize(
    ("call_key", "finish_key", "role"),
    [("functionCall", "finishReason", "model"), ("function_call", "finish_reason", None)],
)
def test_a_generate_content_response_per_line_is_its_one_turn(call_key, finish_key, role):
    parts = [
        {call_key: {"id": None, "name": "get_weather", "args": {"city": city}}, "text": None}
        for city in ("Paris", "Tokyo")
    ]
    line = {"case": "weather", **generated(parts, finish_key, role=role)}
    assert detect_format(line) == "gemini"
    run = imported(line)
    assert [[c["arguments"] for c in batch] for batch in run["batches"]] == [
        [{"city": "Paris"}, {"city": "Tokyo"}]
    ]
    assert run.get("error") is None
    assert run["transcript"] == [{"role": "assistant", "text": None, "batch": 0}]


@pytest.mark.parametrize("finish_key", ["finishReason", "finish_reason"])
def test_a_response_cut_off_at_max_tokens_is_an_error(finish_key):
    run = imported({"case": "w", **generated([{"text": "Paris is"}], finish_key, "MAX_TOKENS")})
    assert run["error"] == (
        f"the response was cut off at the token limit ({finish_key} MAX_TOKENS)"
    )
    assert run["final_text"] == "Paris is"


def test_a_candidate_or_a_response_in_a_contents_list_reads_as_its_content():
    contents = example()["contents"]  # user, the calls, their responses, the answer
    calls = generated(contents[1]["parts"])["candidates"][0]
    answer = generated(contents[3]["parts"])
    line = {**example(), "contents": [contents[0], calls, contents[2], answer]}
    assert imported(line) == imported(example())


def test_a_contents_list_whose_last_model_content_was_cut_off_is_an_error():
    contents = example()["contents"]
    cut = generated([{"text": "Paris is"}], "finishReason", "MAX_TOKENS")
    expected = "the response was cut off at the token limit (finishReason MAX_TOKENS)"
    for last in (  # the candidate in the list, the response in the list, the content itself
        cut["candidates"][0],
        cut,
        {**model({"text": "Paris is"}), "finishReason": "MAX_TOKENS"},
    ):
        run = imported({"case": "w", "contents": [*contents[:-1], last]})
        assert (run["error"], run["final_text"]) == (expected, "Paris is")
    # A cut-off turn the run went on from is not the run's end.
    went_on = [contents[0], generated(contents[1]["parts"], finish="MAX_TOKENS"), *contents[2:]]
    assert imported({"case": "w", "contents": went_on}).get("error") is None


def test_a_problem_inside_a_candidate_in_a_contents_list_is_named_by_its_path():
    held = generated("x")
    with pytest.raises(InvalidInput) as caught:
        imported({"case": "w", "contents": [user({"text": "Hi"}), held]})
    assert caught.value.problems[0].path == "contents[1].candidates[0].content.parts"


def test_a_response_without_candidates_is_a_problem_by_path():
    with pytest.raises(InvalidInput) as caught:
        imported({"case": "w", "candidates": []})
    assert caught.value.problems[0].path == "candidates"
    with pytest.raises(InvalidInput) as caught:
        imported({"case": "w", "candidates": [{"content": {"parts": "x"}}]})
    assert caught.value.problems[0].path == "candidates[0].content.parts"
