"""Serializers: what each endpoint reads and writes, and the first check of its input.

A suite file or a case is validated by the matcher (``scoring.matcher.load_suite``, through
``cases.services``), the one place that knows the suite file's rules
(docs/formats.md#suite-files); its problems come back as ``{"problems": [{"path",
"message"}]}``. Everything else is checked here, by field.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping

from django.contrib.auth import get_user_model
from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema_field
from rest_framework import serializers

from cases import services
from cases.forms import LabelForm
from cases.models import (
    MAX_RETENTION_DAYS,
    Membership,
    ReviewLabel,
    Role,
    Suite,
    SuiteVersion,
    Team,
    User,
    Visibility,
)
from scoring.audit import KINDS
from scoring.matcher import InvalidInput, parse_suite_document

from .parsers import MAX_SUITE_FILE_BYTES

# What the body of POST /api/suites/import/ is (its ``from``).
SUITE_FILE, TAU_BENCH = "suite-file", "tau-bench"
IMPORT_SOURCES = [SUITE_FILE, TAU_BENCH]


def page_url(request, suite: Suite) -> str:
    """The absolute URL of the suite's page."""
    return request.build_absolute_uri(suite.get_absolute_url())


# --- problems ------------------------------------------------------------------------------


class ProblemSerializer(serializers.Serializer):
    path = serializers.CharField(help_text="JSON path of the field, empty for the whole input")
    message = serializers.CharField()


class ProblemsSerializer(serializers.Serializer):
    """A 400 answer for an invalid suite file or case: every problem at once."""

    problems = ProblemSerializer(many=True)


class FieldErrorsSerializer(serializers.Serializer):
    """A 400 answer for the request's own fields and parameters (a missing ``team``, a
    ``revision`` below 1): DRF's messages by field name. Only documented, never used to read
    or write; its schema is FieldErrorsExtension's."""


class FieldErrorsExtension(OpenApiSerializerExtension):
    target_class = FieldErrorsSerializer

    def map_serializer(self, auto_schema, direction):
        return {
            "type": "object",
            "description": FieldErrorsSerializer.__doc__.split("Only")[0].strip(),
            "additionalProperties": {},
            # so that an answer is one or the other, never both
            "not": {"required": ["problems"]},
        }


BAD_REQUEST = PolymorphicProxySerializer(
    component_name="BadRequest",
    serializers=[ProblemsSerializer, FieldErrorsSerializer],
    resource_type_field_name=None,
)


class StaleEditSerializer(serializers.Serializer):
    """A 409 answer: the case was saved by someone else since ``revision`` was read."""

    detail = serializers.CharField()
    revision = serializers.IntegerField(help_text="the case's current revision")


# --- teams ---------------------------------------------------------------------------------


class TeamSerializer(serializers.ModelSerializer):
    role = serializers.CharField(read_only=True, help_text="the caller's role in the team")

    class Meta:
        model = Team
        fields = ["slug", "name", "role"]
        read_only_fields = ["slug"]

    def create(self, validated_data):
        team = services.create_team(validated_data["name"], self.context["request"].user)
        team.role = Role.ADMIN
        return team


class MemberSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    role = serializers.ChoiceField(choices=Role.choices)

    def to_representation(self, instance: Membership):
        return {"username": instance.user.username, "role": instance.role}

    def validate_username(self, value):
        user = get_user_model().objects.filter(username=value).first()
        if user is None:
            raise serializers.ValidationError("No user has this username.")
        return user

    def create(self, validated_data):
        """Add the user to the team, or change their role; ``self.added`` tells which."""
        try:
            membership, self.added = services.set_member_role(
                self.context["team"], validated_data["username"], validated_data["role"]
            )
        except services.LastAdmin as exc:
            raise serializers.ValidationError({"role": [str(exc)]}) from None
        return membership


