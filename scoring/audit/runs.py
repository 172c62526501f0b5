"""The two runs a case is tried against (docs/audit.md#the-reference-run): the smallest run
its own rules allow, and an agent that does nothing.

The reference run makes the expected calls in order, each in a batch of its own (so every
``ordered`` and ``depends_on_result`` holds), with the plainest arguments their matchers
accept (``arguments.example()``); where extra calls are allowed, it adds the calls that
``called_tool``, ``called_tool_with``, ``called_tools_in_order`` and the ``min`` of
``tool_call_count`` ask for and the expected calls do not make, and marks as errors the
calls ``tool_error_count``'s ``min`` asks for; its final text holds what the text
expectations ask for. What no value can satisfy is said, not made up.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from scoring.matcher import Call, Case, NoExample, Run, is_matcher

# The expectation types whose predicates the reference run is not judged by: the catalog
# checks and the end state have checks of their own, more specific (docs/audit.md#problems).
CATALOG_TYPES = frozenset({"arguments_match_schema", "only_catalog_tools"})
END_STATE_TYPES = frozenset({"end_state_matches", "state_path_equals"})
TEXT_TYPES = frozenset(
    {"final_text_contains", "final_text_equals", "final_text_matches", "final_number_equals"}
)
# The tool a count of every tool's calls adds, when the case names none at all.
ANY_TOOL = "any_tool"


@dataclass
class ReferenceRun:
    """The reference run, and what it could not hold: ``missing`` is, for each expected
    call (``("call", index)``) or expectation (``("expectation", index)``) whose value has
    no example, why (a ``NoExample``, ``proven`` when no value can satisfy it)."""

    run: Run
    added: bool  # calls beyond the expected calls were added
    missing: dict[tuple[str, int], list[NoExample]] = field(default_factory=dict)


@dataclass
class _Call:
    name: str
    key: str
    arguments: dict
    is_error: bool = False


def reference_run(case: Case) -> ReferenceRun:
    missing: dict[tuple[str, int], list[NoExample]] = {}
    calls = []
    for expected in case.expected_calls:
        arguments, lacking = expected.arguments.example()
        if lacking:
            missing[("call", expected.index)] = lacking
        calls.append(_Call(expected.name, expected.key, arguments))
    made = len(calls)
    expectation: Any  # its type's own fields are read (docs/formats.md#expectations-in-a-case)
    if not case.forbids_extra_calls:
        for expectation in case.expectations:
            _add_calls(case, expectation, calls, missing)
    for expectation in case.expectations:
        if expectation.type == "tool_error_count" and expectation.min:
            _mark_errors(case, expectation, calls)
    text = _final_text(case, missing)
    batches = tuple(
        (Call(call.name, call.arguments, batch, 0, is_error=call.is_error),)
        for batch, call in enumerate(calls)
    )
    return ReferenceRun(Run(case.key, batches, final_text=text), len(calls) > made, missing)


def idle_run(case: Case) -> Run:
    """An agent that does nothing: no calls, and an empty final text."""
    return Run(case.key, (), final_text="")


def _add_calls(case: Case, expectation: Any, calls: list[_Call], missing: dict) -> None:
    kind = expectation.type
    if kind == "called_tool" and not _named(calls, expectation.key):
        calls.append(_Call(expectation.tool, expectation.key, {}))
    elif kind == "called_tool_with":
        matches = expectation.pattern.matches
        if not any(c.key == expectation.key and matches(c.arguments) for c in calls):
            arguments, lacking = expectation.pattern.example()
            if lacking:
                missing[("expectation", expectation.index)] = lacking
            calls.append(_Call(expectation.tool, expectation.key, arguments))
    elif kind == "tool_call_count" and expectation.min:
        name = expectation.tool or _some_tool(case)
        key = case.match.tool_key(name)
        made = len(_named(calls, expectation.key)) if expectation.key else len(calls)
        calls.extend(_Call(name, key, {}) for _ in range(expectation.min - made))
    elif kind == "called_tools_in_order" and not _in_order(calls, expectation.keys):
        calls.extend(
            _Call(tool, key, {})
            for tool, key in zip(expectation.tools, expectation.keys, strict=True)
        )


def _mark_errors(case: Case, expectation: Any, calls: list[_Call]) -> None:
    """Make ``min`` calls of the expectation's tool (of any tool, when it names none) return
    errors, adding calls where extra calls are allowed and there are too few."""
    named = [c for c in calls if expectation.key is None or c.key == expectation.key]
    if len(named) < expectation.min and not case.forbids_extra_calls:
        name = expectation.tool or _some_tool(case)
        added = [
            _Call(name, case.match.tool_key(name), {}) for _ in range(expectation.min - len(named))
        ]
        calls.extend(added)
        named.extend(added)
    for call in named[: expectation.min]:
        call.is_error = True


def _named(calls: list[_Call], key: str) -> list[_Call]:
    return [call for call in calls if call.key == key]


def _in_order(calls: list[_Call], keys: tuple[str, ...]) -> bool:
    found = 0
    for call in calls:
        if found < len(keys) and call.key == keys[found]:
            found += 1
    return found == len(keys)


def _some_tool(case: Case) -> str:
    """A tool to add calls of when an expectation counts every tool's: the first the case
    expects, else the catalog's first."""
    if case.expected_calls:
        return case.expected_calls[0].name
    return case.catalog.tools[0].name if case.catalog else ANY_TOOL


def _final_text(case: Case, missing: dict) -> str:
    """A final text that each text expectation accepts: the one ``final_text_equals``
    wants, else the texts to contain and examples of the patterns to match, one a line,
    the number to end with last (``final_number_equals`` reads the last number)."""
    pieces, number = [], None
    expectation: Any  # its type's own fields are read (docs/formats.md#expectations-in-a-case)
    for expectation in case.expectations:
        kind = expectation.type
        if kind == "final_text_equals":
            return expectation.text
        if kind == "final_text_contains":
            pieces.append(expectation.text)
        elif kind == "final_text_matches" and expectation.compiled is not None:
            try:
                pieces.insert(0, expectation.compiled.example())
            except NoExample as exc:
                missing[("expectation", expectation.index)] = [exc]
        elif kind == "final_number_equals":
            number = str(expectation.bounds.value)
    if number is not None:
        pieces.append(number)
    return "\n".join(pieces)


def is_concrete(value: Any) -> bool:
    """Whether an expected value is plain JSON, holding no matcher at any depth: a call
    made with it can be replayed as it is."""
    if is_matcher(value):
        return False
    if isinstance(value, Mapping):
        return all(is_concrete(item) for item in value.values())
    if isinstance(value, list):
        return all(is_concrete(item) for item in value)
    return True
