"""The case editor's forms: the case itself, one form per expected call, one per expectation.

Rows are plain prefixed forms (``call-0-name``, ``exp-2-regex``) rebuilt from the posted data on
every request, so adding, removing and reordering rows is a server round trip that loses nothing
typed. Each form turns its fields into the case file's shape (docs/formats.md#cases); the whole case
is then validated by the matcher, and its problems are put back beside the fields.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

import orjson
from django import forms

from scoring.matcher import EXPECTATION_TYPES, InvalidInput, Problem, parse_json

from .forms import MatchFormMixin, match_from, split_tags
from .services import CALL_FIELDS, CASE_FIELDS

CASE_MATCH_PRESETS = [
    ("", "as the suite says"),
    ("lenient", "lenient (names ignore case, null may be left out)"),
    ("custom", "custom"),
]

# The fields each expectation type shows, in order (docs/formats.md#expectations-in-a-case).
TYPE_FIELDS: dict[str, tuple[str, ...]] = {
    "called_tool": ("tool",),
    "did_not_call_tool": ("tool",),
    "called_tool_with": ("tool", "args"),
    "tool_call_count": ("tool", "min", "max", "succeeded_only"),
    "no_calls_beyond_expected": ("tools", "succeeded_only"),
    "called_tools_in_order": ("tools",),
    "no_tool_calls": (),
    "final_text_contains": ("text", "case_insensitive"),
    "final_text_equals": ("text",),
    "final_text_matches": ("regex",),
    "final_number_equals": ("value", "tolerance"),
    "no_error": (),
    "arguments_match_schema": ("tool",),
    "only_catalog_tools": (),
    "no_tool_errors": ("tool",),
    "tool_error_count": ("tool", "min", "max"),
    # Reference calls and states are JSON documents, edited in the suite file: the editor
    # keeps them as they are (docs/matcher.md#end-state).
    "end_state_matches": (),
    "state_path_equals": (),
    # Budgets (docs/matcher.md#budgets); a limit in dollars or seconds, a fraction, is
    # edited in the suite file.
    "max_model_calls": ("max",),
    "max_tokens": ("input", "output", "total"),
    "max_duration_seconds": (),
    "max_cost_usd": (),
}
# The check boxes: written only when ticked.
FLAGS = ("case_insensitive", "succeeded_only")
# The types whose ``tool`` may be left empty, and what empty means.
OPTIONAL_TOOL = {
    "tool_call_count": "Empty counts every call.",
    "arguments_match_schema": "Empty checks the calls of every tool in the catalog.",
    "no_tool_errors": "Empty checks every tool.",
    "tool_error_count": "Empty counts every tool's errors.",
}
TYPE_LABELS = {
    "called_tool": "called a tool",
    "did_not_call_tool": "did not call a tool",
    "called_tool_with": "called a tool with arguments",
    "tool_call_count": "number of calls",
    "no_calls_beyond_expected": "no calls beyond the expected ones",
    "called_tools_in_order": "called tools in order",
    "no_tool_calls": "made no tool calls",
    "final_text_contains": "final text contains",
    "final_text_equals": "final text equals",
    "final_text_matches": "final text matches a regex",
    "final_number_equals": "final number equals",
    "no_error": "run ended without error",
    "arguments_match_schema": "arguments match the tool's schema",
    "only_catalog_tools": "called only catalog tools",
    "no_tool_errors": "no tool errors",
    "tool_error_count": "number of tool errors",
    "end_state_matches": "end state matches the reference calls'",
    "state_path_equals": "a value in the end state",
    "max_model_calls": "at most this many model calls",
    "max_tokens": "at most this many tokens",
    "max_duration_seconds": "at most this long (seconds)",
    "max_cost_usd": "at most this cost (US dollars)",
}
assert set(TYPE_FIELDS) == set(EXPECTATION_TYPES)


def pretty(value: Any) -> str:
    """JSON for a textarea: one line when short, indented when long."""
    text = orjson.dumps(value).decode()
    return text if len(text) <= 70 else orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()


def unknown_fields(data: Mapping, known) -> dict:
    return {key: value for key, value in data.items() if key not in known}


def _with_extra(document: dict, cleaned: Mapping) -> dict:
    """``document`` followed by the unknown fields the row carried (known ones win)."""
    extra = cleaned.get("extra") or {}
    return document | {key: value for key, value in extra.items() if key not in document}


class JSONObjectField(forms.CharField):
    """A JSON object typed as text (arguments); its problems are reported as you type."""

    widget = forms.Textarea(attrs={"rows": 2, "spellcheck": "false", "class": "json"})

    def __init__(self, **kwargs):
        kwargs.setdefault("required", False)
        kwargs.setdefault("strip", False)
        super().__init__(**kwargs)

    def to_python(self, value):
        text = (value or "").strip()
        if not text:
            return {}
        try:
            parsed = parse_json(text)
        except InvalidInput as exc:
            raise forms.ValidationError(exc.problems[0].message) from None
        if not isinstance(parsed, Mapping):
            raise forms.ValidationError('must be a JSON object: {"name": value, …}')
        return parsed


class NumberField(forms.CharField):
    """A JSON number, kept exactly as typed (``0.1`` stays 0.1)."""

    def to_python(self, value):
        text = (value or "").strip()
        if not text:
            return None
        try:
            number = parse_json(text)
        except InvalidInput:
            number = None
        if isinstance(number, bool) or not isinstance(number, int | float | Decimal):
            raise forms.ValidationError("must be a number")
        return number


class CaseForm(MatchFormMixin):
    key = forms.CharField(max_length=200, help_text="Runs name the case by its key.")
    title = forms.CharField(max_length=300, required=False)
    prompt = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), required=False)
    tags = forms.CharField(required=False, help_text="Comma-separated.")
    extra_calls = forms.ChoiceField(
        choices=[("allow", "allowed"), ("forbid", "forbidden: every call must be expected")],
        label="Other calls",
    )
    revision = forms.IntegerField(widget=forms.HiddenInput, required=False)
    # Fields of the case that Casebook does not know, carried through the editor unchanged.
    extra = JSONObjectField(widget=forms.HiddenInput)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["match_preset"].choices = CASE_MATCH_PRESETS

    def to_document(self) -> dict:
        """The case's own fields as the suite file writes them (after ``is_valid``; a field
        that did not clean is left at its empty value, so the rest can still be checked)."""
        data = self.cleaned_data
        document: dict[str, Any] = {"key": data.get("key", "")}
        if data.get("title"):
            document["title"] = data["title"]
        if data.get("prompt"):
            document["prompt"] = data["prompt"]
        if tags := split_tags(data.get("tags", "")):
            document["tags"] = tags
        if (match := match_from(data)) is not None:
            document["match"] = match
        document["extra_calls"] = data.get("extra_calls") or "allow"
        return _with_extra(document, data)

    @classmethod
    def initial_from(cls, case_document: Mapping, revision: int | None) -> dict:
        return {
            "key": case_document.get("key", ""),
            "title": case_document.get("title", ""),
            "prompt": case_document.get("prompt", ""),
            "tags": ", ".join(case_document.get("tags") or []),
            "extra_calls": case_document.get("extra_calls") or "allow",
            "revision": revision,
            "extra": pretty(unknown_fields(case_document, CASE_FIELDS)),
            **cls.initial_for(case_document.get("match")),
        }


class ExpectedCallForm(forms.Form):
    name = forms.CharField(max_length=200, label="Tool")
    required_args = JSONObjectField(label="Required arguments")
    ordered = forms.BooleanField(required=False)
    depends_on_result = forms.BooleanField(required=False, label="after the previous call's result")
    exact_args = forms.BooleanField(required=False, label="no other arguments")
    extra = JSONObjectField(widget=forms.HiddenInput)

    def to_document(self) -> dict:
        data = self.cleaned_data
        document = {
            "name": data.get("name", ""),
            "required_args": data.get("required_args", {}),
            "ordered": data.get("ordered", False),
            "depends_on_result": data.get("depends_on_result", False),
        }
        if data.get("exact_args"):
            document["exact_args"] = True
        return _with_extra(document, data)

    @staticmethod
    def initial_from(call: Mapping) -> dict:
        return {
            "name": call.get("name", ""),
            "required_args": pretty(call.get("required_args") or {}),
            "ordered": bool(call.get("ordered")),
            "depends_on_result": bool(call.get("depends_on_result")),
            "exact_args": bool(call.get("exact_args")),
            "extra": pretty(unknown_fields(call, CALL_FIELDS)),
        }


class ExpectationForm(forms.Form):
    type = forms.ChoiceField(choices=[(k, TYPE_LABELS[k]) for k in TYPE_FIELDS])
    tool = forms.CharField(max_length=200, required=False)
    args = JSONObjectField(label="Arguments (a recursive subset)")
    min = forms.IntegerField(required=False, min_value=0)
    max = forms.IntegerField(required=False, min_value=0)
    tools = forms.CharField(required=False, help_text="Comma-separated, in order.")
    text = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), required=False, strip=False)
    case_insensitive = forms.BooleanField(required=False, label="ignore case")
    succeeded_only = forms.BooleanField(
        required=False, label="count only calls that succeeded (no tool error)"
    )
    regex = forms.CharField(required=False, strip=False, label="Regex (RE2)")
    value = NumberField(required=False)
    tolerance = NumberField(required=False, help_text="Absolute; default 0.")
    input = forms.IntegerField(required=False, min_value=0, label="Input tokens")
    output = forms.IntegerField(required=False, min_value=0, label="Output tokens")
    total = forms.IntegerField(required=False, min_value=0, label="Total tokens")
    extra = JSONObjectField(widget=forms.HiddenInput)

    @property
    def kind(self) -> str:
        value = self["type"].value()
        return value if value in TYPE_FIELDS else "called_tool"

    @property
    def optional_tool_help(self) -> str | None:
        """What an empty ``tool`` means for this type, when it may be empty."""
        return OPTIONAL_TOOL.get(self.kind)

    def shown_fields(self):
        return [self[name] for name in TYPE_FIELDS[self.kind]]

    def to_document(self) -> dict:
        """The expectation as the suite file writes it; fields the type does not use are
        left out, and optional ones only when given (the matcher reports what is missing)."""
        data = self.cleaned_data
        kind = data.get("type") or "called_tool"
        optional = {"min", "max", "value", "tolerance", "input", "output", "total"} | (
            {"tool"} if kind in OPTIONAL_TOOL else set()
        )
        document: dict[str, Any] = {"type": kind}
        for name in TYPE_FIELDS[kind]:
            value = data.get(name)
            if name == "tools":
                value = [tool.strip() for tool in (value or "").split(",") if tool.strip()]
            elif name in FLAGS:
                if not value:
                    continue
            elif name in optional:
                if value in (None, ""):
                    continue
            elif value is None:
                value = ""
            document[name] = value
        return _with_extra(document, data)

    @staticmethod
    def initial_from(item: Mapping) -> dict:
        kind = item.get("type", "called_tool")
        # What the type's form does not show is kept as it is (``extra``).
        known = {"type", *TYPE_FIELDS.get(kind, ())}
        initial = {"type": kind, "extra": pretty(unknown_fields(item, known))}
        for name, value in item.items():
            if name not in known:
                continue
            if name == "args":
                initial[name] = pretty(value)
            elif name == "tools":
                initial[name] = ", ".join(value or [])
            elif name in ("value", "tolerance"):
                initial[name] = orjson.dumps(value).decode() if value is not None else ""
            elif name != "type":
                initial[name] = value
        return initial


class Rows:
    """An ordered list of prefixed forms of one kind (``call-0-…``, ``call-1-…``), bound to
    posted rows or filled with initial ones."""

    def __init__(self, form_class, prefix: str, rows: list[dict], *, bound: bool):
        self.form_class = form_class
        self.prefix = prefix
        self.forms = [self._form(i, row, bound) for i, row in enumerate(rows)]

    def _form(self, index: int, row: dict, bound: bool):
        prefix = f"{self.prefix}-{index}"
        if not bound:
            return self.form_class(initial=row, prefix=prefix)
        return self.form_class(data={f"{prefix}-{k}": v for k, v in row.items()}, prefix=prefix)

    @staticmethod
    def posted(data: Mapping, prefix: str) -> list[dict]:
        """The rows of ``prefix`` in the posted data, as unprefixed field dicts, in order."""
        pattern = re.compile(rf"^{re.escape(prefix)}-(\d+)-(.+)$")
        rows: dict[int, dict] = {}
        for key in data:
            match = pattern.match(key)
            if match:
                rows.setdefault(int(match[1]), {})[match[2]] = data.get(key)
        return [rows[i] for i in sorted(rows)]

    def __iter__(self):
        return iter(self.forms)

    def __len__(self):
        return len(self.forms)


def apply_row_action(rows: list[dict], action: str, blank: dict) -> list[dict]:
    """Add, remove or move a row: ``add``, ``remove:3``, ``up:3``, ``down:3``."""
    verb, _, index = action.partition(":")
    if verb == "add":
        return [*rows, dict(blank)]
    if not index.isdigit() or int(index) >= len(rows):
        return rows
    i = int(index)
    rows = list(rows)
    if verb == "remove":
        del rows[i]
    elif verb == "up" and i > 0:
        rows[i - 1], rows[i] = rows[i], rows[i - 1]
    elif verb == "down" and i < len(rows) - 1:
        rows[i + 1], rows[i] = rows[i], rows[i + 1]
    return rows


def row_after_action(count: int, action: str) -> int | None:
    """The row an action leaves the keyboard on, of the ``count`` rows after it: the one
    added, the one moved, or the one that took the removed one's place (None: no row left,
    or no such action)."""
    verb, _, index = action.partition(":")
    if verb == "add":
        return count - 1
    if not index.isdigit() or count == 0:
        return None
    moved = {"remove": 0, "up": -1, "down": 1}.get(verb)
    return None if moved is None else max(0, min(count - 1, int(index) + moved))


_ROW_PATH = re.compile(r"^(expected_calls|expectations)\[(\d+)\](?:\.([A-Za-z_]+)(.*))?$")
_CASE_FIELDS = {"key", "title", "prompt", "tags", "extra_calls"}


def attach_problems(
    problems, case_form: CaseForm, calls: Rows, expectations: Rows
) -> list[Problem]:
    """Put each problem beside its field; return those that belong to no field."""
    loose = []
    for problem in problems:
        path, message = problem.path, problem.message
        head = path.split(".", 1)[0].split("[", 1)[0]
        match = _ROW_PATH.match(path)
        if match:
            kind, index, field, rest = match[1], int(match[2]), match[3], match[4] or ""
            rows = calls if kind == "expected_calls" else expectations
            if index < len(rows.forms):
                form = rows.forms[index]
                where = rest.lstrip(".")
                text = f"{where}: {message}" if where else message
                if field in form.fields:
                    _add_error(form, field, text)
                else:
                    _add_error(form, None, f"{field}: {text}" if field else text)
                continue
        if head in _CASE_FIELDS:
            _add_error(case_form, head, message)
        elif head == "match":
            _add_error(case_form, "match_preset", f"{path}: {message}")
        else:
            loose.append(problem)
    return loose


def attach_warnings(warnings, case_form: CaseForm, calls: Rows, expectations: Rows) -> list:
    """Put each of the tool catalog's warnings beside its field (``form.warnings[field]``,
    ``"row"`` for the row as a whole); return those that belong to no row."""
    loose = []
    for warning in warnings:
        match = _ROW_PATH.match(warning.path)
        rows = calls if match and match[1] == "expected_calls" else expectations
        if not match or int(match[2]) >= len(rows.forms):
            loose.append(warning)
            continue
        form = rows.forms[int(match[2])]
        field, where = match[3] or "row", (match[4] or "").lstrip(".")
        if field not in form.fields:
            field, where = "row", f"{field}.{where}".strip(".")
        said = getattr(form, "warnings", None)
        if said is None:
            said = form.warnings = {}
        said.setdefault(field, []).append(
            f"{where}: {warning.message}" if where else warning.message
        )
    return loose


def _add_error(form: forms.Form, field: str | None, message: str) -> None:
    """Add the matcher's word unless the form already said what is wrong with the field."""
    if field is None or not form.has_error(field):
        form.add_error(field, message)
