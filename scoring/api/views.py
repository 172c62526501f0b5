"""The submissions API (docs/api.md#submissions): upload a run file, follow its scoring,
read the reports; and a review queue's progress (docs/api.md#review-queues). Access is the
pages' (``cases.permissions``, docs/api.md#permissions): a submission is seen by whoever
sees its suite, uploaded and re-scored by the suite's editors and admins."""

from __future__ import annotations

from django.conf import settings
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
)
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, PermissionDenied, ValidationError
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response

from cases import permissions as rules
from cases.api.permissions import InSuiteAccess, TeamPricesAccess
from cases.api.views import NOT_ALLOWED, NOT_FOUND, PROBLEMS, CasebookViewMixin
from cases.models import SuiteVersion
from scoring.api.pagination import CountedPagination
from scoring.api.parsers import RawRunFileParser
from scoring.api.serializers import (
    COMPARED_CASES_LISTED,
    CaseDraftsQuerySerializer,
    CaseDraftsSerializer,
    ComparisonQuerySerializer,
    ComparisonSerializer,
    FailureGroupSerializer,
    ModelPriceSerializer,
    QueueSerializer,
    ReportSerializer,
    RescoreSerializer,
    SubmissionListSerializer,
    SubmissionSerializer,
    SubmittedSerializer,
    UploadQuerySerializer,
    comparison_answer,
)
from scoring.ingest import pipeline
from scoring.ingest.uploads import UploadRefused, UploadTooLarge
from scoring.models import ModelPrice, ReviewQueue, Status, Submission
from scoring.results import case_drafts, usage
from scoring.results.comparison import baseline_named
from scoring.results.failures import API_GROUPS, Failures
from scoring.results.filtersets import RunFilterSet
from scoring.review import blind, decisions, queues


def _absolute(request, url: str) -> str:
    return request.build_absolute_uri(url)


VERSION_PARAMETER = OpenApiParameter(
    "version",
    int,
    description="the results against this version, current or scored before (see "
    "`earlier_results`); the current one when absent",
)


def _version_number(query, submission: Submission) -> int:
    number = query.get("version", "")
    if not number:
        return submission.version.number
    if not number.isdigit() or int(number) < 1:
        raise ValidationError({"version": ["A version number: 1, 2, 3, …"]})
    return int(number)


def filterset_parameters(filterset_class) -> list[OpenApiParameter]:
    """The query parameters of a FilterSet, for the schema of an action that filters with
    it (an action needing more than ``DjangoFilterBackend`` gives the FilterSet)."""
    return [
        OpenApiParameter(
            name,
            str,
            enum=[value for value, _ in field.extra["choices"]]
            if "choices" in field.extra
            else None,
            description=str(field.extra.get("help_text", "")),
        )
        for name, field in filterset_class.base_filters.items()
    ]


