"""The API's views (docs/api.md#endpoints). Each one checks access through ``.permissions`` (which
asks ``cases.permissions``), validates through ``.serializers`` and changes things only
through ``cases.services``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict

from django.conf import settings
from django.db.models import OuterRef, Subquery
from django.shortcuts import get_object_or_404
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
)
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.parsers import BaseParser, FormParser, MultiPartParser
from rest_framework.renderers import BaseRenderer, BrowsableAPIRenderer
from rest_framework.response import Response

from cases import permissions as rules
from cases import services, tau_bench
from cases.audits import stored_audit
from cases.diff import diff_documents
from cases.filtersets import SuiteFilterSet, listed_suites
from cases.models import Case, Membership, ReviewLabel, Suite, SuiteVersion, Team
from cases.tool_catalog import tools_from_any
from scoring.matcher import InvalidInput, suite_warnings

from .parsers import RAW_SUITE_FILE_PARSERS, ExactJSONParser, ExactJSONRenderer
from .permissions import (
    CanSeeSuite,
    InSuiteAccess,
    SuiteAccess,
    TeamLabelsAccess,
    TeamMembersAccess,
    team_to_author_in,
)
from .serializers import (
    BAD_REQUEST,
    TAU_BENCH,
    AuditSerializer,
    CaseSerializer,
    CopiedSerializer,
    CopySerializer,
    DiffQuerySerializer,
    ExportQuerySerializer,
    ImportedSerializer,
    ImportQuerySerializer,
    MemberSerializer,
    ReviewLabelSerializer,
    StaleEditSerializer,
    SuiteSerializer,
    SuiteSettingsSerializer,
    SuiteUploadSerializer,
    TagSerializer,
    TauBenchUploadSerializer,
    TeamSerializer,
    ToolsImportedSerializer,
    VersionDetailSerializer,
    VersionDiffSerializer,
    VersionSerializer,
    page_url,
)

PROBLEMS = OpenApiResponse(
    BAD_REQUEST, description="every problem of the file or case, by JSON path; or by field"
)
NOT_ALLOWED = OpenApiResponse(description="visible, but only editors and admins change it")
NOT_FOUND = OpenApiResponse(description="no such thing, or not visible to the caller")
SUITE_ID = OpenApiParameter("id", int, OpenApiParameter.PATH, description="the suite")
TAU_BENCH_NAME = "τ-bench"  # a suite's name when the caller gives none
TAU_BENCH_MESSAGE = "Imported from τ-bench results"


class CasebookViewMixin:
    """JSON with exact numbers both ways; the services' errors as HTTP answers."""

    parser_classes: Sequence[type[BaseParser]] = [ExactJSONParser, FormParser, MultiPartParser]
    renderer_classes: Sequence[type[BaseRenderer]] = [ExactJSONRenderer, BrowsableAPIRenderer]

    def handle_exception(self, exc):
        if isinstance(exc, InvalidInput):
            problems = [problem.to_dict() for problem in exc.problems]
            return Response({"problems": problems}, status=status.HTTP_400_BAD_REQUEST)
        if isinstance(exc, services.StaleEdit):
            return Response(
                {"detail": str(exc), "revision": exc.case.revision},
                status=status.HTTP_409_CONFLICT,
            )
        return super().handle_exception(exc)

    def schema_only(self) -> bool:
        """True while drf-spectacular builds the schema (no request user, no parent)."""
        return getattr(self, "swagger_fake_view", False)


# --- teams ---------------------------------------------------------------------------------


@extend_schema_view(
    list=extend_schema(summary="The caller's teams, with their role in each"),
    create=extend_schema(summary="Create a team; the caller becomes its admin"),
    retrieve=extend_schema(summary="One of the caller's teams", responses={200: TeamSerializer}),
)
class TeamViewSet(
    CasebookViewMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    viewsets.GenericViewSet,
):
    serializer_class = TeamSerializer
    lookup_field = "slug"

    def get_queryset(self):
        if self.schema_only():
            return Team.objects.none()
        user = self.request.user
        role = Membership.objects.filter(team=OuterRef("pk"), user=user).values("role")[:1]
        return rules.teams_of(user).annotate(role=Subquery(role)).order_by("name", "pk")


