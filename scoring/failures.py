"""Failures grouped by cause (DESIGN.md §3.3 ``cause``, §8 ``/failures/``).

A reviewer with hundreds of failing runs first wants to know how many separate problems
they make. The top level groups the failed predicates by cause kind and tool ("get_weather:
wrong argument value"), the next by the argument concerned, and the exact predicates are
one level further down. Each level counts runs (a run failing two predicates of a group
counts once) and cases. Everything is aggregated in the database over the stored causes
(``PredicateResult.cause_*`` and their partial index), never by scoring again, and only
the groups of the page asked for are read in detail.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import reduce
from operator import or_

from django.db.models import Count, F, Min, Q, QuerySet, Window
from django.db.models.functions import RowNumber

from scoring.matcher import CAUSE_WORDS

from .models import PredicateResult, Submission
from .results import RunFilters

API_GROUPS = 1000  # top-level groups the API lists (most runs first)
SHOWN = 20  # arguments, and exact predicates, listed under a group (the most runs first)


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
        """The runs-table filter value that selects this group (``RunFilters.cause``)."""
        return cause_filter(self.kind, self.tool)


def cause_filter(kind: str, tool: str = "") -> str:
    """``kind`` or ``kind:tool``: kinds have no colon, so a tool may hold any character."""
    return f"{kind}:{tool}" if tool else kind


def failed_predicates(submission: Submission, filters: RunFilters | None = None) -> QuerySet:
    """The submission's failed predicate rows, of the runs that pass ``filters`` (the runs
    table's: tag, review status, text, ...)."""
    rows = PredicateResult.objects.filter(submission=submission, passed=False)
    if filters is not None and filters.active:
        rows = rows.filter(result__in=filters.matching(submission).values("pk"))
    return rows


def _runs_and_cases(rows: QuerySet) -> QuerySet:
    return rows.annotate(
        runs=Count("result_id", distinct=True),
        cases=Count("result__run__case_key", distinct=True),
    )


def top_level(submission: Submission, filters: RunFilters | None = None) -> QuerySet:
    """One row per cause kind and tool (``{"cause_kind", "cause_tool", "runs", "cases"}``),
    most runs first: what the page paginates."""
    rows = failed_predicates(submission, filters).values("cause_kind", "cause_tool")
    return _runs_and_cases(rows).order_by("-runs", "cause_kind", "cause_tool")


def cause_groups(
    submission: Submission,
    filters: RunFilters | None = None,
    rows: Iterable[dict] | None = None,
    *,
    labels: bool = True,
) -> list[CauseGroup]:
    """The groups of ``rows`` (a page of ``top_level``; all of it when None) with their
    arguments, the suite's first submission failing each way and, with ``labels``, their
    exact predicates."""
    rows = top_level(submission, filters) if rows is None else rows
    groups = {
        (row["cause_kind"], row["cause_tool"]): CauseGroup(
            row["cause_kind"], row["cause_tool"], row["runs"], row["cases"]
        )
        for row in rows
    }
    if not groups:
        return []
    of_groups = reduce(or_, (Q(cause_kind=kind, cause_tool=tool) for kind, tool in groups))
    failed = failed_predicates(submission, filters).filter(of_groups)
    arguments = _runs_and_cases(
        failed.exclude(cause_argument="").values("cause_kind", "cause_tool", "cause_argument")
    )
    for row in _top_per_group(arguments, Count("result_id", distinct=True), "cause_argument"):
        groups[row["cause_kind"], row["cause_tool"]].arguments.append(
            ArgumentGroup(row["cause_argument"], row["runs"], row["cases"])
        )
    first_seen = (
        PredicateResult.objects.filter(of_groups, submission__suite_id=submission.suite_id)
        .filter(passed=False)
        .values("cause_kind", "cause_tool")
        .annotate(first=Min("submission_id"))
    )
    for row in first_seen:
        groups[row["cause_kind"], row["cause_tool"]].first_seen = row["first"]
    if labels:
        exact = failed.values("cause_kind", "cause_tool", "label").annotate(runs=Count("*"))
        for row in _top_per_group(exact, Count("*"), "label"):
            groups[row["cause_kind"], row["cause_tool"]].labels.append((row["label"], row["runs"]))
    return list(groups.values())


def _top_per_group(rows: QuerySet, runs, name: str) -> QuerySet:
    """The ``SHOWN`` rows with the most ``runs`` of each cause kind and tool, in that order:
    ranked in the database, so a group of thousands of distinct arguments or predicates
    costs no more than its first few to read."""
    rank = Window(
        RowNumber(),
        partition_by=[F("cause_kind"), F("cause_tool")],
        order_by=[runs.desc(), F(name).asc()],
    )
    return rows.annotate(rank=rank).filter(rank__lte=SHOWN).order_by("-runs", name)
