"""Scoring a run file's records, in one process or on several (``manage.py score --jobs``).

Either way the records come out in file order as ``Scored``: a report, or the problems that
stop the record. On several cores the main process reads a JSON-lines file's raw lines in
batches (``reader.line_batches``) and workers, each holding the suite loaded once, parse,
convert, load and score them. Trial numbers depend on every earlier line, so the main
process gives them as it takes the batches back, in order (``TrialNumbering.trial``). At
most ``_IN_FLIGHT_PER_JOB`` batches per worker are out at once, each bounded in lines and
bytes, so memory stays flat in the file's size (docs/command-line.md#streaming-and---jobs).
"""

from __future__ import annotations

import gc
import time
from collections import deque
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing import Pool
from multiprocessing.pool import AsyncResult
from typing import Any, final

from scoring.environments import EnvironmentLimits, replayer_for
from scoring.importers.costs import CATALOGUE, Prices
from scoring.matcher import (
    InvalidInput,
    Problem,
    Report,
    Suite,
    TrialNumbering,
    load_suite,
    parse_suite_document,
    score,
)
from scoring.runfiles.reader import LINE, RawLine, RecordReader, RunLine, json_lines
from scoring.runfiles.writers import report_json

BATCH_LINES = 256
BATCH_BYTES = 1 << 20  # a batch ends at the line that takes it past this (or BATCH_LINES)
_IN_FLIGHT_PER_JOB = 2


@final  # so that a type() check tells it apart from a _Read
@dataclass(slots=True)
class Scored:
    """One record of a run file: its report (and the seconds scoring it took), or the
    problems that stop it. ``read`` tells whether reading it gave a run, even one of a case
    the suite does not have (``unknown_case``, that case's key). ``report`` is the report's
    JSON text when the workers were asked for it (``WorkerSettings.as_json``); ``verdict``
    is the report's verdict."""

    line: int
    problems: tuple[Problem, ...] = ()
    read: bool = True
    report: Report | bytes | None = None
    verdict: str | None = None
    seconds: float = 0.0
    unknown_case: str | None = None


def collect_cycles_less() -> None:
    """Collect cycles as Celery's workers do (``evalsite.celery``): each record is a few
    hundred small dicts and lists, nearly all freed by reference counting, and with the
    default thresholds the cyclic collector ran every few records, over everything alive.
    What is loaded by now (Django, the suite) is frozen out of its scans, and young
    collections run far less often; memory stays flat, as records are freed as they go."""
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)


@contextmanager
def collecting_cycles_less() -> Iterator[None]:
    """``collect_cycles_less`` until the block ends: the command may run inside another
    program (``call_command``, tests)."""
    thresholds = gc.get_threshold()
    collect_cycles_less()
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()


def score_records(
    records: Iterable[RunLine],
    suite: Suite,
    time_budget: float | None,
    limits: EnvironmentLimits | None = None,
) -> Iterator[Scored]:
    """Each record of ``records`` (numbered by their reader) scored in this process, the
    end-state expectations replayed under ``limits`` (not evaluated without)."""
    replayer = replayer_for(limits) if limits is not None else None
    for item in records:
        run = item.run
        if run is None:  # a record has its run or its problems
            yield Scored(item.line, item.problems, read=False)
            continue
        case = suite.case(run.case)
        if case is None:
            yield _of_unknown_case(item, run.case)
            continue
        started = time.perf_counter()
        report = score(case, run, time_budget=time_budget, replayer=replayer)
        seconds = time.perf_counter() - started
        yield Scored(item.line, report=report, verdict=report.verdict, seconds=seconds)


def score_batches(
    batches: Iterator[tuple[int, list[RawLine]]], jobs: int, settings: WorkerSettings
) -> Iterator[Scored]:
    """The records of a JSON-lines file's ``batches`` (``reader.line_batches``), scored by
    ``jobs`` worker processes and given back in file order."""
    numbering = TrialNumbering()
    with Pool(jobs, initializer=_start_worker, initargs=(settings,)) as pool:
        pending: deque[AsyncResult[list[Scored | _Read]]] = deque()
        for batch in batches:
            pending.append(pool.apply_async(_score_batch, batch))
            if len(pending) >= jobs * _IN_FLIGHT_PER_JOB:
                yield from _numbered(pending.popleft().get(), numbering)
        while pending:
            yield from _numbered(pending.popleft().get(), numbering)


