"""Fewer garbage collections while a file is read or its runs scored (docs/pipeline.md#tasks).

Reading and scoring make and drop about a hundred small containers per run (the parsed
line, the canonical run, its calls, the report), and keep a chunk's worth of them alive
until it is written: with CPython's default thresholds that sets off a collection every
700 allocations and a full one, over every object of the worker (Django's included), every
few chunks. Almost none of it is cyclic garbage (reference counting frees it), so those
collections found nothing while taking about a third of the CPU of reading and scoring a
run. With a first generation of 50,000 objects, they are a few percent of it, and a
worker's memory stays as flat (``bench/ingest.py`` measures both).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

THRESHOLDS = (50_000, 20, 100)


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Collect garbage less often inside, as before after."""
    before = gc.get_threshold()
    gc.set_threshold(*THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*before)
