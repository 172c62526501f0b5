"""Inspect AI ``.eval`` archives (zip files of zstd-compressed JSON), read as they are.

``tests/fixtures/inspect/tools.eval`` and ``tools.json`` were written by Inspect AI itself
(``produce.py`` beside them says how, and what its mock model was told to do); the other
archives here are made in the tests, to break the rules an archive must keep."""

import io
import json
import struct
import zipfile
import zlib
from decimal import Decimal
from pathlib import Path
from typing import NamedTuple

import pytest
import zstandard

from scoring.importers import inspect_ai
from scoring.runfiles.reader import SAMPLE, read_run_lines

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "inspect"
ANSWER = "Paris is 18°C; Tokyo is unavailable right now."

# What produce.py told the mock model to do, per sample: the batches of calls (name,
# arguments, result, failed), the final text and the error.
EXPECTED = {
    "weather": (
        [
            [
                ("get_weather", {"city": "Paris"}, "18°C, clear", False),
                ("get_weather", {"city": "Tokyo"}, "unknown: the weather service timed out", True),
            ]
        ],
        ANSWER,
        None,
    ),
    "delete": (
        [
            [("file_exists", {"path": "notes.txt"}, "True", False)],
            [("delete_file", {"path": "notes.txt"}, "deleted notes.txt", False)],
        ],
        "Deleted notes.txt.",
        None,
    ),
    "crash": ([[("explode", {}, None, False)]], "", "RuntimeError('the tool crashed')"),
}


def runs_of(path_or_bytes, **options):
    if isinstance(path_or_bytes, Path):
        with path_or_bytes.open("rb") as file:
            return list(read_run_lines(file, **options))
    return list(read_run_lines(io.BytesIO(path_or_bytes), **options))


def as_expected(run):
    batches = [[(c.name, dict(c.arguments), c.result, c.is_error) for c in b] for b in run.batches]
    return batches, run.final_text, run.error


@pytest.mark.parametrize("name", ["tools.eval", "tools.json"])
def test_inspects_own_logs_give_each_sample_and_epoch_as_the_model_was_told(name):
    items = runs_of(FIXTURES / name)
    assert [i.problems for i in items] == [()] * 6
    assert {i.unit for i in items} == {SAMPLE}
    runs = {(i.run.case, i.run.trial): i.run for i in items}
    assert sorted(runs) == sorted((case, trial) for case in EXPECTED for trial in (0, 1))
    for (case, trial), run in runs.items():
        assert as_expected(run) == EXPECTED[case], (case, trial)
        assert run.meta == {"model": "mockllm/model", "epoch": trial + 1}


def test_the_archive_and_the_json_log_of_one_eval_read_the_same():
    def canonical(name):
        runs = [i.canonical for i in runs_of(FIXTURES / name)]
        for run in runs:  # the two logs are of two evals: the same but for their times
            assert run["usage"].pop("duration_ms") > 0
        return sorted(runs, key=json.dumps)

    assert canonical("tools.eval") == canonical("tools.json")


def test_an_archive_read_from_a_stream_that_cannot_seek_is_copied_aside_first():
    data = (FIXTURES / "tools.eval").read_bytes()
    lines = io.BytesIO(data).readlines()  # a list of byte lines: no seek
    items = list(read_run_lines(lines))
    assert sorted(i.run.case for i in items) == sorted(list(EXPECTED) * 2)


def test_the_case_can_come_from_another_field_of_the_sample():
    items = runs_of(FIXTURES / "tools.eval", case_field="input")
    assert sorted({i.run.case for i in items}) == [
        "Delete notes.txt if it is there.",
        "Press the red button.",
        "Weather in Paris and Tokyo?",
    ]


# --- archives made here ----------------------------------------------------------------------


def sample(sample_id="a", epoch=1) -> dict:
    return {
        "id": sample_id,
        "epoch": epoch,
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "hello", "tool_calls": None},
        ],
        "events": [{"event": "sample_init"}],
    }