@extend_schema(parameters=[OpenApiParameter("team_slug", str, OpenApiParameter.PATH)])
@extend_schema_view(
    list=extend_schema(summary="The team's members (any member may look)"),
)
class MemberViewSet(CasebookViewMixin, mixins.ListModelMixin, viewsets.GenericViewSet):
    serializer_class = MemberSerializer
    permission_classes = [TeamMembersAccess]
    lookup_field = "user__username"
    lookup_url_kwarg = "username"
    lookup_value_regex = "[^/]+"

    def get_queryset(self):
        if self.schema_only():
            return Membership.objects.none()
        return self.team.memberships.select_related("user").order_by("user__username")

    def get_serializer_context(self):
        return {**super().get_serializer_context(), "team": getattr(self, "team", None)}

    @extend_schema(
        summary="Add a member, or change a member's role (the team's admins)",
        responses={
            200: OpenApiResponse(MemberSerializer, description="role changed"),
            201: OpenApiResponse(MemberSerializer, description="member added"),
            403: NOT_ALLOWED,
            404: NOT_FOUND,
        },
    )
    def create(self, request, team_slug):
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        serializer.save()
        added = status.HTTP_201_CREATED if serializer.added else status.HTTP_200_OK
        return Response(serializer.data, status=added)

    @extend_schema(
        summary="Remove a member (the team's admins; never its last admin)",
        parameters=[OpenApiParameter("username", str, OpenApiParameter.PATH)],
        responses={204: None, 400: OpenApiResponse(description="the last admin")},
    )
    def destroy(self, request, team_slug, username):
        try:
            services.remove_member(self.get_object())
        except services.LastAdmin as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(status=status.HTTP_204_NO_CONTENT)


LABEL_ID = OpenApiParameter("id", int, OpenApiParameter.PATH)


@extend_schema_view(
    list=extend_schema(summary="The team's review labels (its members)"),
    create=extend_schema(
        summary="Add a review label (the team's editors and admins)",
        responses={201: ReviewLabelSerializer, 400: BAD_REQUEST, 403: NOT_ALLOWED, 404: NOT_FOUND},
    ),
    retrieve=extend_schema(summary="One review label", parameters=[LABEL_ID]),
    partial_update=extend_schema(
        summary="Rename a review label, or change its key or colour", parameters=[LABEL_ID]
    ),
    destroy=extend_schema(
        summary="Delete a review label: it comes off every run", parameters=[LABEL_ID]
    ),
)
class ReviewLabelViewSet(
    CasebookViewMixin,
    mixins.ListModelMixin,
    mixins.CreateModelMixin,
    mixins.RetrieveModelMixin,
    mixins.UpdateModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet,
):
    """``/teams/{team_slug}/labels/``: the labels a team's reviewers put on runs."""

    serializer_class = ReviewLabelSerializer
    permission_classes = [TeamLabelsAccess]
    lookup_value_regex = "[0-9]+"
    http_method_names = ["get", "post", "patch", "delete", "head", "options"]
    pagination_class = None

    def get_queryset(self):
        if self.schema_only():
            return ReviewLabel.objects.none()
        return self.team.review_labels.order_by("name")

    def get_serializer_context(self):
        return {**super().get_serializer_context(), "team": getattr(self, "team", None)}


# --- suites --------------------------------------------------------------------------------


