"""Two submissions of a suite compared case by case: which cases regressed, which were
fixed, which still fail (issue 6, §4). A case's trials are compared where both sides have
them: a trial on one side only is flagged, never counted as a regression (issue 13).

Everything that grows with the runs happens in the database: one grouped query over both
submissions' results gives each case's runs and passes on either side, its class and its
pass-rate delta; the page sorts, filters and paginates that query, and a second query over
it counts the classes. Python only sees one page of cases.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import cached_property

from django.core.cache import cache
from django.core.paginator import Paginator
from django.db import models
from django.db.models import (
    Case,
    Count,
    Exists,
    F,
    FloatField,
    OuterRef,
    Q,
    QuerySet,
    Sum,
    Value,
    When,
)
from django.db.models.functions import Cast, NullIf
from django.db.models.lookups import GreaterThan, LessThan

from cases.models import SuiteVersion

from .models import Result, Run, Status, Submission, Verdict


class Change(models.TextChoices):
    """What happened to a case from the baseline to the candidate, in the order the page
    lists them: what needs a look first."""

    REGRESSED = "regressed", "regressed"
    FIXED = "fixed", "fixed"
    STILL_FAILING = "still_failing", "still failing"
    UNCHANGED = "unchanged", "unchanged"  # some trials pass, as often as before
    NEW = "new", "new"
    GONE = "gone", "gone"
    STILL_PASSING = "still_passing", "still passing"


CHANGES = list(Change)  # a change's rank is its index here
TOTALS_CACHED_FOR = 24 * 3600  # seconds

# Fields of a case that neither change what the agent was asked nor how it is scored.
COSMETIC_CASE_FIELDS = frozenset({"title", "tags"})


@dataclass(frozen=True)
class Scope:
    """Which cases are compared. Like with like: when the submissions were scored against
    different versions of the suite, only the cases both versions have. A case whose
    definition differs between them is compared too (same key, and usually a small fix),
    but marked, and left out when ``identical_only``."""

    baseline_version: int
    candidate_version: int
    only_in_baseline: list[str] = field(default_factory=list)
    only_in_candidate: list[str] = field(default_factory=list)
    redefined: frozenset[str] = frozenset()  # in both versions, defined differently
    identical_only: bool = False

    @property
    def same_version(self) -> bool:
        return self.baseline_version == self.candidate_version

    @property
    def excluded(self) -> list[str]:
        """The case keys left out. A short list in practice, so the query excludes these
        rather than naming the (many) cases it keeps."""
        left_out = self.only_in_baseline + self.only_in_candidate
        return left_out + sorted(self.redefined) if self.identical_only else left_out


def case_definitions(document: dict) -> dict[str, dict]:
    """Each case of a suite file as it bears on scoring: cosmetic fields dropped, and the
    suite's matching rules spelled out where the case inherits them."""
    suite_match = document.get("match")
    definitions = {}
    for case in document.get("cases", []):
        definition = {k: v for k, v in case.items() if k not in COSMETIC_CASE_FIELDS}
        definition.setdefault("match", suite_match)
        definitions[case["key"]] = definition
    return definitions


def scope_of(baseline: Submission, candidate: Submission, *, identical_only=False) -> Scope:
    numbers = (baseline.version.number, candidate.version.number)
    if baseline.version_id == candidate.version_id:
        return Scope(*numbers)
    documents = dict(
        SuiteVersion.objects.filter(pk__in=[baseline.version_id, candidate.version_id]).values_list(
            "pk", "document"
        )
    )
    before = case_definitions(documents[baseline.version_id])
    after = case_definitions(documents[candidate.version_id])
    return Scope(
        *numbers,
        only_in_baseline=sorted(before.keys() - after.keys()),
        only_in_candidate=sorted(after.keys() - before.keys()),
        redefined=frozenset(k for k in before.keys() & after.keys() if before[k] != after[k]),
        identical_only=identical_only,
    )


