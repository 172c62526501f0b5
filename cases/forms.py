"""Forms of the authoring pages. The case editor's forms live in editor_forms.py."""

import base64
import json
import zlib
from dataclasses import dataclass

from django import forms
from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import AuthenticationForm
from django.core import signing
from django.utils.translation import gettext as _

from scoring.matcher import InvalidInput, Problem

from .models import (
    MAX_RETENTION_DAYS,
    RESERVED_LABEL_KEYS,
    ApiToken,
    LabelColour,
    Membership,
    ReviewLabel,
    Role,
    Team,
    Visibility,
)
from .throttling import (
    FAILED_SIGN_INS_BY_ACCOUNT,
    FAILED_SIGN_INS_BY_ADDRESS,
    client_address,
    minutes,
)

MATCH_PRESETS = [
    ("", "defaults (exact names, null must be sent)"),
    ("lenient", "lenient (names ignore case, null may be left out)"),
    ("custom", "custom"),
]
MATCH_CHOICES = {
    "tool_names": [("exact", "exact"), ("ignore_case", "ignore case")],
    "arg_names": [("exact", "exact"), ("ignore_case", "ignore case")],
    "null_args": [("must_be_null", "must be null"), ("absent_or_null", "absent or null")],
}


class TeamForm(forms.Form):
    name = forms.CharField(max_length=100)


class MemberForm(forms.Form):
    username = forms.CharField(max_length=150)
    role = forms.ChoiceField(choices=Role.choices, initial=Role.VIEWER)

    def __init__(self, *args, team: Team, **kwargs):
        super().__init__(*args, **kwargs)
        self.team = team

    def clean_username(self):
        username = self.cleaned_data["username"].strip()
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise forms.ValidationError(f"No user is called {username!r}.")
        if Membership.objects.filter(team=self.team, user=user).exists():
            raise forms.ValidationError(f"{username} is already a member; change their role below.")
        self.user = user
        return username


class LabelForm(forms.ModelForm):
    """A team's new review label; its key, if any, a letter the run page does not use."""

    class Meta:
        model = ReviewLabel
        fields = ["name", "key", "colour"]

    def __init__(self, *args, team: Team, **kwargs):
        super().__init__(*args, **kwargs)
        self.instance.team = team
        self.others = ReviewLabel.objects.filter(team=team).exclude(pk=self.instance.pk)
        self.fields["colour"].required = False

    def clean_colour(self):
        return self.cleaned_data["colour"] or LabelColour.GREY

    def clean_name(self):
        name = self.cleaned_data["name"].strip()
        if self.others.filter(name__iexact=name).exists():
            raise forms.ValidationError(f"The team has a label {name!r} already.")
        return name

    def clean_key(self):
        key = self.cleaned_data["key"].strip().lower()
        if not key:
            return key
        if not ("a" <= key <= "z") or key in RESERVED_LABEL_KEYS:
            taken = ", ".join(sorted(RESERVED_LABEL_KEYS))
            raise forms.ValidationError(
                f"Choose a letter other than {taken} (the run page's keys)."
            )
        other = self.others.filter(key=key).first()
        if other is not None:
            raise forms.ValidationError(f"The key {key} already applies “{other.name}”.")
        return key


class RoleForm(forms.Form):
    role = forms.ChoiceField(choices=Role.choices)


def match_from(data) -> dict | str | None:
    """The ``match`` value (docs/formats.md#match-options) of a form's preset and option
    fields."""
    preset = data.get("match_preset") or ""
    if preset == "lenient":
        return "lenient"
    if preset == "custom":
        return {
            name: data.get(f"match_{name}") or choices[0][0]
            for name, choices in MATCH_CHOICES.items()
        }
    return None


class MatchFormMixin(forms.Form):
    match_preset = forms.ChoiceField(choices=MATCH_PRESETS, required=False, label="Preset")
    match_tool_names = forms.ChoiceField(
        choices=MATCH_CHOICES["tool_names"], required=False, label="Tool names"
    )
    match_arg_names = forms.ChoiceField(
        choices=MATCH_CHOICES["arg_names"], required=False, label="Argument names"
    )
    match_null_args = forms.ChoiceField(
        choices=MATCH_CHOICES["null_args"], required=False, label="Null arguments"
    )

    @staticmethod
    def initial_for(match) -> dict:
        if match == "lenient":
            return {"match_preset": "lenient"}
        if isinstance(match, dict):
            return {"match_preset": "custom", **{f"match_{k}": v for k, v in match.items()}}
        return {"match_preset": ""}