@extend_schema_view(
    list=extend_schema(summary="Suites the caller may see"),
    retrieve=extend_schema(summary="One suite", parameters=[SUITE_ID]),
)
class SuiteViewSet(
    CasebookViewMixin, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet
):
    serializer_class = SuiteSerializer
    permission_classes = [SuiteAccess]
    lookup_value_regex = "[0-9]+"
    filter_backends = [DjangoFilterBackend]
    filterset_class = SuiteFilterSet

    def get_queryset(self):
        if self.schema_only():
            return Suite.objects.none()
        latest = SuiteVersion.objects.filter(suite=OuterRef("pk")).order_by("-number")
        return listed_suites(self.request.user).annotate(
            version=Subquery(latest.values("number")[:1])
        )

    @extend_schema(
        summary="Change the suite's settings (editors and admins); a new version",
        parameters=[SUITE_ID],
        request=SuiteSettingsSerializer,
        responses={200: SuiteSerializer, 403: NOT_ALLOWED, 404: NOT_FOUND},
    )
    def partial_update(self, request, pk=None):
        suite = self.get_object()
        settings = SuiteSettingsSerializer(
            suite, data=request.data, partial=True, context=self.get_serializer_context()
        )
        settings.is_valid(raise_exception=True)
        settings.save()
        return Response(self.get_serializer(self.get_object()).data)

    @extend_schema(
        summary="Add a suite from a suite file (JSON or YAML), or from τ-bench's results",
        description=(
            "The body is the suite file itself (`application/json`, `application/yaml`, "
            "`text/yaml`), or a multipart upload in the field `file`. The caller must be an "
            "editor or admin of the team. An invalid file creates nothing and answers 400 "
            "with every problem by JSON path.\n\n"
            "With `from=tau-bench` the body is τ-bench's results file (JSON, or the multipart "
            "field `file`): each task becomes a case expecting its actions that write, in order, "
            "and saying its outputs. `read_only` names the tools that only read (their actions "
            "are left out); without it they are guessed from their names. The answer's `tools` "
            "says which were taken as read-only, and why."
        ),
        parameters=[ImportQuerySerializer],
        request={
            "application/json": OpenApiTypes.OBJECT,
            "application/yaml": OpenApiTypes.STR,
            "text/yaml": OpenApiTypes.STR,
            "application/x-yaml": OpenApiTypes.STR,
            "multipart/form-data": SuiteUploadSerializer,
        },
        responses={201: ImportedSerializer, 400: PROBLEMS, 403: NOT_ALLOWED, 404: NOT_FOUND},
    )
    @action(
        detail=False,
        methods=["post"],
        url_path="import",
        parser_classes=[*RAW_SUITE_FILE_PARSERS, MultiPartParser],
    )
    def import_suite(self, request):
        query = ImportQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        team = team_to_author_in(request.user, query.validated_data["team"])
        imported = {}
        if query.validated_data["from"] == TAU_BENCH:
            document, roles = self._tau_bench_suite(request, query.validated_data)
            imported["tools"] = [asdict(role) for role in roles]
            suite = services.create_suite(team, document, request.user, TAU_BENCH_MESSAGE)
        else:
            upload = SuiteUploadSerializer(data=request.data)
            upload.is_valid(raise_exception=True)
            document = upload.validated_data["document"]
            suite = services.create_suite(team, document, request.user)
        imported |= {
            "id": suite.pk,
            "version": suite.latest_version.number,
            "url": page_url(request, suite),
            "warnings": [warning.to_dict() for warning in suite_warnings(document)],
        }
        return Response(ImportedSerializer(imported).data, status=status.HTTP_201_CREATED)

    def _tau_bench_suite(self, request, query: dict) -> tuple[dict, list[tau_bench.ToolRole]]:
        """The suite of the tasks of the τ-bench results file in the body, and each tool's
        role: as ``read_only`` gives them, else guessed from the names (a new suite has no
        catalog)."""
        upload = TauBenchUploadSerializer(data=request.data)
        upload.is_valid(raise_exception=True)
        file = upload.validated_data["file"]
        results = tau_bench.read_results(
            file,
            max_item_bytes=settings.CASEBOOK_MAX_LINE_BYTES,
            max_depth=settings.CASEBOOK_MAX_JSON_DEPTH,
            max_rows=settings.CASEBOOK_MAX_SUITE_ROWS,
        )
        roles = tau_bench.roles_for(results.tools, query.get("read_only"), [], "read_only")
        name = query.get("name") or TAU_BENCH_NAME
        document = tau_bench.suite_document(
            results, name=name, read_only=tau_bench.read_only_names(roles)
        )
        return document, roles

    @extend_schema(
        summary="Replace the suite's tool catalog (editors and admins); a new version",
        description=(
            "The body (or multipart field `file`) is an OpenAI `tools` array, Anthropic tool "
            "definitions, an MCP `tools/list` result (bare, in its JSON-RPC envelope, or a list "
            "of its pages; its tools kept as the server gave them), BFCL function docs, or a "
            "list of `{name, description, parameters}`. Answers 201 with "
            "the new version and what the catalog now says of the cases (`warnings`), or 400 "
            "with every problem by JSON path."
        ),
        parameters=[SUITE_ID],
        request={
            "application/json": OpenApiTypes.ANY,
            "multipart/form-data": SuiteUploadSerializer,
        },
        responses={201: ToolsImportedSerializer, 400: PROBLEMS, 403: NOT_ALLOWED, 404: NOT_FOUND},
    )
    @action(
        detail=True,
        methods=["post"],
        url_path="tools",
        parser_classes=[*RAW_SUITE_FILE_PARSERS, MultiPartParser],
    )
    def tools(self, request, pk=None):
        suite = self.get_object()
        upload = SuiteUploadSerializer(data=request.data)
        upload.is_valid(raise_exception=True)
        imported = tools_from_any(upload.validated_data["document"])
        version = services.replace_tools(suite, imported.tools, request.user, imported.message)
        answer = {
            "version": version.number,
            "message": version.message,
            "tools": len(imported.tools),
            "warnings": [w.to_dict() for w in suite_warnings(version.document)],
        }
        return Response(ToolsImportedSerializer(answer).data, status=status.HTTP_201_CREATED)

    @extend_schema(
        summary="Download the suite file of the current version, or of ?version=N",
        parameters=[SUITE_ID, ExportQuerySerializer],
        responses={
            (200, "application/json"): OpenApiResponse(
                OpenApiTypes.OBJECT, description="the suite file, as an attachment"
            ),
            404: NOT_FOUND,
        },
    )
    @action(detail=True, methods=["get"], renderer_classes=[ExactJSONRenderer])
    def export(self, request, pk=None):
        suite = self.get_object()
        query = ExportQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        number, tag = query.validated_data.get("version"), query.validated_data.get("tag")
        version = services.pick_version(suite, str(number) if number else None, tag)
        filename = f"{suite.slug}.v{version.number}.suite.json"
        return Response(
            version.document,
            headers={"Content-Disposition": f'attachment; filename="{filename}"'},
        )

    @extend_schema(
        summary="Copy the suite's current version into a team where the caller is an editor",
        parameters=[SUITE_ID],
        request=CopySerializer,
        responses={201: CopiedSerializer, 400: PROBLEMS, 403: NOT_ALLOWED, 404: NOT_FOUND},
    )
    @action(detail=True, methods=["post"], permission_classes=[CanSeeSuite])
    def copy(self, request, pk=None):
        suite = self.get_object()
        target = CopySerializer(data=request.data)
        target.is_valid(raise_exception=True)
        team = team_to_author_in(request.user, target.validated_data["team"])
        copied = services.copy_suite(suite, team, request.user)
        data = {"id": copied.pk, "url": page_url(request, copied)}
        return Response(CopiedSerializer(data).data, status=status.HTTP_201_CREATED)