def _rate(passed: str, runs: str):
    """passed / runs as a float in SQL; null when there are no runs."""
    return Cast(F(passed), FloatField()) / NullIf(Cast(F(runs), FloatField()), 0.0)


def _rank_of_change():
    """The SQL that classifies a case (as its rank in CHANGES), on its compared runs
    (``cmp_*``: the trials both sides have). Rates are compared as cross products of
    integers, so 1/3 against 2/6 is exact."""
    fell = LessThan(
        F("cmp_cand_passed") * F("cmp_base_runs"), F("cmp_base_passed") * F("cmp_cand_runs")
    )
    rose = GreaterThan(
        F("cmp_cand_passed") * F("cmp_base_runs"), F("cmp_base_passed") * F("cmp_cand_runs")
    )

    def rank(change):
        return Value(CHANGES.index(change))

    return Case(
        When(base_runs=0, then=rank(Change.NEW)),
        When(cand_runs=0, then=rank(Change.GONE)),
        When(fell, then=rank(Change.REGRESSED)),
        When(rose, then=rank(Change.FIXED)),
        When(cmp_cand_passed=F("cmp_cand_runs"), then=rank(Change.STILL_PASSING)),
        When(cmp_cand_passed=0, then=rank(Change.STILL_FAILING)),
        default=rank(Change.UNCHANGED),
    )


def _compared(all_runs: str, paired_runs: str):
    """A side's runs as compared: those of the trials both sides have, or all of them when
    the two sides have no trial in common (then the rates are all there is to compare)."""
    return Case(When(paired=0, then=F(all_runs)), default=F(paired_runs))


# The orders the rows can be listed in: the query parameter, and what it means. Cases on one
# side only have no delta: they come after the others. Case keys in natural order.
SORTS = {
    "change": (F("rank").asc(), F("delta").asc(nulls_last=True), F("case_order"), F("case")),
    "delta": (F("delta").asc(nulls_last=True), F("case_order"), F("case")),
    "-delta": (F("delta").desc(nulls_last=True), F("case_order"), F("case")),
    "case": (F("case_order").asc(), F("case").asc()),
}


def case_rows(baseline: Submission, candidate: Submission, scope: Scope) -> QuerySet:
    """One row per case that has a scored run in either submission: ``case``, the runs and
    passes on each side (``base_runs``, ``base_passed``, ``cand_runs``, ``cand_passed``),
    ``one_side`` (its trials that only one side has: flagged, and left out of the
    comparison when the sides have trials in common), ``rank`` (the change, as its index
    in CHANGES) and ``delta`` (the candidate's pass rate minus the baseline's over the
    compared trials; null for a case on one side only)."""
    b, c = baseline.pk, candidate.pk
    # Both sides of the join narrowed to the two submissions (a result's run is always of
    # its submission): without the runs' filter PostgreSQL reads every run of every
    # submission to build the join.
    results = Result.objects.filter(submission__in=(b, c), run__submission__in=(b, c))
    if scope.excluded:
        results = results.exclude(run__case_key__in=scope.excluded)
    # Whether the other side has a run of the same trial (one index lookup: a submission
    # has one run per case and trial).
    other_side = Run.objects.filter(
        submission_id=Value(b + c) - OuterRef("submission_id"),
        case_key=OuterRef("run__case_key"),
        trial=OuterRef("run__trial"),
    )
    results = results.annotate(has_pair=Exists(other_side))
    passed, pair = Q(verdict=Verdict.PASS), Q(has_pair=True)
    return (
        results.values(case=F("run__case_key"), case_order=F("run__case_order"))
        .annotate(
            base_runs=Count("pk", filter=Q(submission=b)),
            base_passed=Count("pk", filter=Q(submission=b) & passed),
            cand_runs=Count("pk", filter=Q(submission=c)),
            cand_passed=Count("pk", filter=Q(submission=c) & passed),
            # The same number on both sides: each paired trial is one run on either.
            paired=Count("pk", filter=Q(submission=b) & pair),
            base_paired_passed=Count("pk", filter=Q(submission=b) & pair & passed),
            cand_paired_passed=Count("pk", filter=Q(submission=c) & pair & passed),
        )
        .annotate(
            cmp_base_runs=_compared("base_runs", "paired"),
            cmp_base_passed=_compared("base_passed", "base_paired_passed"),
            cmp_cand_runs=_compared("cand_runs", "paired"),
            cmp_cand_passed=_compared("cand_passed", "cand_paired_passed"),
        )
        .annotate(
            one_side=Case(
                When(paired=0, then=Value(0)),
                default=F("base_runs") + F("cand_runs") - 2 * F("paired"),
            ),
            rank=_rank_of_change(),
            delta=_rate("cmp_cand_passed", "cmp_cand_runs")
            - _rate("cmp_base_passed", "cmp_base_runs"),
        )
    )


