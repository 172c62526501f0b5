"""Live traces made into runs, and scored, in batches (docs/live-traces.md#assembly).

A trace is **due** when its root span has arrived and no span has come for
``CASEBOOK_TRACE_GRACE_SECONDS`` (or, rootless, ``CASEBOOK_TRACE_ROOTLESS_SECONDS``). Each
export's task, the periodic sweep, and the embedded timer all call ``assemble`` with the
traces they want made into runs; it makes those that are due into runs, then scores them.

How it keeps pace with the receiver (docs/live-traces.md#throughput):

- **Batches.** Up to ``BATCH_TRACES`` traces (and ``BATCH_BYTES`` of their spans) are made
  into runs in one transaction: their rows locked with ``SKIP LOCKED`` (two workers given
  the same traces split them rather than wait), their spans read in one query, the runs
  and the traces' links written in bulk, and each live submission's counts updated once.
- **No lock held while working.** Reading spans and importing them happen before the
  submission's row is locked; the lock is taken for the inserts alone, so the traces of
  one submission are assembled by every worker at once, each holding it for milliseconds.
- **Scoring in the same task.** The batch's runs are scored as one group (``score_runs``):
  their results written in bulk and the submission's counts moved by the batch's tally,
  not summed again over the submission.

Idempotent: a trace that is not due is left alone, and scoring takes only the runs of the
given traces that have no result, so a task delivered twice does its work once.
"""

from __future__ import annotations

import logging
import threading
from collections import defaultdict
from dataclasses import dataclass
from datetime import timedelta
from itertools import groupby

from django.conf import settings
from django.db import IntegrityError, connections, transaction
from django.db.models import Max, Min, Q
from django.utils import timezone
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from cases.models import Suite
from scoring.importers import otel, to_canonical
from scoring.importers.costs import Prices, priced
from scoring.ingest import conductor
from scoring.ingest.bulk import update_rows
from scoring.ingest.chunks import score_runs
from scoring.ingest.prices import team_prices
from scoring.ingest.store import (
    META_VALUES,
    REMADE_FIELDS,
    TOOLS,
    clear_chunk_results,
    count_run,
    describe,
    finish_if_complete,
    recount_cases,
    remade,
    run_row,
    write_runs,
)
from scoring.live.otlp_codec import log_record_document, span_document
from scoring.matcher import InvalidInput, load_run
from scoring.matcher import Run as MatcherRun
from scoring.models import (
    InvalidLine,
    Run,
    Status,
    Submission,
    Trace,
    TraceSpan,
)
from scoring.runfiles.runmeta import note_seen, tool_names

log = logging.getLogger(__name__)

SWEEP_LIMIT = 5000  # traces assembled per sweep; the next sweep takes the rest
# Traces made into runs per transaction, and the bytes and attribute values of their spans
# read for it (a trace may hold CASEBOOK_TRACE_MAX_BYTES, or _ATTRIBUTES: such a trace makes a
# batch of its own). Values cost more than their bytes: 200,000 of them, about 100 MB.
BATCH_TRACES = 500
BATCH_BYTES = 64 * 2**20
BATCH_VALUES = 200_000
READ_BATCH = 2000  # spans read at a time
CASE_VALUE_META = "case_value"  # the run's meta key of its trace's case attribute value
NOT_A_RUN = "no span is a model call or a tool call, and none names the case: not a run"


# --- when traces are assembled ---------------------------------------------------------------


def due_pending() -> Q:
    now = timezone.now()
    grace = timedelta(seconds=settings.CASEBOOK_TRACE_GRACE_SECONDS)
    rootless = timedelta(seconds=settings.CASEBOOK_TRACE_ROOTLESS_SECONDS)
    return Q(pending=True, received__lte=now - grace) & (
        Q(has_root=True) | Q(received__lte=now - rootless)
    )


def assemble_due() -> int:
    """Assemble the traces that are due, oldest first (the periodic sweep); returns how
    many became runs."""
    due = Trace.objects.filter(due_pending()).order_by("received")
    return assemble(list(due.values_list("pk", flat=True)[:SWEEP_LIMIT]))


