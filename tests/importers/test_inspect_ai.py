"""Inspect AI eval logs (docs/formats.md#inspect-ai-eval-logs): each sample is a run, read
from the log as a stream."""

import io
import json

import pytest

from scoring.importers import detect_format, inspect_ai, to_canonical
from scoring.matcher import InvalidInput, load_run
from scoring.runfiles.reader import MAX_DEPTH, SAMPLE, read_run_lines

from .examples import ANSWER, LINES, inspect_log
from .examples import inspect_sample as example


def converted(sample, model=None):
    canonical = inspect_ai.convert(sample, model=model)
    load_run(canonical)
    return canonical


def runs_of(data: bytes, **options):
    return list(read_run_lines(io.BytesIO(data), **options))


def test_a_sample_is_a_run_keyed_by_its_id_with_the_epoch_as_trial():
    run = converted(example("weather", epoch=2), model="openai/gpt-4o")
    assert (run["case"], run["trial"]) == ("weather", 1)
    assert run["meta"] == {"model": "openai/gpt-4o", "epoch": 2}
    assert run["batches"] == [
        [
            {
                "id": "call_a1",
                "name": "get_weather",
                "arguments": {"city": "Paris"},
                "result": "18C",
            },
            {
                "id": "call_b2",
                "name": "get_weather",
                "arguments": {"city": "Tokyo"},
                "result": "timeout: Command timed out",
                "is_error": True,
            },
        ]
    ]
    assert run["final_text"] == ANSWER
    assert run["error"] is None


def test_a_numeric_id_is_a_string_case_and_the_model_falls_back_to_the_samples_output():
    run = converted(example(17))
    assert run["case"] == "17"
    assert run["meta"] == {"model": "gpt-4o-2024-08-06", "epoch": 1}


def test_results_are_joined_by_tool_call_id_whatever_their_order():
    sample = example()
    sample["messages"][2], sample["messages"][3] = sample["messages"][3], sample["messages"][2]
    batch = converted(sample)["batches"][0]
    assert [(c["id"], c.get("is_error", False)) for c in batch] == [
        ("call_a1", False),
        ("call_b2", True),
    ]


def test_a_call_inspect_could_not_parse_has_no_arguments_and_its_text_when_kept():
    sample = example()
    calls = sample["messages"][1]["tool_calls"]
    calls[0].update(
        arguments={},
        parse_error=(
            'Error parsing the following tool call arguments:\n\n{"city": "Par\n\n'
            "Error details: Unterminated string starting at: line 1 column 10 (char 9)"
        ),
    )
    calls[1].update(arguments='{"city" Tokyo}', parse_error="Expecting ':' delimiter")
    batch = converted(sample)["batches"][0]
    assert [(c["arguments"], c["arguments_raw"]) for c in batch] == [
        (None, '{"city": "Par'),
        (None, '{"city" Tokyo}'),
    ]
    sample = example()
    sample["messages"][1]["tool_calls"][0]["parse_error"] = "Model produced invalid JSON"
    (first, _) = converted(sample)["batches"][0]
    assert (first["arguments"], first["arguments_raw"]) == (None, None)


@pytest.mark.parametrize(
    ("error", "limit", "expected"),
    [
        (
            {
                "message": "RuntimeError('sandbox died')",
                "traceback": "...",
                "traceback_ansi": "...",
            },
            None,
            "RuntimeError('sandbox died')",
        ),
        ("sandbox died", None, "sandbox died"),
        (None, {"type": "message", "limit": 50}, "message limit reached (50)"),
        (None, {"type": "time", "limit": 600.0}, "time limit reached (600)"),
    ],
)
def test_a_sample_that_ended_in_an_error_or_at_a_limit_is_a_run_error(error, limit, expected):
    sample = example()
    del sample["messages"][4]
    sample["output"] = {"model": "gpt-4o", "choices": [], "completion": ""}
    sample.update(error=error, limit=limit)
    run = converted(sample)
    assert run["error"] == expected
    assert run["final_text"] == ""  # the last assistant message, which only called tools
    assert len(run["batches"]) == 1


