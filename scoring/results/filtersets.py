"""The runs table's filters, for its page and for the results API alike (one FilterSet, as
NetBox shares one between its list views and its API: the two cannot disagree).

The filters stand in the page's address, so a filtered table is a link to share and the
back button restores it (docs/review.md#runs-table). A page reads them leniently: a value
that is not one of the filter's choices is dropped, not an error (a shared link outlives
a renamed option); the API answers 400 instead. Two parameters change how the table looks,
not which runs it holds: ``sort`` and ``columns``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any
from urllib.parse import urlencode

import django_filters
import orjson
from django.core.exceptions import ValidationError
from django.db.models import Case, IntegerField, Q, QuerySet, Value, When
from django.forms import Form
from django.forms.utils import ErrorDict

from cases.models import ReviewLabel
from scoring.matcher import CAUSE_KINDS, CAUSE_WORDS
from scoring.models import (
    LABEL_LIMIT,
    EarlierResult,
    LabelLink,
    PredicateResult,
    Result,
    Review,
    ReviewStatus,
    Run,
    Submission,
    Verdict,
)
from scoring.results import rewards
from scoring.results.tables import T, case_tags, keeps, kept
from scoring.runfiles.runmeta import META_KEY_LIMIT

LABEL_NAME_LIMIT = ReviewLabel._meta.get_field("name").max_length
SIGNATURE_LENGTH = 32
COLUMNS_SHOWN = 6  # meta columns at most
VIEW_ONLY = ("sort", "columns")  # parameters that change how the table looks, not its runs
GROUP_FILTERS = ("predicate", "cause", "problem")  # see ``paged``
KEPT_ORDER_LIMIT = 100_000  # results of a group whose order is kept: ids of at most ~1 MB
EARLIER_FILTERS = ("verdict", "case", "problem", "tool", "text")  # see ``earlier_results``

# Review statuses in the workflow's order (untriaged first), for sorting by review.
_REVIEW_ORDER = Case(
    *(When(run__review__status=status, then=Value(i)) for i, status in enumerate(ReviewStatus)),
    default=Value(0),  # no review row: untriaged
    output_field=IntegerField(),
)

# What the runs table may be sorted by: the query parameter, and the ordering it means.
SORTS = {
    "line": ("run__seq",),
    "-line": ("-run__seq",),
    # Natural order (task-2 before task-10), the exact key breaking its rare ties (a01, a1).
    "case": ("run__case_order", "run__case_key", "run__trial"),
    "-case": ("-run__case_order", "-run__case_key", "run__trial"),
    "verdict": ("verdict", "run__seq"),
    "-verdict": ("-verdict", "run__seq"),
    "review": (_REVIEW_ORDER.asc(), "run__seq"),
    "-review": (_REVIEW_ORDER.desc(), "run__seq"),
}
VERDICT_WORDS: dict[str, str] = {
    Verdict.PASS: "passed",
    Verdict.FAIL: "failed",
    Verdict.ERROR: "errored",
}
SORT_WORDS = {"line": "", "-line": "last line first",
              "case": "by case", "-case": "by case, last first",
              "verdict": "by verdict", "-verdict": "by verdict, reversed",
              "review": "by review status", "-review": "by review status, reversed"}  # fmt: skip
# Text filters cut to what their column can hold: a longer value matches nothing anyway.
LENGTHS = {"predicate": LABEL_LIMIT, "cause": LABEL_LIMIT, "argument": LABEL_LIMIT,
           "problem": SIGNATURE_LENGTH, "label": LABEL_NAME_LIMIT}  # fmt: skip


def _cause_kind(value: str) -> None:
    if value.partition(":")[0] not in CAUSE_KINDS:
        raise ValidationError("a cause kind, or kind:tool")


def _unchanged(queryset: QuerySet, name: str, value: Any) -> QuerySet:
    return queryset  # a view parameter: ``results`` orders by ``sort``; ``columns`` is shown


class RunFilterSet(django_filters.FilterSet):
    """The filters of a submission's runs table: each empty one is off. Read a filter's
    value as an attribute (``filters.verdict``: "" when off)."""

    verdict = django_filters.ChoiceFilter(choices=Verdict.choices)
    case = django_filters.CharFilter(field_name="run__case_key", help_text="the exact case key")
    tag = django_filters.CharFilter(method="_tag", help_text="a tag of the case, in the version")
    predicate = django_filters.CharFilter(method="_predicate", help_text="a failing predicate")
    cause = django_filters.CharFilter(
        method="_cause",
        validators=[_cause_kind],
        help_text="a failure group: its cause kind, or kind:tool",
    )
    argument = django_filters.CharFilter(
        method=_unchanged, help_text="with cause: the argument its failures concern"
    )
    problem = django_filters.CharFilter(
        field_name="signature", help_text="a known failure's signature: the runs failing so"
    )
    tool = django_filters.CharFilter(method="_tool", help_text="a tool the run called")
    review = django_filters.ChoiceFilter(choices=ReviewStatus.choices, method="_review")
    label = django_filters.CharFilter(method="_label", help_text="one of the team's labels")
    text = django_filters.CharFilter(
        field_name="run__final_text", lookup_expr="icontains", help_text="in the final answer"
    )
    reward = django_filters.ChoiceFilter(
        choices=rewards.CHOICES,
        method="_reward",
        help_text="whether the verdict agrees with the file's own reward (runs that have one)",
    )
    sort = django_filters.ChoiceFilter(
        choices=[(name, name) for name in SORTS], method=_unchanged, help_text="the order"
    )
    columns = django_filters.CharFilter(
        method=_unchanged, help_text="meta keys shown as columns, comma-separated"
    )

    class Meta:
        model = Result
        fields: list[str] = []

    # What this class reads of django-filter's FilterSet, which ships no types (and whose
    # attributes would otherwise be taken for filter values, read by ``__getattr__``).
    is_bound: bool
    form: Form
    errors: ErrorDict
    filters: dict[str, django_filters.Filter]
    filter_queryset: Callable[[QuerySet[Result]], QuerySet[Result]]

    def __init__(self, data=None, **kwargs):
        super().__init__(_normalized(data) if data is not None else None, **kwargs)
        self.submission: Submission | None = None

    def __getattr__(self, name: str) -> str:
        if name in type(self).base_filters:
            return self.values[name]
        raise AttributeError(name)

    @cached_property
    def values(self) -> dict[str, str]:
        """Every parameter's value, as the page shows it: "" for one off or not valid."""
        cleaned = {}
        if self.is_bound:
            self.form.is_valid()  # a field not valid is left out of cleaned_data: off
            cleaned = self.form.cleaned_data
        values = {name: cleaned.get(name) or "" for name in self.base_filters}
        values["sort"] = values["sort"] or "line"
        if not values["cause"]:
            values["argument"] = ""
        return values

    def but(self, **changes: str) -> RunFilterSet:
        """The same filters with ``changes`` (a value "" turns that one off)."""
        return RunFilterSet({**self.as_query(), **changes})

    # --- the page's state --------------------------------------------------------------

    @property
    def column_names(self) -> tuple[str, ...]:
        """The meta keys shown as columns, in the chosen order."""
        return tuple(self.columns.split(",")) if self.columns else ()

    @property
    def cause_words(self) -> str:
        """The failure group of ``cause`` (and ``argument``), in words, for its chip."""
        kind, _, tool = self.cause.partition(":")
        words = CAUSE_WORDS.get(kind, kind)
        text = f"{tool}: {words}" if tool else words
        return f"{text} ({self.argument})" if self.argument else text

    def in_words(self) -> str:
        """The filters that are set, and the order unless it is the file's, in words
        ("failed, failing book_reservation: wrong argument value, by case"): what a queue of
        these runs is named after and says it was made from. "" for every run in file order."""
        values = self.values
        words = {
            "verdict": VERDICT_WORDS.get(values["verdict"], ""),
            "tag": f"tag “{values['tag']}”",
            "predicate": f"failing “{values['predicate']}”",
            "cause": f"failing {self.cause_words}",
            "problem": "one known failure",
            "case": f"case {values['case']}",
            "tool": f"called {values['tool']}",
            "review": f"status “{dict(ReviewStatus.choices).get(values['review'])}”",
            "label": f"label “{values['label']}”",
            "text": f"final answer containing “{values['text']}”",
            "reward": f"{dict(rewards.CHOICES).get(values['reward'], '')}",
            "sort": SORT_WORDS[values["sort"]],
        }
        return ", ".join(words[name] for name in self.as_query() if name in words)

    @property
    def active(self) -> bool:
        """Whether any filter (not the sort or the columns) narrows the table."""
        return any(value for name, value in self.values.items() if name not in VIEW_ONLY)

    def as_query(self) -> dict[str, str]:
        """The parameters that are set, for links that keep the filters."""
        return {
            name: value
            for name, value in self.values.items()
            if value and not (name == "sort" and value == "line")
        }

    @cached_property
    def querystring(self) -> str:
        """``as_query`` as URL text (no ``?``): the links to a run carry it, so the run
        page can move to the next run of the same filter."""
        return urlencode(self.as_query())

    @cached_property
    def headers(self) -> dict[str, SortHeader]:
        """The sortable columns, by sort name: a header's link sorts by it, or the other
        way round when the table is already sorted by it."""
        headers = {}
        for name in (key for key in SORTS if not key.startswith("-")):
            if self.sort == name:
                headers[name] = SortHeader(f"-{name}", "ascending")
            elif self.sort == f"-{name}":
                headers[name] = SortHeader(name, "descending")
            else:
                headers[name] = SortHeader(name, "none")
        return headers

    # --- the runs ----------------------------------------------------------------------

    def results(self, submission: Submission) -> QuerySet[Result]:
        """The submission's results that pass the filters, in the chosen order."""
        # The run's submission too, though it is the same: so that the planner may read the
        # runs in order through their (submission, seq) and (submission, case_key, trial)
        # indexes and stop after a page, rather than sort the submission's every run.
        return (
            self.matching(submission).filter(run__submission=submission).order_by(*SORTS[self.sort])
        )

    def paged(self, submission: Submission) -> QuerySet[Result] | Paged:
        """What the table's pages are cut from (docs/review.md#scale): ``results``; sorted
        by review status, the same results read one status at a time (``ByReviewStatus``);
        those of a failure group, in the order kept of them (``InKeptOrder``)."""
        if self.sort in ("review", "-review"):
            statuses = list(ReviewStatus)
            return ByReviewStatus(
                self.matching(submission).filter(run__submission=submission).order_by("run__seq"),
                submission,
                tuple(reversed(statuses) if self.sort == "-review" else statuses),
                self.count(submission),
            )
        results = self.results(submission)
        # A group's results are a few thousand scattered among a million: putting them in
        # order reads each one's run, on every page. The order is kept instead, as figures
        # are (``kept``), unless the label filter is set, whose figures never are.
        if self.narrowing() & set(GROUP_FILTERS) and keeps(submission) and not self.label:
            order = self.kept(
                submission,
                f"order:{self.sort}",
                lambda: list(results.values_list("pk", flat=True)[: KEPT_ORDER_LIMIT + 1]),
            )
            if len(order) <= KEPT_ORDER_LIMIT:  # the page reads its ids, without the filters
                in_order = Result.objects.filter(submission=submission).order_by(*SORTS[self.sort])
                return InKeptOrder(in_order, tuple(order))
        return results

    def count(self, submission: Submission) -> int:
        """How many results pass the filters (docs/review.md#scale). With no filter but the
        verdict, the count the submission keeps; else counted without the join that
        ``results`` adds for ordering, and kept (``kept``)."""
        stored = stored_count(submission, self.verdict if self.is_bound else "")
        if stored is not None and self.narrowing() <= {"verdict"}:
            return stored
        return self.kept(submission, "runs-count", self.matching(submission).count)

    def narrowing(self) -> set[str]:
        """The names of the filters that are set (not the sort or the columns)."""
        return {name for name in self.as_query() if name not in VIEW_ONLY}

    def kept(self, submission: Submission, name: str, make: Callable[[], T]) -> T:
        """``make()``, a figure of the results these filters select, kept as
        ``tables.kept`` keeps the submission's own. A review changes what the review filter
        selects while the results stay: its key names the runs of that status, and a figure
        made while they changed is not kept. The label filter's figures are never kept (a
        label is renamed, or put on runs, with no trace on the runs' reviews)."""
        if self.label or not keeps(submission):  # nothing kept: no digest to read
            return make()
        query = self.as_query()
        narrowing = sorted((key, query[key]) for key in self.narrowing())
        digest = hashlib.sha256(urlencode(narrowing).encode())
        unchanged = None
        if self.review:
            reviewed = self._reviewed_runs(submission)
            digest.update(reviewed)
            unchanged = lambda: self._reviewed_runs(submission) == reviewed  # noqa: E731
        return kept(submission, f"{name}:{digest.hexdigest()}", make, unchanged)

    def _reviewed_runs(self, submission: Submission) -> bytes:
        """A digest of the runs whose review decides the review filter (``_review``)."""
        runs = self._deciding_reviews(submission).order_by("run_id").values_list("run_id")
        return hashlib.sha256(orjson.dumps([run_id for (run_id,) in runs])).digest()

    def _deciding_reviews(self, submission: Submission) -> QuerySet[Review]:
        """The reviews of the runs of the review filter's status; for "untriaged", of the
        runs that are not (a run with no review is untriaged, as ``with_review_status``
        has it)."""
        reviews = Review.objects.filter(submission=submission)
        if self.review == ReviewStatus.UNTRIAGED:
            return reviews.exclude(status=self.review)
        return reviews.filter(status=self.review)

    def matching(self, submission: Submission) -> QuerySet[Result]:
        """The submission's results that pass the filters, unordered."""
        results = Result.objects.filter(submission=submission)
        if not self.is_bound:
            return results
        if self.case or self.tag or self.tool or self.text:
            # The run's submission too, when a filter reads the runs: the planner may then
            # combine the runs' (submission, ...) indexes with the filter's own (the text
            # filter's trigrams match in every submission), rather than read the rows of all.
            results = results.filter(run__submission=submission)
        self.submission = submission
        self.errors  # noqa: B018 (validates the form, as FilterSet.qs does)
        return self.filter_queryset(results)

    def earlier_results(self, submission: Submission, number: int) -> QuerySet[EarlierResult]:
        """The submission's results against version ``number``, kept from before it was
        scored again, that pass the filters, in file order. Only the filters of a result's
        own fields and its run apply (``EARLIER_FILTERS``): the others read the current
        results' predicates and reviews. Raises ``ValueError`` naming one that does not."""
        if unknown := sorted(set(self.as_query()) - set(EARLIER_FILTERS) - set(VIEW_ONLY)):
            raise ValueError(
                f"{', '.join(unknown)}: not a filter of the results of an earlier version "
                f"(those are {', '.join(EARLIER_FILTERS)})"
            )
        results = EarlierResult.objects.filter(
            submission=submission, version__number=number, version__suite=submission.suite
        )
        for name in EARLIER_FILTERS:
            if value := self.values[name]:
                results = self.filters[name].filter(results, value)
        return results.order_by("run__seq")

    def runs(self, submission: Submission) -> QuerySet[Run]:
        """The runs of the filtered results: what a bulk review changes."""
        return Run.objects.filter(pk__in=self.matching(submission).values("pk"))

    # --- the filters that need the submission ------------------------------------------

    @property
    def _filtered(self) -> Submission:
        """The submission whose results ``matching`` filters: the filters below run there."""
        assert self.submission is not None, "a filter runs only within ``matching``"
        return self.submission

    def _tag(self, results: QuerySet[Result], name: str, tag: str) -> QuerySet[Result]:
        keys = [key for key, tags in case_tags(self._filtered).items() if tag in tags]
        return results.filter(run__case_key__in=keys)

    def _predicate(self, results: QuerySet[Result], name: str, label: str) -> QuerySet[Result]:
        # A subquery, not a join: a join would repeat a run for each predicate row.
        failing = PredicateResult.objects.filter(submission=self._filtered, label=label)
        return results.filter(pk__in=failing.values("result_id"))

    def _cause(self, results: QuerySet[Result], name: str, cause: str) -> QuerySet[Result]:
        kind, _, tool = cause.partition(":")
        failing = PredicateResult.objects.filter(
            submission=self._filtered, cause_kind=kind, cause_tool=tool
        )
        if self.argument:
            failing = failing.filter(cause_argument=self.argument)
        return results.filter(pk__in=failing.values("result_id"))

    def _tool(self, results: QuerySet[Result], name: str, tool: str) -> QuerySet[Result]:
        return results.filter(run__tools__contains=f"\n{tool}\n")

    def _review(self, results: QuerySet[Result], name: str, status: str) -> QuerySet[Result]:
        # Read from the reviews' (submission, status) index, not through the runs.
        deciding = self._deciding_reviews(self._filtered).values("run_id")
        if status == ReviewStatus.UNTRIAGED:
            return results.exclude(pk__in=deciding)
        return results.filter(pk__in=deciding)

    def _reward(self, results: QuerySet[Result], name: str, value: str) -> QuerySet[Result]:
        wanted = rewards.agreeing() if value == rewards.AGREES else rewards.disagreeing()
        return results.filter(wanted, run__submission=self._filtered)

    def _label(self, results: QuerySet[Result], name: str, label: str) -> QuerySet[Result]:
        labelled = LabelLink.objects.filter(
            reviewlabel__team_id=self._filtered.suite.team_id, reviewlabel__name=label
        )
        return results.filter(pk__in=labelled.values("review_id"))