def seconds_to_next_due() -> float | None:
    """How long until the next pending trace is due, or None when none is pending."""
    pending = Trace.objects.filter(pending=True)
    firsts = pending.aggregate(
        rooted=Min("received", filter=Q(has_root=True)),
        rootless=Min("received", filter=Q(has_root=False)),
    )
    waits = {
        "rooted": settings.CASEBOOK_TRACE_GRACE_SECONDS,
        "rootless": settings.CASEBOOK_TRACE_ROOTLESS_SECONDS,
    }
    now = timezone.now()
    times = [
        (first - now).total_seconds() + waits[kind]
        for kind, first in firsts.items()
        if first is not None
    ]
    return max(min(times), 0.0) if times else None


class EmbeddedTimer:
    """With no broker nothing runs later by itself: one thread of the web process at a time
    waits for the next trace to be due, assembles what is due, and waits again while
    traces are pending. A process that ends while one waits loses nothing: the traces stay
    pending, and the timer of the next export, or ``manage.py assemble_traces``, takes them."""

    def __init__(self):
        self.lock = threading.Lock()
        self.timer: threading.Timer | None = None

    def wake_in(self, seconds: float) -> None:
        with self.lock:
            if self.timer is not None:
                return  # it wakes, assembles what is due, and waits again for the rest
            self.timer = threading.Timer(seconds + 0.05, self._fire)
            self.timer.daemon = True
            self.timer.start()

    def _fire(self) -> None:
        with self.lock:
            self.timer = None  # spans stored from now on wake a timer of their own
        try:
            assemble_due()
            wait = seconds_to_next_due()
        except Exception:
            # A database busy past its timeout, say: the traces stay pending; try again.
            log.exception("assembling traces failed; trying again after the grace period")
            wait = settings.CASEBOOK_TRACE_GRACE_SECONDS
        finally:
            connections.close_all()  # this thread's own connections
        if wait is not None:
            self.wake_in(wait)


embedded_timer = EmbeddedTimer()


# --- traces made into runs -------------------------------------------------------------------


def assemble(trace_pks: list[int]) -> int:
    """Make those of the traces that are due into runs (again), a batch per transaction,
    then score the runs of the traces not scored yet; returns how many became runs."""
    made = sum(_assemble_batch(batch) for batch in _batches(trace_pks))
    for submission_id in _score_unscored(trace_pks):
        conductor.finish(submission_id)
    return made


def _batches(trace_pks: list[int]):
    """The due traces among ``trace_pks``, in batches of at most ``BATCH_TRACES`` traces,
    ``BATCH_BYTES`` of spans and ``BATCH_VALUES`` of their attribute values (a trace larger
    than that alone)."""
    pks = sorted(set(trace_pks))
    for start in range(0, len(pks), BATCH_TRACES):
        due = Trace.objects.filter(due_pending(), pk__in=pks[start : start + BATCH_TRACES])
        batch: list[int] = []
        size, values = 0, 0
        rows = due.order_by("pk").values_list("pk", "span_bytes", "attribute_count")
        for pk, span_bytes, attribute_count in rows:
            if batch and (
                size + span_bytes > BATCH_BYTES or values + attribute_count > BATCH_VALUES
            ):
                yield batch
                batch, size, values = [], 0, 0
            batch.append(pk)
            size += span_bytes
            values += attribute_count
        if batch:
            yield batch


@dataclass
class _Made:
    """What a trace's spans made: a run (its canonical document, the matcher's run, and the
    copies the runs table filters by), or why they make none."""

    trace: Trace
    case_key: str = ""
    case_value: str = ""
    canonical: dict | None = None
    run: MatcherRun | None = None
    row: tuple = ()  # its row in the runs table, once placed (``store.run_row``)
    problem: str = ""
    ignored: bool = False  # no call and no case: not a run (``otel.NotARun``)

    def table_row(self, submission_id: int, seq: int, line: int, trial: int) -> tuple:
        """Its run's row in the runs table (``store.run_row``): of a trace that made one."""
        assert self.run is not None, "the trace made no run"
        assert self.canonical is not None, "the trace made no run"
        return run_row(submission_id, seq, line, self.case_key, trial, self.run, self.canonical)