@dataclass(frozen=True, slots=True)
class WorkerSettings:
    """What a worker needs to read and score lines as the command would."""

    suite_text: bytes
    suite_file: str
    format_name: str | None
    case_field: str | None
    max_line_bytes: int | None
    max_depth: int
    time_budget: float | None
    environment_limits: EnvironmentLimits | None = None
    # Reports come back as their JSON text (``writers.report_json``), for ``--json`` with
    # no baseline or JUnit: a ``Report`` costs the main process more to unpickle than
    # the text costs it to write, and the main process is the one that cannot be parallel.
    as_json: bool = False
    # What runs are costed at (docs/formats.md#cost): ``--prices``, then the catalogue.
    prices: Prices = CATALOGUE


# What a worker sends back for a record it read a run from, before the trial is numbered:
# (line, unit, case, its own trial or None, report (None for a case the suite does not
# have), verdict, seconds). A tuple: the main process unpickles one per run, and a
# dataclass costs it several times as much.
_Read = tuple[int, str, str, "int | None", "Report | bytes | None", "str | None", float]


def _numbered(results: list[Scored | _Read], numbering: TrialNumbering) -> Iterator[Scored]:
    for result in results:
        if type(result) is Scored:
            yield result
            continue
        line, unit, case, own_trial, report, verdict, seconds = result
        try:
            trial = numbering.trial(case, own_trial)
        except InvalidInput as exc:
            item = RunLine(line, unit=unit)
            problems = tuple(item.problem(p.path, p.message) for p in exc.problems)
            yield Scored(line, problems, read=False)
            continue
        if report is None:
            yield _of_unknown_case(RunLine(line, unit=unit), case)
            continue
        if isinstance(report, bytes):
            if own_trial is None:  # the text says null: the case key comes first, a
                # string, inside which a quote is always escaped, so this is the trial's
                report = report.replace(b',"trial":null,', b',"trial":%d,' % trial, 1)
        else:
            report.trial = trial
        yield Scored(line, report=report, verdict=verdict, seconds=seconds)


def _of_unknown_case(item: RunLine, case: str) -> Scored:
    problem = item.problem("case", f"{case!r} is not in the suite")
    return Scored(item.line, (problem,), unknown_case=case)


_worker: dict[str, Any] = {}  # a worker process's suite and settings, set as it starts


def _start_worker(settings: WorkerSettings) -> None:
    _worker["suite"] = load_suite(parse_suite_document(settings.suite_text, settings.suite_file))
    _worker["settings"] = settings
    collect_cycles_less()


def _score_batch(start: int, lines: list[RawLine]) -> list[Scored | _Read]:
    suite: Suite = _worker["suite"]
    settings: WorkerSettings = _worker["settings"]
    reader = RecordReader(
        settings.format_name, settings.case_field, numbered=False, prices=settings.prices
    )
    values = json_lines(
        lines, max_line_bytes=settings.max_line_bytes, max_depth=settings.max_depth, start=start
    )
    limits = settings.environment_limits
    replayer = replayer_for(limits) if limits is not None else None
    results: list[Scored | _Read] = []
    for item in reader.runs(values, LINE):
        run = item.run
        if run is None:  # a record has its run or its problems
            results.append(Scored(item.line, item.problems, read=False))
            continue
        case = suite.case(run.case)
        if case is None:
            results.append((item.line, item.unit, run.case, run.trial, None, None, 0.0))
            continue
        started = time.perf_counter()
        report = score(case, run, time_budget=settings.time_budget, replayer=replayer)
        seconds = time.perf_counter() - started
        text = report_json(report) if settings.as_json else report
        results.append((item.line, item.unit, run.case, run.trial, text, report.verdict, seconds))
    return results
