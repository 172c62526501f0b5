"""Serializers of the submissions API (docs/api.md#submissions) and of review queues
(docs/api.md#review-queues)."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from cases.natural import natural_sorted
from scoring.forms import ModelPriceForm
from scoring.importers import FORMAT_NAMES
from scoring.matcher import CAUSE_KINDS
from scoring.models import InvalidLine, ModelPrice, Result, ReviewQueue, ReviewStatus, Submission
from scoring.results import known_failures, usage
from scoring.results.comparison import CHANGES, LATEST, Change, Comparison, scope_of
from scoring.runfiles.casefield import MAX_LENGTH as CASE_FIELD_LENGTH
from scoring.runfiles.casefield import parse_case_field

INVALID_LINES_LISTED = 1000
# What a submission's ``usage`` holds in the API (the page shows its histograms too).
API_USAGE_KEYS = ("totals", "p50", "p95", "runs_with_usage", "cost_per_passing_run",
                  "unpriced_models")  # fmt: skip


def serialized_list(
    serializer: type[serializers.Serializer], instances: Any, **kwargs: Any
) -> list:
    """``serializer(instances, many=True, **kwargs).data``: a list (DRF makes a
    ``ListSerializer`` of ``serializer``, whose data is a ``ReturnList``)."""
    # DRF's stubs have no overload of ``__new__`` for ``many``: they take it for one
    # instance's ``ReturnDict``.
    return serializer(instances, many=True, **kwargs).data  # type: ignore[return-value]


class UploadQuerySerializer(serializers.Serializer):
    # A declared field, not ``Field.label``: DRF's metaclass takes it off the class, which
    # its stubs cannot tell.
    label = serializers.CharField(  # type: ignore[assignment]
        required=False, allow_blank=True, max_length=200, help_text="e.g. the model's name"
    )
    format = serializers.ChoiceField(
        choices=FORMAT_NAMES, required=False, help_text="the run format; detected when absent"
    )
    filename = serializers.CharField(
        required=False, max_length=255, help_text="a name for a file sent as the whole body"
    )
    case_field = serializers.CharField(
        required=False,
        max_length=CASE_FIELD_LENGTH,
        help_text="where each run names its case when not `case`: a dotted path with [n]"
        " indexes, e.g. task_id or metadata.case",
    )

    def validate_case_field(self, value: str) -> str:
        try:
            parse_case_field(value)
        except ValueError as exc:
            raise serializers.ValidationError(str(exc)) from None
        return value


class SubmittedSerializer(serializers.Serializer):
    """The 202 answer to an upload."""

    id = serializers.IntegerField()
    status_url = serializers.URLField()
    html_url = serializers.URLField()


class InvalidLineSerializer(serializers.ModelSerializer):
    class Meta:
        model = InvalidLine
        fields = ["line", "reason"]


REGRESSIONS_LISTED = 1000


class RegressionSerializer(serializers.Serializer):
    case = serializers.CharField(source="case_key")
    signature = serializers.CharField(help_text="the failure's signature (case and causes)")
    marked_fixed_in = serializers.IntegerField(source="decided_in_id", allow_null=True)
    marked_fixed_by = serializers.CharField(source="decided_by.username", default=None)


class EarlierScoreSerializer(serializers.Serializer):
    """The submission's result against a version it was scored against before."""

    version = serializers.IntegerField(source="version.number")
    total = serializers.IntegerField()
    scored = serializers.IntegerField()
    counts = serializers.SerializerMethodField()
    pass_rate = serializers.FloatField(allow_null=True)
    scoring_finished = serializers.DateTimeField(allow_null=True)
    results_url = serializers.SerializerMethodField()

    @extend_schema_field(
        {
            "type": "object",
            "properties": {k: {"type": "integer"} for k in ("pass", "fail", "error")},
        }
    )
    def get_counts(self, score) -> dict:
        return {"pass": score.passed, "fail": score.failed, "error": score.errored}

    @extend_schema_field(OpenApiTypes.URI)
    def get_results_url(self, score) -> str:
        url = reverse("api:submission-results", args=[score.submission_id])
        return self.context["request"].build_absolute_uri(f"{url}?version={score.version.number}")


