"""Forms of the submission pages."""

from django import forms

from scoring.importers import FORMAT_NAMES


class UploadForm(forms.Form):
    file = forms.FileField(
        help_text="JSON lines in any supported format, or an Inspect AI log; may be gzipped"
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
        self.fields["version"].choices = [
            (v.number, f"v{v.number}{' · ' + v.tag if v.tag else ''} — {v.message}")
            for v in versions
        ]