class ReviewLabelSerializer(serializers.ModelSerializer):
    """A team's review label; checked by the team page's own form (``LabelForm``)."""

    class Meta:
        model = ReviewLabel
        fields = ["id", "name", "key", "colour"]
        extra_kwargs = {"key": {"help_text": "a letter that applies it on the run page, or empty"}}

    def validate(self, attrs):
        data = {"name": self.instance.name, "key": self.instance.key,
                "colour": self.instance.colour} if self.instance else {}  # fmt: skip
        form = LabelForm({**data, **attrs}, team=self.context["team"], instance=self.instance)
        if not form.is_valid():
            raise serializers.ValidationError(
                {field: list(errors) for field, errors in form.errors.items()}
            )
        return form.cleaned_data

    def create(self, validated_data):
        return self._saved(ReviewLabel(team=self.context["team"], **validated_data))

    def update(self, instance, validated_data):
        for field, value in validated_data.items():
            setattr(instance, field, value)
        return self._saved(instance)

    def _saved(self, label: ReviewLabel) -> ReviewLabel:
        try:
            services.save_label(label)
        except services.LabelTaken as exc:
            raise serializers.ValidationError({"name": [str(exc)]}) from None
        return label


# --- suites --------------------------------------------------------------------------------


TRACE_CASE_ATTRIBUTE_HELP = (
    "live traces (/otlp/v1/traces): a span attribute whose value names the case of a trace "
    "with no casebook.case, such as gen_ai.conversation.id"
)
TRACE_CASE_MAP_HELP = (
    "that attribute's values → case keys; a value not in it names the case of its own key, "
    "if there is one, else the run is unassigned"
)
LIVE_RETENTION_HELP = (
    "days the runs of live traces (and those naming no case) are kept after their day; "
    "null: forever (docs/operations.md#retention)"
)
UPLOAD_RETENTION_HELP = "days uploaded files' runs are kept after the upload; null: forever"


class SuiteSerializer(serializers.ModelSerializer):
    team: serializers.SlugRelatedField[Team] = serializers.SlugRelatedField(
        slug_field="slug", read_only=True
    )
    tags = serializers.ListField(child=serializers.CharField(), read_only=True)
    match = serializers.JSONField(
        read_only=True,
        allow_null=True,
        help_text=(
            'match options (docs/formats.md#match-options): an object, "lenient", or null '
            "for the defaults"
        ),
    )
    trace_case_attribute = serializers.CharField(
        read_only=True, help_text=TRACE_CASE_ATTRIBUTE_HELP
    )
    trace_case_map = serializers.JSONField(read_only=True, help_text=TRACE_CASE_MAP_HELP)
    live_retention_days = serializers.IntegerField(
        read_only=True, allow_null=True, help_text=LIVE_RETENTION_HELP
    )
    upload_retention_days = serializers.IntegerField(
        read_only=True, allow_null=True, help_text=UPLOAD_RETENTION_HELP
    )
    case_count = serializers.IntegerField(read_only=True)
    version = serializers.IntegerField(
        read_only=True, allow_null=True, help_text="the current version's number"
    )
    url = serializers.SerializerMethodField(help_text="the suite's page")

    class Meta:
        model = Suite
        fields = [
            "id",
            "team",
            "name",
            "slug",
            "description",
            "tags",
            "visibility",
            "match",
            "trace_case_attribute",
            "trace_case_map",
            "live_retention_days",
            "upload_retention_days",
            "case_count",
            "version",
            "url",
        ]
        read_only_fields = fields

    def get_url(self, suite) -> str:
        return page_url(self.context["request"], suite)