def stored_count(submission: Submission, verdict: str = "") -> int | None:
    """The submission's runs with a result (of ``verdict``, if given) as its counts keep
    them: scoring writes a chunk's results and moves the counts in one transaction, and
    clears both together. None once retention has removed its results, keeping its counts
    (docs/operations.md#retention): the results must then be counted."""
    if submission.runs_pruned:
        return None
    by_verdict = {
        "": submission.scored,
        Verdict.PASS: submission.passed,
        Verdict.FAIL: submission.failed,
        Verdict.ERROR: submission.errored,
    }
    return by_verdict.get(verdict)


@dataclass(frozen=True)
class Paged:
    """Results read a page at a time, by the paginators of the table and of the API (which
    ask for ``count`` and a slice), where one ordered query would cost too much. ``values``
    and ``only`` apply to each read."""

    results: QuerySet[Result]
    ordered = True  # for the paginator, which warns about an unordered list

    def count(self) -> int:
        raise NotImplementedError

    def values(self, *fields: str) -> Paged:
        return replace(self, results=self.results.values(*fields))

    def only(self, *fields: str) -> Paged:
        return replace(self, results=self.results.only(*fields))


@dataclass(frozen=True)
class InKeptOrder(Paged):
    """Results whose ids are known in order: a page reads its own ids' rows."""

    order: tuple[int, ...]

    def count(self) -> int:
        return len(self.order)

    def __getitem__(self, cut: slice) -> list:
        return list(self.results.filter(pk__in=self.order[cut]))  # ``results`` is ordered