class SuiteSubmissionViewSet(CasebookViewMixin, mixins.ListModelMixin, viewsets.GenericViewSet):
    """``/api/suites/{suite_pk}/submissions/``: a suite's submissions, and uploads."""

    serializer_class = SubmissionListSerializer
    permission_classes = [InSuiteAccess]
    # Multipart for ``-F file=@runs.jsonl``; any other body is the run file itself, read
    # as a stream (never whole into memory).
    parser_classes = [MultiPartParser, RawRunFileParser]

    def get_queryset(self):
        if self.schema_only():
            return Submission.objects.none()
        # Not the version's document: decoding a suite's cases for each listed submission
        # took longer than the rest of the page (docs/review.md#scale).
        versions = self.suite.submissions.select_related("version", "uploader")
        return versions.defer("version__document", "version__audit")

    @extend_schema(summary="The suite's submissions, newest first")
    def list(self, request, suite_pk):
        return super().list(request, suite_pk)

    @extend_schema(
        summary="Upload a run file to score against the suite's current version",
        description=(
            "The body is the run file (JSON lines in any supported format, a JSON array of "
            "runs such as τ-bench's results, or an Inspect AI log, `.json` or `.eval`; "
            "gzip-compressed or not), or a multipart form with the file in `file`. "
            "The file is stored and scored in the background: poll `status_url`. A file "
            "that gives no valid run ends `failed`, its `error` saying what to change."
        ),
        parameters=[UploadQuerySerializer],
        request={
            "application/x-ndjson": OpenApiTypes.BINARY,
            "multipart/form-data": {
                "type": "object",
                "properties": {"file": {"type": "string", "format": "binary"}},
            },
        },
        responses={
            202: SubmittedSerializer,
            400: OpenApiResponse(description="empty, or not a file"),
            403: NOT_ALLOWED,
            404: NOT_FOUND,
            413: OpenApiResponse(description="over the upload limit"),
        },
    )
    def create(self, request, suite_pk):
        query = UploadQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        try:
            submission = self._store(request, **query.validated_data)
        except UploadTooLarge as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE)
        except UploadRefused as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        answer = {
            "id": submission.pk,
            "status_url": _absolute(
                request, reverse("api:submission-detail", args=[submission.pk])
            ),
            "html_url": _absolute(request, submission.get_absolute_url()),
        }
        return Response(answer, status=status.HTTP_202_ACCEPTED)

    def _store(self, request, label="", format="", filename="", case_field=""):
        # Refused before a byte of an oversized body is read.
        if int(request.META.get("CONTENT_LENGTH") or 0) > settings.CASEBOOK_MAX_UPLOAD_BYTES:
            raise UploadTooLarge
        upload = request.FILES.get("file")
        if upload is None:
            raise UploadRefused("send the run file as the body, or as the multipart field 'file'")
        return pipeline.create_submission(
            self.suite,
            request.user,
            upload,
            filename=filename
            or (upload.name if request.content_type.startswith("multipart/") else ""),
            label=label,
            format_name=format,
            case_field=case_field,
        )