class Compressed(NamedTuple):
    """An entry given as its zstd bytes, with the size and checksum of what they expand to."""

    zstd: bytes
    size: int
    crc: int


def compressed(data: bytes) -> Compressed:
    return Compressed(zstandard.ZstdCompressor().compress(data), len(data), zlib.crc32(data))


def archive(entries: dict, *, method=93, declared: dict | None = None) -> bytes:
    """A zip of ``entries`` (name → bytes, or ``Compressed``), compressed with ``method``
    (93: zstd, as Inspect writes them); ``declared`` overrides the uncompressed size an
    entry declares."""
    declared = declared or {}
    if method == 93:
        entries = {
            name: data if isinstance(data, Compressed) else compressed(data)
            for name, data in entries.items()
        }
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED) as zf:
        for name, data in entries.items():
            zf.writestr(name, data.zstd if method == 93 else data)
    if method != 93:
        return out.getvalue()
    # Stored as their zstd bytes; now say they are zstd, with the sizes and checksums of
    # what they expand to, in the local headers and the central directory alike.
    raw = bytearray(out.getvalue())
    with zipfile.ZipFile(io.BytesIO(bytes(raw))) as zf:
        infos = zf.infolist()
    central = raw.index(b"PK\x01\x02")
    for info in infos:
        entry = entries[info.filename]
        size = declared.get(info.filename, entry.size)
        local = info.header_offset
        struct.pack_into("<H", raw, local + 8, 93)
        struct.pack_into("<L", raw, local + 14, entry.crc)
        struct.pack_into("<L", raw, local + 22, size)
        at = raw.index(b"PK\x01\x02", central)
        struct.pack_into("<H", raw, at + 10, 93)
        struct.pack_into("<L", raw, at + 16, entry.crc)
        struct.pack_into("<L", raw, at + 24, size)
        name_length, extra_length, comment_length = struct.unpack_from("<3H", raw, at + 28)
        central = at + 46 + name_length + extra_length + comment_length
    return bytes(raw)


def log_entries(*samples) -> dict:
    entries = {"header.json": json.dumps({"eval": {"model": "openai/gpt-4o"}}).encode()}
    for s in samples:
        entries[f"samples/{s['id']}_epoch_{s['epoch']}.json"] = json.dumps(s).encode()
    return entries


def test_a_made_archive_reads_with_the_model_from_its_header():
    items = runs_of(archive(log_entries(sample("a"), sample("b", epoch=2))))
    assert [(i.run.case, i.run.trial, i.run.meta["model"]) for i in items] == [
        ("a", 0, "openai/gpt-4o"),
        ("b", 1, "openai/gpt-4o"),
    ]


def test_deflated_archives_read_too():
    items = runs_of(archive(log_entries(sample("a")), method=zipfile.ZIP_STORED))
    assert [i.run.case for i in items] == ["a"]


def test_a_running_eval_names_its_model_in_the_journal():
    entries = log_entries(sample("a"))
    entries["_journal/start.json"] = entries.pop("header.json")
    (item,) = runs_of(archive(entries))
    assert item.run.meta["model"] == "openai/gpt-4o"


def test_an_entry_that_expands_past_what_it_declares_is_refused_and_the_others_read():
    entries = log_entries(sample("a"), sample("b"))
    (first, second) = runs_of(archive(entries, declared={"samples/a_epoch_1.json": 100}))
    assert str(first.problems[0]) == (
        "samples[0]: samples/a_epoch_1.json: holds more than the 100 bytes it declares"
    )
    assert second.run.case == "b"


def test_an_entry_that_gives_less_than_it_declares_is_refused():
    entries = log_entries(sample("a"))
    size = len(entries["samples/a_epoch_1.json"]) + 10
    (item,) = runs_of(archive(entries, declared={"samples/a_epoch_1.json": size}))
    assert item.problems[0].message == (
        f"samples/a_epoch_1.json: ends before the {size:,} bytes it declares"
    )