class SubmissionSerializer(serializers.ModelSerializer):
    """A submission's status and counts, the same numbers its page shows."""

    suite = serializers.IntegerField(source="suite_id")
    version = serializers.IntegerField(source="version.number")
    uploader = serializers.CharField(source="uploader.username", default=None)
    counts = serializers.SerializerMethodField()
    pass_rate = serializers.FloatField(read_only=True, allow_null=True)
    invalid_lines = serializers.SerializerMethodField(
        help_text=f"the first {INVALID_LINES_LISTED}; ``invalid`` counts them all"
    )
    invalid_lines_omitted = serializers.SerializerMethodField(
        help_text="how many of the ``invalid`` lines ``invalid_lines`` leaves out (past the "
        "first listed, or past the first CASEBOOK_MAX_STORED_INVALID_LINES, whose reasons "
        "are not stored)"
    )
    unknown_cases = serializers.SerializerMethodField(help_text="keys of cases not in the version")
    regressions = serializers.SerializerMethodField(
        help_text="known failures marked fixed in an earlier submission that fail here again "
        "(“fixed, failing again” on the pages; not the review status “regression”)"
    )
    earlier_results = serializers.SerializerMethodField(
        help_text="its results against the versions it was scored against before being "
        "re-scored (``version`` is the current one)"
    )
    usage = serializers.SerializerMethodField(
        help_text="what its runs cost: ``totals``, ``p50`` and ``p95`` per run, "
        "``runs_with_usage``, ``cost_per_passing_run``, ``unpriced_models`` (docs/api.md#usage)"
    )
    html_url = serializers.SerializerMethodField()
    results_url = serializers.SerializerMethodField()

    class Meta:
        model = Submission
        fields = [
            "id",
            "suite",
            "version",
            "label",
            "uploader",
            "filename",
            "size",
            "formats_seen",
            "case_field",
            "status",
            "error",
            "total",
            "scored",
            "counts",
            "pass_rate",
            "invalid",
            "invalid_lines",
            "invalid_lines_omitted",
            "unknown_cases",
            "stored_runs",
            "created",
            "ingest_started",
            "ingest_finished",
            "scoring_finished",
            "regressions",
            "earlier_results",
            "usage",
            "html_url",
            "results_url",
        ]

    @extend_schema_field(
        {
            "type": "object",
            "properties": {k: {"type": "integer"} for k in ("pass", "fail", "error")},
        }
    )
    def get_counts(self, submission) -> dict:
        return {"pass": submission.passed, "fail": submission.failed, "error": submission.errored}

    @extend_schema_field(InvalidLineSerializer(many=True))
    def get_invalid_lines(self, submission) -> list:
        lines = submission.invalid_lines.all()[:INVALID_LINES_LISTED]
        return serialized_list(InvalidLineSerializer, lines)

    @extend_schema_field(RegressionSerializer(many=True))
    def get_regressions(self, submission) -> list:
        found = known_failures.failing_again(submission)[:REGRESSIONS_LISTED]
        return serialized_list(RegressionSerializer, found)

    @extend_schema_field(EarlierScoreSerializer(many=True))
    def get_earlier_results(self, submission) -> list:
        scores = submission.earlier_scores.select_related("version").defer(
            "version__document", "version__audit"
        )
        return serialized_list(EarlierScoreSerializer, scores, context=self.context)

    @extend_schema_field({"type": "object", "nullable": True})
    def get_usage(self, submission) -> dict | None:
        made = usage.usage_of(submission)
        return None if made is None else {key: made[key] for key in API_USAGE_KEYS}

    def get_invalid_lines_omitted(self, submission) -> int:
        listed = submission.invalid_lines.all()[:INVALID_LINES_LISTED].count()
        return submission.invalid - listed

    def get_unknown_cases(self, submission) -> list[str]:
        return natural_sorted(submission.unknown_cases)

    @extend_schema_field(OpenApiTypes.URI)
    def get_html_url(self, submission) -> str:
        return self.context["request"].build_absolute_uri(submission.get_absolute_url())

    @extend_schema_field(OpenApiTypes.URI)
    def get_results_url(self, submission) -> str:
        url = reverse("api:submission-results", args=[submission.pk])
        return self.context["request"].build_absolute_uri(url)


