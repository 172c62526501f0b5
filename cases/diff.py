"""What changed between two versions of a suite: its own fields, its tool catalog's tools
added, removed and changed (for a changed tool, its parameters added, removed and changed, and
its other fields), cases added, removed and changed, and for a changed case which of its fields
and predicates."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from scoring.matcher import EXTRA_CALLS_LABEL, InvalidInput, load_suite, render_value

from .tool_catalog import catalog_tools, input_schema, schema_type

CASE_TEXT_FIELDS = ("title", "prompt", "tags", "match", "extra_calls")
SUITE_TEXT_FIELDS = (
    "name", "description", "tags", "match", "expectations", "catalog_checks", "environment",
)  # fmt: skip
# The suite file's own fields that change verdicts (docs/formats.md#top-level), in words: a
# diff names each that changed, so that two versions that score differently never read as
# the same. The catalog is its own section; any other field a file carries is listed too.
VERDICT_SETTINGS = {
    "match": "how every case compares tool names, argument names and values (its match "
    "options, unless the case sets its own)",
    "expectations": "the expectations every case carries after its own",
    "catalog_checks": "whether every case also checks its calls against the tool catalog "
    "(arguments_match_schema, only_catalog_tools)",
    "environment": "the environment in which every case without its own replays calls",
}
NOT_SETTINGS = ("schema", "cases", "tools")
VALUE_SHOWN = 300  # characters of an old or new value on the page (a prompt can be long)


@dataclass(frozen=True)
class FieldChange:
    """A field's value before and after, as short JSON text ("(absent)" when not set)."""

    name: str
    before: str
    after: str


def field_changes(old: Mapping, new: Mapping, names: tuple[str, ...]) -> list[FieldChange]:
    return [
        FieldChange(name, _shown(old, name), _shown(new, name))
        for name in names
        if old.get(name) != new.get(name)
    ]


def _shown(document: Mapping, name: str) -> str:
    if name not in document:
        return "(absent)"
    text = render_value(document[name])
    return text if len(text) <= VALUE_SHOWN else text[: VALUE_SHOWN - 1] + "…"


@dataclass(frozen=True)
class ParameterChange:
    """A parameter's type and whether it is required, before and after: ``integer, required``."""

    name: str
    before: str
    after: str


@dataclass
class ToolChange:
    """A tool of both versions whose definition differs: its parameters added, removed and
    changed, and its other fields that differ (``description``, ``annotations``,
    ``outputSchema``...; the input schema's key when what changed in it is no parameter's
    type or requiredness, or the tool changed shape)."""

    name: str
    parameters_added: list[str] = field(default_factory=list)
    parameters_removed: list[str] = field(default_factory=list)
    parameters_changed: list[ParameterChange] = field(default_factory=list)
    fields: list[str] = field(default_factory=list)


@dataclass
class CaseChange:
    key: str
    fields: list[str] = field(default_factory=list)
    values: list[FieldChange] = field(default_factory=list)
    predicates_added: list[str] = field(default_factory=list)
    predicates_removed: list[str] = field(default_factory=list)


@dataclass
class VersionDiff:
    suite_fields: list[str] = field(default_factory=list)
    suite_values: list[FieldChange] = field(default_factory=list)
    # The changes among them that change verdicts, each in words (``VERDICT_SETTINGS``).
    verdict_settings: list[str] = field(default_factory=list)
    tools_added: list[str] = field(default_factory=list)
    tools_removed: list[str] = field(default_factory=list)
    tool_changes: list[ToolChange] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[CaseChange] = field(default_factory=list)

    @property
    def tools_changed(self) -> list[str]:
        return [change.name for change in self.tool_changes]

    @property
    def tools(self) -> bool:
        return bool(self.tools_added or self.tools_removed or self.tool_changes)

    @property
    def empty(self) -> bool:
        return not (self.suite_fields or self.tools or self.added or self.removed or self.changed)

    def summary(self) -> str:
        """The changes in a few words, for a version's message: ``name and tags changed,
        5 tools removed, 1 case removed``."""
        parts = [f"{_and(self.suite_fields)} changed"] if self.suite_fields else []
        for items, noun, verb in (
            (self.tools_added, "tool", "added"),
            (self.tools_removed, "tool", "removed"),
            (self.tools_changed, "tool", "changed"),
            (self.added, "case", "added"),
            (self.removed, "case", "removed"),
            (self.changed, "case", "changed"),
        ):
            if items:
                parts.append(f"{len(items)} {noun}{'' if len(items) == 1 else 's'} {verb}")
        return ", ".join(parts) or "no changes"


