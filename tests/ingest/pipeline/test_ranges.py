"""Reading a file in ranges (docs/pipeline.md#ranges): blocks cut where lines start, ranges
that never split a line, and the same runs, lines, trials and invalid lines as reading the
file whole, however the ranges fall and however often one is read."""

from __future__ import annotations

import gzip
from datetime import timedelta

import pytest
from django.db import connection
from django.test import TestCase
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from scoring.ingest import chunks, conductor, reading, tasks, uploads
from scoring.ingest.conductor import Work
from scoring.ingest.pipeline import resume_stalled
from scoring.models import ReadRange, Status, Submission, UploadChunk

from .conftest import assert_consistent, jsonl, upload

pytestmark = pytest.mark.django_db

GREETING = {"case": "greeting", "batches": [], "final_text": "Hello! How can I help?"}


def greeting(n: int, **fields) -> dict:
    return {**GREETING, "final_text": f"Hello {n}", **fields}


FILES = {
    "trials given": jsonl(greeting(n, trial=n) for n in range(60)),
    "trials numbered": jsonl(greeting(n) for n in range(60)),
    "mixed, with repeats": jsonl(
        greeting(n, trial=n % 7) if n % 3 else greeting(n) for n in range(60)
    ),
    "CRLF, blank lines, junk, unknown cases": b"\r\n".join(
        [b"", *(jsonl([greeting(n)]).strip() for n in range(30)), b"", b"not json", b"{}"]
        + [jsonl([{**greeting(n), "case": f"nope-{n % 3}"}]).strip() for n in range(20)]
    ),
    "a line longer than a range, none at the end": jsonl(greeting(n) for n in range(20))
    + jsonl([greeting(99, final_text="x" * 3000)])
    + jsonl(greeting(n) for n in range(20)).rstrip(b"\n"),
}


@pytest.fixture
def small_ranges(monkeypatch):
    """Blocks of 256 bytes and ranges of 1 KB: a file of a few KB is read in several."""
    monkeypatch.setattr(uploads, "BLOCK_BYTES", 256)
    monkeypatch.setattr(conductor, "RANGE_BYTES", 1024)


@pytest.fixture
def sent_ranges(monkeypatch, settings) -> list[tuple]:
    """The range tasks an upload sends, held here for the test to run (scoring chunks of 8
    runs): ``monkeypatch.undo()`` sends them as before."""
    settings.CASEBOOK_CHUNK_RUNS = 8
    sent = _Held(monkeypatch)
    monkeypatch.setattr(tasks, "ingest_range", sent)
    return sent


class _Held(list):
    """The range task, its sending held: what it was sent with is kept, until released."""

    def __init__(self, monkeypatch):
        super().__init__()
        self.monkeypatch = monkeypatch
        self.task = tasks.ingest_range

    def delay_on_commit(self, *args) -> None:
        self.append(args)

    def release(self) -> None:
        """Send the range tasks from now on (the sweep's, say)."""
        self.monkeypatch.setattr(tasks, "ingest_range", self.task)


def read_range(submission_id: int, generation: int, index: int, *, take_over=False) -> None:
    """What a range's task does (``scoring.ingest.tasks.ingest_range``): claim the range,
    read it, sending the chunks it leaves, and settle the ranges once all are read."""
    span = conductor.claim_range(submission_id, generation, index, take_over=take_over)
    if span is not None:
        for chunk in reading.read_range(submission_id, generation, span):
            tasks.send(Work(submission_id, generation, chunks=(chunk,)))
    conductor.settle(submission_id, generation)


def read(submission) -> dict:
    """What reading left: the runs in file order (without their seq), and the invalid lines."""
    submission.refresh_from_db()
    runs = submission.runs.order_by("seq").values_list("line", "case_key", "trial", "document")
    return {
        "status": submission.status,
        "runs": list(runs),
        "invalid": sorted(submission.invalid_lines.values_list("line", "reason")),
        "counts": (submission.stored_runs, submission.total, submission.invalid),
        "unknown": submission.unknown_cases,
        "passed": submission.passed,
    }