class RunReviewSerializer(serializers.Serializer):
    """The run's review as the team decided it (a double-blind queue's decisions count
    only once resolved)."""

    status = serializers.ChoiceField(choices=ReviewStatus.choices)
    labels = serializers.ListField(child=serializers.CharField(), help_text="label names")


class ReportSerializer(serializers.Serializer):
    """A report (docs/formats.md#reports) as stored, with its run's review and the page that
    reviews it."""

    case = serializers.CharField()
    trial = serializers.IntegerField()
    verdict = serializers.ChoiceField(choices=["pass", "fail", "error"])
    predicates = serializers.ListField(child=serializers.DictField())
    error = serializers.CharField(allow_null=True)
    reward = serializers.FloatField(
        allow_null=True,
        help_text="the file's own score of the run (`meta.reward`, as τ-bench writes it); "
        "null when the file gave none",
    )
    review = RunReviewSerializer()
    html_url = serializers.URLField()

    def to_representation(self, result: Result) -> dict:
        url = reverse("run", args=[result.submission_id, result.run_id])
        untriaged = {"status": ReviewStatus.UNTRIAGED.value, "labels": []}
        run = self.context["runs"].get(result.run_id)
        return {
            **result.report,
            "reward": run.reward if run is not None else None,
            "usage": usage.usage_object(run),
            "review": self.context.get("reviews", {}).get(result.run_id, untriaged),
            "html_url": self.context["request"].build_absolute_uri(url),
        }


class RescoreSerializer(serializers.Serializer):
    version = serializers.IntegerField(min_value=1, help_text="the suite version to score against")


class SubmissionListSerializer(SubmissionSerializer):
    """A submission in a list: its status and counts, without what takes a query of each
    (the invalid lines, earlier results, usage and regressions: a query of a million runs'
    results for the last, docs/review.md#scale)."""

    class Meta(SubmissionSerializer.Meta):
        fields = [
            f
            for f in SubmissionSerializer.Meta.fields
            if f
            not in (
                "invalid_lines",
                "invalid_lines_omitted",
                "earlier_results",
                "regressions",
                "usage",
            )
        ]


class ArgumentGroupSerializer(serializers.Serializer):
    argument = serializers.CharField()
    runs = serializers.IntegerField()
    cases = serializers.IntegerField()


class FailureGroupSerializer(serializers.Serializer):
    """A failure group by cause, as ``GET /api/submissions/{id}/failures/`` lists it
    (docs/api.md#submissions)."""

    kind = serializers.ChoiceField(choices=CAUSE_KINDS)
    tool = serializers.CharField(allow_null=True, help_text="null when the cause names no tool")
    runs = serializers.IntegerField(help_text="failing runs of the group (each counted once)")
    cases = serializers.IntegerField()
    first_seen = serializers.IntegerField(
        help_text="id of the suite's earliest submission with a failure of this kind and tool"
    )
    arguments = ArgumentGroupSerializer(
        many=True, help_text="the arguments concerned, most runs first (at most 20)"
    )

    def to_representation(self, group):
        data = super().to_representation(group)
        data["tool"] = group.tool or None
        return data


class KappaSerializer(serializers.Serializer):
    name = serializers.CharField(help_text='the status or label ("status": all statuses)')
    kappa = serializers.FloatField(
        allow_null=True,
        help_text="κ (see `statistic`); null where undefined (one answer for every run)",
    )
    agreement = serializers.FloatField(help_text="the share of runs they agree on")
    first = serializers.IntegerField(
        help_text="runs the first reviewer gave it (with more than two: the first of its pair)"
    )
    second = serializers.IntegerField(help_text="runs the second reviewer (of its pair) gave it")


class AgreementSerializer(serializers.Serializer):
    items = serializers.IntegerField(help_text="runs both reviewers decided")
    reviewers = serializers.ListField(child=serializers.CharField())
    statistic = serializers.ChoiceField(
        choices=["cohen", "fleiss"],
        help_text="Cohen's κ with two reviewers; Fleiss' κ with more (two of them to a run)",
    )
    status = KappaSerializer()
    statuses = KappaSerializer(many=True)
    labels = KappaSerializer(many=True)