class SuiteForm(MatchFormMixin):
    name = forms.CharField(max_length=200)
    description = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), required=False)
    tags = forms.CharField(required=False, help_text="Comma-separated.")
    visibility = forms.ChoiceField(choices=Visibility.choices, initial=Visibility.TEAM)

    def clean_tags(self):
        return split_tags(self.cleaned_data["tags"])


class SuiteSettingsForm(SuiteForm):
    catalog_checks = forms.BooleanField(
        required=False,
        label="Check every call against the tool catalog",
        help_text=(
            "Adds to every case: each call's arguments match its tool's schema, and no call "
            "is of a tool the catalog lacks."
        ),
    )
    trace_case_attribute = forms.CharField(
        max_length=200,
        required=False,
        label="Case attribute of live traces",
        help_text=(
            "A span attribute whose value names the case of a trace sent to /otlp/v1/traces "
            "that has no casebook.case (e.g. gen_ai.conversation.id), through the map below."
        ),
    )
    trace_case_map = forms.CharField(
        max_length=100_000,
        required=False,
        label="Values of the case attribute → case keys",
        widget=forms.Textarea(attrs={"rows": 5, "class": "code", "spellcheck": "false"}),
        help_text=(
            'A JSON object, e.g. {"conv-17": "refund"}. A value not in it names the case of '
            "its own key, if there is one; else the trace's run is unassigned. Applies to "
            "traces made into runs from now on."
        ),
    )

    live_retention_days = forms.IntegerField(
        min_value=1,
        max_value=MAX_RETENTION_DAYS,
        required=False,
        label="Keep live runs for (days)",
        help_text=(
            "The runs of live traces, and those that named no case, are removed this many days "
            "after their day; their submissions' counts and summaries stay. Empty: forever."
        ),
    )
    upload_retention_days = forms.IntegerField(
        min_value=1,
        max_value=MAX_RETENTION_DAYS,
        required=False,
        label="Keep uploaded runs for (days)",
        help_text="Likewise for uploaded files' runs, counted from the upload. Empty: forever.",
    )

    def clean_trace_case_map(self):
        text = self.cleaned_data["trace_case_map"].strip()
        if not text:
            return {}
        try:
            return json.loads(text)
        except ValueError as exc:
            raise forms.ValidationError(f"Not JSON: {exc}") from None

    @staticmethod
    def map_text(mapping: dict) -> str:
        return json.dumps(mapping, indent=2, ensure_ascii=False) if mapping else ""

    @classmethod
    def initial_of(cls, suite) -> dict:
        """The form's fields as the suite has them now."""
        return {
            "name": suite.name,
            "description": suite.description,
            "tags": ", ".join(suite.tags),
            "visibility": suite.visibility,
            "trace_case_attribute": suite.trace_case_attribute,
            "trace_case_map": cls.map_text(suite.trace_case_map),
            "catalog_checks": suite.extra.get("catalog_checks") is True,
            "live_retention_days": suite.live_retention_days,
            "upload_retention_days": suite.upload_retention_days,
            **cls.initial_for(suite.match),
        }


