"""``POST /otlp/v1/traces`` (docs/live-traces.md#the-receiver): OpenTelemetry's OTLP/HTTP
trace export, so that an agent's own exporter sends its runs here
(``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` and
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
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.exceptions import NotAuthenticated
from rest_framework.views import APIView

from cases.throttling import OtlpTokenAuthentication
from scoring.live import otlp_codec, traces

# The gRPC code that goes with each HTTP status, for the Status message of an error.
_GRPC_CODES = {400: 3, 401: 16, 403: 7, 404: 5, 405: 12, 413: 8, 415: 3, 429: 8}
_UNKNOWN = 2
TOKEN_WANTED = (
    "An API token of one of the suite's editors is wanted, as the header "
    '"Authorization: Token KEY" (OTEL_EXPORTER_OTLP_HEADERS="Authorization=Token KEY"); '
    "a signed-in session is not accepted here."
)


class TraceExportView(APIView):
    authentication_classes = [OtlpTokenAuthentication]
    parser_classes = []  # the body is read as it is, by ``scoring.live.otlp_codec``

    @extend_schema(
        summary="Receive OpenTelemetry spans (OTLP/HTTP trace export)",
        description=(
            "An `ExportTraceServiceRequest`, as protobuf (`application/x-protobuf`) or "
            "OTLP/JSON (`application/json`), gzip- or deflate-compressed or not. The resource "
            "attribute `casebook.suite` (a suite's id or `team-slug/suite-slug`) routes spans, "
            "or the token when it is a suite token; `casebook.label` (or the suite token's "
            "label) names the live submission and `casebook.case` (on a span or the resource) "
            "the case; each trace becomes a run of the suite's live submission of the day."
        ),
        request={
            otlp_codec.PROTOBUF: OpenApiTypes.BINARY,
            otlp_codec.JSON: OpenApiTypes.OBJECT,
        },
        responses={
            (200, otlp_codec.PROTOBUF): OpenApiResponse(
                OpenApiTypes.BINARY, description="ExportTraceServiceResponse"
            ),
            400: OpenApiResponse(description="the body cannot be read, or names no suite"),
            401: OpenApiResponse(description="no valid token (a session is not accepted)"),
            403: OpenApiResponse(
                description="the suites' viewer, not an editor; or another suite than the "
                "suite token's"
            ),
            404: OpenApiResponse(description="no such suite, or not one the sender may see"),
            413: OpenApiResponse(description="over CASEBOOK_OTLP_MAX_BYTES"),
        },
    )
    def post(self, request):
        as_json = otlp_codec.is_json(request.content_type)
        limit = settings.CASEBOOK_OTLP_MAX_BYTES
        if _declared_length(request) > limit:
            return _error(413, f"the body is over {limit:,} bytes, the limit", as_json)
        # Read past Django's in-memory limit for form data: this one is the export's.
        body = request._request.read(limit + 1)
        try:
            export = otlp_codec.decode(
                body,
                content_type=request.content_type,
                encoding=request.META.get("HTTP_CONTENT_ENCODING", ""),
                max_bytes=limit,
                max_depth=settings.CASEBOOK_MAX_JSON_DEPTH,
            )
        except otlp_codec.ExportTooLarge as exc:
            return _error(413, str(exc), as_json)
        except otlp_codec.BadExport as exc:
            return _error(400, str(exc), as_json)
        outcome = traces.accept(request.user, export, request.auth)
        if outcome.refusal is not None:
            return _error(outcome.refusal, outcome.message, as_json)
        body, content_type = otlp_codec.response(
            outcome.rejected_spans, outcome.message, as_json=as_json
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


def _declared_length(request) -> int:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0  # read no further than the limit all the same


def _error(status: int, message: str, as_json: bool) -> HttpResponse:
    code = _GRPC_CODES.get(status, _UNKNOWN)
    body, content_type = otlp_codec.error(code, message, as_json=as_json)
    return HttpResponse(body, content_type=content_type, status=status)
