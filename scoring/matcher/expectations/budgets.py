"""Budgets (docs/matcher.md#budgets): what a run may cost, from its recorded ``usage``
(docs/formats.md#usage). A figure equal to its limit passes; a figure the recording does not
give leaves the budget undecided (an error, "not recorded"), never passed or failed.

The cost is worked out when the run is read (docs/formats.md#cost), so it is there when the
run is scored. A suite's own budgets are each case's defaults: a case that sets a budget of
the same type keeps its own (``suite.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from ..fields import FieldReader, Number
from ..options import MatchOptions
from ..report import BUDGET
from .expectations import PASSED, Expectation, Outcome, RunView

NOT_RECORDED = "not recorded"


def _figure(view: RunView, key: str) -> Any:
    usage = view.run.usage
    return usage.get(key) if isinstance(usage, Mapping) else None


def _undecided(what: str) -> Outcome:
    return Outcome(
        False, f"{what}: {NOT_RECORDED}", error=f"{what} {NOT_RECORDED} in the run's usage"
    )


def _number(value: Number) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


@dataclass(frozen=True, slots=True)
class _Budget(Expectation):
    """A budget on one figure of the run's usage: at most ``max``."""

    cause_kind: ClassVar[str] = BUDGET
    # A figure not recorded leaves it undecided: an error, not a failure.
    may_not_evaluate: ClassVar[bool] = True
    figure: ClassVar[str]
    noun: ClassVar[str]
    whole: ClassVar[bool] = True
    max: Number = 0

    @classmethod
    def from_data(
        cls, index: int, fields: FieldReader, options: MatchOptions, strict: bool
    ) -> _Budget | None:
        limit: Number | None
        if cls.whole:
            limit = fields.integer("max", minimum=0)
            if limit is None and fields.data.get("max") is None:
                fields.number("max", required=True)
        else:
            limit = fields.number("max", required=True)
            if limit is not None and limit < 0:
                fields.problems.add(fields.at("max"), "must be at least 0")
                limit = None
        return None if limit is None else cls(index, "", limit)

    def describe(self) -> str:
        return f"{self.noun} at most {_number(self.max)}"

    def measure(self, view: RunView) -> float | None:
        value = _figure(view, self.figure)
        return value if isinstance(value, int | float) and not isinstance(value, bool) else None

    def evaluate(self, view: RunView) -> Outcome:
        value = self.measure(view)
        if value is None:
            return _undecided(self.noun)
        if value <= self.max:
            return PASSED
        return Outcome(
            False, f"{self.noun}: {_number(value)}, over the {_number(self.max)} allowed"
        )


@dataclass(frozen=True, slots=True)
class MaxModelCalls(_Budget):
    type: ClassVar[str] = "max_model_calls"
    figure: ClassVar[str] = "model_calls"
    noun: ClassVar[str] = "model calls"


@dataclass(frozen=True, slots=True)
class MaxDurationSeconds(_Budget):
    type: ClassVar[str] = "max_duration_seconds"
    figure: ClassVar[str] = "duration_ms"
    noun: ClassVar[str] = "duration (seconds)"
    whole: ClassVar[bool] = False

    def measure(self, view: RunView) -> float | None:
        value = _Budget.measure(self, view)
        return None if value is None else value / 1000


@dataclass(frozen=True, slots=True)
class MaxCostUsd(_Budget):
    type: ClassVar[str] = "max_cost_usd"
    figure: ClassVar[str] = "cost_usd"
    noun: ClassVar[str] = "cost (USD)"
    whole: ClassVar[bool] = False


# ``max_tokens``' limits, and the figures each adds up.
_TOKEN_LIMITS = {
    "input": ("input_tokens",),
    "output": ("output_tokens",),
    "total": ("input_tokens", "output_tokens"),
}


@dataclass(frozen=True, slots=True)
class MaxTokens(Expectation):
    """At most ``input``, ``output`` and ``total`` (input + output) tokens, each optional
    but one at least."""

    type: ClassVar[str] = "max_tokens"
    cause_kind: ClassVar[str] = BUDGET
    may_not_evaluate: ClassVar[bool] = True
    limits: tuple[tuple[str, int], ...] = ()

    @classmethod
    def from_data(
        cls, index: int, fields: FieldReader, options: MatchOptions, strict: bool
    ) -> MaxTokens | None:
        limits = []
        for name in _TOKEN_LIMITS:
            limit = fields.integer(name, minimum=0)
            if limit is not None:
                limits.append((name, limit))
        if not limits:
            if not any(fields.data.get(name) is not None for name in _TOKEN_LIMITS):
                fields.problems.add(fields.path, "needs a limit: input, output or total")
            return None
        return cls(index, "", tuple(limits))

    def describe(self) -> str:
        return "tokens at most " + ", ".join(f"{n} {limit}" for n, limit in self.limits)

    def evaluate(self, view: RunView) -> Outcome:
        over = []
        for name, limit in self.limits:
            parts = [_figure(view, key) for key in _TOKEN_LIMITS[name]]
            if any(type(part) is not int for part in parts):
                return _undecided(f"{name} tokens")
            value = sum(parts)
            if value > limit:
                over.append(f"{name} tokens: {value}, over the {limit} allowed")
        return Outcome(False, "; ".join(over)) if over else PASSED


BUDGETS: tuple[type[Expectation], ...] = (MaxModelCalls, MaxTokens, MaxDurationSeconds, MaxCostUsd)