@pytest.mark.parametrize("compress", [False, True], ids=["plain", "gzip"])
@pytest.mark.parametrize("name", list(FILES))
def test_a_file_read_in_ranges_gives_what_it_gives_read_whole(
    demo_suite, monkeypatch, settings, name, compress
):
    settings.CASEBOOK_CHUNK_RUNS = 8
    settings.CASEBOOK_MAX_STORED_INVALID_LINES = 2
    data = gzip.compress(FILES[name]) if compress else FILES[name]
    whole = upload(demo_suite, data)
    assert whole.read_ranges.count() == 1

    monkeypatch.setattr(uploads, "BLOCK_BYTES", 256)
    monkeypatch.setattr(conductor, "RANGE_BYTES", 1024)
    apart = upload(demo_suite, data)

    assert apart.read_ranges.count() > 2
    assert read(apart) == read(whole)
    assert read(whole)["runs"]
    assert_consistent(apart)


def test_blocks_are_cut_after_a_newline_and_ranges_start_where_a_line_does(
    demo_suite, small_ranges
):
    data = FILES["a line longer than a range, none at the end"]
    submission = upload(demo_suite, data)

    blocks = list(UploadChunk.objects.filter(submission=submission).order_by("index"))
    assert b"".join(gzip.decompress(bytes(b.data)) for b in blocks) == data
    for block in blocks:
        before = data[: block.offset]
        assert block.lines_before == before.count(b"\n")
        assert block.starts_line == (not before or before.endswith(b"\n"))
    assert not all(b.starts_line for b in blocks)  # the long line spans blocks
    starts = {b.index: b for b in blocks}
    for span in ReadRange.objects.filter(submission=submission):
        assert starts[span.first_chunk].starts_line
        assert span.first_line == starts[span.first_chunk].lines_before + 1


def test_a_multi_member_gzip_upload_is_read_in_ranges(demo_suite, small_ranges):
    data = FILES["trials numbered"]
    members = gzip.compress(data[:1000]) + gzip.compress(data[1000:])
    submission = upload(demo_suite, members)

    assert submission.read_ranges.count() > 2
    assert [run[0] for run in read(submission)["runs"]] == list(range(1, 61))


def test_a_range_read_twice_or_after_a_lost_attempt_changes_nothing(
    demo_suite, small_ranges, sent_ranges, monkeypatch, settings
):
    data = FILES["mixed, with repeats"]
    with TestCase.captureOnCommitCallbacks(execute=True):
        submission = upload(demo_suite, data)
    assert len(sent_ranges) > 2
    first, *rest = sent_ranges
    with TestCase.captureOnCommitCallbacks(execute=True):
        read_range(*first)
        stored = list(submission.runs.values_list("seq", "line", "trial"))
        read_range(*first)  # delivered twice: it is read, nothing to do
        assert list(submission.runs.values_list("seq", "line", "trial")) == stored
        # A lost attempt at the next one: it had stored part of its runs, then stalled.
        read_range(*rest[0])
        stale = timezone.now() - timedelta(seconds=settings.CASEBOOK_STALL_SECONDS + 1)
        ReadRange.objects.filter(submission=submission, index=1).update(done=False, heartbeat=stale)
        for args in rest:
            read_range(*args)

    monkeypatch.undo()
    whole = upload(demo_suite, data)  # no small ranges now: read in one
    assert read(submission) == read(whole)
    assert read(submission)["status"] == "done"


def test_ranges_whose_tasks_were_lost_are_sent_again_by_the_sweep(
    demo_suite, small_ranges, sent_ranges, monkeypatch, settings
):
    data = FILES["trials numbered"]
    submission = upload(demo_suite, data)  # planned; the broker then lost the tasks
    with monkeypatch.context() as lost:  # one was read, its worker lost before scoring it
        lost.setattr(reading, "score_runs", lambda *args: None)
        read_range(*sent_ranges[1])
    assert submission.read_ranges.filter(done=True).count() == 1
    stale = timezone.now() - timedelta(seconds=settings.CASEBOOK_STALL_SECONDS + 1)
    Submission.objects.filter(pk=submission.pk).update(heartbeat=stale)

    sent_ranges.release()
    with TestCase.captureOnCommitCallbacks(execute=True):
        assert resume_stalled() == [submission.pk]
    submission.refresh_from_db()
    assert submission.status == "scoring"  # read; the lost chunks wait for the next sweep
    Submission.objects.filter(pk=submission.pk).update(heartbeat=stale)
    with TestCase.captureOnCommitCallbacks(execute=True):
        assert resume_stalled() == [submission.pk]

    monkeypatch.undo()
    whole = upload(demo_suite, data)
    assert read(submission) == read(whole)
    assert read(submission)["status"] == "done"
    assert_consistent(submission)


