"""Live traces (``/otlp/v1/traces``, docs/live-traces.md): OpenTelemetry spans kept as they
arrive; ``scoring.live.assembly`` makes each trace into a run of its suite's live submission
once it is complete.

- Routing (``scoring.live.routing``): the resource attribute ``casebook.suite`` (the suite's
  id or slugs), or the sender's suite token, names the suite; the sender must be one of its
  editors. ``casebook.label`` (on the resource, or the token's) names the
  submission, ``casebook.case`` (on any span, else on the resource) the case, or else the
  span attribute the suite's settings name (``Suite.trace_case_attribute``, such as
  ``gen_ai.conversation.id``), whose value is noted on the span. Spans that cannot be
  routed are rejected, and the answer says how many and why (OTLP's partial success); the
  others are kept.
- Accepting: the spans of an export are written in one transaction, before the answer, so
  nothing accepted waits on a worker or the broker. A span sent twice (the exporter
  retried) is kept once. A trace holds at most ``CASEBOOK_TRACE_MAX_SPANS`` spans and
  ``CASEBOOK_TRACE_MAX_BYTES`` of them (counted on its row): spans past a cap are rejected,
  the answer naming the trace and the cap. An export brings spans of at most
  ``CASEBOOK_OTLP_MAX_TRACES`` traces, so that what it costs is bounded by its size; spans
  that no column holds (a start past 2^63 - 1, a label with a NUL) or nested past
  ``CASEBOOK_MAX_JSON_DEPTH`` are rejected too. The export's traces are then scheduled for
  assembly once their grace period ends.

Locks: accepting locks the trace rows it touches (in id order), so that exports racing on
a trace count its spans in turn; a trace being assembled is locked too, so a span accepted
meanwhile either is read by that assembly or makes the trace pending again after it.
"""

from __future__ import annotations

import hashlib
import logging
import operator
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import reduce
from typing import Any, Protocol

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Count, Q, Sum
from django.db.models.functions import Length
from django.utils import timezone

from scoring.importers import otel
from scoring.ingest.bulk import insert_rows, update_rows
from scoring.live.otlp_codec import (
    LOGS,
    TRACES,
    ItemLimits,
    Measured,
    Signal,
    attributes,
    hex_id,
    measure,
)
from scoring.live.routing import (
    CASE,
    INVALID,
    NUL_CASE,
    Address,
    Refusal,
    Route,
    Router,
    SuiteReference,
    holds_nul,
)
from scoring.models import Trace, TraceSpan

log = logging.getLogger(__name__)

# Spans of an export looked up at a time: up to 800 parameters, within the 999 of older
# SQLite builds.
LOOKUP_BATCH = 400
REASONS_KEPT = 5  # reasons in a partial-success message
SPAN_FIELDS = (
    "trace_id", "kind", "span_hex", "start", "case_key", "case_value", "data", "attributes",
)  # fmt: skip
# A span's start is kept in a signed 64-bit column (nanoseconds: until the year 2262).
START_LIMIT = (1 << 63) - 1


@dataclass
class Outcome:
    """What became of an export's items (spans, or log records)."""

    items: str = "spans"
    accepted: int = 0
    routed: int = 0  # items sent to a suite the sender may send runs to
    rejected: Counter = field(default_factory=Counter)  # (kind, reason) → items
    # The traces the export added to, pending: to be assembled once due
    # (``scoring.live.pipeline.receive`` has ``tasks.assemble_when_due`` do it).
    pending: list[int] = field(default_factory=list)

    @property
    def rejected_items(self) -> int:
        return sum(self.rejected.values())

    @property
    def message(self) -> str:
        reasons = [
            f"{reason} ({count} {self.items})" for (_, reason), count in self.rejected.items()
        ]
        return "; ".join(reasons[:REASONS_KEPT])

    @property
    def refusal(self) -> int | None:
        """The HTTP status when no span could be routed: the one kind of rejection (404 or
        403), else 400. None when some could (spans over a trace's cap are a partial
        success, even all of them), or there was nothing."""
        if self.routed or not self.rejected:
            return None
        kinds = {kind for kind, _ in self.rejected}
        return kinds.pop() if len(kinds) == 1 else INVALID