@pytest.mark.parametrize("stop_reason", ["max_tokens", "model_length"])
def test_a_final_output_cut_off_at_the_token_limit_is_a_run_error_after_the_samples_own(
    stop_reason,
):
    sample = example()
    final = sample["messages"][-1]
    sample["output"] = {
        "model": "gpt-4o",
        "choices": [{"message": final, "stop_reason": stop_reason}],
        "completion": "Paris is",
    }
    assert converted(sample)["error"] == (
        f"the response was cut off at the token limit (stop_reason {stop_reason})"
    )
    sample["limit"] = {"type": "token", "limit": 1000}
    assert converted(sample)["error"] == "token limit reached (1000)"
    sample["output"]["choices"][0]["stop_reason"] = "stop"
    del sample["limit"]
    assert converted(sample)["error"] is None


def test_a_run_with_no_tool_calls_takes_the_last_assistant_text_when_there_is_no_completion():
    sample = example()
    sample["messages"] = [
        {"role": "user", "content": "What is 6 * 7?"},
        {
            "role": "assistant",
            "content": [
                {"type": "reasoning", "reasoning": "6 * 7 = 42", "redacted": False},
                {"type": "text", "text": "42"},
            ],
        },
    ]
    sample["output"] = {"model": "gpt-4o", "choices": []}
    run = converted(sample)
    assert (run["batches"], run["final_text"]) == ([], "42")


def test_a_sample_on_a_line_of_its_own_is_detected_and_can_be_forced():
    assert detect_format(example()) == "inspect_ai"
    assert to_canonical(example(), "inspect_ai") == to_canonical(example())
    with_case = {**example(), "case": "weather-paris", "trial": 5}
    run = to_canonical(with_case)
    assert (run["case"], run["trial"]) == ("weather-paris", 5)


@pytest.mark.parametrize("other", sorted(set(LINES) - {"inspect_ai"}))
def test_lines_of_other_formats_are_not_taken_for_inspect(other):
    assert not inspect_ai.detect(LINES[other]())


@pytest.mark.parametrize(
    ("mutate", "path"),
    [
        (lambda s: s.pop("id"), "id"),
        (lambda s: s.__setitem__("epoch", 0), "epoch"),
        (
            lambda s: s["messages"][1]["tool_calls"][1].pop("function"),
            "messages[1].tool_calls[1].function",
        ),
        (lambda s: s["messages"][1].__setitem__("tool_calls", {}), "messages[1].tool_calls"),
        (lambda s: s["messages"].__setitem__(2, 3), "messages[2]"),
    ],
)
def test_malformed_samples_name_the_field(mutate, path):
    sample = example()
    mutate(sample)
    with pytest.raises(InvalidInput) as caught:
        inspect_ai.convert(sample)
    assert caught.value.problems[0].path == path


# --- whole logs ---------------------------------------------------------------------------------


def test_a_pretty_printed_log_file_gives_a_run_per_sample_numbered_by_position():
    log = inspect_log(example("weather", 1), example("weather", 2), example("chat", 1))
    items = runs_of(json.dumps(log, indent=2).encode())
    assert [(i.line, i.unit, i.run.case, i.run.trial) for i in items] == [
        (1, SAMPLE, "weather", 0),
        (2, SAMPLE, "weather", 1),
        (3, SAMPLE, "chat", 0),
    ]
    assert items[0].run.meta == {"model": "openai/gpt-4o", "epoch": 1}
    assert items[0].canonical["batches"][0][1]["is_error"] is True


def test_a_compact_log_on_one_line_reads_the_same():
    log = inspect_log(example("weather", 1), example("weather", 2))
    pretty = runs_of(json.dumps(log, indent=2).encode())
    compact = runs_of(json.dumps(log).encode() + b"\n")
    assert [i.canonical for i in compact] == [i.canonical for i in pretty]
    assert [i.unit for i in compact] == [SAMPLE, SAMPLE]


def test_a_log_is_recognised_from_an_iterable_of_lines_and_with_a_bom_too():
    data = b"\xef\xbb\xbf" + json.dumps(inspect_log(example()), indent=1).encode()
    items = list(read_run_lines(data.splitlines(keepends=True)))
    assert [(i.line, i.run.case) for i in items] == [(1, "weather")]
    assert runs_of(data, format_name="inspect_ai")[0].run.case == "weather"