class SubmissionViewSet(
    CasebookViewMixin,
    mixins.RetrieveModelMixin,
    viewsets.GenericViewSet,
):
    """``/api/submissions/{id}/``: status, results, re-scoring."""

    serializer_class = SubmissionSerializer
    pagination_class = CountedPagination
    lookup_value_regex = "[0-9]+"

    def get_queryset(self):
        if self.schema_only():
            return Submission.objects.none()
        visible = rules.visible_suites(self.request.user)
        return Submission.objects.filter(suite__in=visible).select_related(
            "suite__team", "version", "uploader"
        )

    def check_object_permissions(self, request, submission):
        super().check_object_permissions(request, submission)
        if request.method != "GET" and not rules.can_edit_suite(request.user, submission.suite):
            raise PermissionDenied("Only the suite's editors and admins change its submissions.")

    @extend_schema(
        summary="A submission's status and counts",
        parameters=[OpenApiParameter("id", int, OpenApiParameter.PATH)],
        responses={200: SubmissionSerializer, 404: NOT_FOUND},
    )
    def retrieve(self, request, pk):
        return super().retrieve(request, pk)

    @extend_schema(
        summary="Delete a submission with its runs and results (the suite's editors)",
        parameters=[OpenApiParameter("id", int, OpenApiParameter.PATH)],
        responses={204: None, 403: NOT_ALLOWED, 404: NOT_FOUND},
    )
    def destroy(self, request, pk):
        pipeline.delete_submission(self.get_object())
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(
        summary="The reports (docs/formats.md#reports), each with the page that reviews it",
        description=(
            "Filtered as the runs table is (its parameters, read by the same FilterSet); "
            "`version` reads the results kept from an earlier version instead, which only "
            "its own fields and its run's filter."
        ),
        parameters=[
            OpenApiParameter("id", int, OpenApiParameter.PATH),
            VERSION_PARAMETER,
            *filterset_parameters(RunFilterSet),
        ],
        responses={200: ReportSerializer(many=True), 400: PROBLEMS, 404: NOT_FOUND},
    )
    @action(detail=True)
    def results(self, request, pk):
        submission = self.get_object()
        filters = RunFilterSet(request.query_params)
        if not filters.is_valid():
            raise ValidationError(filters.errors)
        number = _version_number(request.query_params, submission)
        count = None
        if number == submission.version.number:
            results, count = filters.paged(submission), filters.count(submission)
        elif submission.earlier_scores.filter(version__number=number).exists():
            try:
                results = filters.earlier_results(submission, number)
            except ValueError as exc:
                raise ValidationError({"version": [str(exc)]}) from None
        else:
            raise NotFound(f"The submission was not scored against version {number}.")
        page = self.paginator.paginate_queryset(
            results.only("run_id", "submission_id", "report"), request, self, count=count
        )
        context = self.get_serializer_context()
        run_ids = [result.run_id for result in page]
        context["reviews"] = decisions.decisions_of_runs(run_ids)
        context["runs"] = usage.runs_beside_reports(run_ids)
        serializer = ReportSerializer(page, many=True, context=context)
        return self.get_paginated_response(serializer.data)

    @extend_schema(
        summary="The failure groups by cause (kind and tool), most runs first",
        parameters=[OpenApiParameter("id", int, OpenApiParameter.PATH)],
        responses={200: FailureGroupSerializer(many=True), 404: NOT_FOUND},
    )
    @action(detail=True, pagination_class=None)
    def failures(self, request, pk):
        submission = self.get_object()
        failures = Failures(submission)
        groups = failures.groups(failures.top_level()[:API_GROUPS], labels=False)
        return Response(FailureGroupSerializer(groups, many=True).data)

    @extend_schema(
        summary="The submission compared with a baseline: its regressions and fixes by case",
        description=(
            "The baseline is the last finished submission of the suite uploaded before this "
            "one (`baseline=latest`, the default) or the last such with a label "
            "(`baseline=LABEL`); `baseline` is null when there is none. Cases are compared "
            "as the comparison page compares them (docs/review.md#comparing-submissions): "
            f"at most {COMPARED_CASES_LISTED} regressions and fixes each, `counts` counts "
            "them all. 409 until the submission is scored to the end."
        ),
        parameters=[OpenApiParameter("id", int, OpenApiParameter.PATH), ComparisonQuerySerializer],
        responses={
            200: ComparisonSerializer,
            404: NOT_FOUND,
            409: OpenApiResponse(description="not scored to the end yet"),
        },
    )
    @action(detail=True, pagination_class=None)
    def comparison(self, request, pk):
        submission = self.get_object()
        query = ComparisonQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        if submission.status != Status.DONE:
            detail = f"The submission is {submission.status}: it is compared once scored."
            return Response({"detail": detail}, status=status.HTTP_409_CONFLICT)
        baseline = baseline_named(submission, query.validated_data["baseline"])
        return Response(comparison_answer(request, submission, baseline))

    @extend_schema(
        summary="Draft a case per case key from the submission's passing runs (saves nothing)",
        description=(
            "One draft case per case key of the passing runs under the filters (those of "
            "the runs table), made from the key's first passing run or the one `run` names: "
            "its calls as expected calls, batches as `ordered`/`depends_on_result`, ids "
            "dropped, free text loosened per the tool catalog. Nothing is saved: review "
            "them, then save those you keep with the cases endpoints (`PUT "
            "/api/suites/{id}/cases/{key}/`) or as a new suite (`POST /api/suites/import/`). "
            f"At most {case_drafts.DRAFTS_PER_REQUEST} drafts per request (`left_out` says "
            "how many keys more). For editors of the suite, or (with `into=new`) of a team."
        ),
        parameters=[OpenApiParameter("id", int, OpenApiParameter.PATH), CaseDraftsQuerySerializer],
        responses={200: CaseDraftsSerializer, 403: NOT_ALLOWED, 404: NOT_FOUND},
    )
    @action(detail=True, url_path="case-drafts", pagination_class=None)
    def case_drafts(self, request, pk):
        submission = self.get_object()
        query = CaseDraftsQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        into_suite, _ = rules.draft_targets(request.user, submission.suite)
        into = query.validated_data["into"]
        if into == "suite" and not into_suite:
            raise PermissionDenied("Only the suite's editors draft revisions of its cases.")
        drafts = case_drafts.draft_cases(
            submission,
            RunFilterSet(request.query_params),
            into=submission.suite if into == "suite" else None,
            picks=query.validated_data.get("run", []),
        )
        return Response(CaseDraftsSerializer(drafts).data)

    @extend_schema(
        summary="Score the submission's runs again, against another version of its suite",
        parameters=[OpenApiParameter("id", int, OpenApiParameter.PATH)],
        request=RescoreSerializer,
        responses={
            202: SubmissionSerializer,
            403: NOT_ALLOWED,
            404: NOT_FOUND,
            409: OpenApiResponse(description="still reading its file"),
        },
    )
    @action(detail=True, methods=["post"])
    def rescore(self, request, pk):
        submission = self.get_object()
        serializer = RescoreSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        number = serializer.validated_data["version"]
        version = SuiteVersion.objects.filter(suite=submission.suite, number=number).first()
        if version is None:
            raise NotFound(f"The suite has no version {number}.")
        try:
            pipeline.rescore(submission, version)
        except pipeline.NotReady as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        submission = get_object_or_404(self.get_queryset(), pk=pk)
        return Response(self.get_serializer(submission).data, status=status.HTTP_202_ACCEPTED)


