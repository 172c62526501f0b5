"""A run's usage as the runs table keeps it, and the prices its team's runs are costed at
(docs/formats.md#usage, docs/formats.md#cost)."""

from __future__ import annotations

from typing import Any

from scoring.matcher import Run as MatcherRun
from scoring.models import team_prices

__all__ = ["USAGE_FIELDS", "team_prices", "usage_values"]

# ``Run``'s columns of the usage, in the order ``usage_values`` gives them.
USAGE_FIELDS = (
    "input_tokens", "output_tokens", "cached_input_tokens", "reasoning_tokens", "model_calls",
    "duration_ms", "tool_duration_ms", "cost_usd", "model_names",
)  # fmt: skip
_NOTHING = (None,) * len(USAGE_FIELDS)


def usage_values(run: MatcherRun) -> tuple[Any, ...]:
    """The run's usage figures for ``USAGE_FIELDS`` (validated by ``load_run``); its models
    one a line, as ``Run.tools`` holds tool names."""
    usage = run.usage
    if usage is None:
        return _NOTHING
    models = usage.get("models")
    named = "".join(f"\n{m}" for m in models) + "\n" if models else None
    return (*(usage.get(key) for key in USAGE_FIELDS[:-1]), named)