class QueueSerializer(serializers.ModelSerializer):
    """A review queue and its progress; a double-blind one's agreement once both reviewers
    have decided every run (null before: it would show how the decisions lean)."""

    total = serializers.IntegerField(read_only=True, help_text="runs in the queue")
    done = serializers.IntegerField(
        read_only=True, help_text="runs reviewed (double-blind: resolved)"
    )
    agreement = AgreementSerializer(allow_null=True, read_only=True)
    html_url = serializers.SerializerMethodField()

    class Meta:
        model = ReviewQueue
        fields = ["id", "name", "submission", "double_blind", "total", "done", "agreement",
                  "html_url"]  # fmt: skip

    @extend_schema_field(OpenApiTypes.URI)
    def get_html_url(self, queue) -> str:
        return self.context["request"].build_absolute_uri(queue.get_absolute_url())


class CaseDraftsQuerySerializer(serializers.Serializer):
    into = serializers.ChoiceField(
        choices=["suite", "new"],
        default="suite",
        help_text="`suite`: a key the suite has is drafted as a revision of its case (for its "
        "editors); `new`: every draft a new case, for a new suite",
    )
    case = serializers.CharField(required=False, help_text="only the runs of this case")
    tag = serializers.CharField(required=False, help_text="only the runs of cases with this tag")
    tool = serializers.CharField(required=False, help_text="only the runs that called this tool")
    text = serializers.CharField(
        required=False, help_text="only the runs whose final text has this"
    )
    review = serializers.ChoiceField(choices=ReviewStatus.values, required=False)
    run = serializers.ListField(
        child=serializers.IntegerField(),
        required=False,
        help_text="run ids to draft from, instead of a key's first passing run (repeat it)",
    )


class CaseDraftSerializer(serializers.Serializer):
    key = serializers.CharField()
    run = serializers.IntegerField(source="run.run_id", help_text="the run it was drafted from")
    trial = serializers.IntegerField(source="run.trial")
    trials = serializers.SerializerMethodField(help_text="run ids of the key's passing trials")
    revises = serializers.BooleanField(help_text="a draft revision of the suite's case of the key")
    case = serializers.DictField(
        help_text="the draft case, as the suite file writes it (docs/formats.md#cases)"
    )
    labels = serializers.ListField(
        child=serializers.CharField(), help_text="what the draft checks, in words"
    )

    def get_trials(self, draft) -> list[int]:
        return [trial.run_id for trial in draft.trials]


class CaseDraftsSerializer(serializers.Serializer):
    runs = serializers.IntegerField(help_text="passing runs under the filters")
    keys = serializers.IntegerField(help_text="their case keys")
    left_out = serializers.IntegerField(help_text="keys beyond the drafts' cap: narrow the filters")
    drafts = CaseDraftSerializer(many=True)


COMPARED_CASES_LISTED = 1000


class ComparisonQuerySerializer(serializers.Serializer):
    baseline = serializers.CharField(
        default=LATEST,
        max_length=200,
        help_text="`latest`: the last finished submission of the suite uploaded before this "
        "one; any other value: the last such submission with that label",
    )


class ComparedSideSerializer(serializers.Serializer):
    """One submission's runs of a case, and the run a reader should open."""

    runs = serializers.IntegerField(help_text="its trials compared")
    passed = serializers.IntegerField()
    html_url = serializers.SerializerMethodField(help_text="the page of the run shown")

    @extend_schema_field(OpenApiTypes.URI)
    def get_html_url(self, side) -> str:
        url = reverse("run", args=[self.context["submission"].pk, side.shown_run])
        return self.context["request"].build_absolute_uri(url)