# --- cases ---------------------------------------------------------------------------------

SUITE_PK = OpenApiParameter("suite_pk", int, OpenApiParameter.PATH, description="the suite")
CASE_KEY = OpenApiParameter("key", str, OpenApiParameter.PATH, description="the case's key")


@extend_schema(parameters=[SUITE_PK])
@extend_schema_view(
    list=extend_schema(summary="The suite's cases, each as its object in the suite file"),
    retrieve=extend_schema(summary="One case", parameters=[CASE_KEY]),
    create=extend_schema(
        summary="Add a case (editors and admins); a new version",
        responses={201: CaseSerializer, 400: PROBLEMS, 403: NOT_ALLOWED, 404: NOT_FOUND},
    ),
    update=extend_schema(
        summary="Replace a case (editors and admins); a new version",
        description=(
            "Send `revision` as read to refuse overwriting a save made since: the answer "
            "is then 409 with the case's current revision."
        ),
        parameters=[CASE_KEY],
        responses={
            200: CaseSerializer,
            400: PROBLEMS,
            403: NOT_ALLOWED,
            404: NOT_FOUND,
            409: StaleEditSerializer,
        },
    ),
    destroy=extend_schema(
        summary="Remove a case (editors and admins); a new version", parameters=[CASE_KEY]
    ),
)
class CaseViewSet(
    CasebookViewMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet,
):
    serializer_class = CaseSerializer
    permission_classes = [InSuiteAccess]
    parser_classes = [ExactJSONParser]  # a case is nested JSON; a form cannot hold it
    lookup_field = "key"
    lookup_value_regex = ".+"  # keys may hold dots, spaces, even slashes (%2F in URLs)

    def get_queryset(self):
        if self.schema_only():
            return Case.objects.none()
        cases = self.suite.cases.prefetch_related("expected_calls", "expectations")
        return cases.order_by("position", "pk")

    def get_serializer_context(self):
        return {**super().get_serializer_context(), "suite": getattr(self, "suite", None)}

    def update(self, request, suite_pk=None, key=None):
        serializer = self.get_serializer(self.get_object(), data=request.data)
        serializer.is_valid(raise_exception=True)
        serializer.save()
        return Response(serializer.data)

    def perform_destroy(self, case):
        services.delete_case(case, self.request.user)


