"""What the submission pages show of the stored results (docs/review.md#submission-page),
beside the runs table's filters (``filtersets``): the table's rows (each run's verdict, its
failing predicates with their short reasons, the chosen meta values), read a page at a time,
or a batch at a time for the exports; each case's trials, with pass@k and pass^k; the cases'
tags; the failing predicates with the most runs; and the runs per review status."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from itertools import islice
from operator import itemgetter
from typing import Any, Protocol, TypeVar

from django.core.cache import cache
from django.db.models import Count, Q, QuerySet

from cases.models import ReviewLabel
from cases.natural import natural_sorted
from scoring.matcher import CAUSE_WORDS, dump_json
from scoring.models import (
    CaseSummary,
    LabelLink,
    PredicateResult,
    Result,
    Review,
    ReviewStatus,
    Status,
    Submission,
    Verdict,
)
from scoring.results.passk import KFigures, pass_at_k, pass_hat_k, suite_figures
from scoring.runfiles.runmeta import reward_agrees

COMMON_FAILURES_SHOWN = 10
T = TypeVar("T")
SUMMARY_CACHE_SECONDS = 24 * 3600


@dataclass(frozen=True)
class CaseTrials:
    case: str
    runs: int
    passed: int
    at_k: tuple[float, float] | None  # (pass@k, pass^k) at the submission's k, if enough runs


@dataclass(frozen=True)
class Trials:
    cases: list[CaseTrials]
    k: int  # the most trials any case has: the k the per-case figures are for
    figures: list[KFigures]  # for the k worth a row (``shown_ks``)

    @property
    def several(self) -> bool:
        """Whether some case has more than one trial (else pass@k is just the pass rate)."""
        return self.k > 1


def shown_ks(most: int) -> list[int]:
    """The k worth a row: up to 5, the powers of two, and the largest. With dozens of trials
    a row per k is a wall of numbers that barely change (and with thousands, slow to make)."""
    return [k for k in range(1, most + 1) if k <= 5 or k & (k - 1) == 0 or k == most]


def kept(
    submission: Submission,
    name: str,
    make: Callable[[], T],
    unchanged: Callable[[], bool] | None = None,
) -> T:
    """``make()``, a figure of the submission's results, kept in the cache once it is done:
    its results change only when it is scored again, which starts a new generation, or,
    live, when runs arrive, which moves ``scored`` (either makes a new key); and retention,
    which removes them (its runs gone, there is little to read). Reading every result of a
    million runs takes seconds (docs/review.md#scale). A figure that reads more than the
    results names that in ``name``, and is kept only if ``unchanged()`` once it is made."""
    if not keeps(submission):
        return make()
    key = f"casebook:{name}:{submission.uuid}:{submission.generation}:{submission.scored}"
    figure = cache.get(key)
    if figure is None:
        figure = make()
        if unchanged is None or unchanged():
            cache.set(key, figure, SUMMARY_CACHE_SECONDS)
    return figure


def keeps(submission: Submission) -> bool:
    """Whether ``kept`` keeps the submission's figures (else it makes them each time)."""
    return submission.status == Status.DONE and not submission.runs_pruned


def case_trials(submission: Submission) -> Trials:
    """Runs and passes per case, with pass@k and pass^k (for the scored runs)."""
    return kept(submission, "case-trials", lambda: _case_trials(submission))


def _case_trials(submission: Submission) -> Trials:
    counts = natural_sorted(
        _stored_case_counts(submission) or _case_counts(submission), key=itemgetter(0)
    )
    k = max((n for _, n, _ in counts), default=0)
    figures = suite_figures(((n, c) for _, n, c in counts), ks=shown_ks(k))
    cases = [
        CaseTrials(key, n, c, (pass_at_k(n, c, k), pass_hat_k(n, c, k)) if n >= k else None)
        for key, n, c in counts
    ]
    return Trials(cases, k, figures)


def _case_counts(submission: Submission) -> list[tuple[str, int, int]]:
    """(case key, scored runs, passed) of each case, counted from every result."""
    rows = (
        Result.objects.filter(submission=submission)
        .values_list("run__case_key")
        .annotate(runs=Count("pk"), passed=Count("pk", filter=Q(verdict=Verdict.PASS)))
        .order_by()
    )
    return list(rows)


def _stored_case_counts(submission: Submission) -> list[tuple[str, int, int]]:
    """The same, from the case summaries stored when the submission's scoring was done (a
    row per case, where counting reads every result: seconds at a million runs, on the
    first visit). Empty when none is stored for its current results; a live submission
    goes on after it is first done, so its summaries are not its counts."""
    if submission.status != Status.DONE or submission.live_day is not None:
        return []
    stored = CaseSummary.objects.filter(submission=submission, generation=submission.generation)
    return list(stored.values_list("case_key", "runs", "passed"))


def case_tags(submission: Submission) -> dict[str, tuple[str, ...]]:
    """Each case's tags in the version the submission was scored against (not the suite as
    it is now: a tag added since says nothing about these runs). The version's document is
    read once per process (``SuiteVersion.matcher_suite`` keeps it)."""
    return {case.key: case.tags for case in submission.version.matcher_suite().cases}


def version_tags(submission: Submission) -> list[str]:
    """Every tag of the version's cases, sorted: the choices of the tag filter."""
    return sorted({tag for tags in case_tags(submission).values() for tag in tags})


def failure_groups(submission: Submission) -> QuerySet:
    """Every failing predicate label with the number of runs that fail it, most runs first
    (``{"label", "runs"}`` rows). Aggregated in the database over the failed predicates'
    (submission, label) index (read alone: ``COUNT(*)``, not of a column the index lacks);
    labels are unique within a report, so each row of a label is one run."""
    return (
        PredicateResult.objects.filter(submission=submission)
        .values("label")
        .annotate(runs=Count("*"))
        .order_by("-runs", "label")
    )


def common_failures(submission: Submission) -> list[dict]:
    """The failure groups with the most runs: where to start reading. Each is named by what
    happened (its cause in words, "cancel_reservation: called though forbidden"), not only
    by the predicate that failed, whose label says what was expected ("did not call
    cancel_reservation"): ``{"label", "runs", "what"}`` rows, a predicate's causes apart."""
    return kept(submission, "common-failures", lambda: _common_failures(submission))


def _common_failures(submission: Submission) -> list[dict]:
    labels = [row["label"] for row in failure_groups(submission)[:COMMON_FAILURES_SHOWN]]
    rows = (
        PredicateResult.objects.filter(submission=submission, label__in=labels)
        .values("label", "cause_kind", "cause_tool")
        .annotate(runs=Count("*"))
        .order_by("-runs", "label", "cause_kind", "cause_tool")
    )
    return [
        {"label": row["label"], "runs": row["runs"], "what": cause_in_words(row)} for row in rows
    ]


def cause_in_words(row: dict) -> str:
    """A failure's cause as the pages say it: "book_reservation: called though forbidden"."""
    words = CAUSE_WORDS.get(row["cause_kind"], row["cause_kind"])
    return f"{row['cause_tool']}: {words}" if row["cause_tool"] else words


@dataclass(frozen=True)
class ReviewCounts:
    """How far triage has got: runs per review status (a run never reviewed is
    untriaged)."""

    by_status: dict[str, int]

    @property
    def reviewed(self) -> int:
        return sum(n for status, n in self.by_status.items() if status != ReviewStatus.UNTRIAGED)

    def __iter__(self):
        """(status value, label, runs) for every status, in the workflow's order."""
        for status in ReviewStatus:
            yield status.value, status.label, self.by_status.get(status.value, 0)


def review_counts(submission: Submission) -> ReviewCounts:
    """Runs per review status among the runs the table lists, those of the version's cases
    (one query on the review rows' index: runs never reviewed are the remainder)."""
    rows = (
        Review.objects.filter(submission=submission)
        .exclude(status=ReviewStatus.UNTRIAGED)
        .values_list("status")
        .annotate(runs=Count("pk"))
        .order_by()
    )
    counts = dict(rows)
    counts[ReviewStatus.UNTRIAGED] = max(0, submission.total - sum(counts.values()))
    return ReviewCounts(counts)


# The columns of a runs-table row, read without the run's document or report.
# A run's usage figures the table and its CSV carry (docs/formats.md#usage).
USAGE_FIGURES = (
    "input_tokens", "output_tokens", "cached_input_tokens", "reasoning_tokens", "model_calls",
    "duration_ms", "tool_duration_ms", "cost_usd",
)  # fmt: skip
ROW_FIELDS = (
    "run_id",
    "verdict",
    "run__seq",
    "run__line",
    "run__case_key",
    "run__trial",
    "run__reward",
    "run__review__status",
    "run__review__assignee__username",
    *(f"run__{figure}" for figure in USAGE_FIGURES),
)

# The matcher's reason for a call whose arguments differ starts by saying where the nearest
# call was ("update_reservation_flights was called in batch 4: ", "2 calls of …; the
# nearest, in batch 4: ", "3 calls of …; 1 is credited to another expected call (#0); the
# other one, in batch 4: "; docs/matcher.md#why-an-expected-call-was-not-credited); the
# differences after it are what a reviewer scans for.
_WHERE_NEAREST = re.compile(
    r"^(?:\d+ calls of .+?, none with these arguments; "
    r"(?:\d+ (?:is|are) credited to .+?; )?"
    r"(?:the nearest|the nearest of the other \d+|the other one), in batch \d+"
    r"|.+? was called in batch \d+): ",
    re.DOTALL,
)


def short_reason(detail: str) -> str:
    """A failed predicate's reason without where its nearest call was, when that is said."""
    return _WHERE_NEAREST.sub("", detail, count=1)


@dataclass(frozen=True)
class Failing:
    """A failed predicate as the runs table shows it."""

    kind: str  # of predicate: expected_call, ...
    index: int | None  # of the expected call, or expectation
    label: str
    detail: str  # the matcher's reason, in full
    cause_kind: str
    cause_tool: str
    cause_argument: str

    @property
    def reason(self) -> str:
        return short_reason(self.detail)

    @property
    def cause_words(self) -> str:
        return CAUSE_WORDS.get(self.cause_kind, self.cause_kind)


FAILING_FIELDS = ("kind", "index", "label", "detail", "cause_kind", "cause_tool", "cause_argument")


@dataclass(frozen=True)
class RunRow:
    run_id: int
    line: int
    case_key: str
    trial: int
    verdict: str
    tags: tuple[str, ...]
    failing: list[Failing]  # the failed predicates, in the report's order
    review: str  # a ReviewStatus value
    assignee: str  # username, or ""
    columns: tuple[str, ...] = ()  # its meta values of the chosen columns ("" if none)
    labels: tuple[ReviewLabel, ...] = ()  # the team's review labels on it, by name
    reward: float | None = None  # the file's own score of the run, when it gave one
    usage: tuple = ()  # its ``USAGE_FIGURES``, None where not recorded

    @property
    def reward_agrees(self) -> bool | None:
        return reward_agrees(self.verdict == Verdict.PASS, self.reward)

    @property
    def review_label(self) -> str:
        return ReviewStatus(self.review).label


def meta_text(meta: dict, name: str) -> str:
    """A meta value as a table cell: text as it is, other values as JSON writes them
    (``1.0``, ``true``, ``null``), and "" for a key the run lacks. A fraction of many
    digits (``0.0035475000000000003``, a float's sum) is cut to six significant ones."""
    if name not in meta:
        return ""
    value = meta[name]
    if isinstance(value, str):
        return value
    text = dump_json(value).decode()
    return f"{float(value):.6g}" if isinstance(value, float | Decimal) and len(text) > 12 else text


class RowSource(Protocol):
    """What the runs table's rows are read from: results, or a reading of them a page at a
    time (``filtersets.Paged``), which gives ``values`` alike."""

    def values(self, *fields: str) -> Any: ...


def table_rows(results: RowSource, *, meta: bool = False) -> Any:
    """The results (or their ``ByReviewStatus``) as the runs table reads them: plain values,
    nothing large; with the runs' meta values when ``meta`` (for columns: else not read)."""
    return results.values(*ROW_FIELDS, *(["run__meta_values"] if meta else []))


def run_rows(
    values: Iterable[dict], tags: dict[str, tuple[str, ...]], columns: Iterable[str] = ()
) -> list[RunRow]:
    """Rows of the runs table for ``values`` (from ``table_rows``), with their failing
    predicates read in one query, and the meta values of ``columns``."""
    values = list(values)
    columns = tuple(columns)
    failing: dict[int, list[Failing]] = {row["run_id"]: [] for row in values}
    predicates = (
        PredicateResult.objects.filter(result_id__in=failing)
        .order_by("pk")  # written in the report's order
        .values_list("result_id", *FAILING_FIELDS)
    )
    for result_id, *fields_ in predicates:
        failing[result_id].append(Failing(*fields_))
    labels: dict[int, list[ReviewLabel]] = {}
    links = LabelLink.objects.filter(review_id__in=failing).select_related("reviewlabel")
    for link in links.order_by("reviewlabel__name"):
        labels.setdefault(link.review_id, []).append(link.reviewlabel)
    rows = []
    for row in values:
        meta = row.get("run__meta_values") or {}
        rows.append(
            RunRow(
                run_id=row["run_id"],
                line=row["run__line"],
                case_key=row["run__case_key"],
                trial=row["run__trial"],
                verdict=row["verdict"],
                tags=tags.get(row["run__case_key"], ()),
                failing=failing[row["run_id"]],
                review=row["run__review__status"] or ReviewStatus.UNTRIAGED,
                assignee=row["run__review__assignee__username"] or "",
                columns=tuple(meta_text(meta, name) for name in columns),
                labels=tuple(labels.get(row["run_id"], ())),
                reward=row["run__reward"],
                usage=tuple(row[f"run__{figure}"] for figure in USAGE_FIGURES),
            )
        )
    return rows


def iter_run_row_batches(
    results: QuerySet[Result], tags, batch: int = 2000, columns: Iterable[str] = ()
) -> Iterator[list[RunRow]]:
    """Every row of ``results``, in lists of ``batch``: for exports of 100,000 runs,
    without holding them."""
    columns = tuple(columns)
    values = table_rows(results, meta=bool(columns)).iterator(chunk_size=batch)
    while chunk := list(islice(values, batch)):
        yield run_rows(chunk, tags, columns)
