"""Forms of scoring's pages: uploads, re-scoring, reviews, review queues, comparisons,
promoting a recorded call, cases from runs, BFCL and τ-bench imports, a team's model
prices."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from django import forms
from django.core import signing
from django.core.validators import MinValueValidator
from django.db.models import Max
from django.http import QueryDict
from django.utils.text import Truncator
from django.utils.timesince import timesince

from cases import tau_bench
from cases.models import ReviewLabel, Team, User
from cases.permissions import reviewers
from cases.services import likely_corrected
from scoring.importers import FORMAT_NAMES
from scoring.matcher import (
    InvalidInput,
    describe_arguments,
    dump_json,
    parse_json,
    pass_rate_text,
    pretty_json,
)
from scoring.models import ModelPrice, ReviewQueue, ReviewStatus, Status, Submission
from scoring.review import blind
from scoring.review.blind import DECISION_STATUSES
from scoring.review.decisions import UNCHANGED
from scoring.runfiles.casefield import MAX_LENGTH as CASE_FIELD_LENGTH
from scoring.runfiles.casefield import parse_case_field


class UploadForm(forms.Form):
    file = forms.FileField(
        label="Run file",
        help_text=(
            "JSON lines in any supported format, a JSON array of runs (τ-bench's results),"
            " or an Inspect AI log (.json or .eval); may be gzipped"
        ),
    )
    label = forms.CharField(
        max_length=200, required=False, help_text="e.g. the model's name and settings"
    )
    format = forms.ChoiceField(
        choices=[("", "detect from each line")] + [(name, name) for name in FORMAT_NAMES],
        required=False,
    )
    case_field = forms.CharField(
        label="Case field",
        max_length=CASE_FIELD_LENGTH,
        required=False,
        help_text="where each run names its case, when not in case: e.g. task_id, metadata.case",
    )

    def clean_case_field(self) -> str:
        value = self.cleaned_data["case_field"].strip()
        if value:
            try:
                parse_case_field(value)
            except ValueError as exc:
                raise forms.ValidationError(str(exc)) from None
        return value


class BFCLImportForm(forms.Form):
    team = forms.ModelChoiceField(queryset=Team.objects.none())
    name = forms.CharField(
        max_length=200, required=False, help_text="Default: the question file's name."
    )
    questions = forms.FileField(label="Question file (BFCL_v4_….json)")
    possible_answers = forms.FileField(
        label="Possible-answer file",
        required=False,
        help_text="Leave empty for irrelevance and relevance categories, which have none.",
    )
    underscore_dots = forms.BooleanField(
        required=False,
        label="Function names with . written as _ (for models whose API refuses dots)",
    )

    def __init__(self, *args, teams, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["team"].queryset = teams


class TauBenchImportForm(forms.Form):
    """A τ-bench results file to make a new suite of (first step: its tasks are previewed)."""

    team = forms.ModelChoiceField(queryset=Team.objects.none())
    name = forms.CharField(
        max_length=200, required=False, help_text="Default: the results file's name."
    )
    results = forms.FileField(
        label="Results file",
        help_text="τ-bench's results, as its run writes them: one JSON array of results",
    )

    def __init__(self, *args, teams, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["team"].queryset = teams


class TauBenchSuiteForm(forms.Form):
    """The preview's confirmation (docs/review.md#a-suite-from-τ-benchs-results): which of the
    tools the tasks' actions call only read, so that their actions are left out.

    ``roles`` (``cases.tau_bench.ToolRole``) give the choices and the proposal. Making the
    submission's suite its cases carries the suite's version previewed (``seen_version``);
    making a new suite carries the tasks read from the uploaded file (``tasks``), signed for
    this user, and the team and name chosen."""

    MAX_AGE = 60 * 60  # seconds a preview may be confirmed for
    MAX_TASKS_FIELD = 8 << 20  # below DATA_UPLOAD_MAX_MEMORY_SIZE, what a form may send

    read_only = forms.MultipleChoiceField(
        required=False, widget=forms.CheckboxSelectMultiple, label="Tools that only read"
    )
    seen_version = forms.IntegerField(widget=forms.HiddenInput, required=False)
    tasks = forms.CharField(widget=forms.HiddenInput, required=False)
    team = forms.ModelChoiceField(
        queryset=Team.objects.none(), widget=forms.HiddenInput, required=False
    )
    name = forms.CharField(max_length=200, widget=forms.HiddenInput, required=False)

    def __init__(self, *args, user, roles=None, teams=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.user = user
        self.signer = signing.TimestampSigner(salt=f"scoring.tau_bench:{user.pk}")
        self.carried, self.refusal = None, None
        if roles is None:  # a new suite: the tasks come with the form, its tools' roles guessed
            self.carried = self._carried(self.data.get("tasks") or "")
            roles = tau_bench.proposed_roles(self.carried.tools, []) if self.carried else []
        self.roles = roles
        self.fields["read_only"].choices = [(role.name, role.name) for role in roles]
        self.initial.setdefault("read_only", [role.name for role in roles if role.read_only])
        if teams is not None:
            self.fields["team"].queryset = teams

    def rows(self):
        """Each tool's checkbox beside what proposed its role."""
        return zip(self["read_only"], self.roles, strict=True)

    def keep(self, results: tau_bench.Results) -> None:
        """Carry the tasks to the confirmation; ``InvalidInput`` when they are too large."""
        signed = self.signer.sign_object(results.as_data(), serializer=_ExactJSON, compress=True)
        if len(signed) > self.MAX_TASKS_FIELD:
            limit = self.MAX_TASKS_FIELD >> 20
            raise InvalidInput.single("", f"too many tasks to preview: over {limit} MB")
        self.initial["tasks"] = signed

    def _carried(self, signed: str) -> tau_bench.Results | None:
        """The tasks the preview carried, or None (``refusal`` says why)."""
        try:
            data = self.signer.unsign_object(signed, serializer=_ExactJSON, max_age=self.MAX_AGE)
        except signing.SignatureExpired:
            self.refusal = "This preview is over an hour old: upload the file again."
        except signing.BadSignature:
            self.refusal = "This preview was altered or is not for you: upload the file again."
        else:
            return tau_bench.Results.from_data(data)
        return None

    def clean_tasks(self) -> tau_bench.Results | None:
        if self.refusal:
            raise forms.ValidationError(self.refusal)
        return self.carried

    def clean(self):
        data = super().clean()
        if self.carried is not None and not data.get("team"):
            self.add_error("team", "Choose a team where you are an editor.")
        return data

    def seeing(self, number: int) -> TauBenchSuiteForm:
        """The same form, bound to the suite's newer version ``number``."""
        data = _posted_copy(self.data)
        data["seen_version"] = str(number)
        return TauBenchSuiteForm(data, user=self.user, roles=self.roles)


