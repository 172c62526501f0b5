"""``score --prices FILE`` (docs/command-line.md#arguments-and-options, docs/formats.md#cost):
runs are costed at the file's prices first, then the catalogue's, on one process or on
several; a bad prices file is said, naming the file and the field, and nothing is scored."""

import json

import pytest

from scoring.runfiles.command import EXIT_INVALID
from tests.support.commands import run_score, write_lines

SUITE = {
    "schema": "casebook.suite/1",
    "name": "priced",
    "cases": [{"key": "a", "expectations": [{"type": "final_text_contains", "text": "ok"}]}],
}


def line(model: str) -> dict:
    completion = {
        "object": "chat.completion",
        "model": model,
        "choices": [{"message": {"role": "assistant", "content": "ok"}}],
        "usage": {"prompt_tokens": 2_000_000, "completion_tokens": 1_000_000,
                  "prompt_tokens_details": {"cached_tokens": 1_000_000}},
    }  # fmt: skip
    return {"case": "a", "messages": [{"role": "user", "content": "q"}, completion]}


@pytest.fixture
def files(tmp_path):
    suite = tmp_path / "suite.json"
    suite.write_text(json.dumps(SUITE))
    runs = write_lines(tmp_path / "runs.jsonl", *(line(m) for m in ("my-llama", "gpt-4o", "x9")))
    return tmp_path, suite, runs


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_runs_are_costed_at_the_files_prices_then_the_catalogues(files, jobs):
    tmp_path, suite, runs = files
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"my-llama": {"input": 1, "cached_input": 0.5, "output": 2}}))
    result = run_score(str(suite), str(runs), "--json", "--jobs", jobs, "--prices", str(prices))
    costs = [report["usage"]["cost_usd"] for report in json.loads(result.stdout)]
    assert costs[0] == pytest.approx(1 * 1 + 1 * 0.5 + 1 * 2)  # a million each, cached half
    assert costs[1] is not None  # gpt-4o: the catalogue's price
    assert costs[2] is None  # no price anywhere
    plain = run_score(str(suite), str(runs), "--json", "--jobs", jobs)
    assert json.loads(plain.stdout)[0]["usage"]["cost_usd"] is None


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ('{"my-llama": {"input": 1}}', "my-llama.output: must be US dollars per million tokens"),
        ('{"my-llama": {"input": -1, "output": 2}}', "my-llama.input: must be US dollars"),
        ('{"my-llama": {"input": "1", "output": 2}}', "my-llama.input: must be US dollars"),
        ('{"my-llama": {"input": 1, "output": 2, "cache": 1}}', "my-llama.cache: not a price"),
        ('{"my-llama": 3}', "my-llama: must be an object of input, cached_input, output"),
        ("[1]", "must be an object of model names to their prices"),
        ("{", "not JSON"),
    ],
)
def test_a_bad_prices_file_is_said_by_file_and_field_and_nothing_is_scored(files, written, said):
    tmp_path, suite, runs = files
    prices = tmp_path / "prices.json"
    prices.write_text(written)
    result = run_score(str(suite), str(runs), "--json", "--prices", str(prices))
    assert result.returncode == EXIT_INVALID
    assert result.stdout == ""
    assert result.stderr.startswith(f"{prices}: ")
    assert said in result.stderr


def test_a_prices_file_that_cannot_be_read_is_said(files):
    tmp_path, suite, runs = files
    result = run_score(str(suite), str(runs), "--prices", str(tmp_path / "missing.json"))
    assert result.returncode == EXIT_INVALID
    assert "missing.json: cannot read the prices file" in result.stderr
