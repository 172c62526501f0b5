"""Every expectation type by its ``type`` (docs/formats.md#expectations-in-a-case)."""

from __future__ import annotations

from .budgets import MaxCostUsd, MaxDurationSeconds, MaxModelCalls, MaxTokens
from .end_state import EndStateMatches, StatePathEquals
from .expectations import (
    CalledTool,
    CalledToolsInOrder,
    CalledToolWith,
    DidNotCallTool,
    Expectation,
    FinalNumberEquals,
    FinalTextContains,
    FinalTextEquals,
    FinalTextMatches,
    NoCallsBeyondExpected,
    NoError,
    NoToolCalls,
    ToolCallCount,
)
from .tool_checks import ArgumentsMatchSchema, NoToolErrors, OnlyCatalogTools, ToolErrorCount

EXPECTATION_TYPES: dict[str, type[Expectation]] = {
    kind.type: kind
    for kind in (
        CalledTool,
        DidNotCallTool,
        CalledToolWith,
        ToolCallCount,
        NoCallsBeyondExpected,
        CalledToolsInOrder,
        NoToolCalls,
        FinalTextContains,
        FinalTextEquals,
        FinalTextMatches,
        FinalNumberEquals,
        NoError,
        ArgumentsMatchSchema,
        OnlyCatalogTools,
        NoToolErrors,
        ToolErrorCount,
        EndStateMatches,
        StatePathEquals,
        MaxModelCalls,
        MaxTokens,
        MaxDurationSeconds,
        MaxCostUsd,
    )
}
