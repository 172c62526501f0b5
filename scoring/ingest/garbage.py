"""Garbage collection while a file is read or its runs scored (docs/pipeline.md#tasks).

Reading and scoring make about a hundred small containers per run (the parsed line, the
canonical run, its calls, the report) and keep a chunk's worth of them alive until it is
written. Almost none of it is cyclic garbage (reference counting frees it), yet every
automatic collection walks all of them: with CPython's default thresholds that took about a
third of the CPU of reading and scoring a run, and with the worker's higher ones still a
tenth, for nothing found. So inside a task the collector runs only between chunks, once a
chunk's objects are dropped, over the little still alive; what cycles a chunk leaves are
freed then, and a worker's memory stays as flat (``bench/ingest.py`` measures both).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collected_between_chunks() -> Iterator[None]:
    """No automatic collection inside (``chunk_done`` collects); as before after."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def chunk_done() -> None:
    """Collect the cycles a chunk left, once its objects are dropped: the young generations
    hold little else then."""
    if not gc.isenabled():
        gc.collect(1)
