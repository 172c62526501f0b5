"""The expectations that check calls against the suite's tool catalog and count the errors
tools returned (docs/matcher.md#tool-checks): ``arguments_match_schema``,
``only_catalog_tools``, ``no_tool_errors`` and ``tool_error_count``."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, replace
from typing import ClassVar

from ..arguments.schemas import SchemaUnusable, TooSlow, validating
from ..fields import FieldReader
from ..jsonvalue import NOT_RECORDED, render, shorten
from ..options import MatchOptions
from ..report import SCHEMA, TOOL_ERROR, UNKNOWN_TOOL, Cause
from ..run import Call
from .expectations import PASSED, Expectation, Outcome, RunView, ToolCallCount

# Seconds of validation one expectation may spend on one run's calls.
SCHEMA_TIME_LIMIT = 1.0
# Failing calls an outcome names before it says how many more there are.
CALLS_NAMED = 3


def _where(call: Call) -> str:
    return f"batch {call.batch}, call {call.position}"


def _listed(items: list[str], noun: str) -> str:
    text = "; ".join(items[:CALLS_NAMED])
    more = len(items) - CALLS_NAMED
    return f"{text}; and {more} more {noun}{'s' if more > 1 else ''}" if more > 0 else text


@dataclass(frozen=True, slots=True)
class ArgumentsMatchSchema(Expectation):
    """Every recorded call of a catalog tool (of ``tool`` alone, when given) has arguments
    valid against the tool's input schema."""

    type: ClassVar[str] = "arguments_match_schema"
    cause_kind: ClassVar[str] = SCHEMA
    reads: ClassVar[str] = "arguments"
    reads_catalog: ClassVar[bool] = True
    # Evaluating it can meet a schema that cannot be applied, or run out of time.
    may_not_evaluate: ClassVar[bool] = True
    tool: str | None = None
    key: str | None = None
    # Calls whose arguments were not recorded are passed over (the scorer's second look).
    skip_unrecorded: bool = False

    @classmethod
    def from_data(
        cls, index: int, fields: FieldReader, options: MatchOptions, strict: bool
    ) -> ArgumentsMatchSchema:
        tool = fields.string("tool", nonempty=True)
        return cls(index, "", tool, tool and options.tool_key(tool))

    def describe(self) -> str:
        if self.tool is None:
            return "every call's arguments match its tool's schema"
        return f"arguments of {self.tool} match its schema"

    def without(self, content: str) -> Expectation | None:
        if content == "arguments":
            return replace(self, skip_unrecorded=True)
        return None if content == "calls" else self

    def evaluate(self, view: RunView) -> Outcome:
        calls = view.named(self.key) if self.key is not None else view.calls
        failures: list[str] = []
        first: tuple[Call, Cause] | None = None
        try:
            with validating(SCHEMA_TIME_LIMIT, view.deadline):
                for call in calls:
                    failure = self._check(view, call)
                    if failure is None:
                        continue
                    text, cause = failure
                    failures.append(f"{call.name}, {_where(call)}: {text}")
                    first = first or (call, cause)
        except TooSlow:
            view.check_time()  # the run's own deadline passed: the scorer says so
            return Outcome(
                False,
                error=f"cannot evaluate: validating the calls took longer than "
                f"{SCHEMA_TIME_LIMIT:g} s, the limit for one run",
            )
        except SchemaUnusable as exc:
            return Outcome(False, error=f"cannot evaluate: {exc}")
        if first is None:
            return PASSED
        call, cause = first
        return Outcome(False, _listed(failures, "call"), call.at, cause=cause)

    def _check(self, view: RunView, call: Call) -> tuple[str, Cause] | None:
        """Why ``call``'s arguments break its tool's schema, and the cause; None when they
        do not, or when the tool is not in the catalog. Raises ``SchemaUnusable``."""
        catalog = view.catalog
        tool = catalog.find(call.name, view.options)
        if tool is None:
            return None
        schema = catalog.schema(tool)
        if schema.problem is not None:
            raise SchemaUnusable(
                f"{tool.name}'s input schema ({tool.schema_path}) {schema.problem}"
            )
        if call.arguments is NOT_RECORDED or not call.arguments_captured:
            if self.skip_unrecorded:
                return None
            return "arguments not recorded", Cause(SCHEMA, tool.name)
        if call.arguments is None:
            raw = call.arguments_raw or ""
            return (
                f"arguments are not a JSON object: {render(shorten(raw, 60))}",
                Cause(SCHEMA, tool.name),
            )
        try:
            failure = schema.failure(call.arguments)
        except SchemaUnusable as exc:
            raise SchemaUnusable(f"{tool.name}'s input schema: {exc}") from None
        if failure is None:
            return None
        return failure.describe(), Cause(SCHEMA, tool.name, failure.path or failure.argument)