def signed_points(delta: float | None) -> str:
    """A change of pass rate in percentage points (``+33.3 pts``, ``-50 pts``); a dash for
    none. A change too small to show at one decimal still shows its sign."""
    if delta is None:
        return "—"
    if delta == 0:
        return "±0"
    sign = "+" if delta > 0 else "\N{MINUS SIGN}"
    points = abs(100 * delta)
    return f"{sign}{points:.1f} pts" if points >= 0.05 else f"{sign}<0.1 pts"


@dataclass(frozen=True)
class Side:
    """One submission's runs of a case."""

    runs: int
    passed: int
    shown_run: int | None = None  # the run a row opens for this side
    shown_trial: int | None = None

    @property
    def rate(self) -> float:
        return self.passed / self.runs


@dataclass(frozen=True)
class CaseComparison:
    case: str
    change: Change
    baseline: Side | None
    candidate: Side | None
    delta: float | None
    redefined: bool  # its definition differs between the two versions
    one_side: int = 0  # trials only one side has, left out of the comparison

    @property
    def delta_text(self) -> str:
        return signed_points(self.delta)


@dataclass(frozen=True)
class Totals:
    """Counts per change, and the pass rates over the compared cases."""

    per_change: dict[Change, int]
    base_runs: int
    base_passed: int
    cand_runs: int
    cand_passed: int

    @property
    def cases(self) -> int:
        return sum(self.per_change.values())

    @property
    def base_rate(self) -> float | None:
        return self.base_passed / self.base_runs if self.base_runs else None

    @property
    def cand_rate(self) -> float | None:
        return self.cand_passed / self.cand_runs if self.cand_runs else None

    @property
    def delta(self) -> float | None:
        if self.base_rate is None or self.cand_rate is None:
            return None
        return self.cand_rate - self.base_rate

    @property
    def delta_text(self) -> str:
        return signed_points(self.delta)

    @property
    def classes(self) -> list[tuple[Change, int]]:
        return [(change, self.per_change[change]) for change in CHANGES]


def totals_of(rows: QuerySet) -> Totals:
    """Counted in one query over the grouped rows (Django wraps them in a subquery)."""
    counts = {
        f"n_{change.value}": Count("case", filter=Q(rank=i)) for i, change in enumerate(CHANGES)
    }
    sides = ("base_runs", "base_passed", "cand_runs", "cand_passed")
    found = rows.aggregate(**counts, **{f"all_{name}": Sum(name) for name in sides})
    return Totals(
        {change: found[f"n_{change.value}"] for change in CHANGES},
        **{name: found[f"all_{name}"] or 0 for name in sides},
    )


class CountedPaginator(Paginator):
    """A paginator told its count, which the totals already hold: counting the grouped rows
    again would aggregate both submissions a third time."""

    def __init__(self, object_list, per_page, *, count: int):
        super().__init__(object_list, per_page)
        self._count = count

    @cached_property
    def count(self) -> int:
        return self._count