class _ExactJSON:
    """Django's signing serializer, writing numbers as the matcher reads them (a ``Decimal``
    argument stays the number written)."""

    def dumps(self, obj) -> bytes:
        return dump_json(obj)

    def loads(self, data: bytes):
        return parse_json(data)


class RescoreForm(forms.Form):
    version = forms.TypedChoiceField(coerce=int)

    def __init__(self, *args, versions, **kwargs):
        super().__init__(*args, **kwargs)
        versions = list(versions)
        latest = max((v.number for v in versions), default=None)
        self.fields["version"].choices = [
            (v.number, self.describe(v, latest=v.number == latest)) for v in versions
        ]

    @staticmethod
    def describe(version, *, latest: bool) -> str:
        """``v3 · release — Changed case refund (latest)``, the message cut short."""
        tag = f" · {version.tag}" if version.tag else ""
        message = Truncator(version.message).chars(60)
        return f"v{version.number}{tag} — {message}{' (latest)' if latest else ''}"


class BulkReviewForm(forms.Form):
    """A review status and/or an assignee for every run of a filter or a failure group (the
    filter travels in the same POST as ``RunFilterSet`` fields)."""

    NOBODY = "nobody"

    status = forms.ChoiceField(
        choices=[("", "keep each run's status"), *ReviewStatus.choices], required=False
    )
    assignee = forms.ChoiceField(required=False)
    # "+<id>" puts the team's label on every run, "-<id>" takes it off. Not ``label``: that
    # is the runs table's filter, which travels in the same POST.
    set_label = forms.ChoiceField(required=False)

    def __init__(self, *args, assignees, labels=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.assignees = {str(user.pk): user for user in assignees}
        self.fields["assignee"].choices = [
            ("", "keep each run's assignee"),
            (self.NOBODY, "nobody"),
            *((pk, user.get_username()) for pk, user in self.assignees.items()),
        ]
        self.labels = {str(label.pk): label for label in labels}
        self.fields["set_label"].choices = [
            ("", "keep each run's labels"),
            *((f"+{pk}", f"add “{label.name}”") for pk, label in self.labels.items()),
            *((f"-{pk}", f"remove “{label.name}”") for pk, label in self.labels.items()),
        ]

    def clean(self):
        data = super().clean()
        if not data.get("status") and not data.get("assignee") and not data.get("set_label"):
            raise forms.ValidationError("Choose a status, an assignee or a label to set.")
        return data

    @property
    def label_change(self):
        """(the label, True to add it / False to remove it), or None."""
        value = self.cleaned_data.get("set_label")
        return (self.labels[value[1:]], value[0] == "+") if value else None

    def changes(self) -> dict:
        """The change to make, as ``decisions.review_runs`` takes it."""
        data = self.cleaned_data
        assignee = self.assignees.get(data["assignee"]) if data["assignee"] else UNCHANGED
        return {"status": data["status"], "assignee": assignee, "label_change": self.label_change}


class ReviewForm(forms.Form):
    """A change to a run's review. Each control of the review panel posts only its own
    field, so a field left out of the post is left unchanged (an empty ``assignee`` means
    nobody)."""

    status = forms.ChoiceField(choices=ReviewStatus.choices, required=False)
    assignee: forms.ModelChoiceField[User] = forms.ModelChoiceField(queryset=None, required=False)
    # A label to put on the run, or to take off it.
    label: forms.ModelChoiceField[ReviewLabel] = forms.ModelChoiceField(
        queryset=None, required=False
    )
    comment = forms.CharField(max_length=10_000, required=False, strip=True)
    advance = forms.BooleanField(required=False, help_text="then open the next failure")

    def __init__(self, *args, members, labels, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["assignee"].queryset = members
        self.fields["assignee"].empty_label = "nobody"
        self.fields["label"].queryset = labels

    def sent(self, name: str) -> bool:
        """Whether the post carried the field (so it is a change to make)."""
        return self.is_bound and name in self.data

    def changes(self) -> dict:
        """The change to make, as ``decisions.review_run`` takes it."""
        data = self.cleaned_data
        return {
            "status": data["status"] if self.sent("status") else "",
            "assignee": data["assignee"] if self.sent("assignee") else UNCHANGED,
            "label": data["label"],
            "comment_text": data["comment"],
        }


class BlindDecisionForm(forms.Form):
    """A reviewer's decision on an item of a double-blind queue, or the final one on a
    disputed item: a status and any of the team's labels."""

    status = forms.ChoiceField(choices=DECISION_STATUSES)
    labels: forms.ModelMultipleChoiceField[ReviewLabel] = forms.ModelMultipleChoiceField(
        queryset=None, required=False
    )

    def __init__(self, *args, labels, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["labels"].queryset = labels


class PromoteForm(forms.Form):
    """A recorded call made into an expected call of the case: added, or in place of one."""

    name = forms.CharField(max_length=200)
    required_args = forms.CharField(
        label="Required arguments",
        widget=forms.Textarea(attrs={"rows": 8, "class": "json", "spellcheck": "false"}),
        help_text="A JSON object; values may be argument matchers ($one_of, $regex, …).",
    )
    replace = forms.TypedChoiceField(
        label="Expected call", coerce=int, empty_value=None, required=False
    )
    # The case revision the form was made from: saving over a newer one is refused.
    revision = forms.IntegerField(widget=forms.HiddenInput, required=False)

    @classmethod
    def for_call(cls, call: dict, case, expected_calls: list[Mapping]) -> PromoteForm:
        """The form as first shown for recorded ``call``: its name and arguments, in place
        of the expected call it most likely corrects, against the case's revision."""
        initial = {
            "name": call["name"],
            "required_args": pretty_json(call.get("arguments") or {}).decode().rstrip("\n"),
            "replace": likely_corrected(expected_calls, call["name"]),
            "revision": case.revision,
        }
        return cls(initial=initial, expected_calls=expected_calls)

    def __init__(self, *args, expected_calls, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["replace"].choices = [("", "add as a new expected call")] + [
            (index, f"replace #{index}: {Truncator(describe_call(call)).chars(80)}")
            for index, call in enumerate(expected_calls)
        ]

    def clean_required_args(self):
        try:
            value = parse_json(self.cleaned_data["required_args"])
        except InvalidInput as exc:
            raise forms.ValidationError(exc.problems[0].message) from exc
        if not isinstance(value, dict):
            raise forms.ValidationError('Must be a JSON object: {"name": value, …}.')
        return value


_Field = TypeVar("_Field", bound=forms.Field)


def _field(form: forms.BaseForm, name: str, kind: type[_Field]) -> _Field:
    """The form's field ``name``, which its declaration makes a ``kind``."""
    field = form.fields[name]
    assert isinstance(field, kind), f"{name} is not a {kind.__name__}"
    return field


def _posted_copy(data: Mapping[str, Any]) -> QueryDict:
    """A mutable copy of a bound form's data (a post: each field's values kept)."""
    copied = QueryDict(mutable=True)
    copied.update(data)
    return copied


def describe_call(call: dict) -> str:
    """An expected call of a suite file in one line, its arguments in words as the run page
    says them: ``get_weather(city ≈ "paris" (ignoring case))``."""
    arguments = call.get("required_args")
    shown = ", ".join(describe_arguments(arguments)) if isinstance(arguments, Mapping) else ""
    return f"{call.get('name', '')}({shown})"


class CasesFromRunsForm(forms.Form):
    """Where the cases drafted from a filter's passing runs go: draft revisions of the
    suite's cases (its editors), or a new suite in a team where the author is an editor.
    The drafts kept (``include``: case keys) and the trials they come from (``run``: run
    ids) are read beside it (``picks``)."""

    target = forms.ChoiceField(widget=forms.RadioSelect, label="Save them")
    name = forms.CharField(max_length=200, required=False, label="New suite's name")
    team = forms.ModelChoiceField(queryset=Team.objects.none(), required=False)
    seen_version = forms.IntegerField(widget=forms.HiddenInput, required=False)

    INTO_SUITE, NEW_SUITE = "suite", "new"

    @classmethod
    def of_page(cls, posted, *, saving: bool, submission, into_suite: bool, teams):
        """The page's form: bound to the post when it saves; else showing the choices as
        they were made (a preview checks them only when saving, against the suite as it
        is then: the drafts are made again from it)."""
        suite = submission.suite
        label = submission.label or f"submission #{submission.pk}"
        initial = {
            "seen_version": suite.versions.aggregate(last=Max("number"))["last"],
            "name": f"{suite.name}: {label}"[:200],
            "team": suite.team_id if teams.filter(pk=suite.team_id).exists() else None,
        }
        if not saving:
            initial |= {name: posted[name] for name in ("target", "name", "team") if name in posted}
        return cls(posted if saving else None, into_suite=into_suite, teams=teams, initial=initial)

    def __init__(self, *args, into_suite: bool, teams, **kwargs):
        super().__init__(*args, **kwargs)
        self.into_suite = into_suite
        choices = []
        if into_suite:
            choices.append(
                (
                    self.INTO_SUITE,
                    "in this suite: each as a new case, or a draft revision of its case",
                )
            )
        if teams.exists():
            choices.append((self.NEW_SUITE, "as a new suite"))
        _field(self, "target", forms.ChoiceField).choices = choices
        self.offered_targets = [value for value, _ in choices]
        self.initial.setdefault("target", choices[0][0] if choices else "")
        _field(self, "team", forms.ModelChoiceField).queryset = teams

    def clean(self):
        data = super().clean()
        if data.get("target") == self.NEW_SUITE:
            if not (data.get("name") or "").strip():
                self.add_error("name", "Name the new suite.")
            if not data.get("team"):
                self.add_error("team", "Choose the new suite's team.")
        return data

    @property
    def chosen_target(self) -> str:
        """The target as chosen (valid or not), else the first offered: what to draft for."""
        chosen = self["target"].value()
        return chosen if chosen in self.offered_targets else self.offered_targets[0]

    @property
    def new_suite(self) -> bool:
        return self.chosen_target == self.NEW_SUITE

    def seeing(self, number: int) -> CasesFromRunsForm:
        """This posted form, now reviewing version ``number`` of the suite."""
        data = _posted_copy(self.data)
        data["seen_version"] = str(number)
        teams = _field(self, "team", forms.ModelChoiceField).queryset
        form = type(self)(data, into_suite=self.into_suite, teams=teams)
        form.is_valid()
        return form

    @staticmethod
    def picks(data) -> tuple[list[int], set[str] | None]:
        """The run ids chosen per draft, and the case keys kept (None: every draft, as
        when the page is first shown)."""
        runs = [int(value) for value in data.getlist("run") if value.isdigit()]
        kept = set(data.getlist("include")) if "shown" in data else None
        return runs, kept


class ReviewersField(forms.ModelMultipleChoiceField):
    def label_from_instance(self, obj):
        return obj.get_username()


class AssignForm(forms.Form):
    """Who works the queue: chosen among those who may review the suite's runs."""

    def __init__(self, *args, submission: Submission, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["reviewers"] = ReviewersField(
            reviewers(submission.suite),
            required=False,
            widget=forms.CheckboxSelectMultiple,
            help_text="The unreviewed runs are shared out among them in turn; with nobody "
            "chosen, whoever starts reviewing takes the next one.",
        )


class HandOnForm(forms.Form):
    """A double-blind queue's reviewer whose undecided runs go to someone else."""

    def __init__(self, *args, queue: ReviewQueue, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["reviewer"] = forms.ModelChoiceField(
            blind.reviewers_with_runs_left(queue), label="Runs not yet decided by"
        )
        self.fields["to"] = forms.ModelChoiceField(reviewers(queue.submission.suite), label="Go to")

    def clean(self):
        data = super().clean()
        if data.get("reviewer") is not None and data.get("reviewer") == data.get("to"):
            self.add_error("to", "Choose someone else.")
        return data


class QueueForm(AssignForm):
    name = forms.CharField(max_length=200)
    double_blind = forms.BooleanField(
        required=False,
        label="Double-blind",
        help_text="Each run goes to two of the reviewers, who do not see each other's decision; "
        "their agreement (κ) is shown when all have finished, and disagreements are resolved "
        "by someone else or by you.",
    )
    field_order = ["name", "reviewers", "double_blind"]

    def clean(self):
        data = super().clean()
        if data.get("double_blind") and len(data.get("reviewers") or ()) < 2:
            self.add_error("reviewers", "A double-blind queue needs at least two reviewers.")
        return data


class SubmissionChoiceField(forms.ModelChoiceField):
    def label_from_instance(self, submission):
        """``gpt-4o #12 · v3 · 81.2% · 2 days ago``: enough to tell uploads apart."""
        rate = pass_rate_text(submission.passed, submission.scored)
        name = submission.label or "unlabelled"
        when = timesince(submission.created)
        return f"{name} #{submission.pk} · v{submission.version.number} · {rate} · {when} ago"


class ComparisonForm(forms.Form):
    """Which two submissions of the suite to compare. It accepts any submission of the
    suite (so that one still being scored gets a message, not a 404) but offers only the
    finished ones."""

    baseline = SubmissionChoiceField(queryset=Submission.objects.none())
    candidate = SubmissionChoiceField(queryset=Submission.objects.none())

    def __init__(self, *args, suite, **kwargs):
        super().__init__(*args, **kwargs)
        submissions = (
            suite.submissions.select_related("version")
            .defer("version__document", "version__audit", "unknown_cases", "formats_seen", "error")
            .order_by("-created", "-pk")
        )
        finished = [s for s in submissions if s.status == Status.DONE]
        for field in self.fields.values():
            field.queryset = submissions
            field.choices = [("", "—")] + [(s.pk, field.label_from_instance(s)) for s in finished]

    def clean(self):
        data = super().clean()
        for name in ("baseline", "candidate"):
            if name in data and data[name].status == Status.FAILED:
                self.add_error(name, "It failed, and has no result to compare.")
            elif name in data and data[name].status != Status.DONE:
                self.add_error(name, "It is still being scored: compare it once it is done.")
        if data.get("baseline") and data.get("baseline") == data.get("candidate"):
            self.add_error("candidate", "Pick a submission other than the baseline.")
        return data

    @property
    def names_another_suites_submission(self) -> bool:
        """Whether an id is of no submission of this suite: not comparable, and not to be
        told apart from a submission that does not exist."""
        return any(self.has_error(name, "invalid_choice") for name in ("baseline", "candidate"))


class ModelPriceForm(forms.ModelForm):
    """A team's own price for a model (docs/formats.md#cost): US dollars per million tokens,
    each a number ≥ 0; one price a model name in a team."""

    class Meta:
        model = ModelPrice
        fields = ["model", "input_per_mtok", "cached_input_per_mtok", "output_per_mtok"]
        labels = {
            "model": "Model",
            "input_per_mtok": "Input, $ per million tokens",
            "cached_input_per_mtok": "Cached input, $ per million tokens",
            "output_per_mtok": "Output, $ per million tokens",
        }

    def __init__(self, *args, team: Team, **kwargs):
        super().__init__(*args, **kwargs)
        self.instance.team = team
        for name in ("input_per_mtok", "cached_input_per_mtok", "output_per_mtok"):
            self.fields[name].validators.append(MinValueValidator(0))
            self.fields[name].widget.attrs.update(min="0", step="any")

    def clean_model(self) -> str:
        model = self.cleaned_data["model"].strip()
        if not model:
            raise forms.ValidationError("Name the model as its runs record it.")
        taken = ModelPrice.objects.filter(team=self.instance.team, model=model)
        if taken.exclude(pk=self.instance.pk).exists():
            raise forms.ValidationError(f"The team already has a price for {model}.")
        return model