class SuiteSettingsSerializer(serializers.Serializer):
    """What ``PATCH /api/suites/{id}/`` changes; each change becomes a new version."""

    name = serializers.CharField(max_length=200)
    description = serializers.CharField(allow_blank=True, required=False)
    tags = serializers.ListField(child=serializers.CharField(max_length=100), required=False)
    visibility = serializers.ChoiceField(choices=Visibility.choices, required=False)
    match = serializers.JSONField(
        required=False,
        allow_null=True,
        help_text=(
            'match options (docs/formats.md#match-options): an object, "lenient", or null '
            "for the defaults"
        ),
    )
    trace_case_attribute = serializers.CharField(
        max_length=200, allow_blank=True, required=False, help_text=TRACE_CASE_ATTRIBUTE_HELP
    )
    trace_case_map = serializers.JSONField(required=False, help_text=TRACE_CASE_MAP_HELP)
    live_retention_days = serializers.IntegerField(
        min_value=1,
        max_value=MAX_RETENTION_DAYS,
        allow_null=True,
        required=False,
        help_text=LIVE_RETENTION_HELP,
    )
    upload_retention_days = serializers.IntegerField(
        min_value=1,
        max_value=MAX_RETENTION_DAYS,
        allow_null=True,
        required=False,
        help_text=UPLOAD_RETENTION_HELP,
    )

    def update(self, suite, validated_data):
        if not validated_data:
            return suite
        try:
            services.update_settings(suite, self.context["request"].user, **validated_data)
        except InvalidInput as exc:
            raise serializers.ValidationError(_by_field(exc.problems)) from None
        return suite


def _by_field(problems) -> dict[str, list[str]]:
    """Matcher problems of the suite's own fields, keyed by the field they are under."""
    errors: dict[str, list[str]] = {}
    for problem in problems:
        field = problem.path.replace("[", ".").split(".")[0] or "non_field_errors"
        message = problem.message if problem.path == field else f"{problem}"
        errors.setdefault(field, []).append(message)
    return errors


@extend_schema_field(OpenApiTypes.BINARY)
class UploadField(serializers.FileField):
    """A file sent in the request (the schema's default for files is a URL to one)."""


class SuiteUploadSerializer(serializers.Serializer):
    """A suite file (docs/formats.md#suite-files), JSON or YAML, as a multipart field or the
    whole body."""

    file = UploadField(write_only=True)

    def validate_file(self, upload):
        if upload.size > MAX_SUITE_FILE_BYTES:
            raise serializers.ValidationError(
                f"A suite file may hold at most {MAX_SUITE_FILE_BYTES // 2**20} MB."
            )
        return upload

    def validate(self, attrs):
        upload = attrs["file"]
        # InvalidInput (not JSON, not YAML) is answered like any other suite problem.
        attrs["document"] = parse_suite_document(upload.read(), upload.name or "")
        return attrs


class ImportQuerySerializer(serializers.Serializer):
    team = serializers.SlugField(help_text="the team the suite is added to")
    name = serializers.CharField(
        max_length=200, required=False, help_text="from=tau-bench: the suite's name"
    )
    # The stubs see this hide Field.read_only; DRF's metaclass takes it off the class.
    read_only = serializers.CharField(  # type: ignore[assignment]
        required=False,
        allow_blank=True,
        help_text=(
            "from=tau-bench: the tools that only read, comma-separated (empty: none); "
            "default: guessed from their names"
        ),
    )

    def get_fields(self):
        fields = super().get_fields()
        # ``from`` is a Python keyword: the field is named here.
        fields["from"] = serializers.ChoiceField(
            choices=IMPORT_SOURCES,
            default=SUITE_FILE,
            help_text="what the body is: a suite file, or τ-bench's results file",
        )
        return fields

    def validate_read_only(self, value: str) -> list[str]:
        return [name.strip() for name in value.split(",") if name.strip()]


class TauBenchUploadSerializer(serializers.Serializer):
    """τ-bench's results file (docs/benchmarks.md#a-suite-from-the-results-file), as a
    multipart field or the whole body."""

    file = UploadField(write_only=True)

    def validate_file(self, upload):
        if upload.size > MAX_SUITE_FILE_BYTES:
            raise serializers.ValidationError(
                f"A results file imported here may hold at most {MAX_SUITE_FILE_BYTES // 2**20}"
                " MB: upload a larger one to a suite, whose failed submission makes its cases,"
                " or use manage.py import_tau_bench."
            )
        return upload


class ToolRoleSerializer(serializers.Serializer):
    name = serializers.CharField()
    # The stubs see this hide Field.read_only; DRF's metaclass takes it off the class.
    read_only = serializers.BooleanField(  # type: ignore[assignment]
        help_text="its actions were left out of the cases"
    )
    # The stubs see this hide Field.source; DRF's metaclass takes it off the class.
    source = serializers.ChoiceField(  # type: ignore[assignment]
        choices=["name", "given"], help_text="guessed from the name, or as given in read_only"
    )