def test_a_zip_bomb_stops_at_the_limit_on_uncompressed_bytes():
    """A gigabyte of spaces (valid JSON whitespace) compresses to a few kilobytes; the
    archive is refused once the limit is spent, without expanding the rest."""
    compress = zstandard.ZstdCompressor(level=1).compressobj()
    spaces = b" " * (1 << 20)
    parts = [compress.compress(b"{")] + [compress.compress(spaces) for _ in range(1024)]
    bomb = b"".join([*parts, compress.compress(b"}"), compress.flush()])
    entries = log_entries(sample("a"))
    entries["samples/b_epoch_1.json"] = Compressed(bomb, (1 << 30) + 2, 0)
    data = archive(entries)
    assert len(data) < 1 << 20
    items = runs_of(data, max_uncompressed_bytes=8 << 20)
    assert items[0].run.case == "a"
    assert items[-1].problems[0].message == (
        "samples/b_epoch_1.json: declares 1,073,741,826 bytes, past the archive's limit"
        f" ({8 << 20:,})"
    )
    lying = archive(entries, declared={"samples/b_epoch_1.json": 1000})
    items = runs_of(lying, max_uncompressed_bytes=8 << 20)
    assert items[-1].problems[0].message == (
        "samples/b_epoch_1.json: holds more than the 1,000 bytes it declares"
    )


def test_the_limit_counts_every_entry_read():
    entries = log_entries(*(sample(str(n)) for n in range(10)))
    size = len(entries["samples/0_epoch_1.json"])
    items = runs_of(archive(entries), max_uncompressed_bytes=100 + 3 * size)
    assert [i.run.case for i in items if i.run] == ["0", "1", "2"]
    assert "past the archive's limit" in str(items[3].problems[0])


def test_too_many_entries_are_refused_before_the_directory_is_read():
    entries = log_entries(*(sample(str(n)) for n in range(5)))
    items = list(inspect_ai.read_eval(io.BytesIO(archive(entries)), max_entries=6))
    assert len(items) == 5  # and the header
    with pytest.raises(inspect_ai.InvalidInput) as caught:
        list(inspect_ai.read_eval(io.BytesIO(archive(entries)), max_entries=5))
    assert caught.value.problems[0].message == "the archive holds 6 entries; the limit is 5"


def test_a_broken_entry_is_a_problem_of_its_sample_and_the_others_read():
    entries = log_entries(sample("a"), sample("b"))
    entries["samples/a_epoch_1.json"] = b'{"id": "a", "epoch": 1, "messages": ['
    first, second = runs_of(archive(entries))
    assert first.problems[0].path == "samples[0]"
    assert first.problems[0].message.startswith("samples/a_epoch_1.json: invalid JSON")
    assert second.run.case == "b"


def test_an_archive_with_no_samples_or_no_directory_is_one_problem():
    (item,) = runs_of(archive({"header.json": b'{"eval": {}}'}))
    assert str(item.problems[0]) == "samples/: this .eval log holds none (written header-only?)"
    (item,) = runs_of(b"PK\x03\x04\x14\x00\x00\x00\x08\x00binary\nmore binary")
    assert item.problems[0].message == (
        "not a readable zip archive: no end of central directory record"
    )


def test_numbers_in_logs_are_read_as_in_json_lines():
    """Integers exact, and a fraction a float only where the float is the written value."""
    s = sample("a")
    s["messages"][1] = {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "c", "function": "pay", "arguments": {"cents": 0, "amount": 0}}],
    }
    text = json.dumps(s).replace('"cents": 0', '"cents": 12345678901234567890123')
    text = text.replace('"amount": 0', '"amount": 0.10000000000000000555')
    entries = log_entries(sample("b"))
    entries["samples/a_epoch_1.json"] = text.encode()
    json_log = b'{\n"eval": {},\n"samples": [' + text.encode() + b"]}"
    for data in (archive(entries), json_log):
        (run,) = [i.run for i in runs_of(data) if i.run.case == "a"]
        call = run.batches[0][0]
        assert call.arguments["cents"] == 12345678901234567890123
        assert call.arguments["amount"] == Decimal("0.10000000000000000555")
