"""The garbage collector while a file is read and scored (docs/pipeline.md#tasks): no automatic
collection inside the tasks, one after each chunk the reader writes, over what the chunk left,
and collection as before once the task ends."""

from __future__ import annotations

import gc

import pytest

from scoring.ingest import conductor, uploads
from tests.support import tau_bench

from .conftest import assert_consistent, upload

pytestmark = pytest.mark.django_db


@pytest.fixture
def collections():
    """Each collection while the test runs: its generation, how many objects it examined,
    and whether automatic collection was on (off, it was asked for)."""
    seen: list[tuple[int, int, bool]] = []
    young: list[int] = []

    def note(phase: str, info: dict) -> None:
        if phase == "start":
            young.append(len(gc.get_objects(0)) + len(gc.get_objects(1)))
        else:
            seen.append((info["generation"], young[-1], gc.isenabled()))

    gc.callbacks.append(note)
    yield seen
    gc.callbacks.remove(note)


@pytest.mark.parametrize("ranges", [False, True], ids=["one range", "several ranges"])
def test_reading_collects_once_a_chunk_over_little_and_restores_collection(
    tau_suite, settings, monkeypatch, collections, ranges
):
    """Read as one range, the reader leaves each chunk to a scoring task; read in several,
    each range's reader scores each run as it reads it, writes each chunk with its reports,
    and drops them before collecting."""
    settings.CASEBOOK_CHUNK_RUNS = 25  # the 200 τ-bench runs, 16 kB each: eight chunks
    if ranges:
        monkeypatch.setattr(uploads, "BLOCK_BYTES", 64 << 10)
        monkeypatch.setattr(conductor, "RANGE_BYTES", 1 << 20)
    assert gc.isenabled()

    submission = upload(tau_suite, tau_bench.run_file())

    assert_consistent(submission)
    assert (submission.read_ranges.count() > 1) == ranges
    assert gc.isenabled()
    # Inside the tasks collection was off, but for one collection of the young generations
    # after each chunk written (the test's own code around them collects as it allocates).
    between_chunks = [(gen, examined) for gen, examined, automatic in collections if not automatic]
    assert {generation for generation, _ in between_chunks} == {1}
    assert len(between_chunks) >= 8
    # The chunk's runs were dropped first: what is left to examine is fewer than ten
    # containers for each of its 25 runs (held, they are twenty or more a run). A task's
    # first collection also examines what was young when it began.
    examined = sorted(examined for _, examined in between_chunks)
    assert examined[len(examined) // 2] < 250, between_chunks