def accept(user, export, token=None, signal: Signal = TRACES) -> Outcome:
    """Keep the spans (or, for ``LOGS``, the log records) of an export sent by ``user`` with
    ``token`` (``scoring.live.routing``). The work is bounded by the export's size and its
    caps: each item is looked at once, only the items of its first
    ``CASEBOOK_OTLP_MAX_TRACES`` traces further (their suites looked up), each measured
    before anything is built of it (``otlp_codec.measure``), and only its first
    ``CASEBOOK_OTLP_MAX_ATTRIBUTES`` attribute values, events and links stored."""
    max_traces, budget = settings.CASEBOOK_OTLP_MAX_TRACES, settings.CASEBOOK_OTLP_MAX_ATTRIBUTES
    over_export_cap = (
        INVALID,
        f"{signal.items} of traces past the export's first {max_traces:,}: over the cap, "
        f"CASEBOOK_OTLP_MAX_TRACES = {max_traces:,}",
    )
    over_budget = (
        INVALID,
        f"{signal.items} past the export's first {budget:,} attribute values, events and "
        f"links: over the cap, CASEBOOK_OTLP_MAX_ATTRIBUTES = {budget:,}",
    )
    limits = item_limits()
    outcome = Outcome(items=signal.items)
    reader = _READERS[signal]
    router = Router(user, token)
    # (suite, trace id): the id is None only beside a refusal (``identity``), never kept
    kept_traces: set[tuple[SuiteReference, str | None]] = set()
    spent = 0  # attribute values, events and links of the items kept
    # (suite id, label, trace id, item id, is root, start, case key, case value, bytes, kind,
    # attribute values)
    rows = []
    for resource, scopes in reader.resources(export):
        refused = _resource_refusal(resource, limits)
        resource = {} if refused else attributes(resource.attributes)
        address = refused or router.address(resource)
        if not isinstance(address, Address):
            outcome.rejected[address] += sum(len(items) for _, items in scopes)
            continue
        resource_case = _text(resource.get(CASE))
        for scope_name, items in scopes:
            for item in items:
                trace_id, item_id, refusal = reader.identity(item)
                if refusal is None and (address.suite, trace_id) not in kept_traces:
                    if len(kept_traces) < max_traces:
                        kept_traces.add((address.suite, trace_id))
                    else:
                        refusal = over_export_cap
                if refusal is None:  # only the items of the traces kept cost more than this
                    route = router.resolve(address)
                    refusal = route if isinstance(route, tuple) else None
                if refusal is None:
                    measured = measure(item, limits)
                    refusal = _invalid(item, reader, measured)
                if refusal is None and spent + measured.values > budget:
                    refusal = over_budget
                if refusal is None and isinstance(route, Route):  # resolved to a suite
                    suite, label = route.suite, route.label
                    named = attributes(item.attributes)
                    attribute = suite.trace_case_attribute
                    refusal = _case_refusal(named, attribute)
                if refusal is not None:
                    outcome.rejected[refusal] += 1
                    continue
                spent += measured.values
                case = _text(named.get(CASE)) or resource_case
                value = "" if case or not attribute else _text(named.get(attribute))
                root, start = reader.root_and_start(item)
                rows.append(
                    (suite.pk, label, trace_id, item_id, root, start, case, value,
                     stored(item, scope_name), reader.kind, measured.values)
                )  # fmt: skip
    if rows:
        over_cap, outcome.pending = _store(rows, user)
        outcome.routed = len(rows)
        outcome.accepted = len(rows) - sum(over_cap.values())
        outcome.rejected.update({(INVALID, reason): count for reason, count in over_cap.items()})
    return outcome


