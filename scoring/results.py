"""What the submission pages show of the stored results."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

from django.db.models import Count, Q, QuerySet

from .models import LABEL_LIMIT, PredicateResult, Result, ReviewStatus, Submission, Verdict
from .passk import KFigures, pass_at_k, pass_hat_k, suite_figures
from .reviews import with_status
from .submissions import suite_of_version

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


# What the runs table may be sorted by: the query parameter, and the ordering it means.
SORTS = {
    "line": ("run__seq",),
    "case": ("run__case_key", "run__trial"),
    "-case": ("-run__case_key", "run__trial"),
    "verdict": ("verdict", "run__seq"),
    "-verdict": ("-verdict", "run__seq"),
}


@dataclass(frozen=True)
class RunFilters:
    """The filters of a submission's runs table, as they stand in its URL (shareable, and
    the back button restores them). Each empty one is off."""

    verdict: str = ""
    case: str = ""  # exact key
    tag: str = ""  # of the case, in the version scored against
    predicate: str = ""  # a failing predicate's label
    tool: str = ""  # a tool the run called
    review: str = ""  # review status
    text: str = ""  # in the final answer, case-insensitive
    sort: str = "line"

    @classmethod
    def from_query(cls, query) -> RunFilters:
        """From a request's GET parameters; unknown values are dropped, not errors (a
        shared link outlives a renamed option)."""
        values = {f.name: query.get(f.name, "").strip() for f in fields(cls)}
        if values["verdict"] not in Verdict.values:
            values["verdict"] = ""
        if values["review"] not in ReviewStatus.values:
            values["review"] = ""
        if values["sort"] not in SORTS:
            values["sort"] = "line"
        values["predicate"] = values["predicate"][:LABEL_LIMIT]
        return cls(**values)

    @property
    def active(self) -> bool:
        """Whether any filter (not the sort) narrows the table."""
        return any(value for name, value in asdict(self).items() if name != "sort")

    def as_query(self) -> dict[str, str]:
        """The parameters that are set, for links that keep the filters."""
        return {
            name: value
            for name, value in asdict(self).items()
            if value and not (name == "sort" and value == "line")
        }

    def results(self, submission: Submission) -> QuerySet[Result]:
        """The submission's results that pass the filters, in the chosen order."""
        results = Result.objects.filter(submission=submission)
        if self.verdict:
            results = results.filter(verdict=self.verdict)
        if self.case:
            results = results.filter(run__case_key=self.case)
        if self.tag:
            suite = suite_of_version(submission.version_id)
            keys = [case.key for case in suite.cases if self.tag in case.tags]
            results = results.filter(run__case_key__in=keys)
        if self.predicate:
            # A subquery, not a join: a report may fail two predicates of the same label.
            failing = PredicateResult.objects.filter(
                submission=submission, passed=False, label=self.predicate
            )
            results = results.filter(pk__in=failing.values("result_id"))
        if self.tool:
            results = results.filter(run__tools__contains=f"\n{self.tool}\n")
        if self.review:
            runs = with_status(submission.runs.all(), self.review)
            results = results.filter(pk__in=runs.values("pk"))
        if self.text:
            results = results.filter(run__final_text__icontains=self.text)
        return results.order_by(*SORTS[self.sort])
