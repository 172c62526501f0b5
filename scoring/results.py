"""What the submission pages show of the stored results."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Q

from .models import PredicateResult, Result, Submission, Verdict
from .passk import KFigures, pass_at_k, pass_hat_k, suite_figures

COMMON_FAILURES_SHOWN = 10


@dataclass(frozen=True)
class CaseTrials:
    case: str
    runs: int
    passed: int
    at_k: tuple[float, float] | None  # (pass@k, pass^k) at the submission's k, if enough runs


@dataclass(frozen=True)
class Trials:
    cases: list[CaseTrials]
    figures: list[KFigures]  # for k = 1 .. the most trials of a case

    @property
    def k(self) -> int:
        """The most trials any case has: the k the per-case figures are for."""
        return len(self.figures)

    @property
    def several(self) -> bool:
        """Whether some case has more than one trial (else pass@k is just the pass rate)."""
        return self.k > 1

    @property
    def shown(self) -> list[KFigures]:
        """The figures worth a row: k up to 5, the powers of two, and the largest k. With
        dozens of trials a row per k is a wall of numbers that barely change."""
        return [f for f in self.figures if f.k <= 5 or f.k & (f.k - 1) == 0 or f.k == self.k]


def case_trials(submission: Submission) -> Trials:
    """Runs and passes per case, with pass@k and pass^k (for the scored runs)."""
    rows = (
        Result.objects.filter(submission=submission)
        .values("run__case_key")
        .annotate(runs=Count("pk"), passed=Count("pk", filter=Q(verdict=Verdict.PASS)))
        .order_by("run__case_key")
    )
    counts = [(row["run__case_key"], row["runs"], row["passed"]) for row in rows]
    figures = suite_figures((n, c) for _, n, c in counts)
    k = len(figures)
    cases = [
        CaseTrials(key, n, c, (pass_at_k(n, c, k), pass_hat_k(n, c, k)) if n >= k else None)
        for key, n, c in counts
    ]
    return Trials(cases, figures)


def common_failures(submission: Submission) -> list[dict]:
    """The predicates that fail most often, with how many runs fail them: where to start
    reading. (The predicate rows' partial index covers exactly this query.)"""
    return list(
        PredicateResult.objects.filter(submission=submission, passed=False)
        .values("label")
        .annotate(runs=Count("pk"))
        .order_by("-runs", "label")[:COMMON_FAILURES_SHOWN]
    )


@dataclass(frozen=True)
class RunRow:
    result: Result
    failing: list[str]


def run_rows(results) -> list[RunRow]:
    """The runs table's rows: each result with the labels of its failing predicates."""
    return [
        RunRow(result, [p["label"] for p in result.report["predicates"] if not p["passed"]])
        for result in results
    ]