class _Reader(Protocol):
    """How an export's items are read (``_Spans``, ``_LogRecords``): by the class itself."""

    @property
    def kind(self) -> str: ...

    @property
    def noun(self) -> str: ...

    def resources(self, export: Any) -> Iterator[tuple[Any, list[tuple[str, Any]]]]: ...

    def identity(self, item: Any) -> tuple[str | None, str | None, Refusal | None]: ...

    def root_and_start(self, item: Any) -> tuple[bool, int]: ...

    def too_late(self, item: Any) -> str | None: ...


class _Spans:
    """How a trace export's spans are read."""

    kind = TraceSpan.Kind.SPAN
    noun = "span"

    @staticmethod
    def resources(export):
        """(resource, [(scope name, spans)]) for each resource of the export."""
        for resource_spans in export.resource_spans:
            scopes = [(scope.scope.name, scope.spans) for scope in resource_spans.scope_spans]
            yield resource_spans.resource, scopes

    @staticmethod
    def identity(span) -> tuple[str | None, str | None, tuple[int, str] | None]:
        """The trace id and the span's id, or why the span cannot be kept."""
        trace_id, span_id = hex_id(span.trace_id, 16), hex_id(span.span_id, 8)
        if trace_id is None or span_id is None:
            return None, None, (INVALID, "a span without a valid traceId and spanId")
        return trace_id, span_id, None

    @staticmethod
    def root_and_start(span) -> tuple[bool, int]:
        return not any(span.parent_span_id), span.start_time_unix_nano

    @staticmethod
    def too_late(span) -> str | None:
        if span.start_time_unix_nano > START_LIMIT:
            return f"a span whose startTimeUnixNano is past {START_LIMIT:,} (the year 2262)"
        return None


class _LogRecords:
    """How a logs export's records are read: a record is known by its bytes' digest, so
    that a record sent again is kept once; none is a trace's root."""

    kind = TraceSpan.Kind.LOG
    noun = "log record"

    @staticmethod
    def resources(export):
        """(resource, [(scope name, log records)]) for each resource of the export."""
        for resource_logs in export.resource_logs:
            scopes = [(scope.scope.name, scope.log_records) for scope in resource_logs.scope_logs]
            yield resource_logs.resource, scopes

    @staticmethod
    def identity(record) -> tuple[str | None, str | None, tuple[int, str] | None]:
        """The trace id and the record's digest, or why the record cannot be kept."""
        trace_id = hex_id(record.trace_id, 16)
        if trace_id is None:
            return None, None, (INVALID, "a log record without a valid traceId: it joins no trace")
        return trace_id, hashlib.sha256(record.SerializeToString()).hexdigest()[:16], None

    @staticmethod
    def root_and_start(record) -> tuple[bool, int]:
        return False, record.time_unix_nano or record.observed_time_unix_nano

    @staticmethod
    def too_late(record) -> str | None:
        if max(record.time_unix_nano, record.observed_time_unix_nano) > START_LIMIT:
            return f"a log record whose time is past {START_LIMIT:,} (the year 2262)"
        return None


_READERS: dict[Signal, _Reader] = {TRACES: _Spans, LOGS: _LogRecords}


def stored(item, scope_name: str) -> bytes:
    """A span or log record as it is kept: with the name of its instrumentation scope, which
    the importer reads to name the setting of the library that wrote it
    (docs/live-traces.md#content)."""
    if scope_name and otel.SCOPE_ATTRIBUTE not in attributes(item.attributes):
        item.attributes.add(key=otel.SCOPE_ATTRIBUTE).value.string_value = scope_name
    return item.SerializeToString()


def item_limits() -> ItemLimits:
    """What one span or log record may hold, as the settings say."""
    return ItemLimits(
        settings.CASEBOOK_MAX_JSON_DEPTH,
        settings.CASEBOOK_OTLP_MAX_ITEM_ATTRIBUTES,
        settings.CASEBOOK_OTLP_MAX_ITEM_EVENTS,
        settings.CASEBOOK_OTLP_MAX_ITEM_LINKS,
    )


