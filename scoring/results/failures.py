"""Failures grouped by cause (docs/formats.md#cause), for the failures page
(docs/review.md#failures-by-cause) and ``GET /api/submissions/{id}/failures/``.

A reviewer with hundreds of failing runs first wants to know how many separate problems
they make. The top level groups the failed predicates by cause kind and tool ("get_weather:
wrong argument value"), the next by the argument concerned, and the exact predicates are
one level further down. Each level counts runs (a run failing two predicates of a group
counts once) and cases. Everything is read from the stored causes (``PredicateResult.cause_*``),
never by scoring again.

Grouping 100,000 runs' failures takes a few hundred milliseconds, so once a submission's
scoring is done the unfiltered groups are grouped once and stored (``FailureSummary``, by
``summarize_when_scored``, which finishing a submission calls); the page and the API read those
rows. The groups of a filter (tag, review status, text ...) are grouped when asked for: the
failing runs and their failed predicates are read as two streams in run order and counted
here, in memory bounded by the groups, not by the runs.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property, reduce
from itertools import groupby
from operator import itemgetter, or_
from typing import Any

from django.db import transaction
from django.db.models import F, Min, Q, QuerySet

from scoring.matcher import CAUSE_WORDS
from scoring.models import FailureSummary, PredicateResult, Status, Submission, Verdict
from scoring.results import comparison, known_failures, usage
from scoring.results.filtersets import RunFilterSet

Level = FailureSummary.Level

API_GROUPS = 1000  # top-level groups the API lists (most runs first)
SHOWN = 20  # arguments, and exact predicates, listed under a group (the most runs first)
STREAM_ROWS = 5000  # rows fetched at a time from a server-side cursor

# Top-level rows (``Failures.top_level``): grouped here, or read from the stored summary.
TopLevelRows = Sequence[Mapping[str, Any]] | QuerySet[FailureSummary, Mapping[str, Any]]


@dataclass(frozen=True)
class ArgumentGroup:
    argument: str
    runs: int
    cases: int


@dataclass
class CauseGroup:
    """The failed predicates of one cause kind and tool, with the runs and cases they fail."""

    kind: str
    tool: str  # "" when the cause concerns no tool
    runs: int
    cases: int
    first_seen: int | None = None  # id of the suite's first submission failing this way
    arguments: list[ArgumentGroup] = field(default_factory=list)
    labels: list[tuple[str, int]] = field(default_factory=list)  # (predicate, runs)

    @property
    def words(self) -> str:
        return CAUSE_WORDS.get(self.kind, self.kind)

    @property
    def title(self) -> str:
        return f"{self.tool}: {self.words}" if self.tool else self.words

    @property
    def cause(self) -> str:
        """The runs-table filter value that selects this group (``RunFilterSet.cause``)."""
        return cause_filter(self.kind, self.tool)


def cause_filter(kind: str, tool: str = "") -> str:
    """``kind`` or ``kind:tool``: kinds have no colon, so a tool may hold any character."""
    return f"{kind}:{tool}" if tool else kind


class _Tally:
    """Runs and cases of one group or argument, counted as the runs go by."""

    def __init__(self):
        self.runs = 0
        self.cases: set[str] = set()

    def add(self, case_key: str) -> None:
        self.runs += 1
        self.cases.add(case_key)


def _most_runs(runs: dict, shown: int | None = None) -> list:
    """The keys of ``runs`` (key → runs) with the most runs first, then by key: the same
    order wherever it is made, whatever the database's collation."""
    return sorted(runs, key=lambda key: (-runs[key], key))[:shown]


