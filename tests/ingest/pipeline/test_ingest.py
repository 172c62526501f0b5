"""Reading an uploaded run file into runs (docs/pipeline.md#ingest), in this process: which
lines become runs, which are reported and why, and that nothing valid is dropped because a
neighbour was bad."""

from __future__ import annotations

import gzip
import io
import json
import time
import tracemalloc
from collections import Counter

import pytest
from django.test import TestCase

from cases import services
from scoring.importers import to_canonical
from scoring.ingest.pipeline import create_submission, rescore
from scoring.ingest.reading import COUNTED_BATCH
from scoring.ingest.uploads import UploadRefused, UploadTooLarge
from scoring.matcher import load_run, load_suite, score
from scoring.models import Result, Run, Status, Submission, UploadChunk
from tests.support import tau_bench

from .conftest import DEMO, DEMO_RUNS, assert_consistent, jsonl, upload

pytestmark = pytest.mark.django_db

GREETING = {"case": "greeting", "batches": [], "final_text": "Hello! How can I help?"}
DELETE = {
    "case": "delete-if-exists",
    "batches": [
        [{"id": "c1", "name": "file_exists", "arguments": {"path": "notes.txt"}, "result": True}],
        [{"id": "c2", "name": "delete_file", "arguments": {"path": "notes.txt"}}],
    ],
    "final_text": "Deleted notes.txt.",
}


def runs_of(submission) -> list[tuple]:
    return list(submission.runs.values_list("seq", "line", "case_key", "trial"))


def invalid_of(submission) -> dict[int, str]:
    return dict(submission.invalid_lines.values_list("line", "reason"))


def verdicts_of(submission) -> dict[tuple[str, int], str]:
    results = Result.objects.filter(submission=submission)
    return {
        (case, trial): verdict
        for case, trial, verdict in results.values_list("run__case_key", "run__trial", "verdict")
    }


# --- canonical and OpenAI-format files ----------------------------------------------------------


def test_canonical_runs_are_stored_in_file_order_and_each_scored_once(demo_suite, user):
    submission = upload(demo_suite, DEMO_RUNS, user, label="m-1", filename="runs.jsonl")

    assert_consistent(submission)
    assert (submission.label, submission.filename, submission.size) == (
        "m-1",
        "runs.jsonl",
        len(DEMO_RUNS),
    )
    assert submission.formats_seen == ["canonical"]
    assert runs_of(submission) == [
        (1, 1, "delete-if-exists", 0),
        (2, 2, "delete-if-exists", 1),
        (3, 3, "weather-two-cities", 0),
        (4, 4, "weather-two-cities", 1),
        (5, 5, "refund-order", 0),
        (6, 6, "refund-order", 1),
        (7, 7, "greeting", 0),
    ]
    # As `manage.py score` reports the same file.
    assert verdicts_of(submission) == {
        ("delete-if-exists", 0): "pass",
        ("delete-if-exists", 1): "fail",
        ("weather-two-cities", 0): "pass",
        ("weather-two-cities", 1): "fail",
        ("refund-order", 0): "pass",
        ("refund-order", 1): "fail",
        ("greeting", 0): "pass",
    }
    assert (submission.total, submission.passed, submission.failed, submission.errored) == (
        7,
        4,
        3,
        0,
    )
    assert submission.invalid == 0
    assert submission.unknown_cases == {}
    assert submission.ingest_finished is not None
    assert submission.scoring_finished is not None


def test_a_stored_run_keeps_its_unknown_fields_and_gets_its_trial(demo_suite):
    line = {**GREETING, "meta": {"model": "m-1"}, "note": {"kept": [1, 2]}}
    submission = upload(demo_suite, jsonl([line, line]))
    first, second = submission.runs.order_by("seq")
    assert first.document == {**line, "trial": 0}
    assert second.document["trial"] == 1
    assert first.final_text == "Hello! How can I help?"
    result = first.result
    assert result.report["case"] == "greeting"
    assert result.report["trial"] == 0
    assert result.report["verdict"] == "pass"