def _resource_refusal(resource, limits: ItemLimits) -> tuple[int, str] | None:
    """Why a resource's items are rejected before its attributes are read: more of them
    than an item may hold (kind 400)."""
    if len(resource.attributes) > limits.attributes:
        return INVALID, (
            "a resource of more attributes than the cap, CASEBOOK_OTLP_MAX_ITEM_ATTRIBUTES = "
            f"{limits.attributes:,}"
        )
    return None


def _invalid(item, reader, measured: Measured) -> tuple[int, str] | None:
    """Why the item itself cannot be kept (kind 400), whatever its suite; None when it can."""
    if (reason := reader.too_late(item)) is not None:
        return INVALID, reason
    if measured.problem is not None:
        return INVALID, measured.problem
    return None


def _case_refusal(named: dict, attribute: str) -> tuple[int, str] | None:
    """Why an item's case cannot be read (kind 400): its ``casebook.case``, or the value of
    the suite's case attribute, holds a NUL, which no case key may hold and PostgreSQL's
    text cannot; read without it, it would name another case."""
    if holds_nul(named.get(CASE)):
        return INVALID, NUL_CASE
    if attribute and holds_nul(named.get(attribute)):
        return INVALID, f"{attribute} (the suite's case attribute) holds a NUL character"
    return None


def _text(value) -> str:
    """An attribute's value as text (NUL refused before: ``_case_refusal``)."""
    return "" if value is None else str(value)


def _store(rows: list[tuple], user) -> tuple[Counter, list[int]]:
    """Store the rows' spans that are new and within their trace's caps; returns the spans
    over a cap, by the reason (which names the trace and the cap), and the traces now
    pending."""
    now = timezone.now()
    with transaction.atomic():
        first_label: dict[tuple[int, str], str] = {}
        for suite_id, label, trace_id, *_ in rows:
            first_label.setdefault((suite_id, trace_id), label)
        Trace.objects.bulk_create(
            [
                Trace(suite_id=suite_id, trace_id=trace_id, label=label, sender=user, received=now)
                for (suite_id, trace_id), label in first_label.items()
            ],
            ignore_conflicts=True,
        )
        # Locked (in one order, against deadlocks), so that racing exports count in turn.
        found = (
            Trace.objects.select_for_update()
            .filter(
                suite_id__in={suite_id for suite_id, _ in first_label},
                trace_id__in={trace_id for _, trace_id in first_label},
            )
            .order_by("pk")
            .only("pk", "suite_id", "trace_id", "span_count", "span_bytes", "attribute_count")
        )
        traces = {
            (t.suite_id, t.trace_id): t for t in found if (t.suite_id, t.trace_id) in first_label
        }
        spans, over_cap = _within_caps(rows, traces)
        if not _insert_spans(spans):
            _recount(traces.values())  # some were stored by a racing export after all
        _save_counts(traces.values())
        touched = sorted(trace.pk for trace in traces.values())
        Trace.objects.filter(pk__in=touched).update(received=now, pending=True)
        # A root over the cap has still arrived: the trace waits the grace period, not the
        # rootless wait, and is made into a run of the spans it holds.
        rooted = {traces[row[0], row[2]].pk for row in rows if row[4]}
        if rooted:
            Trace.objects.filter(pk__in=rooted).update(has_root=True)
    return over_cap, touched


def _save_counts(traces) -> None:
    """Write the traces' span counts, bytes and attribute values."""
    rows = [(t.pk, t.span_count, t.span_bytes, t.attribute_count) for t in traces]
    update_rows(Trace, ("span_count", "span_bytes", "attribute_count"), rows)