@pytest.mark.parametrize("name", ["trials numbered", "mixed, with repeats"])
def test_chunks_scored_before_the_ranges_are_settled_are_corrected_by_settling(
    demo_suite, small_ranges, sent_ranges, monkeypatch, name
):
    data = FILES[name]
    with TestCase.captureOnCommitCallbacks(execute=True):
        submission = upload(demo_suite, data)
    # The last range first: every chunk but the first range's is scored, with the trials
    # its range gave, before the first range is read and the ranges settled.
    for args in reversed(sent_ranges):
        with TestCase.captureOnCommitCallbacks(execute=True):
            read_range(*args)

    monkeypatch.undo()
    whole = upload(demo_suite, data)
    assert read(submission) == read(whole)
    assert_consistent(submission)


@pytest.mark.parametrize("name", ["trials numbered", "mixed, with repeats"])
def test_a_chunk_being_scored_while_the_ranges_are_settled_writes_what_settling_left(
    demo_suite, small_ranges, sent_ranges, monkeypatch, name
):
    scoring = {}  # each chunk the ranges' readers wrote, with its runs' reports

    def held(submission_id, generation, indexes, read):
        scoring[indexes[0]] = read

    monkeypatch.setattr(reading, "score_runs", held)
    data = FILES[name]
    with TestCase.captureOnCommitCallbacks(execute=True):
        submission = upload(demo_suite, data)
    first, *rest = sent_ranges
    for args in rest:
        read_range(*args)
    # The runs of every chunk were scored as they were read; the ranges settle now, before
    # any of those reports is written.
    read_range(*first)
    submission.refresh_from_db()
    assert submission.ingest_finished
    for index, reports in scoring.items():
        chunks.score_runs(submission.pk, submission.generation, [index], reports)

    monkeypatch.undo()
    whole = upload(demo_suite, data)
    assert read(submission) == read(whole)
    assert_consistent(submission)


def test_a_range_s_reader_scores_its_chunks_from_the_runs_it_parsed(
    demo_suite, small_ranges, sent_ranges
):
    with TestCase.captureOnCommitCallbacks(execute=True):
        submission = upload(demo_suite, FILES["trials given"])  # settling reads no run back
    with (
        CaptureQueriesContext(connection) as queries,
        TestCase.captureOnCommitCallbacks(execute=True) as sent,
    ):
        for args in sent_ranges:
            read_range(*args)

    submission.refresh_from_db()
    assert (submission.status, submission.scored) == (Status.DONE, submission.total)
    assert len(sent_ranges) > 2
    assert not sent  # no score_chunk task: each range's own task scored its chunks
    run_columns = [q["sql"] for q in queries if q["sql"].startswith('SELECT "scoring_run"')]
    assert run_columns
    assert not [sql for sql in run_columns if '"document"' in sql]
    assert_consistent(submission)


def test_a_lost_attempt_writing_after_the_next_one_took_over_stops_quietly(
    demo_suite, small_ranges, sent_ranges, monkeypatch, settings
):
    data = FILES["trials given"]
    with TestCase.captureOnCommitCallbacks(execute=True):
        submission = upload(demo_suite, data)
    first, second, *rest = sent_ranges
    write = reading._Batch._write

    def overtaken(batch, **kwargs):  # the first attempt, about to write its runs
        monkeypatch.setattr(reading._Batch, "_write", write)
        read_range(*second, take_over=True)  # the next one reads them all first
        return write(batch, **kwargs)  # the same seq: it finds itself superseded

    monkeypatch.setattr(reading._Batch, "_write", overtaken)
    with TestCase.captureOnCommitCallbacks(execute=True):
        read_range(*second)
        for args in [first, *rest]:
            read_range(*args)

    assert ReadRange.objects.get(submission=submission, index=1).attempt == 2
    monkeypatch.undo()
    whole = upload(demo_suite, data)
    assert read(submission) == read(whole)
    assert_consistent(submission)