def test_bad_samples_are_reported_by_their_path_and_the_others_are_still_read():
    broken = example("broken")
    broken["messages"][1]["tool_calls"][0]["function"] = 7
    log = inspect_log(example("a"), broken, example("a"), example("b"))
    items = runs_of(json.dumps(log, indent=2).encode())
    assert [(i.line, i.run and i.run.case) for i in items] == [
        (1, "a"),
        (2, None),
        (3, None),
        (4, "b"),
    ]
    assert [str(p) for p in items[1].problems] == [
        "samples[1].messages[1].tool_calls[0].function: must be a string, not number"
    ]
    assert [str(p) for p in items[2].problems] == [
        "samples[2].trial: case 'a' already has a run with trial 0"
    ]
    assert items[2].problem("case", "x").path == "samples[2].case"


def test_the_model_read_after_the_samples_falls_back_to_each_samples_own():
    log = inspect_log(example())
    reordered = {"samples": log.pop("samples"), **log}
    (item,) = runs_of(json.dumps(reordered, indent=2).encode())
    assert item.run.meta["model"] == "gpt-4o-2024-08-06"


def test_samples_are_streamed_one_at_a_time():
    """The first run comes out before the file is read to its end."""
    log = inspect_log(*(example(f"case-{n}") for n in range(400)))
    lines = json.dumps(log, indent=2).encode().splitlines(keepends=True)
    read = 0

    def source():
        nonlocal read
        for line in lines:
            read += 1
            yield line

    first = next(read_run_lines(source()))
    assert first.run.case == "case-0"
    assert read < len(lines) / 10


def test_the_parts_of_samples_a_run_does_not_need_are_not_built():
    sample = example()
    sample["events"] = [{"event": "model", "input": ["x" * 100]}] * 50
    sample["attachments"] = {"abc": "y" * 1000}
    log = inspect_log(sample)
    ((read, model),) = inspect_ai.read_log(io.BytesIO(json.dumps(log).encode()))
    assert model == "openai/gpt-4o"
    assert set(read) == {
        "id", "epoch", "messages", "output", "error", "limit", "model_usage", "total_time"
    }  # fmt: skip
    assert read["messages"] == sample["messages"]


def test_a_log_that_breaks_off_keeps_the_samples_before_and_says_where_it_broke():
    data = json.dumps(inspect_log(example("a"), example("b")), indent=2).encode()
    cut = data[: data.index(b'"id": "b"')]
    items = runs_of(cut)
    assert [(i.line, i.run and i.run.case) for i in items] == [(1, "a"), (2, None)]
    assert str(items[1].problems[0]) == "invalid JSON: parse error: premature EOF"


def test_a_document_that_is_not_a_log_is_one_problem():
    items = runs_of(json.dumps({"case": "a", "batches": []}, indent=2).encode())
    assert len(items) == 1
    assert "not an Inspect AI eval log" in items[0].problems[0].message
    header_only = runs_of(json.dumps({**inspect_log(), "samples": None}, indent=2).encode())
    assert str(header_only[0].problems[0]) == "samples: this log holds none (written header-only?)"


def test_a_log_nested_absurdly_deep_is_refused_quickly():
    bomb = b'{\n"samples": [{"messages": ' + b"[" * 100_000 + b"]" * 100_000 + b"}]}"
    (item,) = runs_of(bomb)
    assert item.problems[0].message == f"nested more than {MAX_DEPTH} levels deep"


def test_forcing_another_format_on_a_log_is_one_problem():
    (item,) = runs_of(
        json.dumps(inspect_log(example()), indent=2).encode(), format_name="anthropic"
    )
    assert item.problems[0].message == (
        "the file is an Inspect AI eval log, not JSON lines in the anthropic format"
    )


def test_a_json_lines_file_is_never_read_whole_to_tell_it_from_a_log():
    def endless():
        while True:
            yield b'{"case": "a", "batches": []}\n'

    first = next(read_run_lines(endless()))
    assert (first.line, first.unit, first.run.case) == (1, "line", "a")