def aggregate(
    submission: Submission, filters: RunFilterSet | None = None
) -> tuple[int, list[CauseGroup]]:
    """(how many runs of the filter did not pass, every group of their failed predicates,
    most runs first, each with its ``SHOWN`` most common arguments and exact predicates)."""
    results = (filters or RunFilterSet()).matching(submission).exclude(verdict=Verdict.PASS)
    # Two streams in run order, walked together: the failing runs with their case (read
    # from the runs' index), and their failed predicates (no join to the wide runs).
    runs = results.order_by("pk").values_list("pk", "run__case_key").iterator(STREAM_ROWS)
    failed = (
        PredicateResult.objects.filter(submission=submission, result__in=results.values("pk"))
        .order_by("result_id")
        .values_list("result_id", "cause_kind", "cause_tool", "cause_argument", "label")
        .iterator(STREAM_ROWS)
    )
    n_failing = 0
    groups: dict[tuple[str, str], _Tally] = defaultdict(_Tally)
    arguments: dict[tuple[str, str], dict[str, _Tally]] = defaultdict(lambda: defaultdict(_Tally))
    labels: dict[tuple[str, str], Counter] = defaultdict(Counter)
    for result_id, predicates in groupby(failed, key=itemgetter(0)):
        run_id, case_key = next(runs)
        n_failing += 1
        while run_id != result_id:  # a failing run with no failed predicate
            run_id, case_key = next(runs)
            n_failing += 1
        # A run failing two predicates of a group (or argument) counts once in it.
        counted: set[tuple[str, ...]] = set()
        for _, kind, tool, argument, label in predicates:
            if (kind, tool) not in counted:
                counted.add((kind, tool))
                groups[kind, tool].add(case_key)
            if argument and (kind, tool, argument) not in counted:
                counted.add((kind, tool, argument))
                arguments[kind, tool][argument].add(case_key)
            labels[kind, tool][label] += 1  # unique within a report: one run each
    n_failing += sum(1 for _ in runs)  # failing runs after the last with a failed predicate
    found = []
    for kind, tool in _most_runs({key: tally.runs for key, tally in groups.items()}):
        key = (kind, tool)
        of_group = arguments[key]
        shown = _most_runs({name: tally.runs for name, tally in of_group.items()}, SHOWN)
        found.append(
            CauseGroup(
                kind,
                tool,
                runs=groups[key].runs,
                cases=len(groups[key].cases),
                arguments=[
                    ArgumentGroup(name, of_group[name].runs, len(of_group[name].cases))
                    for name in shown
                ],
                labels=[(label, labels[key][label]) for label in _most_runs(labels[key], SHOWN)],
            )
        )
    return n_failing, found


class Failures:
    """A submission's failures by cause, among the runs of ``filters``: read from its
    stored summary when there is one that answers (no filter, and the summary is of the
    results as they are now), grouped when asked for otherwise."""

    def __init__(self, submission: Submission, filters: RunFilterSet | None = None):
        self.submission = submission
        self.filters = filters if filters is not None and filters.active else None
        # The summary's count of failing runs: read first, as the sign that it is there.
        self._failing = (
            None if self.filters else _stored(submission).filter(level=Level.FAILING).first()
        )

    @property
    def summarized(self) -> bool:
        return self._failing is not None

    @cached_property
    def _aggregate(self) -> tuple[int, list[CauseGroup]]:
        def grouped():
            return aggregate(self.submission, self.filters)

        if self.filters is None:
            return grouped()
        return self.filters.kept(self.submission, "failures", grouped)

    def failing_runs(self) -> int:
        """How many runs of the filter did not pass."""
        return self._failing.runs if self._failing is not None else self._aggregate[0]

    def top_level(self) -> TopLevelRows:
        """One row per cause kind and tool (``{"cause_kind", "cause_tool", "runs",
        "cases"}``), most runs first: what the page paginates."""
        if self._failing is None:
            return [
                {"cause_kind": g.kind, "cause_tool": g.tool, "runs": g.runs, "cases": g.cases}
                for g in self._aggregate[1]
            ]
        return (
            _stored(self.submission)
            .filter(level=Level.CAUSE)
            .values("cause_kind", "cause_tool", "runs", "cases")
            .order_by("position")
        )

    def groups(
        self, rows: Iterable[Mapping[str, Any]] | None = None, *, labels: bool = True
    ) -> list[CauseGroup]:
        """The groups of ``rows`` (a page of ``top_level``; all of it when None) with their
        arguments, the suite's first submission failing each way and, with ``labels``,
        their exact predicates."""
        rows = self.top_level() if rows is None else rows
        keys = [(row["cause_kind"], row["cause_tool"]) for row in rows]
        if not keys:
            return []
        if self._failing is None:
            every = {(group.kind, group.tool): group for group in self._aggregate[1]}
            groups = {key: every[key] for key in keys}
        else:
            groups = self._stored_groups(keys)
        earlier = _first_seen(self.submission, _of_groups(keys))
        return [
            replace(
                group,
                first_seen=earlier.get(key, self.submission.pk),
                labels=group.labels if labels else [],
            )
            for key, group in groups.items()
        ]

    def _stored_groups(self, keys: list[tuple[str, str]]) -> dict[tuple[str, str], CauseGroup]:
        groups: dict[tuple[str, str], CauseGroup] = {}
        rows = (
            _stored(self.submission)
            .filter(_of_groups(keys))
            .exclude(level=Level.FAILING)
            .order_by("position")
            .values_list("level", "cause_kind", "cause_tool", "name", "runs", "cases")
        )
        for level, kind, tool, name, runs, cases in rows:
            if level == Level.PREDICATE:  # an exact predicate counts no cases
                groups[kind, tool].labels.append((name, runs))
                continue
            assert cases is not None, "a cause's and an argument's rows count their cases"
            if level == Level.CAUSE:
                groups[kind, tool] = CauseGroup(kind, tool, runs, cases)
            else:
                groups[kind, tool].arguments.append(ArgumentGroup(name, runs, cases))
        return {key: groups[key] for key in keys}