class QueueViewSet(CasebookViewMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """``/api/queues/{id}/``: a review queue's progress and, double-blind, its agreement.
    Seen by whoever sees its submission's suite."""

    serializer_class = QueueSerializer
    lookup_value_regex = "[0-9]+"

    def get_queryset(self):
        if self.schema_only():
            return ReviewQueue.objects.none()
        visible = rules.visible_suites(self.request.user)
        return ReviewQueue.objects.filter(submission__suite__in=visible).select_related(
            "submission__suite"
        )

    @extend_schema(
        summary="A review queue's progress, and a double-blind queue's agreement (κ)",
        parameters=[OpenApiParameter("id", int, OpenApiParameter.PATH)],
        responses={200: QueueSerializer, 404: NOT_FOUND},
    )
    def retrieve(self, request, pk):
        queue = self.get_object()
        if queue.double_blind:
            progress = blind.progress(queue)
            queue.total, queue.done = progress.items, progress.resolved
            queue.agreement = blind.agreement(queue, final=True) if progress.all_decided else None
        else:
            progress = queues.progress(queue)
            queue.total, queue.done, queue.agreement = progress.total, progress.done, None
        return Response(self.get_serializer(queue).data)


PRICE_ID = OpenApiParameter("id", int, OpenApiParameter.PATH, description="the price")


@extend_schema_view(
    list=extend_schema(summary="The team's own model prices (its members)"),
    create=extend_schema(
        summary="Add a model price (the team's admins)",
        responses={201: ModelPriceSerializer, 400: PROBLEMS, 403: NOT_ALLOWED, 404: NOT_FOUND},
    ),
    retrieve=extend_schema(summary="One model price", parameters=[PRICE_ID]),
    partial_update=extend_schema(summary="Change a model price", parameters=[PRICE_ID]),
    destroy=extend_schema(
        summary="Delete a model price: the catalogue's applies again", parameters=[PRICE_ID]
    ),
)
class ModelPriceViewSet(
    CasebookViewMixin,
    mixins.ListModelMixin,
    mixins.CreateModelMixin,
    mixins.RetrieveModelMixin,
    mixins.UpdateModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet,
):
    """``/teams/{team_slug}/prices/``: what the team's runs are costed at, before the
    catalogue's prices (docs/formats.md#cost)."""

    serializer_class = ModelPriceSerializer
    permission_classes = [TeamPricesAccess]
    lookup_value_regex = "[0-9]+"
    http_method_names = ["get", "post", "patch", "delete", "head", "options"]
    pagination_class = None

    def get_queryset(self):
        if self.schema_only():
            return ModelPrice.objects.none()
        return ModelPrice.objects.filter(team=self.team).order_by("model")

    def get_serializer_context(self):
        return {**super().get_serializer_context(), "team": getattr(self, "team", None)}