def _assemble_batch(trace_pks: list[int]) -> int:
    with transaction.atomic():
        locked = Trace.objects.select_for_update(skip_locked=True, of=("self",))
        locked = locked.filter(due_pending())
        traces = list(locked.filter(pk__in=trace_pks).select_related("run").order_by("pk"))
        if not traces:
            return 0
        by_submission: dict[int, list[_Made]] = defaultdict(list)
        submissions: dict[tuple[int, str], Submission | None] = {}
        no_version = []
        telemetry = _read_telemetry(traces)
        prices: dict[int, Prices] = {}  # by suite: its team's
        for trace in traces:
            submission = _submission_for(trace, submissions)
            if submission is None:
                no_version.append(trace)
                continue
            if trace.suite_id not in prices:
                team = Suite.objects.filter(pk=trace.suite_id).values_list("team_id", flat=True)
                prices[trace.suite_id] = team_prices(team.first())
            made_run = _make(trace, prices[trace.suite_id], *telemetry[trace.pk])
            by_submission[submission.pk].append(made_run)
        made = 0
        # Locked last, and in one order: held for the writes alone.
        locked_submissions = Submission.objects.select_for_update().select_related("version")
        for submission in locked_submissions.filter(pk__in=by_submission).order_by("pk"):
            made += _place(submission, by_submission[submission.pk])
        _finish_traces(traces, no_version)
    return made


def _read_telemetry(traces: list[Trace]) -> dict[int, tuple[str, str, dict]]:
    """trace pk → (the case key its spans name, the value of the suite's case attribute
    they hold (each the first, in start order), its spans and log records as a line's
    ``spans`` and ``resourceLogs``). No more than the caps let a trace hold is read, whatever
    is stored (spans kept before a cap was lowered are left out)."""
    max_spans, max_bytes = settings.CASEBOOK_TRACE_MAX_SPANS, settings.CASEBOOK_TRACE_MAX_BYTES
    max_values = settings.CASEBOOK_TRACE_MAX_ATTRIBUTES
    within: list[int] = []
    over: list[int] = []
    for trace in traces:
        fits = (
            trace.span_count <= max_spans
            and trace.span_bytes <= max_bytes
            and trace.attribute_count <= max_values
        )
        (within if fits else over).append(trace.pk)
    rows = [_span_rows(TraceSpan.objects.filter(trace_id__in=within))] if within else []
    # A trace stored past a cap is read on its own, no further than the cap.
    rows += [_span_rows(TraceSpan.objects.filter(trace_id=pk))[:max_spans] for pk in over]
    telemetry: dict[int, tuple[str, str, dict]] = {
        trace.pk: ("", "", {"spans": []}) for trace in traces
    }
    for query in rows:
        for trace_pk, spans in groupby(query.iterator(chunk_size=READ_BATCH), key=lambda r: r[0]):
            telemetry[trace_pk] = _telemetry_of(spans, max_bytes, max_values)
    return telemetry


def _span_rows(spans):
    return spans.order_by("trace_id", "start", "span_hex").values_list(
        "trace_id", "kind", "case_key", "case_value", "data", "attributes"
    )


def _telemetry_of(rows, max_bytes: int, max_values: int) -> tuple[str, str, dict]:
    case_key, case_value, documents, records, size, values = "", "", [], [], 0, 0
    for _, kind, key, value, data, attributes in rows:
        size += len(data)
        values += attributes
        if size > max_bytes or values > max_values:
            break
        case_key, case_value = case_key or key, case_value or value
        if kind == TraceSpan.Kind.LOG:
            records.append(log_record_document(LogRecord.FromString(bytes(data))))
        else:
            documents.append(span_document(Span.FromString(bytes(data))))
    line = {"spans": documents}
    if records:
        line["resourceLogs"] = [{"scopeLogs": [{"logRecords": records}]}]
    return case_key, case_value, line