@dataclass
class Comparison:
    """The comparison of ``candidate`` with ``baseline``, optionally narrowed to one change."""

    baseline: Submission
    candidate: Submission
    scope: Scope
    change: Change | None = None
    sort: str = "change"

    @cached_property
    def all_rows(self) -> QuerySet:
        return case_rows(self.baseline, self.candidate, self.scope)

    @cached_property
    def totals(self) -> Totals:
        """Cached: the counts of two finished submissions only change when one is re-scored,
        which starts a new generation (part of the key), and moving between pages and
        classes would otherwise aggregate both submissions again for the same numbers."""
        scope = hashlib.sha256("\n".join(self.scope.excluded).encode()).hexdigest()[:16]
        sides = ":".join(f"{s.uuid}.{s.generation}" for s in (self.baseline, self.candidate))
        key = f"compare-totals:{sides}:{scope}"
        return cache.get_or_set(key, lambda: totals_of(self.all_rows), TOTALS_CACHED_FOR)

    @property
    def rows(self) -> QuerySet:
        rows = self.all_rows
        if self.change:
            rows = rows.filter(rank=CHANGES.index(self.change))
        return rows.order_by(*SORTS[self.sort])

    def page(self, number, per_page: int):
        count = self.totals.per_change[self.change] if self.change else self.totals.cases
        page = CountedPaginator(self.rows, per_page, count=count).get_page(number)
        page.object_list = self.comparisons(list(page.object_list))
        return page

    def comparisons(self, rows: list[dict]) -> list[CaseComparison]:
        """The rows of one page, each with the run it opens on either side (one query for
        the page's runs)."""
        keys = [row["case"] for row in rows]
        runs = (
            Run.objects.filter(
                submission__in=(self.baseline.pk, self.candidate.pk), case_key__in=keys
            )
            .order_by("trial")
            .values_list("submission_id", "case_key", "pk", "trial", "result__verdict")
        )
        trials: dict[tuple[int, str], list[tuple[int, int, str]]] = {}
        for submission_id, key, pk, trial, verdict in runs:
            trials.setdefault((submission_id, key), []).append((pk, trial, verdict))
        out = []
        for row in rows:
            change = CHANGES[row["rank"]]
            # Show a contrast where there is one: the baseline's passing trial beside the
            # candidate's failing one for a regression, the other way round for a fix.
            base_wants_pass = change is not Change.FIXED
            cand_wants_pass = change in (Change.FIXED, Change.STILL_PASSING)
            out.append(
                CaseComparison(
                    case=row["case"],
                    change=change,
                    baseline=_side(
                        row["base_runs"],
                        row["base_passed"],
                        trials.get((self.baseline.pk, row["case"]), []),
                        base_wants_pass,
                    ),
                    candidate=_side(
                        row["cand_runs"],
                        row["cand_passed"],
                        trials.get((self.candidate.pk, row["case"]), []),
                        cand_wants_pass,
                    ),
                    delta=row["delta"],
                    redefined=row["case"] in self.scope.redefined,
                    one_side=row["one_side"],
                )
            )
        return out


def _side(runs: int, passed: int, trials: list, wants_pass: bool) -> Side | None:
    if not runs:
        return None
    scored = [(pk, trial) for pk, trial, verdict in trials if verdict is not None]
    preferred = [
        (pk, trial) for pk, trial, verdict in trials if (verdict == Verdict.PASS) == wants_pass
    ]
    pk, trial = (preferred or scored or [(None, None)])[0]
    return Side(runs, passed, pk, trial)


def default_baseline(candidate: Submission) -> Submission | None:
    """The finished submission of the suite uploaded just before ``candidate``."""
    return (
        finished_submissions(candidate.suite_id)
        .filter(created__lt=candidate.created)
        .exclude(pk=candidate.pk)
        .order_by("-created")
        .first()
    )


def finished_submissions(suite) -> QuerySet[Submission]:  # a suite or its id
    """The suite's submissions that can be compared (scored to the end), newest first."""
    return (
        Submission.objects.filter(suite=suite, status=Status.DONE)
        .select_related("version")
        .defer("version__document")
        .order_by("-created")
    )