@dataclass(frozen=True, slots=True)
class OnlyCatalogTools(Expectation):
    """No call of a tool the catalog lacks."""

    type: ClassVar[str] = "only_catalog_tools"
    cause_kind: ClassVar[str] = UNKNOWN_TOOL
    reads: ClassVar[str] = "calls"
    reads_catalog: ClassVar[bool] = True

    def describe(self) -> str:
        return "called only tools in the catalog"

    def evaluate(self, view: RunView) -> Outcome:
        catalog, options = view.catalog, view.options
        unknown: dict[str, list[Call]] = {}
        for call in view.calls:
            if catalog.find(call.name, options) is None:
                unknown.setdefault(call.name, []).append(call)
        if not unknown:
            return PASSED
        names = [tool.name for tool in catalog.tools]
        described = []
        for name, calls in unknown.items():
            close = difflib.get_close_matches(name, names, n=1)
            hint = f"; did you mean {close[0]}?" if close else ""
            count = f", {len(calls)} calls" if len(calls) > 1 else ""
            described.append(f"{name} ({_where(calls[0])}{count}){hint}")
        first = next(iter(unknown.values()))[0]
        return Outcome(
            False,
            f"not in the tool catalog: {_listed(described, 'tool')}",
            first.at,
            cause=Cause(UNKNOWN_TOOL, first.name),
        )


def _tool_errors(view: RunView, key: str | None) -> list[Call]:
    calls = view.named(key) if key is not None else view.calls
    return [call for call in calls if call.is_error]


def _error_text(call: Call) -> str:
    result = "" if call.result is None else f": {render(shorten(_as_text(call.result), 80))}"
    return f"{call.name} returned an error in {_where(call)}{result}"


def _as_text(result: object) -> str:
    return result if isinstance(result, str) else render(result)


@dataclass(frozen=True, slots=True)
class NoToolErrors(Expectation):
    """No call (of ``tool``, when given) returned an error: a result marked ``is_error``."""

    type: ClassVar[str] = "no_tool_errors"
    cause_kind: ClassVar[str] = TOOL_ERROR
    reads: ClassVar[str] = "calls"
    tool: str | None = None
    key: str | None = None

    @classmethod
    def from_data(
        cls, index: int, fields: FieldReader, options: MatchOptions, strict: bool
    ) -> NoToolErrors:
        tool = fields.string("tool", nonempty=True)
        return cls(index, "", tool, tool and options.tool_key(tool))

    def describe(self) -> str:
        return "no tool errors" if self.tool is None else f"no errors from {self.tool}"

    def evaluate(self, view: RunView) -> Outcome:
        errors = _tool_errors(view, self.key)
        if not errors:
            return PASSED
        first = errors[0]
        more = f"; {len(errors)} tool errors in all" if len(errors) > 1 else ""
        return Outcome(
            False, _error_text(first) + more, first.at, cause=Cause(TOOL_ERROR, first.name)
        )


@dataclass(frozen=True, slots=True)
class ToolErrorCount(ToolCallCount):
    """Between ``min`` and ``max`` calls (of ``tool``, when given) returned an error."""

    type: ClassVar[str] = "tool_error_count"
    cause_kind: ClassVar[str] = TOOL_ERROR

    def describe(self) -> str:
        subject = f"errors from {self.tool}" if self.tool is not None else "tool errors"
        return f"{subject}: {self._bounds().replace(' times', '').replace('once', '1')}"

    def evaluate(self, view: RunView) -> Outcome:
        errors = _tool_errors(view, self.key)
        count = len(errors)
        if (self.min is None or count >= self.min) and (self.max is None or count <= self.max):
            return PASSED
        subject = self.tool if self.tool is not None else "tools"
        times = "once" if count == 1 else f"{count} times"
        detail = f"{subject} returned an error {times}; expected {self._bounds()}"
        if errors:
            detail += f" ({_error_text(errors[0])})"
        return Outcome(
            False, detail, errors[0].at if errors else None, cause=Cause(TOOL_ERROR, self.tool)
        )