class WarningSerializer(serializers.Serializer):
    path = serializers.CharField(help_text="a JSON path into the suite file")
    message = serializers.CharField()


class ImportedSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    version = serializers.IntegerField()
    url = serializers.URLField(help_text="the suite's page")
    warnings = WarningSerializer(
        many=True, help_text="what the tool catalog says of the cases; nothing was refused"
    )
    tools = ToolRoleSerializer(
        many=True, required=False, help_text="from=tau-bench: the tools the actions call"
    )


class ToolsImportedSerializer(serializers.Serializer):
    version = serializers.IntegerField(help_text="the suite's new version")
    message = serializers.CharField(help_text="the version's message")
    tools = serializers.IntegerField(help_text="how many tools the catalog now holds")
    warnings = WarningSerializer(many=True)


class ExportQuerySerializer(serializers.Serializer):
    version = serializers.IntegerField(
        min_value=1, required=False, help_text="a version number (default: the current one)"
    )
    tag = serializers.CharField(
        required=False, help_text="the newest version with this tag, e.g. release"
    )


class CopySerializer(serializers.Serializer):
    team = serializers.SlugField(help_text="the team that gets the copy")


class CopiedSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    url = serializers.URLField(help_text="the copy's page")


# --- cases ---------------------------------------------------------------------------------


class ExpectedCallSerializer(serializers.Serializer):
    name = serializers.CharField()
    required_args = serializers.DictField(required=False)
    ordered = serializers.BooleanField(required=False)
    depends_on_result = serializers.BooleanField(required=False)
    exact_args = serializers.BooleanField(required=False)


class CaseSerializer(serializers.Serializer):
    """A case as its object in the suite file (docs/formats.md#cases), with its ``id`` and
    ``revision``.

    The declared fields document the shape; validation is the matcher's, as part of the
    suite (``services.save_case``), so the body is passed on whole, unknown fields kept.
    ``revision``, when sent, is the revision the edit started from: a case saved since
    answers 409 instead of being overwritten.
    """

    id = serializers.IntegerField(read_only=True)
    revision = serializers.IntegerField(
        min_value=1,
        required=False,
        help_text="the case's revision; send it back to refuse overwriting a newer save",
    )
    key = serializers.CharField()
    title = serializers.CharField(required=False)
    prompt = serializers.CharField(required=False)
    tags = serializers.ListField(child=serializers.CharField(), required=False)
    match = serializers.JSONField(required=False, allow_null=True)
    expected_calls = ExpectedCallSerializer(many=True, required=False)
    extra_calls = serializers.ChoiceField(choices=["allow", "forbid"], required=False)
    expectations = serializers.ListField(
        child=serializers.DictField(),
        required=False,
        help_text="objects with a type (docs/formats.md#expectations-in-a-case)",
    )

    def to_representation(self, case):
        return {"id": case.pk, "revision": case.revision, **services.case_document(case)}

    def to_internal_value(self, data):
        if not isinstance(data, Mapping):
            raise serializers.ValidationError(
                {"non_field_errors": ["A case must be a JSON object."]}
            )
        revision = None
        if data.get("revision") is not None:
            try:
                revision = self.fields["revision"].run_validation(data["revision"])
            except serializers.ValidationError as exc:
                raise serializers.ValidationError({"revision": exc.detail}) from None
        document = copy.copy(data)  # keeps the parser's marks of duplicate keys
        for name in ("id", "revision"):
            document.pop(name, None)
        return {"revision": revision, "document": document}

    def create(self, validated_data):
        saved = services.save_case(
            self.context["suite"], validated_data["document"], self.context["request"].user
        )
        return saved.case

    def update(self, case, validated_data):
        saved = services.save_case(
            self.context["suite"],
            validated_data["document"],
            self.context["request"].user,
            case=case,
            revision=validated_data["revision"],
        )
        return saved.case


# --- versions ------------------------------------------------------------------------------


