"""A run's usage as the runs table keeps it, and the prices its team's runs are costed at
(docs/formats.md#usage, docs/formats.md#cost)."""

from __future__ import annotations

from typing import Any

from scoring.importers.costs import Price, Prices
from scoring.matcher import Run as MatcherRun
from scoring.models import ModelPrice

# ``Run``'s columns of the usage, in the order ``usage_values`` gives them.
USAGE_FIELDS = (
    "input_tokens", "output_tokens", "cached_input_tokens", "reasoning_tokens", "model_calls",
    "duration_ms", "cost_usd", "model_names",
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


def team_prices(team_id: int | None) -> Prices:
    """The team's own prices for models, before the catalogue's."""
    if team_id is None:
        return Prices()
    own = ModelPrice.objects.filter(team_id=team_id).values_list(
        "model", "input_per_mtok", "output_per_mtok", "cached_input_per_mtok"
    )
    return Prices({model: Price(i, o, c) for model, i, o, c in own})