def _of_groups(keys: Iterable[tuple[str, str]]) -> Q:
    return reduce(or_, (Q(cause_kind=kind, cause_tool=tool) for kind, tool in keys))


def _stored(submission: Submission) -> QuerySet[FailureSummary]:
    """The submission's summary rows of its current results."""
    return FailureSummary.objects.filter(submission=submission, generation=submission.generation)


def _first_seen(submission: Submission, of_groups: Q) -> dict[tuple[str, str], int]:
    """(cause kind, tool) → id of the suite's first submission failing that way, for the
    groups of ``of_groups``: the earliest among the submissions whose summary is current
    (those scored to the end) and this one."""
    rows = (
        FailureSummary.objects.filter(
            of_groups,
            level=Level.CAUSE,
            submission__suite_id=submission.suite_id,
            submission_id__lt=submission.pk,
            generation=F("submission__generation"),
        )
        .values_list("cause_kind", "cause_tool")
        .annotate(first=Min("submission_id"))
        .order_by()
    )
    return {(kind, tool): first for kind, tool, first in rows}


def summarize_when_scored(submission_id: int) -> None:
    """Store the failures by cause of the submission, its failing runs by signature
    (``known_failures.summarize``) and its runs case by case (``comparison.summarize``), if its
    scoring is done and they are not stored yet for its current results (called after
    every scoring step; a summary made once is not made again, and one of an older
    generation is replaced)."""
    with transaction.atomic():
        submission = (
            Submission.objects.select_for_update()
            .filter(pk=submission_id, status=Status.DONE)
            .first()
        )
        if submission is None:
            return
        known_failures.summarize(submission)  # the failing runs by signature, for the suite page
        comparison.summarize(submission)  # the runs case by case, for comparisons
        usage.summarize(submission)  # what the runs cost, for its page and the API
        if _stored(submission).exists():
            return
        FailureSummary.objects.filter(submission=submission).delete()
        FailureSummary.objects.bulk_create(_summary_rows(submission), batch_size=1000)


def _summary_rows(submission: Submission) -> list[FailureSummary]:
    n_failing, groups = aggregate(submission)
    rows: list[tuple[Level, str, str, str, int, int | None]] = [
        (Level.FAILING, "", "", "", n_failing, None)
    ]
    for group in groups:
        key = (group.kind, group.tool)
        rows.append((Level.CAUSE, *key, "", group.runs, group.cases))
        rows.extend((Level.ARGUMENT, *key, a.argument, a.runs, a.cases) for a in group.arguments)
        rows.extend((Level.PREDICATE, *key, label, runs, None) for label, runs in group.labels)
    return [
        FailureSummary(
            submission=submission,
            generation=submission.generation,
            position=position,
            level=level,
            cause_kind=kind,
            cause_tool=tool,
            name=name,
            runs=runs,
            cases=cases,
        )
        for position, (level, kind, tool, name, runs, cases) in enumerate(rows)
    ]
