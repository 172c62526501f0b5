"""``POST /otlp/v1/traces`` and ``/otlp/v1/logs`` (docs/live-traces.md#the-receiver):
OpenTelemetry's OTLP/HTTP trace and logs exports, so that an agent's own exporter sends its
runs here (``OTEL_EXPORTER_OTLP_ENDPOINT`` and
``OTEL_EXPORTER_OTLP_HEADERS="Authorization=Token …"``). An API token is the only way in: an
exporter has no session, and a session's CSRF check would read the body as a form.

Answers as OTLP/HTTP specifies, in the encoding of the request (protobuf, or JSON): 200 with
an ``ExportTraceServiceResponse`` (its ``partial_success`` counting the spans rejected, and
why); an error as a ``google.rpc.Status``: 400 for a body that cannot be read, 401 without a
valid token (saying how to send one), 404 / 403 when every span names a suite the sender may
not see / may not send runs to, 413 for a body over ``CASEBOOK_OTLP_MAX_BYTES``. What happens
to the spans is ``scoring.live.traces``'."""

from __future__ import annotations

from django.conf import settings
from django.core.handlers.wsgi import LimitedStream
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.exceptions import NotAuthenticated
from rest_framework.views import APIView

from cases.authentication import OtlpTokenAuthentication
from scoring.live import otlp_codec, pipeline

# The gRPC code that goes with each HTTP status, for the Status message of an error.
_GRPC_CODES = {400: 3, 401: 16, 403: 7, 404: 5, 405: 12, 413: 8, 415: 3, 429: 8}
_UNKNOWN = 2
_UNCAPPED = 1 << 62


def _export_schema(summary: str, description: str, answer: str) -> dict:
    """What the OpenAPI schema says of an OTLP receiver: the request in either encoding,
    the answer ``answer`` (a message name), and the refusals both receivers give."""
    return {
        "summary": summary,
        "description": description,
        "request": {otlp_codec.PROTOBUF: OpenApiTypes.BINARY, otlp_codec.JSON: OpenApiTypes.OBJECT},
        "responses": {
            (200, otlp_codec.PROTOBUF): OpenApiResponse(OpenApiTypes.BINARY, description=answer),
            400: OpenApiResponse(description="the body cannot be read, or names no suite"),
            401: OpenApiResponse(description="no valid token (a session is not accepted)"),
            403: OpenApiResponse(
                description="the suites' viewer, not an editor; or another suite than the "
                "suite token's"
            ),
            404: OpenApiResponse(description="no such suite, or not one the sender may see"),
            413: OpenApiResponse(
                description="over CASEBOOK_OTLP_MAX_BYTES, or OTLP/JSON of more objects and "
                "arrays than CASEBOOK_OTLP_MAX_ATTRIBUTES allows"
            ),
        },
    }


TOKEN_WANTED = (
    "An API token of one of the suite's editors is wanted, as the header "
    '"Authorization: Token KEY" (OTEL_EXPORTER_OTLP_HEADERS="Authorization=Token KEY"); '
    "a signed-in session is not accepted here."
)