def test_the_200_tau_bench_runs_in_openai_chat_format(tau_suite, user):
    """Each stored result is the matcher's verdict on that very run (not a neighbour's)."""
    data = tau_bench.run_file()
    submission = upload(tau_suite, data, user)

    assert_consistent(submission)
    assert submission.formats_seen == ["openai_chat"]
    assert (submission.total, submission.passed, submission.failed, submission.errored) == (
        200,
        tau_bench.PASSED,
        tau_bench.FAILED,
        0,
    )
    trials = Counter(submission.runs.values_list("case_key", flat=True))
    assert len(trials) == 50
    assert set(trials.values()) == {4}

    suite = load_suite(submission.version.document)
    stored = {
        (run.line, run.case_key, run.trial): run.result.verdict
        for run in submission.runs.select_related("result")
    }
    expected = {}
    for number, record in enumerate(tau_bench.RECORDS, start=1):
        key = f"task-{record['task_id']}"
        report = score(suite.case(key), load_run(to_canonical(tau_bench.run_line(record))))
        expected[(number, key, record["trial"])] = report.verdict
    assert stored == expected


def test_tau_bench_runs_without_trials_are_numbered_per_task_in_file_order(tau_suite):
    records = sorted(tau_bench.RECORDS, key=lambda r: (r["task_id"], -r["trial"]))
    data = jsonl({"case": f"task-{r['task_id']}", "messages": r["traj"]} for r in records)
    submission = upload(tau_suite, data)

    assert_consistent(submission)
    numbered = {(run.case_key, run.trial): run.line for run in submission.runs.all()}
    # The file holds task 0's trials 3, 2, 1, 0: they are numbered 0, 1, 2, 3 as read.
    assert [numbered[("task-0", trial)] for trial in range(4)] == [1, 2, 3, 4]
    assert (submission.passed, submission.failed) == (tau_bench.PASSED, tau_bench.FAILED)


# --- invalid lines --------------------------------------------------------------------------------


def test_invalid_lines_are_reported_by_number_and_every_valid_neighbour_is_kept(demo_suite):
    lines = [
        GREETING,  # 1
        b"{not json",  # 2
        DELETE,  # 3
        b"   ",  # 4: blank, skipped
        [1, 2, 3],  # 5
        {"batches": []},  # 6: no case
        {"case": "greeting", "batches": "nope"},  # 7
        GREETING,  # 8
        {"case": "greeting", "trial": -1, "batches": []},  # 9
        {**DELETE, "batches": [[{"name": "file_exists", "arguments": "x"}]]},  # 10
        DELETE,  # 11
    ]
    submission = upload(demo_suite, jsonl(lines))

    assert_consistent(submission)
    assert runs_of(submission) == [
        (1, 1, "greeting", 0),
        (2, 3, "delete-if-exists", 0),
        (3, 8, "greeting", 1),
        (4, 11, "delete-if-exists", 1),
    ]
    invalid = invalid_of(submission)
    assert sorted(invalid) == [2, 5, 6, 7, 9, 10]
    assert submission.invalid == 6
    assert "JSON" in invalid[2]
    assert "object" in invalid[5]
    assert invalid[6].startswith("case")
    assert invalid[7].startswith("batches")
    assert invalid[9].startswith("trial")
    assert invalid[10].startswith("batches[0][0].arguments")
    assert all(reason.strip() for reason in invalid.values())


def test_a_file_of_nothing_but_invalid_lines_fails_with_one_diagnosis(demo_suite):
    submission = upload(demo_suite, b"oops\n[]\n\n{}\n")
    assert submission.status == Status.FAILED
    assert submission.error.startswith("This is not JSON lines: the first line is not JSON")
    assert "it starts 'oops'" in submission.error
    assert (submission.total, submission.scored, submission.stored_runs) == (0, 0, 0)
    assert sorted(invalid_of(submission)) == [1, 2, 4]


