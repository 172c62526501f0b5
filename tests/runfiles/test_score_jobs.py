"""``manage.py score --jobs N``: a JSON-lines file scored on several processes gives exactly
what one process gives (reports in file order, problems by line, trials numbered across the
file, exit status), with a bounded number of batches in flight."""

import json
import os
import threading

import pytest

from scoring.runfiles import parallel
from scoring.runfiles.parallel import WorkerSettings, score_batches
from scoring.runfiles.reader import line_batches
from tests.support import tau_bench
from tests.support.commands import FAILING, PASSING, SUITE, run_score
from tests.support.otlp_fixtures import collector_lines

BATCHES = 3 * parallel.BATCH_LINES  # enough lines for several batches per worker


def mixed_lines() -> list[str]:
    """Every kind of line the command tells apart, spread over several batches."""
    chat = {
        "case": "weather",
        "messages": [
            {"role": "user", "content": "Weather in Paris?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "18°C"},
            {"role": "assistant", "content": "Paris: 18°C"},
        ],
    }
    kinds = [
        json.dumps(PASSING),  # trial numbered 0, 1, 2, … across the file
        json.dumps(FAILING),
        "",  # blank: skipped, but counted in line numbers
        '{"case": "weather", "batches": [',  # invalid JSON
        '{"case": "weather", "case": "chat", "batches": []}',  # duplicate key
        json.dumps({**PASSING, "case": "nowhere"}),  # unknown case
        json.dumps({**PASSING, "trial": 7}),  # explicit: the first stands, later ones refused
        json.dumps({"case": "chat", "batches": [], "final_text": "hi"}),
        json.dumps(chat),  # OpenAI Chat messages, detected
        json.dumps({"case": "weather", "batches": "none"}),  # invalid run
        json.dumps({**PASSING, "final_text": "x" * 3000}),  # past --max-line-bytes
    ]
    return [kinds[i % len(kinds)] for i in range(BATCHES)]


@pytest.fixture
def files(tmp_path):
    suite = tmp_path / "suite.json"
    suite.write_text(json.dumps(SUITE))
    runs = tmp_path / "runs.jsonl"
    runs.write_text("\ufeff" + "".join(line + "\n" for line in mixed_lines()))
    return suite, runs


@pytest.mark.parametrize("output", [["--json"], [], ["--junit", "JUNIT"]])
def test_several_jobs_give_exactly_what_one_gives(files, tmp_path, output):
    suite, runs = files
    results = {}
    for jobs in (1, 2, 3):
        args = [a.replace("JUNIT", str(tmp_path / f"{jobs}.xml")) for a in output]
        result = run_score(suite, runs, *args, "--jobs", jobs, "--max-line-bytes", 2000)
        junit = (tmp_path / f"{jobs}.xml").read_text() if output[:1] == ["--junit"] else ""
        # JUnit records each run's scoring time: equal up to those figures.
        junit = "".join(part.split('"', 1)[-1] for part in junit.split('time="'))
        results[jobs] = (result.returncode, result.stdout, result.stderr, junit)
    assert results[2] == results[1]
    assert results[3] == results[1]
    code, stdout, stderr, _ = results[1]
    assert code == 2
    problems = stderr.splitlines()
    assert any(problem.startswith(f"{runs}:4: invalid JSON: ") for problem in problems)
    assert f"{runs}:5: duplicate key 'case'" in problems
    assert f"{runs}:6: case: 'nowhere' is not in the suite" in problems
    assert f"{runs}:18: trial: case 'weather' already has a run with trial 7" in problems
    assert any(
        problem.startswith(f"{runs}:11: the line is 3,") and problem.endswith("limit is 2,000")
        for problem in problems
    )
    if output == ["--json"]:
        reports = json.loads(stdout)
        weather = [r["trial"] for r in reports if r["case"] == "weather"]
        assert weather[:5] == [0, 1, 7, 3, 4]  # by position in the file; 7 as given


def test_a_json_array_and_standard_input_are_read_in_one_process_the_same(files, tmp_path):
    suite, runs = files
    lines = [json.loads(line) for line in (json.dumps(PASSING), json.dumps(FAILING))] * 150
    array = tmp_path / "runs.json"
    array.write_text(json.dumps(lines, indent=2))
    one = run_score(suite, array, "--json", "--jobs", "1")
    two = run_score(suite, array, "--json", "--jobs", "2")
    assert (two.returncode, two.stdout, two.stderr) == (one.returncode, one.stdout, one.stderr)
    assert len(json.loads(one.stdout)) == len(lines)
    piped = run_score(suite, "-", "--json", "--jobs", "2", stdin=runs.read_text())
    from_file = run_score(suite, runs, "--json", "--jobs", "2")
    assert piped.stdout == from_file.stdout
    assert piped.stderr.replace("-:", f"{runs}:") == from_file.stderr


def test_tau_bench_messages_score_the_same_on_two_jobs(tmp_path):
    suite = tmp_path / "suite.json"
    suite.write_text(json.dumps(tau_bench.suite_document()))
    runs = tmp_path / "runs.jsonl"
    runs.write_bytes(tau_bench.run_file(copies=2))
    one = run_score(suite, runs, "--json", "--jobs", "1")
    two = run_score(suite, runs, "--json", "--jobs", "2")
    assert (two.returncode, two.stdout, two.stderr) == (one.returncode, one.stdout, one.stderr)
    verdicts = [r["verdict"] for r in json.loads(two.stdout)]
    assert verdicts.count("pass") == 2 * tau_bench.PASSED


def test_jobs_must_be_a_whole_number_of_at_least_one(files):
    result = run_score(*files, "--jobs", "0")
    assert result.returncode == 2
    assert "argument --jobs: must be a whole number ≥ 1, not '0'" in result.stderr


def test_only_a_few_batches_are_in_flight(files):
    """The file is read only a bounded number of batches ahead of the reports written."""
    suite, runs = files
    jobs = 2
    ahead = []
    read = 0
    with open(runs, "rb") as stream:
        batches = line_batches(stream, max_line_bytes=2000, batch_lines=8, batch_bytes=1 << 20)

        def counted():
            nonlocal read
            for batch in batches:
                read += 1
                yield batch

        settings = WorkerSettings(suite.read_bytes(), str(suite), None, None, 2000, 64, None)
        for scored in score_batches(counted(), jobs, settings):
            ahead.append(read - (scored.line - 1) // 8)  # batches read past this one's
    assert read == -(-BATCHES // 8)
    assert len(ahead) > BATCHES // 2
    assert max(ahead) <= jobs * parallel._IN_FLIGHT_PER_JOB


def test_a_named_pipe_is_read_in_one_process(files, tmp_path):
    """A stream that cannot seek back after its first line was looked at."""
    suite, runs = files
    pipe = tmp_path / "runs.pipe"
    os.mkfifo(pipe)
    writer = threading.Thread(target=lambda: pipe.write_bytes(runs.read_bytes()))
    writer.start()
    piped = run_score(suite, pipe, "--json", "--jobs", "2")
    writer.join()
    from_file = run_score(suite, runs, "--json", "--jobs", "2")
    assert piped.returncode == from_file.returncode == 2
    assert piped.stdout == from_file.stdout
    assert piped.stderr.replace(str(pipe), str(runs)) == from_file.stderr


def test_a_collector_file_is_read_in_one_process_to_regroup_its_traces(tmp_path):
    """Its traces may run over any lines: no batch of lines holds a trace for sure
    (docs/formats.md#collector-files)."""
    path = tmp_path / "otel.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in collector_lines("strands")))
    with open(path, "rb") as stream:
        assert line_batches(stream, max_line_bytes=None, batch_lines=8, batch_bytes=1 << 20) is None
        assert stream.tell() == 0