class TraceExportView(APIView):
    """``POST /otlp/v1/traces``; ``LogExportView`` is the same for ``/otlp/v1/logs``."""

    authentication_classes = [OtlpTokenAuthentication]
    parser_classes = []  # the body is read as it is, by ``scoring.live.otlp_codec``
    signal = otlp_codec.TRACES

    @extend_schema(
        **_export_schema(
            "Receive OpenTelemetry spans (OTLP/HTTP trace export)",
            "An `ExportTraceServiceRequest`, as protobuf (`application/x-protobuf`) or "
            "OTLP/JSON (`application/json`), gzip- or deflate-compressed or not. The resource "
            "attribute `casebook.suite` (a suite's id or `team-slug/suite-slug`) routes spans, "
            "or the token when it is a suite token; `casebook.label` (or the suite token's "
            "label) names the live submission and `casebook.case` (on a span or the resource) "
            "the case; each trace becomes a run of the suite's live submission of the day.",
            "ExportTraceServiceResponse",
        )
    )
    def post(self, request):
        as_json = otlp_codec.is_json(request.content_type)
        limit = settings.CASEBOOK_OTLP_MAX_BYTES
        if _declared_length(request) > limit:
            return _error(413, f"the body is over {limit:,} bytes, the limit", as_json)
        try:
            export = otlp_codec.decode(
                _body(request, limit),
                content_type=request.content_type,
                encoding=request.META.get("HTTP_CONTENT_ENCODING", ""),
                max_bytes=limit,
                max_depth=settings.CASEBOOK_MAX_JSON_DEPTH,
                max_containers=4 * settings.CASEBOOK_OTLP_MAX_ATTRIBUTES,
                signal=self.signal,
            )
        except otlp_codec.ExportTooLarge as exc:
            return _error(413, str(exc), as_json)
        except otlp_codec.BadExport as exc:
            return _error(400, str(exc), as_json)
        outcome = pipeline.receive(request.user, export, request.auth, self.signal)
        if outcome.refusal is not None:
            return _error(outcome.refusal, outcome.message, as_json)
        body, content_type = otlp_codec.response(
            outcome.rejected_items, outcome.message, as_json=as_json, signal=self.signal
        )
        return HttpResponse(body, content_type=content_type)

    def handle_exception(self, exc):
        """DRF's answer (401 with its challenge, 405, 429 ...), its body a Status as OTLP
        asks."""
        answer = super().handle_exception(exc)
        detail = getattr(answer, "data", None)
        message = str(detail.get("detail", "")) if isinstance(detail, dict) else str(exc)
        if answer.status_code == 401:
            # No token (a session is not read here), or a bad one: say what is wanted.
            message = (
                TOKEN_WANTED if isinstance(exc, NotAuthenticated) else f"{message} {TOKEN_WANTED}"
            )
        error = _error(answer.status_code, message, otlp_codec.is_json(self.request.content_type))
        for header, value in answer.items():
            if header.lower() not in ("content-type", "content-length"):
                error[header] = value
        return error


class LogExportView(TraceExportView):
    signal = otlp_codec.LOGS

    @extend_schema(
        **_export_schema(
            "Receive OpenTelemetry log records (OTLP/HTTP logs export)",
            "An `ExportLogsServiceRequest`, encoded and routed as trace exports are. Each "
            "log record (a GenAI event: message content some instrumentations send as logs) "
            "joins the trace of its `traceId`, as an event of the span of its `spanId`, "
            "whichever of the two arrives first.",
            "ExportLogsServiceResponse",
        )
    )
    def post(self, request):
        return super().post(request)


def _body(request, limit: int) -> bytes:
    """The body, at most ``limit`` + 1 bytes (past Django's in-memory limit for form data:
    this one is the export's). Sent chunked, with no Content-Length (Node's OTLP
    exporters), it is read from the server's input: de-chunked by the server when it says
    so (gunicorn: ``wsgi.input_terminated``), else here."""
    meta = request.META
    chunked = "chunked" in meta.get("HTTP_TRANSFER_ENCODING", "").lower()
    if not chunked or meta.get("CONTENT_LENGTH"):
        return request._request.read(limit + 1)
    stream = meta["wsgi.input"]
    if meta.get("wsgi.input_terminated"):
        return stream.read(limit + 1)
    if isinstance(stream, LimitedStream):
        # Django's development server caps the input at Content-Length, of which a chunked
        # request has none; the framing read here bounds what is read instead.
        stream.limit = _UNCAPPED
    return otlp_codec.dechunked(stream, limit)


def _declared_length(request) -> int:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0  # read no further than the limit all the same


def _error(status: int, message: str, as_json: bool) -> HttpResponse:
    code = _GRPC_CODES.get(status, _UNKNOWN)
    body, content_type = otlp_codec.error(code, message, as_json=as_json)
    return HttpResponse(body, content_type=content_type, status=status)
