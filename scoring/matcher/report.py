"""Reports (docs/formats.md#reports): one per scored run, one entry per predicate."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .run import public_usage

PASS, FAIL, ERROR = "pass", "fail", "error"

# Cause kinds (docs/formats.md#cause): why a predicate failed, for grouping failures.
NO_CALL = "no_call"
MISSING_CALL = "missing_call"
ARGUMENT_VALUE = "argument_value"
ARGUMENT_MISSING = "argument_missing"
ARGUMENT_UNEXPECTED = "argument_unexpected"
ARGUMENTS_UNPARSED = "arguments_unparsed"
ORDER = "order"
DEPENDENCY = "dependency"
COUNT = "count"
FORBIDDEN_CALL = "forbidden_call"
EXTRA_CALL = "extra_call"
FINAL_TEXT = "final_text"
FINAL_NUMBER = "final_number"
RUN_ERROR = "run_error"
NOT_CAPTURED = "not_captured"
SCHEMA = "schema"
UNKNOWN_TOOL = "unknown_tool"
TOOL_ERROR = "tool_error"
END_STATE = "end_state"
BUDGET = "budget"
# Each cause kind in words, for pages and summaries.
CAUSE_WORDS = {
    NO_CALL: "never called",
    MISSING_CALL: "missing call",
    ARGUMENT_VALUE: "wrong argument value",
    ARGUMENT_MISSING: "argument missing",
    ARGUMENT_UNEXPECTED: "argument not allowed",
    ARGUMENTS_UNPARSED: "arguments not valid JSON",
    ORDER: "out of order",
    DEPENDENCY: "called before the result it needs",
    COUNT: "called too often or too rarely",
    FORBIDDEN_CALL: "called though forbidden",
    EXTRA_CALL: "extra call",
    FINAL_TEXT: "final text",
    FINAL_NUMBER: "final number",
    RUN_ERROR: "run ended with an error",
    NOT_CAPTURED: "not captured by the instrumentation",
    SCHEMA: "arguments the tool's schema rejects",
    UNKNOWN_TOOL: "tool not in the catalog",
    TOOL_ERROR: "tool returned an error",
    END_STATE: "end state differs",
    BUDGET: "over budget",
}
CAUSE_KINDS = tuple(CAUSE_WORDS)


def pass_rate_text(passed: int, runs: int) -> str:
    """The share of ``runs`` that passed, as the pages and ``manage.py score`` write it: a
    percentage to at most one decimal (``37.5%``, ``40%``), or a dash when there are no
    runs. Never 100% unless all passed, nor 0% unless none did."""
    if not runs:
        return "—"
    value = round(100 * passed / runs, 1)
    if value == 100 and passed < runs:
        value = 99.9
    elif value == 0 and passed > 0:
        value = 0.1
    return f"{value:g}%"


@dataclass(frozen=True, slots=True)
class Cause:
    """Why a predicate failed, machine-readable: its ``kind`` (one of ``CAUSE_KINDS``), the
    tool concerned and the argument's path (``payment_id``, ``flights[0].date``), each None
    where it does not apply. Values are left out, so the same mistake with other values has
    the same cause."""

    kind: str
    tool: str | None = None
    argument: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "tool": self.tool, "argument": self.argument}


@dataclass(slots=True)  # not frozen, for speed (see run.py); treat as immutable
class PredicateResult:
    """One predicate's verdict.

    ``kind`` is ``run``, ``expected_call``, ``extra_calls`` or ``expectation``; ``index`` is
    the expected call's or expectation's position in its case. ``matched`` is the
    ``(batch, position)`` credited to an expected call; ``nearest`` is the recorded call a
    failure's ``detail`` is about. ``error`` is set when the predicate could not be evaluated.
    """

    kind: str
    label: str
    passed: bool
    index: int | None = None
    matched: tuple[int, int] | None = None
    nearest: tuple[int, int] | None = None
    detail: str | None = None
    error: str | None = None
    cause: Cause | None = None  # set on every failed predicate

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": self.kind}
        if self.index is not None:
            data["index"] = self.index
        data["label"] = self.label
        data["passed"] = self.passed
        if self.kind == "expected_call":
            data["matched"] = list(self.matched) if self.matched is not None else None
        if not self.passed:
            data["nearest"] = list(self.nearest) if self.nearest is not None else None
            data["detail"] = self.detail
            data["cause"] = self.cause.to_dict() if self.cause is not None else None
        if self.error is not None:
            data["error"] = self.error
        return data


@dataclass(slots=True)  # not frozen, for speed (see run.py); treat as immutable
class Report:
    """The verdict on one run of one case, with every predicate's result and the run's
    notes (what its importer could not read or had to assume)."""

    case: str
    trial: int | None
    verdict: str
    predicates: list[PredicateResult]
    error: str | None = None
    notes: tuple[str, ...] = ()
    usage: Mapping[str, Any] | None = None  # the run's (docs/formats.md#usage)

    @property
    def passed(self) -> bool:
        return self.verdict == PASS

    @property
    def failures(self) -> tuple[PredicateResult, ...]:
        return tuple(p for p in self.predicates if not p.passed)

    def to_dict(self, *, with_usage: bool = True) -> dict[str, Any]:
        """The report as docs/formats.md#reports writes it; without the run's usage for a
        store that keeps it beside the report (Casebook's runs table)."""
        data: dict[str, Any] = {
            "case": self.case,
            "trial": self.trial,
            "verdict": self.verdict,
            "predicates": [p.to_dict() for p in self.predicates],
            "error": self.error,
            "notes": list(self.notes),
        }
        if with_usage:
            data["usage"] = public_usage(self.usage)
        return data


def failure_signature(report: Report) -> str | None:
    """What identifies the same failure in other scorings (docs/pipeline.md#signatures): the case
    key and the causes of its failed predicates, without their values, as 32 hex digits; None for a
    run that passed. A run failing the same way with other argument values, in another trial or
    another submission, has the same signature."""
    if report.verdict == PASS:
        return None
    causes = sorted(
        {
            (c.kind, c.tool or "", c.argument or "")
            for p in report.predicates
            if not p.passed and (c := p.cause) is not None
        }
    )
    text = "\x1f".join(["\x1e".join(cause) for cause in causes])
    return hashlib.sha256(f"{report.case}\x1d{text}".encode()).hexdigest()[:32]
