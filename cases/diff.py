"""What changed between two versions of a suite: cases added, removed and changed, and for a
changed case which of its fields and predicates."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from scoring.matcher import EXTRA_CALLS_LABEL, InvalidInput, load_suite, render_value

CASE_TEXT_FIELDS = ("title", "prompt", "tags", "match", "extra_calls")
SUITE_TEXT_FIELDS = ("name", "description", "tags", "match")
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
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[CaseChange] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.suite_fields or self.added or self.removed or self.changed)


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


def diff_documents(old: Mapping, new: Mapping) -> VersionDiff:
    suite_values = field_changes(old, new, SUITE_TEXT_FIELDS)
    diff = VersionDiff(
        suite_fields=[change.name for change in suite_values], suite_values=suite_values
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