def _within_caps(rows: list[tuple], traces: dict) -> tuple[list[tuple], Counter]:
    """The rows of spans to insert (new, and within their trace's caps; their traces'
    counts updated), and the spans over a cap by reason."""
    max_spans, max_bytes = settings.CASEBOOK_TRACE_MAX_SPANS, settings.CASEBOOK_TRACE_MAX_BYTES
    max_values = settings.CASEBOOK_TRACE_MAX_ATTRIBUTES
    # Only traces that hold spans are looked in: a trace's count is kept with its spans.
    sent = ((traces[row[0], row[2]], row[3]) for row in rows)
    existing = stored_spans({(trace.pk, span_id) for trace, span_id in sent if trace.span_count})
    new: dict[tuple[int, str], tuple] = {}
    over_cap: Counter[str] = Counter()
    for suite_id, _, trace_id, span_id, _, start, case, value, data, kind, values in rows:
        trace = traces[suite_id, trace_id]
        key = (trace.pk, span_id)
        if key in existing or key in new:
            continue  # sent again (the exporter retried), or twice in the export
        if trace.span_count >= max_spans:
            over_cap[
                f"trace {trace_id}: over the cap, CASEBOOK_TRACE_MAX_SPANS = {max_spans:,}"
            ] += 1
        elif trace.span_bytes + len(data) > max_bytes:
            over_cap[
                f"trace {trace_id}: over the cap, CASEBOOK_TRACE_MAX_BYTES = {max_bytes:,}"
            ] += 1
        elif trace.attribute_count + values > max_values:
            over_cap[
                f"trace {trace_id}: over the cap, CASEBOOK_TRACE_MAX_ATTRIBUTES = {max_values:,}"
            ] += 1
        else:
            new[key] = (trace.pk, kind, span_id, start, case, value, data, values)
            trace.span_count += 1
            trace.span_bytes += len(data)
            trace.attribute_count += values
    return list(new.values()), over_cap


def _insert_spans(rows: list[tuple]) -> bool:
    """Insert the spans (new when their traces were read), by COPY where the database has
    it; False when a span stored by an export racing this one failed the COPY: the rows
    then went in one by one, each kept only if new."""
    try:
        with transaction.atomic():
            insert_rows(TraceSpan, SPAN_FIELDS, rows)
    except IntegrityError:
        spans = [TraceSpan(**dict(zip(SPAN_FIELDS, row, strict=True))) for row in rows]
        TraceSpan.objects.bulk_create(spans, ignore_conflicts=True)
        return False
    return True


def _recount(traces) -> None:
    """Set the traces' span counts, bytes and attribute values from the spans stored."""
    totals = (
        TraceSpan.objects.filter(trace_id__in=[trace.pk for trace in traces])
        .values("trace_id")
        .annotate(count=Count("pk"), size=Sum(Length("data")), values=Sum("attributes"))
    )
    by_trace = {
        row["trace_id"]: (row["count"], row["size"] or 0, row["values"] or 0) for row in totals
    }
    for trace in traces:
        trace.span_count, trace.span_bytes, trace.attribute_count = by_trace.get(
            trace.pk, (0, 0, 0)
        )


def stored_spans(spans: set[tuple[int, str]]) -> set[tuple[int, str]]:
    """Those of the spans, (trace, span id), that are stored already: looked up by their
    ids, so that the work is the export's, however many spans its traces hold."""
    in_order = sorted(spans)
    found: set[tuple[int, str]] = set()
    for start in range(0, len(in_order), LOOKUP_BATCH):
        by_trace = defaultdict(list)
        for trace_pk, span_hex in in_order[start : start + LOOKUP_BATCH]:
            by_trace[trace_pk].append(span_hex)
        query = reduce(
            operator.or_,
            (Q(trace_id=pk, span_hex__in=span_ids) for pk, span_ids in by_trace.items()),
        )
        found.update(TraceSpan.objects.filter(query).values_list("trace_id", "span_hex"))
    return found