class NewSuiteForm(SuiteForm):
    team = forms.ModelChoiceField(queryset=Team.objects.none())

    def __init__(self, *args, teams, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["team"].queryset = teams
        self.order_fields(["team"])


class ImportForm(forms.Form):
    team = forms.ModelChoiceField(queryset=Team.objects.none())
    file = forms.FileField(label="Suite file (JSON or YAML)")

    def __init__(self, *args, teams=None, **kwargs):
        super().__init__(*args, **kwargs)
        if teams is None:
            del self.fields["team"]
        else:
            self.fields["team"].queryset = teams


@dataclass(frozen=True)
class PreviewedFile:
    """A suite file whose import into a suite was previewed against the suite's ``version``."""

    name: str
    content: bytes
    version: int


class ConfirmImportForm(forms.Form):
    """The second step of an import previewed first: a suite file into a suite
    (docs/review.md#import-file), or, with ``scope``, what makes a new suite or a suite's
    tool catalog.

    The previewed file travels in a hidden field, compressed and signed for this suite (or
    scope) and user: the server keeps nothing between the steps, and what is confirmed is
    exactly what was previewed."""

    MAX_AGE = 60 * 60  # seconds a preview may be confirmed for
    # Below DATA_UPLOAD_MAX_MEMORY_SIZE, the most a form's fields may send.
    MAX_FIELD = 8 << 20

    file = forms.CharField(widget=forms.HiddenInput)

    def __init__(self, *args, user, suite=None, scope: str = "", **kwargs):
        super().__init__(*args, **kwargs)
        where = suite.pk if suite is not None else scope
        self.signer = signing.TimestampSigner(salt=f"cases.import:{where}:{user.pk}")

    def keep(self, file: PreviewedFile) -> None:
        """Hold ``file`` in the form; ``InvalidInput`` when it is too large to send back."""
        content = base64.b64encode(zlib.compress(file.content)).decode()
        signed = self.signer.sign_object(
            {"name": file.name, "content": content, "version": file.version}
        )
        if len(signed) > self.MAX_FIELD:
            limit = self.MAX_FIELD >> 20
            raise InvalidInput([Problem("", f"too large to preview: over {limit} MB compressed")])
        self.initial["file"] = signed

    def clean_file(self) -> PreviewedFile:
        try:
            data = self.signer.unsign_object(self.cleaned_data["file"], max_age=self.MAX_AGE)
        except signing.SignatureExpired:
            raise forms.ValidationError("This preview is over an hour old.") from None
        except signing.BadSignature:
            raise forms.ValidationError("This preview was altered or is not for you.") from None
        content = zlib.decompress(base64.b64decode(data["content"]))
        return PreviewedFile(data["name"], content, data["version"])


class ConfirmNewSuiteForm(ConfirmImportForm):
    """The second step of importing a file as a new suite (a suite file, a BFCL category):
    the previewed file and the team it goes to, which must still be one the user edits in."""

    team = forms.ModelChoiceField(queryset=Team.objects.none(), widget=forms.HiddenInput)

    def __init__(self, *args, teams, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["team"].queryset = teams


class ToolsForm(forms.Form):
    """A tool catalog pasted or uploaded: OpenAI, Anthropic, MCP or BFCL definitions."""

    text = forms.CharField(
        label="Tool definitions (JSON)",
        required=False,
        widget=forms.Textarea(attrs={"rows": 12, "class": "code", "spellcheck": "false"}),
    )
    file = forms.FileField(label="or a file", required=False)

    def clean(self):
        data = super().clean()
        if not data.get("text", "").strip() and not data.get("file"):
            raise forms.ValidationError("Paste the tool definitions or choose a file.")
        return data


class CopyForm(forms.Form):
    team = forms.ModelChoiceField(queryset=Team.objects.none(), label="Copy to team")

    def __init__(self, *args, teams, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["team"].queryset = teams


class TagForm(forms.Form):
    tag = forms.CharField(max_length=50, required=False, help_text="e.g. release; empty removes it")


def split_tags(text: str) -> list[str]:
    return list(dict.fromkeys(tag.strip() for tag in text.split(",") if tag.strip()))


class TokenNameForm(forms.Form):
    name = forms.CharField(
        max_length=100, help_text="What uses it, e.g. the CI job: one token per use."
    )


class SuiteTokenForm(TokenNameForm):
    """A suite token's name and label (docs/api.md#authentication)."""

    label = forms.CharField(
        max_length=ApiToken._meta.get_field("label").max_length,
        required=False,
        help_text="The live submission its traces go to (a model's name, say). Empty: the "
        "casebook.label the agent sends, if any.",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["name"].help_text = "What sends with it (an agent, a deployment)."


# Signing in (the site's page and the admin's), throttled (throttling.py).


class ThrottledSignInMixin:
    """For a Django authentication form: refuses, before checking the password, a username
    at an address, or an address, that failed too often; counts each failure; a success
    clears the pair's count (not the address's: one good account must not reset a guesser's)."""

    def clean(self):
        address = client_address(self.request)
        # A NUL cannot be in a form's field (Django refuses it), so the pair is unambiguous.
        account = f"{self.cleaned_data.get('username') or ''}\0{address}"
        if FAILED_SIGN_INS_BY_ACCOUNT.is_locked(account) or FAILED_SIGN_INS_BY_ADDRESS.is_locked(
            address
        ):
            raise forms.ValidationError(
                _(
                    "Too many failed sign-ins for this account from your address, or from your "
                    "network. "
                    "Please try again in %(minutes)d minutes."
                )
                % {"minutes": minutes(settings.CASEBOOK_THROTTLE_LOCKOUT_SECONDS)},
                code="throttled",
            )
        try:
            cleaned = super().clean()
        except forms.ValidationError:
            FAILED_SIGN_INS_BY_ACCOUNT.record_failure(account)
            FAILED_SIGN_INS_BY_ADDRESS.record_failure(address)
            raise
        FAILED_SIGN_INS_BY_ACCOUNT.clear(account)
        return cleaned


class SignInForm(ThrottledSignInMixin, AuthenticationForm):
    pass


class AdminSignInForm(ThrottledSignInMixin, AdminAuthenticationForm):
    pass