# --- versions ------------------------------------------------------------------------------

VERSION_NUMBER = OpenApiParameter("number", int, OpenApiParameter.PATH)


@extend_schema(parameters=[SUITE_PK])
@extend_schema_view(
    list=extend_schema(summary="The suite's versions, newest first"),
    retrieve=extend_schema(summary="One version, with its suite file", parameters=[VERSION_NUMBER]),
)
class VersionViewSet(
    CasebookViewMixin, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet
):
    permission_classes = [InSuiteAccess]
    lookup_field = "number"
    lookup_value_regex = "[0-9]+"

    def get_queryset(self):
        if self.schema_only():
            return SuiteVersion.objects.none()
        versions = self.suite.versions.select_related("author").order_by("-number")
        return versions.defer("document", "audit") if self.action == "list" else versions

    def get_serializer_class(self):
        return VersionSerializer if self.action == "list" else VersionDetailSerializer

    @extend_schema(
        summary='Tag the version, e.g. "release" (editors and admins)',
        parameters=[VERSION_NUMBER],
        request=TagSerializer,
        responses={200: VersionSerializer, 403: NOT_ALLOWED, 404: NOT_FOUND},
    )
    @action(detail=True, methods=["post"])
    def tag(self, request, suite_pk=None, number=None):
        tagging = TagSerializer(self.get_object(), data=request.data)
        tagging.is_valid(raise_exception=True)
        version = tagging.save()
        return Response(VersionSerializer(version).data)

    @extend_schema(
        summary="The version's audit: cases that contradict themselves, pass an idle agent, …",
        description=(
            "The audit made when the version was saved (docs/audit.md), as `manage.py audit "
            "--json` prints it. A version saved before audits were kept is audited on this "
            "first request, and the audit kept."
        ),
        parameters=[VERSION_NUMBER],
        responses={200: AuditSerializer, 404: NOT_FOUND},
    )
    @action(detail=True, methods=["get"])
    def audit(self, request, suite_pk=None, number=None):
        return Response(AuditSerializer(stored_audit(self.get_object()).to_dict()).data)

    @extend_schema(
        summary="What changed from version ?against=M (default: the one before) to this one",
        parameters=[VERSION_NUMBER, DiffQuerySerializer],
        responses={200: VersionDiffSerializer, 404: NOT_FOUND},
    )
    @action(detail=True, methods=["get"])
    def diff(self, request, suite_pk=None, number=None):
        new = self.get_object()
        query = DiffQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        against = query.validated_data.get("against", new.number - 1)
        old = get_object_or_404(self.suite.versions, number=against).document if against else {}
        diff = diff_documents(old, new.document)
        data = {"old": against, "new": new.number, **asdict(diff)}
        return Response(VersionDiffSerializer(data).data)
