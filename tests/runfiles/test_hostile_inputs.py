"""Small files that once cost unbounded memory or time are answered within bounds, and say
what is wrong with them (docs/pipeline.md#limits).

Each is read as an upload is: ``read_run_lines`` with the default depth limit, then, when
nothing valid came of it, ``diagnose`` over the file's head. The memory asserted is what
Python allocated on the way (``tracemalloc``); the times have a wide margin for a slow
shared machine, and the costs they guard against were minutes.
"""

import gzip
import io
import json
import time
import tracemalloc
import zipfile

import pytest

from scoring.runfiles.diagnosis import HEAD_BYTES, diagnose
from scoring.runfiles.reader import read_run_lines
from tests.importers.examples import inspect_log, inspect_sample

RUN = json.dumps({"case": "c", "batches": []}).encode() + b"\n"
MiB = 1 << 20


def read_as_upload(data: bytes, **limits) -> tuple[list, str, int, float]:
    """The records read from ``data`` (gzip is opened as the upload's reader opens it), the
    diagnosis of its head, the peak memory Python held and the seconds it all took."""
    stream = gzip.GzipFile(fileobj=io.BytesIO(data)) if data[:2] == b"\x1f\x8b" else None
    started = time.perf_counter()
    tracemalloc.start()
    try:
        items = list(read_run_lines(stream or io.BufferedReader(io.BytesIO(data)), **limits))
        problems = [str(p) for item in items for p in item.problems][:5]
        head = gzip.GzipFile(fileobj=io.BytesIO(data)).read(HEAD_BYTES) if stream else data
        message = diagnose(head[:HEAD_BYTES], problems, invalid=len(items))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return items, message, peak, time.perf_counter() - started


@pytest.mark.parametrize(
    "data",
    [
        b"[" * 65536,  # an array
        b"{\n" + b'"samples": ' + b"[" * 65536,  # an Inspect log
        b'{"case": "c", "meta": ' + b"[" * 65536 + b"\n",  # a line
    ],
    ids=["array", "inspect-log", "line"],
)
def test_64_kib_of_brackets_is_refused_for_its_depth_in_bounded_memory(data):
    items, message, peak, seconds = read_as_upload(data)

    assert peak < 16 * MiB  # was 10.4 GB: the diagnosis built a prefix per level
    assert seconds < 10
    assert any("nested" in str(p) or "invalid JSON" in str(p) for p in items[0].problems)
    assert message  # and the file is diagnosed


def test_gzipped_blank_lines_are_counted_not_kept():
    blank = 2_000_000
    data = gzip.compress(b" \n" * blank + RUN)

    items, _, peak, seconds = read_as_upload(data)

    assert peak < 4 * MiB  # keeping them took 43 bytes a line (2.8 GB for 48 million)
    assert seconds < 30
    assert [(item.line, item.run.case) for item in items] == [(blank + 1, "c")]


def long_string_sample(length: int, sample_id: str = "long") -> dict:
    sample = inspect_sample(sample_id)
    sample["messages"][0]["content"] = "x" * length
    return sample


def eval_archive(*samples: dict, method=zipfile.ZIP_DEFLATED) -> bytes:
    """The samples as an ``.eval`` archive, its entries dated at a fixed time: a time of day
    whose DOS encoding holds the byte 0x0A would put a newline in the headers."""
    out = io.BytesIO()

    def write(name: str, text: str) -> None:
        info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
        archive.writestr(info, text, compress_type=method)

    with zipfile.ZipFile(out, "w", compression=method) as archive:
        write("header.json", json.dumps({"eval": {"model": "openai/gpt-4o"}}))
        for number, sample in enumerate(samples, start=1):
            write(f"samples/{sample['id']}_epoch_{number}.json", json.dumps(sample))
    return out.getvalue()


def documents_with(*samples: dict) -> dict[str, bytes]:
    """The samples as each kind of whole-file document: an array of runs, an Inspect log
    (pretty-printed, as Inspect writes it) and an ``.eval`` archive."""
    return {
        "array": json.dumps(samples).encode(),
        "inspect-log": json.dumps(inspect_log(*samples), indent=1).encode(),
        "eval": eval_archive(*samples),
    }


@pytest.mark.parametrize("kind", ["array", "inspect-log", "eval"])
def test_a_long_string_in_a_document_costs_time_linear_in_its_length(kind):
    data = documents_with(inspect_sample("a"), long_string_sample(48 * MiB))[kind]

    items, _, _, seconds = read_as_upload(data, max_line_bytes=16 * MiB)

    assert seconds < 15  # 64 MiB took 228 s: ijson lexed the string again at each chunk
    # An array's element has the limit of a line; an Inspect sample has none of its own.
    long_run = None if kind == "array" else "long"
    assert [item.run.case if item.run else None for item in items] == ["a", long_run]