@dataclass(frozen=True)
class ByReviewStatus(Paged):
    """Results sorted by review status: a page is read from the statuses it spans, each in
    file order, where the query of ``SORTS["review"]`` sorts every run of the filter by its
    status first (0.7 s at a million runs). A status is counted only when a page starts
    past its end; the untriaged, most of the runs, never are."""

    # ``results``: the submission's, in file order
    submission: Submission
    statuses: tuple[str, ...]  # in the table's order
    total: int

    def count(self) -> int:
        return self.total

    def __getitem__(self, cut: slice) -> list:
        start, stop = cut.start or 0, self.total if cut.stop is None else cut.stop
        rows = []
        for status in self.statuses:  # start and stop count from this status's first result
            if stop <= start:
                break
            read = list(self._of_status(status)[start:stop])
            rows.extend(read)
            if len(read) == stop - start:
                break
            # This status ends before ``stop``: where, if its rows did not tell.
            size = start + len(read) if read or not start else self._size(status)
            start, stop = max(0, start - size), stop - size
        return rows

    def _of_status(self, status: str) -> QuerySet:
        if status == ReviewStatus.UNTRIAGED:  # as ``with_review_status``: never reviewed too
            return self.results.filter(Q(run__review__isnull=True) | Q(run__review__status=status))
        # The review's submission too, so that its (submission, status) index finds them.
        return self.results.filter(
            run__review__submission=self.submission, run__review__status=status
        )

    def _size(self, status: str) -> int:
        if status != ReviewStatus.UNTRIAGED:
            return self._of_status(status).count()
        reviewed = (other for other in self.statuses if other != status)
        return self.total - sum(self._size(other) for other in reviewed)


@dataclass(frozen=True)
class SortHeader:
    """A sortable column header: the sort its link asks for, and how the table is sorted by
    it now (``aria-sort``: ``ascending``, ``descending`` or ``none``)."""

    link: str
    state: str


def _normalized(query) -> dict[str, str]:
    """The parameters as the filters read them: trimmed, cut to their column's length, and
    the columns (a parameter each when ticked in the form, joined in a link) as one list of
    at most ``COLUMNS_SHOWN`` meta keys."""
    values = {name: str(query.get(name, "")).strip() for name in RunFilterSet.base_filters}
    for name, length in LENGTHS.items():
        values[name] = values[name][:length]
    columns = ",".join(query.getlist("columns")) if hasattr(query, "getlist") else values["columns"]
    stripped = (name.strip() for name in columns.split(","))
    names = [name for name in stripped if name and len(name) <= META_KEY_LIMIT]
    values["columns"] = ",".join(dict.fromkeys(names[:COLUMNS_SHOWN]))
    return values
