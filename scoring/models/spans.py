"""Live OpenTelemetry traces as they arrive: each trace's spans, kept until the trace is
made into a run of its suite's live submission (docs/live-traces.md).
"""

from django.conf import settings
from django.db import models

from cases.models import Suite

from .submissions import Run


class Trace(models.Model):
    """An OpenTelemetry trace sent to ``/otlp/v1/traces``: its spans are kept as they come,
    and it is made into a run of its suite's live submission once it is complete
    (``scoring.live.traces``); spans that come later make the same run again."""

    suite = models.ForeignKey(Suite, on_delete=models.CASCADE, related_name="traces")
    trace_id = models.CharField(max_length=32, help_text="hex, as OpenTelemetry writes it")
    label = models.CharField(max_length=200, blank=True, help_text="casebook.label")
    sender = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    received = models.DateTimeField(help_text="when its latest span arrived")
    has_root = models.BooleanField(default=False)
    # Spans arrived since it was last made into a run (or it never was).
    pending = models.BooleanField(default=True)
    run = models.OneToOneField(
        Run, null=True, blank=True, on_delete=models.SET_NULL, related_name="trace"
    )
    problem = models.TextField(blank=True, help_text="why its spans make no valid run")
    # Its stored spans, their bytes and attribute values, kept with them: the caps
    # (CASEBOOK_TRACE_MAX_SPANS, _BYTES, _ATTRIBUTES) are checked against these, without
    # reading the spans.
    span_count = models.IntegerField(default=0)
    span_bytes = models.BigIntegerField(default=0)
    attribute_count = models.BigIntegerField(default=0, db_default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["suite", "trace_id"], name="one_trace_per_id")
        ]
        indexes = [
            models.Index(
                fields=["received"], condition=models.Q(pending=True), name="pending_traces"
            )
        ]

    def __str__(self):
        return f"trace {self.trace_id}"


class TraceSpan(models.Model):
    """One span of a trace, or one of its log records, as it was sent: the OTLP ``Span`` or
    ``LogRecord`` message (protobuf). It is written as OTLP/JSON, which
    ``scoring.importers.otel`` reads, only when its trace is assembled: accepting an export
    stays cheap. A log record is kept under an id of its own (its bytes' digest), so that
    a record sent again is kept once, as a span is (docs/live-traces.md#log-records)."""

    class Kind(models.TextChoices):
        SPAN = "span", "span"
        LOG = "log", "log record"

    trace = models.ForeignKey(Trace, on_delete=models.CASCADE, related_name="spans", db_index=False)
    kind = models.CharField(max_length=4, choices=Kind.choices, default=Kind.SPAN)
    span_hex = models.CharField(max_length=16, help_text="its spanId, hex (a log record's digest)")
    start = models.BigIntegerField(help_text="startTimeUnixNano")
    case_key = models.TextField(blank=True, help_text="casebook.case, on the span or resource")
    case_value = models.TextField(
        blank=True, help_text="the value of the suite's case attribute (Suite.trace_case_attribute)"
    )
    data = models.BinaryField()
    # Its attribute values, events and links (``otlp_codec.measure``), counted as it came.
    attributes = models.IntegerField(default=0, db_default=0)

    class Meta:
        constraints = [
            # An export sent again (the exporter retries) stores each span once.
            models.UniqueConstraint(fields=["trace", "span_hex"], name="one_span_per_id")
        ]

    def __str__(self):
        return f"span {self.span_hex}"
