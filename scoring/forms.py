"""Forms of the submission pages."""

from django import forms
from django.utils.text import Truncator

from scoring.importers import FORMAT_NAMES


class UploadForm(forms.Form):
    file = forms.FileField(
        label="Run file",
        help_text="JSON lines in any supported format, or an Inspect AI log; may be gzipped",
    )
    label = forms.CharField(
        max_length=200, required=False, help_text="e.g. the model's name and settings"
    )
    format = forms.ChoiceField(
        choices=[("", "detect from each line")] + [(name, name) for name in FORMAT_NAMES],
        required=False,
    )


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
