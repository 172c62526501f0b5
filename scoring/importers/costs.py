"""What a run cost in US dollars (docs/formats.md#cost): its tokens at its models' prices.

Prices come from genai-prices' bundled data (it is never asked to fetch newer), or from a
team's own price for a model (self-hosted, negotiated), which comes first. A model is looked
up as written, then, for a ``provider/model`` name (LiteLLM's, Inspect's), as that
provider's model. Its base prices are used: a run's tokens are totals over its calls, so a
price that steps up past a prompt size per request cannot be applied to them.

A run's cost is known only when every model it used has a price and its token counts were
recorded; otherwise it is None, and ``unpriced`` names the models without a price.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from functools import lru_cache
from typing import Any

from scoring.matcher import InvalidInput, parse_json

from .usage import BY_MODEL

MILLION = 1_000_000


@dataclass(frozen=True, slots=True)
class Price:
    """US dollars per million tokens: input, input read from a cache (None: as input) and
    output (reasoning included)."""

    input: float
    output: float
    cached_input: float | None = None

    def cost(self, input_tokens: int, output_tokens: int, cached_input_tokens: int) -> float:
        cached = min(cached_input_tokens, input_tokens)
        cached_rate = self.input if self.cached_input is None else self.cached_input
        return (
            (input_tokens - cached) * self.input
            + cached * cached_rate
            + output_tokens * self.output
        ) / MILLION


@dataclass(frozen=True)
class Prices:
    """The prices a run is costed at: a team's own, by model name as written, before the
    catalogue's."""

    overrides: Mapping[str, Price] = field(default_factory=dict)

    def price(self, model: str) -> Price | None:
        own = self.overrides.get(model)
        return own if own is not None else catalogue_price(model)


CATALOGUE = Prices()

# A prices file's field of each rate (docs/command-line.md#score): ``input`` and
# ``output`` required, ``cached_input`` optional.
_RATES = ("input", "cached_input", "output")


def prices_file(path: str) -> Prices:
    """The prices of a JSON file, ``{"model": {"input", "cached_input", "output"}}`` in US
    dollars per million tokens, before the catalogue's; ``ValueError`` naming the file and
    the field at fault."""
    try:
        with open(path, "rb") as stream:
            document = parse_json(stream.read())
    except OSError as exc:
        raise ValueError(f"{path}: cannot read the prices file: {exc.strerror}") from None
    except InvalidInput as exc:
        raise ValueError(f"{path}: not JSON: {exc.problems[0].message}") from None
    if not isinstance(document, Mapping):
        raise ValueError(f"{path}: must be an object of model names to their prices")
    return Prices({model: _price_of(path, model, given) for model, given in document.items()})


def _price_of(path: str, model: str, given: Any) -> Price:
    if not isinstance(given, Mapping):
        raise ValueError(f"{path}: {model}: must be an object of input, cached_input, output")
    unknown = sorted(set(given) - set(_RATES))
    if unknown:
        raise ValueError(f"{path}: {model}.{unknown[0]}: not a price (input, cached_input, output)")

    def rate(name: str) -> float:
        value: Any = given.get(name)
        if type(value) not in (int, float, Decimal) or not math.isfinite(value) or value < 0:
            raise ValueError(
                f"{path}: {model}.{name}: must be US dollars per million tokens, a number ≥ 0"
            )
        return float(value)

    cached = None if given.get("cached_input") is None else rate("cached_input")
    return Price(rate("input"), rate("output"), cached)


@lru_cache(maxsize=4096)
def catalogue_price(model: str) -> Price | None:
    """genai-prices' base price of ``model``; None when it knows no such model."""
    from genai_prices import data_snapshot  # its data is read on first use, not at import

    snapshot = data_snapshot.get_snapshot()
    tries: list[tuple[str, str | None]] = [(model, None)]
    provider, _, name = model.partition("/")
    if name:
        tries.append((name, provider))
    for ref, provider_id in tries:
        try:
            _, info = snapshot.find_provider_model(ref, None, provider_id, None)
        except LookupError:
            continue
        prices: Any = info.prices
        if isinstance(prices, list):  # prices by date: the latest
            prices = prices[-1].prices if prices else None
        if prices is None:
            continue
        standard = prices
        rates = {k: _base(getattr(standard, k, None)) for k in ("input_mtok", "output_mtok")}
        if rates["input_mtok"] is None or rates["output_mtok"] is None:
            continue
        return Price(
            rates["input_mtok"],
            rates["output_mtok"],
            _base(getattr(standard, "cache_read_mtok", None)),
        )
    return None


def _base(rate: Any) -> float | None:
    """A rate as a float: a tiered one's base tier."""
    if rate is None:
        return None
    if isinstance(rate, Decimal | int | float):
        return float(rate)
    base = getattr(rate, "base", None)
    return float(base) if isinstance(base, Decimal | int | float) else None


def run_cost(usage: Mapping[str, Any], prices: Prices = CATALOGUE) -> float | None:
    """The cost of a run's usage, None when a model has no price, no model is named, or
    the tokens were not recorded."""
    models = usage.get("models")
    if not isinstance(models, list) or not models:
        return None
    by_model = usage.get(BY_MODEL)
    if len(models) == 1 or not isinstance(by_model, Mapping):
        if len(models) != 1:
            return None
        parts: list[tuple[Any, Any]] = [(models[0], usage)]
    else:
        parts = list(by_model.items())
    total = 0.0
    for model, tokens in parts:
        price = prices.price(model) if isinstance(model, str) else None
        if price is None or not isinstance(tokens, Mapping):
            return None
        given, made = tokens.get("input_tokens"), tokens.get("output_tokens")
        if type(given) is not int or type(made) is not int:
            return None
        cached = tokens.get("cached_input_tokens")
        total += price.cost(given, made, cached if type(cached) is int else 0)
    return round(total, 10)


def unpriced(models: Any, prices: Prices = CATALOGUE) -> list[str]:
    """The models of ``models`` (a run's ``usage.models``) that have no price."""
    if not isinstance(models, list):
        return []
    return [m for m in models if isinstance(m, str) and prices.price(m) is None]


def priced(canonical: Mapping[str, Any], prices: Prices = CATALOGUE) -> None:
    """Give a canonical run's ``usage`` its ``cost_usd``, unless the run gives one."""
    usage = canonical.get("usage")
    if type(usage) is dict and usage.get("cost_usd") is None:
        usage["cost_usd"] = run_cost(usage, prices)