def test_runs_of_unknown_cases_are_listed_kept_and_scored_once_a_version_has_the_case(
    demo_suite, user
):
    mystery, other = {**GREETING, "case": "mystery"}, {**GREETING, "case": "other"}
    lines = [GREETING, mystery, GREETING, mystery, other, *[mystery] * 5]
    submission = upload(demo_suite, jsonl(lines))

    assert_consistent(submission)
    assert submission.unknown_cases == {
        "mystery": {"runs": 7, "lines": [2, 4, 6, 7, 8]},  # the first five lines listed
        "other": {"runs": 1, "lines": [5]},
    }
    assert (submission.stored_runs, submission.total, submission.scored) == (10, 2, 2)
    assert Run.objects.filter(submission=submission, case_key="mystery").count() == 7

    case = {"key": "mystery", "expectations": [{"type": "no_tool_calls"}]}
    version = services.save_case(demo_suite, case, user).version
    with TestCase.captureOnCommitCallbacks(execute=True):
        rescore(submission, version)
    submission.refresh_from_db()

    assert_consistent(submission)
    assert submission.unknown_cases == {"other": {"runs": 1, "lines": [5]}}
    assert (submission.total, submission.passed) == (9, 9)
    mystery = Result.objects.filter(submission=submission, run__case_key="mystery")
    assert sorted(mystery.values_list("run__trial", flat=True)) == list(range(7))


def test_a_file_whose_runs_are_all_of_unknown_cases_fails_saying_so_and_re_scores_later(
    demo_suite, user
):
    lines = [{**GREETING, "case": key} for key in ("greeting-2", "mystery", "greeting-2")]
    submission = upload(demo_suite, jsonl(lines))

    assert submission.status == Status.FAILED
    assert (submission.stored_runs, submission.total, submission.scored) == (3, 0, 0)
    suite_keys = ", ".join(repr(case["key"]) for case in DEMO["cases"][:3])
    assert submission.error == (
        "None of the 3 runs is of a case in version 1 of the suite: they name 2 cases"
        f" ('greeting-2', 'mystery'), and its cases are {suite_keys}, …. Re-score against a"
        " version that has these cases, or upload the runs with the suite's keys (the Case"
        " field, ?case_field=PATH, reads them from another field)."
    )
    assert submission.scoring_finished is None

    case = {"key": "mystery", "expectations": [{"type": "no_tool_calls"}]}
    version = services.save_case(demo_suite, case, user).version
    with TestCase.captureOnCommitCallbacks(execute=True):
        rescore(submission, version)
    assert_consistent(submission)  # done, its one known run scored
    assert (submission.total, submission.passed, submission.error) == (1, 1, "")


def test_a_suite_keyed_apart_from_the_runs_is_named_in_the_failure(tau_suite):
    # The suite's keys are task-0, task-1, ...: τ-bench's own file names its tasks 0, 1, ...
    submission = upload(tau_suite, tau_bench.RESULTS_FILE.read_bytes(), filename="results.json")
    assert submission.status == Status.FAILED
    assert submission.stored_runs == 200
    assert submission.error.startswith(
        "None of the 200 runs is of a case in version 1 of the suite: they name 50 cases"
        " ('0', '1', '2', …), and its cases are 'task-0', 'task-1', 'task-2', …; its keys are"
        " the runs' with 'task-' before them."
    )


# --- trials ---------------------------------------------------------------------------------------


def test_trials_absent_are_numbered_per_case_in_file_order(demo_suite):
    submission = upload(demo_suite, jsonl([GREETING, DELETE, GREETING, GREETING, DELETE]))
    assert runs_of(submission) == [
        (1, 1, "greeting", 0),
        (2, 2, "delete-if-exists", 0),
        (3, 3, "greeting", 1),
        (4, 4, "greeting", 2),
        (5, 5, "delete-if-exists", 1),
    ]
    assert_consistent(submission)