def _submission_for(
    trace: Trace, known: dict[tuple[int, str], Submission | None]
) -> Submission | None:
    """The submission the trace's run goes into: the one it went into before, else the live
    submission of its suite and label for today (made on its first trace); None when the
    suite has no version yet. ``known`` keeps those found, by (suite, label)."""
    if trace.run is not None:
        return Submission(pk=trace.run.submission_id)
    key = (trace.suite_id, trace.label)
    if key not in known:
        known[key] = _live_submission(trace)
    return known[key]


def _live_submission(trace: Trace) -> Submission | None:
    now = timezone.now()
    live = Submission.objects.filter(
        suite_id=trace.suite_id, label=trace.label, live_day=now.date()
    ).only("pk")
    submission = live.first()
    if submission is not None:
        return submission
    version = Suite.objects.get(pk=trace.suite_id).latest_version
    if version is None:
        return None
    try:
        with transaction.atomic():
            Submission.objects.create(
                suite_id=trace.suite_id,
                version=version,
                uploader=trace.sender,
                label=trace.label,
                live_day=now.date(),
                chunk_runs=1,  # a run is a chunk: scored as it comes
                status=Status.DONE,
                ingest_started=now,
                ingest_finished=now,
                scoring_finished=now,
                formats_seen=[otel.NAME],
            )
    except IntegrityError:
        pass  # another trace made it first
    return live.get()


def _make(trace: Trace, prices: Prices, case_key: str, case_value: str, telemetry: dict) -> _Made:
    """The run the trace's spans make, read as a run file's line of spans is
    (docs/live-traces.md#assembly); a case named by ``case_value`` is looked up when placed."""
    # A trace with no case gets one for the importer, which wants it; the run keeps none.
    line = {
        "case": case_key or f"trace {trace.trace_id}",
        "meta": {"trace_id": trace.trace_id}
        | ({CASE_VALUE_META: case_value} if case_value else {}),
        otel.CASE_FROM_TRACE: True,
        **telemetry,
    }
    try:
        canonical = to_canonical(line, otel.NAME)
        priced(canonical, prices)  # before scoring: a case may bound the cost
        run = load_run(canonical)
    except otel.NotARun:
        return _Made(trace, ignored=True)
    except InvalidInput as exc:
        return _Made(trace, problem=f"trace {trace.trace_id}: {describe(exc.problems)}")
    return _Made(trace, case_key, case_value, canonical, run)


def _place(submission: Submission, made: list[_Made]) -> int:
    """Put the runs of the traces into the (locked) submission, new ones in bulk, and
    record the traces that make no run; returns how many runs were made."""
    suite = submission.version.matcher_suite()
    mapping = Suite.objects.values_list("trace_case_map", flat=True).get(pk=submission.suite_id)
    runs = [item for item in made if item.run is not None]
    for item in runs:
        item.case_key = item.case_key or _case_of_value(item.case_value, mapping, suite)
    again = [item for item in runs if item.trace.run is not None]
    first_time = [item for item in made if item.trace.run is None]
    _add_runs(submission, suite, [item for item in first_time if item.run is not None])
    for item in again:
        _make_again(submission, suite, item)
    _note_invalid(submission, [item for item in first_time if item.problem])
    ignored = [item for item in first_time if item.ignored]
    # Counted the first time (docs/live-traces.md#assembly): one that later gets a call
    # becomes a run then, and stays counted.
    submission.ignored_traces += sum(item.trace.problem != NOT_A_RUN for item in ignored)
    for item in made:
        item.trace.problem = item.problem  # spans that no longer make a run leave it as it was
    for item in ignored:
        item.trace.problem = NOT_A_RUN
    if runs:
        tools_seen, meta_keys = set(submission.tools_seen), set(submission.meta_keys)
        for item in runs:
            note_seen(tools_seen, tool_names(item.row[TOOLS]))
            note_seen(meta_keys, item.row[META_VALUES])
        submission.tools_seen, submission.meta_keys = sorted(tools_seen), sorted(meta_keys)
        submission.status = Status.SCORING
        submission.scoring_finished = None
        finish_if_complete(submission)  # runs of no case in the version have nothing to score
    submission.save()
    return len(runs)