@pytest.mark.parametrize("kind", ["array", "inspect-log", "eval"])
def test_a_string_past_four_times_the_limit_ends_the_document_with_a_message(kind):
    samples = (inspect_sample("a"), long_string_sample(8 * MiB), inspect_sample("b"))
    data = documents_with(*samples)[kind]

    items, _, peak, seconds = read_as_upload(data, max_line_bytes=MiB)

    assert seconds < 10
    assert peak < 64 * MiB  # the value is not kept past the limit
    assert items[0].run.case == "a"
    refused = "a single value is over 4,194,304 bytes, the limit"
    assert refused in str(items[1].problems[0])
    if kind == "eval":  # each sample is an entry of its own: the next one is read
        assert items[2].run.case == "b"


@pytest.mark.parametrize("kind", ["array", "inspect-log", "eval"])
def test_a_number_past_pythons_int_digits_is_a_problem_not_a_crash(kind):
    """ijson's parser fails on it inside a callback and reads on into a segmentation fault:
    the test process itself would crash."""
    huge = "<huge>"
    sample = inspect_sample("huge")
    sample["messages"][0]["content"] = [{"type": "text", "text": "x", "n": huge}]
    samples = (inspect_sample("a"), sample)
    if kind == "eval":
        out = io.BytesIO(eval_archive(inspect_sample("a")))
        with zipfile.ZipFile(out, "a") as archive:
            text = json.dumps(sample).replace(json.dumps(huge), "9" * 5000)
            archive.writestr("samples/huge_epoch_1.json", text)
        data = out.getvalue()
    else:
        data = documents_with(*samples)[kind].replace(json.dumps(huge).encode(), b"9" * 5000)

    items, _, _, _ = read_as_upload(data)

    assert items[0].run.case == "a"
    (problem,) = [str(p) for item in items for p in item.problems]
    assert "more than 4,300 digits in a row (a number too long to read)" in problem


def test_a_stored_archive_is_told_by_its_signature_wherever_its_first_newline_falls():
    sample = long_string_sample(2 * MiB)  # no newline: JSON escapes them
    data = eval_archive(sample, inspect_sample("b"), method=zipfile.ZIP_STORED)
    assert data.find(b"\n") == -1 or data.find(b"\n") > MiB

    items, _, _, _ = read_as_upload(data, max_line_bytes=MiB)

    assert [item.run.case for item in items] == ["long", "b"]


def test_a_record_an_importer_fails_on_is_that_records_problem_alone(monkeypatch, caplog):
    """Importers raise only ``InvalidInput`` (tests/importers/test_fuzz.py); were one to
    raise anything else, the rest of the file is still read and the bug logged."""
    from scoring.runfiles import reader

    real = reader.to_canonical

    def to_canonical(value, name):
        if value.get("case") == "bug":
            raise TypeError("unhashable type: 'list'")
        return real(value, name)

    monkeypatch.setattr(reader, "to_canonical", to_canonical)
    lines = RUN + json.dumps({"case": "bug", "batches": []}).encode() + b"\n" + RUN

    items = list(read_run_lines(io.BytesIO(lines)))

    assert [(item.line, item.run is not None) for item in items] == [
        (1, True),
        (2, False),
        (3, True),
    ]
    assert (
        str(items[1].problems[0]) == "line 2: Casebook could not read this record (a bug, logged)"
    )
    assert "unhashable type" in caplog.text


@pytest.mark.parametrize("buffer_size", [7, 64, 8192])
def test_runs_of_blank_lines_are_skipped_in_bulk_and_numbered_as_lines(buffer_size):
    blank = b"\n \n\t\r\n\n" * 50  # 200 lines of white space, across buffer boundaries
    data = RUN + blank + RUN + b"\n" + b" " * 50 + b"\n" + RUN
    stream = io.BufferedReader(io.BytesIO(data), buffer_size=buffer_size)

    items = list(read_run_lines(stream, max_line_bytes=40))

    # the line of 51 bytes of white space is past the limit of 40, whatever it holds
    assert [(item.line, item.run is not None) for item in items] == [
        (1, True),
        (202, True),
        (204, False),
        (205, True),
    ]
    as_list = list(read_run_lines(data.splitlines(keepends=True), max_line_bytes=40))
    assert [item.line for item in as_list] == [1, 202, 204, 205]
