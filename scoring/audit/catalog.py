"""A case against its suite's tool catalog (docs/audit.md#against-the-catalog): tools the
catalog lacks (``unknown_tool``), and required values a tool's input schema refuses
(``schema``).

A value is checked where it is literal: a plain value, a ``$literal``, or each alternative
of a ``$one_of`` that is one. Other matchers are not checked (a ``$regex`` may well accept
only what the schema allows), but an argument the schema does not declare, where it allows
no others, is refused whatever its matcher, unless the argument may be left out
(``$optional``, ``$absent``). Each value is checked alone against the tool's whole schema,
its other required arguments not missed (``failure(..., partial=True)``).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any

from scoring.matcher import Case, NoExample, SchemaUnusable, Tool, is_matcher, render_short

from .problems import SCHEMA, UNKNOWN_TOOL, Problem
from .runs import is_concrete

# Expectation types whose ``tool`` names a tool (the catalog expectations' is checked when
# the suite is loaded).
NAMING_TYPES = (
    "called_tool",
    "did_not_call_tool",
    "called_tool_with",
    "tool_call_count",
    "no_tool_errors",
    "tool_error_count",
)


def catalog_problems(case: Case) -> list[Problem]:
    if not case.catalog:
        return []
    problems = [Problem(case.key, UNKNOWN_TOOL, message) for message in _unknown_tools(case)]
    for expected in case.expected_calls:
        tool = case.catalog.find(expected.name, case.match)
        if tool is not None:
            where = f"expected call #{expected.index} ({expected.name})"
            problems += _refused_values(
                case, tool, where, expected.required_args, expected.arguments, whole=True
            )
    expectation: Any  # its type's own fields are read (docs/formats.md#expectations-in-a-case)
    for expectation in case.expectations:
        if expectation.type == "called_tool_with":
            tool = case.catalog.find(expectation.tool, case.match)
            if tool is not None:
                where = f"expectation #{expectation.index} ({expectation.label})"
                problems += _refused_values(
                    case, tool, where, expectation.args, expectation.pattern, whole=False
                )
    return problems


def _unknown_tools(case: Case) -> Iterator[str]:
    names = tuple(tool.name for tool in case.catalog.tools)

    def lacks(name: str) -> bool:
        return case.catalog.find(name, case.match) is None

    def hint(name: str) -> str:
        return _hint(name, names)

    for expected in case.expected_calls:
        if lacks(expected.name):
            yield (
                f"expected call #{expected.index} calls `{expected.name}`, which the tool "
                f"catalog lacks{hint(expected.name)}"
            )
    expectation: Any  # its type's own fields are read (docs/formats.md#expectations-in-a-case)
    for expectation in case.expectations:
        kind = expectation.type
        named = list(expectation.tools) if kind == "called_tools_in_order" else []
        if kind in NAMING_TYPES and expectation.tool is not None:
            named.append(expectation.tool)
        for name in dict.fromkeys(named):
            if lacks(name):
                never = "; as written it holds of every run" if kind == "did_not_call_tool" else ""
                yield (
                    f"expectation #{expectation.index} ({expectation.label}) names `{name}`, "
                    f"which the tool catalog lacks{never}{hint(name)}"
                )
        if kind == "end_state_matches":
            calls = [name for turn in expectation.turns for name, _ in turn]
            for name in dict.fromkeys(calls):
                if lacks(name):
                    count = calls.count(name)
                    yield (
                        f"the reference calls of expectation #{expectation.index} call "
                        f"`{name}` ({count} call{'s' if count > 1 else ''}), which the tool "
                        f"catalog lacks{hint(name)}"
                    )


@lru_cache(maxsize=1024)
def _hint(name: str, names: tuple[str, ...]) -> str:
    """The catalog's tool ``name`` is most likely a misspelling of, in words (the same
    unknown tool recurs across a suite's cases)."""
    close = difflib.get_close_matches(name, names, n=1)
    return f"; did you mean `{close[0]}`?" if close else ""


def _refused_values(
    case: Case, tool: Tool, where: str, required: Mapping, pattern: Any, *, whole: bool
) -> list[Problem]:
    """``schema`` problems of the values an expected call (``whole``: compared as a whole)
    or a ``called_tool_with`` (objects open: only values that are not objects are checked)
    requires of ``tool``."""
    schema = case.catalog.schema(tool)
    if schema.problem is not None:
        return []  # refused when the suite is loaded; a stored suite's is left unjudged
    declared = {case.match.arg_key(name): name for name in tool.properties}
    problems = []
    for name, _, compiled in pattern.items:
        value = required[name]
        argument = declared.get(case.match.arg_key(name), name)
        checked = list(_literals(value, whole=whole))
        if not checked and argument not in tool.properties and _sent(value, case):
            try:
                checked = [("", compiled.example())]
            except NoExample:
                continue
        for said, literal in checked:
            if literal is None and case.match.absent_is_null:
                continue  # null may be left out, so the schema need not allow it
            try:
                failure = schema.failure({argument: literal}, partial=True)
            except SchemaUnusable:
                break
            if failure is not None:
                message = (
                    f"{where} requires {argument}{said} = {render_short(literal, 40)}, which "
                    f"{tool.name}'s input schema refuses: {failure.describe()}"
                )
                problems.append(Problem(case.key, SCHEMA, message))
    return problems


def _literals(value: Any, *, whole: bool) -> Iterator[tuple[str, Any]]:
    """The literal values an expected value holds at its top: itself, a ``$literal``'s, or
    each literal alternative of a ``$one_of`` (with where it is, in words)."""
    if is_matcher(value) and len(value) == 1:
        ((name, argument),) = value.items()
        if name == "$literal" and _checkable(argument, whole):
            yield "", argument
        elif name == "$one_of" and isinstance(argument, list):
            for index, alternative in enumerate(argument):
                if is_matcher(alternative) and "$literal" in alternative:
                    alternative = alternative["$literal"]
                elif not is_concrete(alternative):
                    continue
                if _checkable(alternative, whole):
                    yield f" (alternative {index} of $one_of)", alternative
    elif is_concrete(value) and _checkable(value, whole):
        yield "", value


def _checkable(value: Any, whole: bool) -> bool:
    # An object in called_tool_with is open: it need not hold the keys the schema requires.
    return whole or not isinstance(value, Mapping)


def _sent(value: Any, case: Case) -> bool:
    """Whether an argument expected so must be sent (``$optional`` and ``$absent`` may
    leave it out, and ``null`` under ``null_args: absent_or_null``)."""
    if value is None:
        return not case.match.absent_is_null
    return not (is_matcher(value) and ("$optional" in value or "$absent" in value))