def _and(words: list[str]) -> str:
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def predicate_labels(document: Mapping) -> dict[str, list[str]]:
    """Each case's predicate labels, as its reports will show them."""
    try:
        suite = load_suite(document, strict=False)
    except InvalidInput:
        return {}
    labels = {}
    for case in suite.cases:
        found = [call.label for call in case.expected_calls]
        found += [item.label for item in case.expectations]
        if case.forbids_extra_calls:
            found.append(EXTRA_CALLS_LABEL)
        labels[case.key] = found
    return labels


def _tools(document: Mapping) -> dict[str, Mapping]:
    """The tool catalog's tools by name (docs/formats.md#tool-catalog), in either shape."""
    return {
        tool["name"]: tool
        for tool in catalog_tools(document.get("tools"))
        if isinstance(tool.get("name"), str)
    }


# The keys that hold a tool's input schema, one per shape: named as changed fields only when
# no parameter's change says what changed in them.
SCHEMA_KEYS = ("parameters", "inputSchema")


def tool_change(name: str, old: Mapping, new: Mapping) -> ToolChange:
    """What differs between two definitions of tool ``name``, in either shape."""
    was, now = _parameters(input_schema(old)), _parameters(input_schema(new))
    change = ToolChange(
        name,
        parameters_added=[param for param in now if param not in was],
        parameters_removed=[param for param in was if param not in now],
        parameters_changed=[
            ParameterChange(param, was[param], shown)
            for param, shown in now.items()
            if param in was and was[param] != shown
        ],
    )
    said = change.parameters_added or change.parameters_removed or change.parameters_changed
    change.fields = [
        key
        for key in {**old, **new}
        if old.get(key) != new.get(key) and not (said and key in SCHEMA_KEYS)
    ]
    return change


def _parameters(schema: Mapping) -> dict[str, str]:
    """Each parameter's type and whether it is required, in words, by name."""
    properties = schema.get("properties")
    required = schema.get("required")
    required = required if isinstance(required, list) else []
    return {
        name: f"{schema_type(sub)}, {'required' if name in required else 'optional'}"
        for name, sub in (properties.items() if isinstance(properties, Mapping) else ())
    }


def setting_in_words(name: str, old: Mapping, new: Mapping) -> str:
    """A changed setting of the suite file that changes verdicts, in words."""
    if name == "catalog_checks":
        turned = "on" if new.get(name) is True else "off"
        return f"Catalog checks turned {turned}: {VERDICT_SETTINGS[name]}."
    what = VERDICT_SETTINGS[name]
    return f"Changed {what[0].lower()}{what[1:]}."


def diff_documents(old: Mapping, new: Mapping) -> VersionDiff:
    others = tuple(
        name
        for name in dict.fromkeys([*old, *new])
        if name not in SUITE_TEXT_FIELDS and name not in NOT_SETTINGS
    )
    suite_values = field_changes(old, new, SUITE_TEXT_FIELDS + others)
    old_tools, new_tools = _tools(old), _tools(new)
    diff = VersionDiff(
        suite_fields=[change.name for change in suite_values],
        suite_values=suite_values,
        verdict_settings=[
            setting_in_words(change.name, old, new)
            for change in suite_values
            if change.name in VERDICT_SETTINGS
        ],
        tools_added=[name for name in new_tools if name not in old_tools],
        tools_removed=[name for name in old_tools if name not in new_tools],
        tool_changes=[
            tool_change(name, old_tools[name], tool)
            for name, tool in new_tools.items()
            if old_tools.get(name, tool) != tool
        ],
    )
    old_cases = {case["key"]: case for case in old.get("cases", [])}
    new_cases = {case["key"]: case for case in new.get("cases", [])}
    diff.added = [key for key in new_cases if key not in old_cases]
    diff.removed = [key for key in old_cases if key not in new_cases]
    old_labels, new_labels = predicate_labels(old), predicate_labels(new)
    for key, case in new_cases.items():
        before = old_cases.get(key)
        if before is None or before == case:
            continue
        was, now = old_labels.get(key, []), new_labels.get(key, [])
        values = field_changes(before, case, CASE_TEXT_FIELDS)
        change = CaseChange(
            key,
            fields=[value.name for value in values],
            values=values,
            predicates_added=[label for label in now if label not in was],
            predicates_removed=[label for label in was if label not in now],
        )
        if not (change.fields or change.predicates_added or change.predicates_removed):
            change.fields = ["other fields"]
        diff.changed.append(change)
    return diff