class ComparedCaseSerializer(serializers.Serializer):
    case = serializers.CharField()
    baseline = serializers.SerializerMethodField()
    candidate = serializers.SerializerMethodField()
    delta = serializers.FloatField(help_text="the change of pass rate, from 0 to ±1")
    redefined = serializers.BooleanField(
        help_text="the case is defined differently in the two versions of the suite"
    )
    now_failing = serializers.IntegerField(
        help_text="trials both sides have that passed on the baseline and not now"
    )
    now_passing = serializers.IntegerField(
        help_text="trials both sides have that did not pass on the baseline and pass now"
    )
    trials_unmatched = serializers.BooleanField(
        help_text="both sides have trials, none with the same number: only rates compared"
    )

    @extend_schema_field(ComparedSideSerializer)
    def get_baseline(self, row) -> dict:
        return self._side(row.baseline, self.context["baseline"])

    @extend_schema_field(ComparedSideSerializer)
    def get_candidate(self, row) -> dict:
        return self._side(row.candidate, self.context["candidate"])

    def _side(self, side, submission) -> dict:
        context = {**self.context, "submission": submission}
        return ComparedSideSerializer(side, context=context).data


class ComparisonSerializer(serializers.Serializer):
    """``GET /api/submissions/{id}/comparison/`` (docs/api.md#submissions)."""

    baseline = serializers.SerializerMethodField(help_text="null when no submission matches")
    counts = serializers.SerializerMethodField(
        help_text="cases by change: regressed, fixed, still_failing, unchanged, new, gone, "
        "still_passing"
    )
    baseline_pass_rate = serializers.FloatField(allow_null=True)
    candidate_pass_rate = serializers.FloatField(allow_null=True)
    regressions = ComparedCaseSerializer(many=True, help_text="cases that pass less often")
    fixes = ComparedCaseSerializer(many=True, help_text="cases that pass more often")
    html_url = serializers.URLField(allow_null=True, help_text="the comparison's page")

    @extend_schema_field(SubmissionListSerializer(allow_null=True))
    def get_baseline(self, made) -> dict | None:
        return made["baseline"]

    @extend_schema_field({"type": "object", "additionalProperties": {"type": "integer"}})
    def get_counts(self, made) -> dict:
        return made["counts"]


def comparison_answer(request, candidate: Submission, baseline: Submission | None) -> dict:
    """What ``ComparisonSerializer`` answers of ``candidate`` against ``baseline``: the
    regressions and fixes at most ``COMPARED_CASES_LISTED`` each, in the page's order."""
    if baseline is None:
        empty = {change.value: 0 for change in CHANGES}
        return {
            "baseline": None,
            "counts": empty,
            "baseline_pass_rate": None,
            "candidate_pass_rate": candidate.pass_rate,
            "regressions": [],
            "fixes": [],
            "html_url": None,
        }
    made = Comparison(baseline, candidate, scope_of(baseline, candidate))
    context = {"request": request, "baseline": baseline, "candidate": candidate}
    rows = made.rows

    def listed(change: Change) -> list:
        found = [row for row in rows if row.change is change][:COMPARED_CASES_LISTED]
        return serialized_list(ComparedCaseSerializer, found, context=context)

    page = reverse("compare", args=[candidate.suite_id])
    return {
        "baseline": SubmissionListSerializer(baseline, context=context).data,
        "counts": {change.value: count for change, count in made.totals.classes},
        "baseline_pass_rate": made.totals.base_rate,
        "candidate_pass_rate": made.totals.cand_rate,
        "regressions": listed(Change.REGRESSED),
        "fixes": listed(Change.FIXED),
        "html_url": request.build_absolute_uri(
            f"{page}?baseline={baseline.pk}&candidate={candidate.pk}"
        ),
    }


class ModelPriceSerializer(serializers.ModelSerializer):
    """A team's own price for a model (docs/formats.md#cost), in US dollars per million
    tokens; checked by the prices page's own form (``ModelPriceForm``)."""

    class Meta:
        model = ModelPrice
        fields = ["id", "model", "input_per_mtok", "cached_input_per_mtok", "output_per_mtok"]

    def validate(self, attrs):
        fields = ModelPriceSerializer.Meta.fields[1:]
        given = {name: getattr(self.instance, name) for name in fields} if self.instance else {}
        data = {k: "" if v is None else v for k, v in {**given, **attrs}.items()}
        form = ModelPriceForm(data, team=self.context["team"], instance=self.instance)
        if not form.is_valid():
            raise serializers.ValidationError(
                {field: list(errors) for field, errors in form.errors.items()}
            )
        return form.cleaned_data

    def create(self, validated_data):
        return ModelPrice.objects.create(team=self.context["team"], **validated_data)