def _case_of_value(value: str, mapping: dict, suite) -> str:
    """The case a value of the suite's case attribute names: the one the suite's map gives
    it, else the case of its own key in the submission's version, else none (unassigned)."""
    if not value:
        return ""
    if value in mapping:
        return mapping[value]
    return value if suite.case(value) is not None else ""


def _add_runs(submission: Submission, suite, made: list[_Made]) -> None:
    """New runs, in the traces' order: each takes the next place in the submission and the
    next trial of its case (one more than the case's highest there)."""
    if not made:
        return
    # A case at a time: each is one step down the (submission, case, trial) index, where
    # grouping the batch's cases read every run of them, more with every batch of the day.
    highest = {}
    for case_key in {item.case_key for item in made}:
        trial = submission.runs.filter(case_key=case_key).aggregate(trial=Max("trial"))["trial"]
        if trial is not None:
            highest[case_key] = trial
    first = submission.stored_runs + 1
    for item in made:
        trial = highest[item.case_key] = highest.get(item.case_key, -1) + 1
        submission.stored_runs += 1
        seq = submission.stored_runs
        item.row = item.table_row(submission.pk, seq, seq, trial)
        count_run(submission, suite, item.case_key, seq)
    write_runs(item.row for item in made)
    placed = submission.runs.filter(seq__gte=first).only("pk", "seq", "submission_id")
    by_seq = {run.seq: run for run in placed}
    for seq, item in enumerate(made, start=first):
        item.trace.run = by_seq[seq]


def _make_again(submission: Submission, suite, item: _Made) -> None:
    """A trace whose spans came late: its run made again in place, its result cleared (it
    is scored again with the batch), its trial the next of its case if the case changed."""
    stored = item.trace.run
    assert stored is not None, "a run made again was made before"
    clear_chunk_results(submission, (stored.seq, stored.seq))  # its chunk is the run alone
    recase = stored.case_key != item.case_key
    if recase:
        stored.case_key = item.case_key
        stored.trial = submission.runs.filter(case_key=item.case_key).count()
    item.row = item.table_row(submission.pk, stored.seq, stored.line, stored.trial)
    # Written as runs are first written (``insert_rows``): a NUL in their text, which
    # PostgreSQL's text cannot hold, reads as U+FFFD.
    update_rows(Run, REMADE_FIELDS, [(stored.pk, *remade(item.row))])
    if recase:
        recount_cases(submission, suite)


def _note_invalid(submission: Submission, made: list[_Made]) -> None:
    """A trace that makes no run is an invalid line of the submission, the first time,
    numbered after its runs and invalid lines."""
    first = submission.stored_runs + submission.invalid + 1
    InvalidLine.objects.bulk_create(
        InvalidLine(submission=submission, line=first + i, reason=item.problem)
        for i, item in enumerate(made)
    )
    submission.invalid += len(made)


def _finish_traces(traces: list[Trace], no_version: list[Trace]) -> None:
    """The traces are not pending any more; each links its run, or says why it has none
    (a trace left for want of a version waits until a span of it comes again)."""
    for trace in no_version:
        trace.problem = "the suite has no version to score against"
    Trace.objects.filter(pk__in=[t.pk for t in traces]).update(pending=False, problem="")
    problems = [trace for trace in traces if trace.problem]
    for trace in problems:
        Trace.objects.filter(pk=trace.pk).update(problem=trace.problem)
    update_rows(Trace, ("run_id",), [(t.pk, t.run.pk) for t in traces if t.run is not None])


def _score_unscored(trace_pks: list[int]) -> list[int]:
    """Score the runs of the traces that have no result, a group per submission; returns
    the submissions scored."""
    pks = sorted(set(trace_pks))
    scored = set()
    for start in range(0, len(pks), BATCH_TRACES):
        unscored = (
            Run.objects.filter(trace__pk__in=pks[start : start + BATCH_TRACES], result=None)
            .order_by("submission_id", "seq")
            .values_list("submission_id", "seq")
        )
        for submission_id, runs in groupby(unscored, key=lambda row: row[0]):
            generation = Submission.objects.values_list("generation", flat=True)
            score_runs(submission_id, generation.get(pk=submission_id), [s - 1 for _, s in runs])
            scored.add(submission_id)
    return sorted(scored)
