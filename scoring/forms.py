"""Forms of the submission pages."""

from collections.abc import Mapping

from django import forms
from django.utils.text import Truncator

from cases.models import Team
from scoring.importers import FORMAT_NAMES
from scoring.matcher import InvalidInput, describe_arguments, parse_json
from scoring.models import ReviewStatus
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
    assignee = forms.ModelChoiceField(queryset=None, required=False)
    label = forms.ModelChoiceField(queryset=None, required=False)  # put on, or taken off
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
    labels = forms.ModelMultipleChoiceField(queryset=None, required=False)

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

    def __init__(self, *args, into_suite: bool, teams, **kwargs):
        super().__init__(*args, **kwargs)
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
        self.fields["target"].choices = choices
        self.initial.setdefault("target", choices[0][0] if choices else "")
        self.fields["team"].queryset = teams

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
        offered = [value for value, _ in self.fields["target"].choices]
        chosen = self["target"].value()
        return chosen if chosen in offered else offered[0]

    @staticmethod
    def picks(data) -> tuple[list[int], set[str] | None]:
        """The run ids chosen per draft, and the case keys kept (None: every draft, as
        when the page is first shown)."""
        runs = [int(value) for value in data.getlist("run") if value.isdigit()]
        kept = set(data.getlist("include")) if "shown" in data else None
        return runs, kept
