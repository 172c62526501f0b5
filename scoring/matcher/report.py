"""Reports (DESIGN.md §3.3): one per scored run, one entry per predicate."""

from __future__ import annotations

from dataclasses import dataclass

PASS, FAIL, ERROR = "pass", "fail", "error"


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

    def to_dict(self) -> dict:
        data: dict = {"kind": self.kind}
        if self.index is not None:
            data["index"] = self.index
        data["label"] = self.label
        data["passed"] = self.passed
        if self.kind == "expected_call":
            data["matched"] = list(self.matched) if self.matched is not None else None
        if not self.passed:
            data["nearest"] = list(self.nearest) if self.nearest is not None else None
            data["detail"] = self.detail
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

    @property
    def passed(self) -> bool:
        return self.verdict == PASS

    @property
    def failures(self) -> tuple[PredicateResult, ...]:
        return tuple(p for p in self.predicates if not p.passed)

    def to_dict(self) -> dict:
        return {
            "case": self.case,
            "trial": self.trial,
            "verdict": self.verdict,
            "predicates": [p.to_dict() for p in self.predicates],
            "error": self.error,
            "notes": list(self.notes),
        }