def test_a_second_run_with_the_same_explicit_trial_is_an_invalid_line_and_the_first_stands(
    demo_suite,
):
    first = {**GREETING, "trial": 5, "final_text": "Hi, first"}
    again = {**GREETING, "trial": 5, "final_text": "Hi, second"}
    other = {**GREETING, "trial": 6}
    submission = upload(demo_suite, jsonl([first, other, again, {**DELETE, "trial": 5}]))

    assert_consistent(submission)
    assert runs_of(submission) == [
        (1, 1, "greeting", 5),
        (2, 2, "greeting", 6),
        (3, 4, "delete-if-exists", 5),
    ]
    assert submission.runs.get(trial=5, case_key="greeting").final_text == "Hi, first"
    assert invalid_of(submission) == {3: "trial: case 'greeting' already has a run with trial 5"}


def test_a_trial_too_large_to_store_is_an_invalid_line(demo_suite):
    lines = [GREETING, {**GREETING, "trial": 10**12}, {**GREETING, "trial": 2**31 - 1}, DELETE]
    submission = upload(demo_suite, jsonl(lines))

    assert_consistent(submission)
    assert [run[1:] for run in runs_of(submission)] == [
        (1, "greeting", 0),
        (3, "greeting", 2**31 - 1),
        (4, "delete-if-exists", 0),
    ]
    assert list(invalid_of(submission)) == [2]
    assert invalid_of(submission)[2].startswith("trial")


def test_a_case_key_too_long_for_any_suite_is_an_invalid_line(demo_suite):
    key = "".join(f"{n:x}" for n in range(3000))  # 10,000+ characters that do not compress
    submission = upload(demo_suite, jsonl([GREETING, {**GREETING, "case": key}, GREETING]))

    assert_consistent(submission)
    assert [run[1] for run in runs_of(submission)] == [1, 3]
    assert list(invalid_of(submission)) == [2]
    assert invalid_of(submission)[2].startswith("case")
    assert submission.unknown_cases == {}


# --- gzip ---------------------------------------------------------------------------------------


def test_a_gzip_upload_is_read_as_the_file_it_holds(demo_suite):
    plain = upload(demo_suite, DEMO_RUNS)
    packed = upload(demo_suite, gzip.compress(DEMO_RUNS), filename="runs.jsonl.gz")

    assert_consistent(packed)
    assert packed.size == len(gzip.compress(DEMO_RUNS))
    assert runs_of(packed) == runs_of(plain)
    assert verdicts_of(packed) == verdicts_of(plain)


