"""Two submissions of a suite compared case by case (docs/review.md#comparing-submissions):
which cases regressed, which were fixed, which still fail. A case's trials are compared where
both sides have them: a trial on one side only is flagged, never counted as a regression.

Reading every run of two submissions of 100,000 runs takes seconds, so once a submission's
scoring is done its runs are summarized case by case (``CaseSummary``: each scored trial's
verdict, compactly, and the runs a row opens), by ``summarize``, which
``failures.summarize_when_scored`` calls. A comparison reads a row per case on either side
and classes, counts, sorts and paginates them here: memory and time grow with the cases,
not with the runs.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from itertools import groupby, islice
from operator import itemgetter

from django.core.paginator import Paginator
from django.db import models, transaction
from django.db.models import QuerySet

from cases.models import SuiteVersion
from cases.natural import natural_key
from scoring.models import CaseSummary, Run, Status, Submission, Verdict


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
SUMMARY_BATCH = 5000  # runs read, and case summaries written, at a time

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


def summarize(submission: Submission) -> None:
    """Store the submission's scored runs case by case (``CaseSummary``) for its current
    results, unless they are stored already: once its scoring is done (the caller holds the
    submission's row locked, as ``failures.summarize_when_scored`` does). Reads its runs in
    case order, a case at a time."""
    stored = CaseSummary.objects.filter(submission=submission)
    if stored.filter(generation=submission.generation).exists():
        return
    stored.delete()
    runs = (
        Run.objects.filter(submission=submission)
        .order_by("case_key", "trial")
        .values_list("case_key", "trial", "pk", "result__verdict", "cost_usd", "duration_ms")
        .iterator(chunk_size=SUMMARY_BATCH)
    )
    made = (
        _case_summary(submission, key, list(trials))
        for key, trials in groupby(runs, key=itemgetter(0))
    )
    while batch := [summary for summary in islice(made, SUMMARY_BATCH) if summary is not None]:
        CaseSummary.objects.bulk_create(batch)


def _case_summary(submission: Submission, key: str, runs: list[tuple]) -> CaseSummary | None:
    """The summary of one case's runs (``(key, trial, run id, verdict, cost, duration)`` by
    trial); none when no run of it was scored (the case then has no runs to compare)."""
    scored = [(trial, pk, verdict) for _, trial, pk, verdict, *_ in runs if verdict is not None]
    if not scored:
        return None

    def first(wanted) -> list[int] | None:
        return next(([pk, trial] for _, trial, pk, verdict, *_ in runs if wanted(verdict)), None)

    def mean(at: int) -> float | None:
        known = [run[at] for run in runs if run[at] is not None]
        return sum(known) / len(known) if known else None

    return CaseSummary(
        submission=submission,
        generation=submission.generation,
        case_key=key,
        runs=len(scored),
        passed=sum(verdict == Verdict.PASS for _, _, verdict in scored),
        verdicts=_segments_text([(trial, verdict == Verdict.PASS) for trial, _, verdict in scored]),
        first_passing=first(lambda verdict: verdict == Verdict.PASS),
        first_not_passing=first(lambda verdict: verdict != Verdict.PASS),
        first_scored=first(lambda verdict: verdict is not None),
        cost_usd=mean(4),
        duration_ms=mean(5),
    )


def _segments_text(verdicts: list[tuple[int, bool]]) -> str:
    """``CaseSummary.verdicts`` of (trial, passed) pairs in trial order."""
    segments: list[tuple[int, list[str]]] = []
    for trial, passed in verdicts:
        if not segments or segments[-1][0] + len(segments[-1][1]) != trial:
            segments.append((trial, []))
        segments[-1][1].append("p" if passed else "f")
    return " ".join(f"{first}:{''.join(marks)}" for first, marks in segments)


def _segments(summary: CaseSummary | None) -> list[tuple[int, str]]:
    if summary is None:
        return []
    return [
        (int(first), marks) for first, marks in (s.split(":") for s in summary.verdicts.split())
    ]


@dataclass(frozen=True)
class Paired:
    """The trials both sides have: how many, how many passed on each side, and how many of
    them flipped: passed on the baseline and not on the candidate, and the other way."""

    trials: int = 0
    base_passed: int = 0
    cand_passed: int = 0
    now_failing: int = 0
    now_passing: int = 0


def _paired(base: list[tuple[int, str]], cand: list[tuple[int, str]]) -> Paired:
    """The trials both sides have (``Paired``), walking the two sides' segments in trial
    order."""
    paired = base_passed = cand_passed = now_failing = now_passing = 0
    i = j = 0
    while i < len(base) and j < len(cand):
        (base_first, base_marks), (cand_first, cand_marks) = base[i], cand[j]
        base_end, cand_end = base_first + len(base_marks), cand_first + len(cand_marks)
        low, high = max(base_first, cand_first), min(base_end, cand_end)
        if low < high:
            paired += high - low
            was = base_marks[low - base_first : high - base_first]
            now = cand_marks[low - cand_first : high - cand_first]
            base_passed += was.count("p")
            cand_passed += now.count("p")
            for before, after in zip(was, now, strict=True):
                now_failing += before == "p" and after != "p"
                now_passing += before != "p" and after == "p"
        if base_end <= cand_end:
            i += 1
        else:
            j += 1
    return Paired(paired, base_passed, cand_passed, now_failing, now_passing)


def summaries(submission: Submission, scope: Scope) -> dict[str, CaseSummary]:
    """Case key → the submission's summary of it, for the cases of ``scope``. A finished
    submission summarized before summaries existed (or whose last scoring step was lost)
    is summarized first."""
    current = CaseSummary.objects.filter(submission=submission, generation=submission.generation)
    if not current.exists():
        with transaction.atomic():
            locked = (
                Submission.objects.select_for_update()
                .filter(pk=submission.pk, status=Status.DONE, generation=submission.generation)
                .first()
            )
            if locked is not None:
                summarize(locked)
    rows = current.exclude(case_key__in=scope.excluded) if scope.excluded else current
    return {row.case_key: row for row in rows}


def _change(base_runs, base_passed, cand_runs, cand_passed) -> Change:
    """The class of a case over its compared trials. Rates are compared as cross products
    of integers, so 1/3 against 2/6 is exact."""
    if not base_runs:
        return Change.NEW
    if not cand_runs:
        return Change.GONE
    if cand_passed * base_runs < base_passed * cand_runs:
        return Change.REGRESSED
    if cand_passed * base_runs > base_passed * cand_runs:
        return Change.FIXED
    if cand_passed == cand_runs:
        return Change.STILL_PASSING
    if cand_passed == 0:
        return Change.STILL_FAILING
    return Change.UNCHANGED


# The orders the rows can be listed in: the query parameter, and what it sorts by. Cases on
# one side only have no delta: they come after the others. Case keys in natural order.
SORTS = {
    "change": lambda row: (CHANGES.index(row.change), *_by_delta(row.delta), *_by_case(row)),
    "delta": lambda row: (*_by_delta(row.delta), *_by_case(row)),
    "-delta": lambda row: (*_by_delta(None if row.delta is None else -row.delta), *_by_case(row)),
    "case": lambda row: _by_case(row),
}


def _by_delta(delta: float | None) -> tuple:
    return (delta is None, delta or 0.0)


def _by_case(row) -> tuple[str, str]:
    return (natural_key(row.case), row.case)


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
    cost_usd: float | None = None  # per run, over the runs that recorded it
    duration_ms: float | None = None

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
    # Of the trials both sides have: those that passed before and not now, and the other
    # way (a case "unchanged" at 1/4 → 1/4 may have had two trials swap).
    now_failing: int = 0
    now_passing: int = 0
    # Both sides have trials, but none with the same number: only the rates are compared.
    trials_unmatched: bool = False

    @property
    def delta_text(self) -> str:
        return signed_points(self.delta)


def compare_case(
    key: str, base: CaseSummary | None, cand: CaseSummary | None, scope: Scope
) -> CaseComparison:
    """A case compared on the trials both sides have (then a trial on one side only is
    flagged, in ``one_side``), or on all of them when the sides have no trial in common
    (then the rates are all there is to compare)."""
    base_runs, base_passed = (base.runs, base.passed) if base else (0, 0)
    cand_runs, cand_passed = (cand.runs, cand.passed) if cand else (0, 0)
    paired = _paired(_segments(base), _segments(cand))
    if paired.trials:
        compared = (paired.trials, paired.base_passed, paired.trials, paired.cand_passed)
        one_side = base_runs + cand_runs - 2 * paired.trials
    else:
        compared = (base_runs, base_passed, cand_runs, cand_passed)
        one_side = 0
    base_runs, base_passed, cand_runs, cand_passed = compared
    change = _change(*compared)
    delta = cand_passed / cand_runs - base_passed / base_runs if base_runs and cand_runs else None
    # Show a contrast where there is one: the baseline's passing trial beside the
    # candidate's failing one for a regression, the other way round for a fix.
    return CaseComparison(
        case=key,
        change=change,
        baseline=_side(base, wants_pass=change is not Change.FIXED),
        candidate=_side(cand, wants_pass=change in (Change.FIXED, Change.STILL_PASSING)),
        delta=delta,
        redefined=key in scope.redefined,
        one_side=one_side,
        now_failing=paired.now_failing,
        now_passing=paired.now_passing,
        trials_unmatched=bool(base_runs and cand_runs and not paired.trials),
    )


def _side(summary: CaseSummary | None, wants_pass: bool) -> Side | None:
    if summary is None:
        return None
    preferred = summary.first_passing if wants_pass else summary.first_not_passing
    shown = preferred or summary.first_scored
    assert shown is not None, "a case is summarized only when a run of it was scored"
    pk, trial = shown
    return Side(summary.runs, summary.passed, pk, trial, summary.cost_usd, summary.duration_ms)


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


@dataclass
class Comparison:
    """The comparison of ``candidate`` with ``baseline``, optionally narrowed to one change.
    Made from the two submissions' case summaries: a row per case on either side, however
    many runs they have."""

    baseline: Submission
    candidate: Submission
    scope: Scope
    change: Change | None = None
    sort: str = "change"

    @cached_property
    def all_rows(self) -> list[CaseComparison]:
        base = summaries(self.baseline, self.scope)
        cand = summaries(self.candidate, self.scope)
        return [
            compare_case(key, base.get(key), cand.get(key), self.scope)
            for key in base.keys() | cand.keys()
        ]

    @cached_property
    def totals(self) -> Totals:
        per_change = Counter(row.change for row in self.all_rows)
        base = [row.baseline for row in self.all_rows if row.baseline]
        cand = [row.candidate for row in self.all_rows if row.candidate]
        return Totals(
            {change: per_change[change] for change in CHANGES},
            base_runs=sum(side.runs for side in base),
            base_passed=sum(side.passed for side in base),
            cand_runs=sum(side.runs for side in cand),
            cand_passed=sum(side.passed for side in cand),
        )

    @property
    def rows(self) -> list[CaseComparison]:
        rows = self.all_rows
        if self.change:
            rows = [row for row in rows if row.change is self.change]
        return sorted(rows, key=SORTS[self.sort])

    def page(self, number, per_page: int):
        return Paginator(self.rows, per_page).get_page(number)


def default_pair(submission: Submission) -> tuple[Submission | None, Submission | None]:
    """(baseline, candidate) that "Compare with…" on ``submission`` offers: the finished
    submission uploaded just before it as the baseline; for the suite's first, itself as the
    baseline of the one uploaded just after it (docs/review.md#comparing-submissions)."""
    others = finished_submissions(submission.suite_id).exclude(pk=submission.pk)
    before = others.filter(created__lt=submission.created).order_by("-created", "-pk").first()
    if before is not None:
        return before, submission
    after = others.filter(created__gte=submission.created).order_by("created", "pk").first()
    if after is not None:
        return submission, after
    return None, submission


def finished_submissions(suite) -> QuerySet[Submission]:  # a suite or its id
    """The suite's submissions that can be compared (scored to the end), newest first."""
    return (
        Submission.objects.filter(suite=suite, status=Status.DONE)
        .select_related("version")
        .defer("version__document", "version__audit")
        .order_by("-created")
    )


LATEST = "latest"


def baseline_named(submission: Submission, name: str) -> Submission | None:
    """The baseline a client names for ``submission`` (docs/api.md#submissions): the last
    finished submission of its suite uploaded before it, with the label ``name`` unless
    ``name`` is ``latest``."""
    earlier = (
        finished_submissions(submission.suite_id)
        .exclude(pk=submission.pk)
        .filter(created__lte=submission.created)
    )
    if name != LATEST:
        earlier = earlier.filter(label=name)
    return earlier.order_by("-created", "-pk").first()