class VersionSerializer(serializers.ModelSerializer):
    author: serializers.SlugRelatedField[User] = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True
    )

    class Meta:
        model = SuiteVersion
        fields = ["number", "author", "created", "message", "tag"]
        read_only_fields = ["number", "author", "created", "message", "tag"]


class VersionDetailSerializer(VersionSerializer):
    document = serializers.JSONField(
        read_only=True, help_text="the suite file (docs/formats.md#suite-files)"
    )

    class Meta(VersionSerializer.Meta):
        fields = [*VersionSerializer.Meta.fields, "document"]
        read_only_fields = fields


class AuditProblemSerializer(serializers.Serializer):
    case = serializers.CharField(help_text="the case's key")
    kind = serializers.ChoiceField(choices=KINDS)
    message = serializers.CharField(help_text="what is wrong and what to change")


class AuditUncheckedSerializer(serializers.Serializer):
    case = serializers.CharField(help_text="the case's key")
    message = serializers.CharField(help_text="what could not be checked, and why")


class AuditSerializer(serializers.Serializer):
    """A version's audit (docs/audit.md#json), as ``manage.py audit --json`` prints it."""

    cases = serializers.IntegerField(help_text="how many cases were audited")
    problems = AuditProblemSerializer(many=True, help_text="in case order")
    unchecked = AuditUncheckedSerializer(
        many=True, required=False, help_text="present only when some check could not be made"
    )


class TagSerializer(serializers.Serializer):
    tag = serializers.CharField(
        max_length=50, allow_blank=True, help_text='e.g. "release"; empty removes the tag'
    )

    def update(self, version, validated_data):
        version.tag = validated_data["tag"]
        version.save(update_fields=["tag"])
        return version


class DiffQuerySerializer(serializers.Serializer):
    against = serializers.IntegerField(
        min_value=0,
        required=False,
        help_text="the older version (default: the one before; 0 is the empty suite)",
    )


class CaseChangeSerializer(serializers.Serializer):
    key = serializers.CharField()
    # The stubs see this hide Serializer.fields; DRF's metaclass takes it off the class.
    fields = serializers.ListField(  # type: ignore[assignment]
        child=serializers.CharField()
    )
    predicates_added = serializers.ListField(child=serializers.CharField())
    predicates_removed = serializers.ListField(child=serializers.CharField())


class ParameterChangeSerializer(serializers.Serializer):
    name = serializers.CharField()
    before = serializers.CharField(help_text='type and whether required: "integer, required"')
    after = serializers.CharField()


class ToolChangeSerializer(serializers.Serializer):
    name = serializers.CharField()
    parameters_added = serializers.ListField(child=serializers.CharField())
    parameters_removed = serializers.ListField(child=serializers.CharField())
    parameters_changed = ParameterChangeSerializer(many=True)
    # The stubs see this hide Serializer.fields; DRF's metaclass takes it off the class.
    fields = serializers.ListField(  # type: ignore[assignment]
        child=serializers.CharField(), help_text="the tool's other fields that differ"
    )


class VersionDiffSerializer(serializers.Serializer):
    old = serializers.IntegerField(help_text="the older version's number (0: the empty suite)")
    new = serializers.IntegerField()
    suite_fields = serializers.ListField(child=serializers.CharField())
    verdict_settings = serializers.ListField(
        child=serializers.CharField(),
        help_text="the changed suite settings that change verdicts, each in words",
    )
    tools_added = serializers.ListField(child=serializers.CharField(), help_text="tool names")
    tools_removed = serializers.ListField(child=serializers.CharField(), help_text="tool names")
    tools_changed = serializers.SerializerMethodField(help_text="tool names")
    tool_changes = ToolChangeSerializer(many=True, help_text="what changed in each changed tool")
    added = serializers.ListField(child=serializers.CharField(), help_text="case keys")
    removed = serializers.ListField(child=serializers.CharField(), help_text="case keys")
    changed = CaseChangeSerializer(many=True)

    def get_tools_changed(self, diff) -> list[str]:
        return [change["name"] for change in diff["tool_changes"]]