def test_a_gzip_upload_of_tau_bench_runs_over_several_stored_chunks(tau_suite):
    """Compressed, the 200 runs still take several 1 MB pieces to store; reading them
    stores the file again in blocks, each starting where its bytes do."""
    data = tau_bench.run_file()
    packed = gzip.compress(data, compresslevel=0)
    submission = upload(tau_suite, packed)

    blocks = UploadChunk.objects.filter(submission=submission).order_by("index")
    assert blocks[0].index == -(-len(packed) // 2**20) > 1  # after the pieces as they came
    assert b"".join(gzip.decompress(bytes(b.data)) for b in blocks) == data
    assert_consistent(submission)
    assert (submission.passed, submission.failed) == (tau_bench.PASSED, tau_bench.FAILED)


def test_gzip_members_with_zero_padding_between_them_are_read_as_one_file(demo_suite):
    """As gzip(1) reads them: concatenated members, padded with zero bytes (a tape's
    blocks), make one file."""
    halves = DEMO_RUNS.splitlines(keepends=True)
    middle = len(halves) // 2
    packed = (
        gzip.compress(b"".join(halves[:middle]))
        + b"\x00" * 7
        + gzip.compress(b"".join(halves[middle:]))
        + b"\x00" * 3
    )
    plain = upload(demo_suite, DEMO_RUNS)
    submission = upload(demo_suite, packed)

    assert_consistent(submission)
    assert runs_of(submission) == runs_of(plain)
    assert invalid_of(submission) == {}


def test_junk_after_the_gzip_members_is_reported_after_their_lines(demo_suite):
    submission = upload(demo_suite, gzip.compress(DEMO_RUNS) + b"junk")

    assert_consistent(submission)
    lines = DEMO_RUNS.count(b"\n")
    assert len(runs_of(submission)) == lines
    assert invalid_of(submission) == {
        lines + 1: "the gzip data is broken: Not a gzipped file (b'ju')"
    }


def test_broken_gzip_data_is_reported_after_the_lines_read_from_it(demo_suite):
    data = jsonl([{**GREETING, "final_text": f"Hello {n}"} for n in range(2000)])
    packed = gzip.compress(data)
    submission = upload(demo_suite, packed[: len(packed) // 2])

    assert_consistent(submission)
    lines = [run[1] for run in runs_of(submission)]
    assert 0 < len(lines) < 2000
    assert lines == list(range(1, len(lines) + 1))
    assert invalid_of(submission) == {
        len(lines) + 1: "the gzip data is broken: Compressed file ended before the "
        "end-of-stream marker was reached"
    }


# --- limits ---------------------------------------------------------------------------------------


def test_a_file_over_the_upload_limit_is_refused_and_nothing_is_kept(demo_suite, settings):
    settings.CASEBOOK_MAX_UPLOAD_BYTES = 3 * 2**20
    with pytest.raises(UploadTooLarge, match="over the 3 MB upload limit"):
        create_submission(demo_suite, None, io.BytesIO(b"x" * (3 * 2**20 + 1)))
    assert not Submission.objects.exists()
    assert not UploadChunk.objects.exists()

    at_the_limit = DEMO_RUNS + b" " * (3 * 2**20 - len(DEMO_RUNS))
    assert_consistent(upload(demo_suite, at_the_limit))


def test_an_empty_file_is_refused_and_nothing_is_kept(demo_suite):
    with pytest.raises(UploadRefused, match="empty"):
        create_submission(demo_suite, None, io.BytesIO(b""))
    assert not Submission.objects.exists()


def test_a_line_over_the_line_limit_is_invalid_and_its_neighbours_kept(demo_suite, settings):
    settings.CASEBOOK_MAX_LINE_BYTES = 500
    long = {**GREETING, "final_text": "Hello " * 100}
    submission = upload(demo_suite, jsonl([GREETING, long, DELETE]))

    assert_consistent(submission)
    assert [run[1] for run in runs_of(submission)] == [1, 3]
    size = len(json.dumps(long)) + 1  # with its newline
    assert invalid_of(submission) == {2: f"the line is {size:,} bytes; the limit is 500"}


def test_a_huge_line_is_skipped_as_it_streams_and_memory_stays_near_the_limit(demo_suite, settings):
    settings.CASEBOOK_MAX_LINE_BYTES = 1 << 20
    size = 48 << 20  # 48 times the limit, sent as 48 KB of gzip
    head = b'{"case": "greeting", "batches": [], "final_text": "'
    huge = head + b"a" * (size - len(head) - 3) + b'"}\n'
    data = gzip.compress(jsonl([GREETING]) + huge + jsonl([DELETE]))
    del huge

    tracemalloc.start()
    try:
        submission = upload(demo_suite, data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()

    assert peak < size / 4  # the limit and the upload's 1 MB buffers, never the line
    assert_consistent(submission)
    assert [run[1] for run in runs_of(submission)] == [1, 3]
    assert invalid_of(submission) == {2: f"the line is {size:,} bytes; the limit is 1,048,576"}


def test_past_the_stored_limit_invalid_lines_are_counted_not_stored(demo_suite, settings):
    settings.CASEBOOK_MAX_STORED_INVALID_LINES = 3
    junk = COUNTED_BATCH + 500  # the count is written as reading goes on, and at the end
    submission = upload(demo_suite, gzip.compress(b"1\n" * junk + jsonl([GREETING])))

    assert_consistent(submission)
    assert submission.invalid == junk
    assert sorted(invalid_of(submission)) == [1, 2, 3]
    assert [run[1] for run in runs_of(submission)] == [junk + 1]


def test_a_broken_gzip_past_the_stored_limit_still_says_why_reading_stopped(demo_suite, settings):
    settings.CASEBOOK_MAX_STORED_INVALID_LINES = 2
    data = gzip.compress(b"1\n" * 5 + jsonl([GREETING]) * 100)
    submission = upload(demo_suite, data[: len(data) // 2])
    assert submission.invalid == 6
    invalid = invalid_of(submission)
    assert sorted(invalid)[:2] == [1, 2]
    assert "the gzip data is broken" in invalid[max(invalid)]


def test_a_run_past_the_time_budget_is_scored_error_and_the_submission_finishes(
    demo_suite, settings
):
    settings.CASEBOOK_RUN_TIME_BUDGET_SECONDS = 0  # past it at the first predicate
    submission = upload(demo_suite, jsonl([GREETING, DELETE]))
    assert_consistent(submission)
    reports = Result.objects.filter(submission=submission).values_list("verdict", "report")
    assert [verdict for verdict, _ in reports] == ["error", "error"]
    assert all(report["error"].startswith("scoring took longer than 0 s") for _, report in reports)


def test_a_version_saved_before_the_pattern_limit_still_scores_to_an_error(team, user):
    long_literal = "(?i)" + "a" * 50_000  # 63 s against the final text below, unlimited
    document = {
        "schema": "casebook.suite/1",
        "name": "old",
        "cases": [{"key": "long", "expectations": [{"type": "final_text_matches", "regex": "a"}]}],
    }
    suite = services.create_suite(team, document, user)
    version = suite.latest_version  # as saved before the limit
    version.document["cases"][0]["expectations"][0]["regex"] = long_literal
    version.save()

    started = time.monotonic()
    submission = upload(suite, jsonl([{"case": "long", "batches": [], "final_text": "a" * 2**20}]))
    assert time.monotonic() - started < 10
    assert_consistent(submission)
    ((verdict, report),) = Result.objects.filter(submission=submission).values_list(
        "verdict", "report"
    )
    assert verdict == "error"
    assert "the pattern is 50,004 characters; the limit is 1,000" in report["error"]


def test_json_nested_too_deep_is_invalid_and_its_neighbours_kept(demo_suite, settings):
    settings.CASEBOOK_MAX_JSON_DEPTH = 10
    nested: object = "bottom"
    for _ in range(12):
        nested = {"x": nested}
    deep = {**GREETING, "meta": nested}
    shallow = {**GREETING, "meta": {"a": {"b": {"c": 1}}}}
    brackets = b"[" * 100_000 + b"]" * 100_000  # deeper than any JSON parser recurses
    submission = upload(demo_suite, jsonl([GREETING, deep, shallow, brackets, DELETE]))

    assert_consistent(submission)
    assert [run[1] for run in runs_of(submission)] == [1, 3, 5]
    invalid = invalid_of(submission)
    assert sorted(invalid) == [2, 4]
    assert invalid[2] == "the JSON is nested more than 10 levels deep"


def test_a_gzip_bomb_is_reported_and_what_was_read_is_kept(demo_suite, settings):
    settings.CASEBOOK_MAX_UNCOMPRESSED_BYTES = 3 * 2**20
    line = {**GREETING, "final_text": "Hello " + "padding " * 1250}  # about 10 kB
    data = jsonl([line] * 1000)  # 10 MB
    packed = gzip.compress(data)
    assert len(packed) < 100_000
    submission = upload(demo_suite, packed)

    assert_consistent(submission)
    lines = [run[1] for run in runs_of(submission)]
    assert lines == list(range(1, len(lines) + 1))
    fitting = 3 * 2**20 // len(jsonl([line]))
    assert fitting - 5 <= len(lines) <= fitting  # all that fits in 3 MB, to within a piece
    assert invalid_of(submission) == {
        len(lines) + 1: "the file expands to more than 3 MB when decompressed"
    }
