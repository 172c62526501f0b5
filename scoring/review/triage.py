"""Moving through failures from the run page: the previous and next failing run of the runs
table's filter, or the next item of a review queue; and the case's other trials around a
run's, which the run page and the compare-runs page link to.

The run page is opened from the runs table with the table's filters in its query string
(``RunFilterSet.as_query``); "next failure" is the next run in that table's order whose
verdict is not ``pass``. It is found in SQL from the current run's place in the order (a
keyset query: the runs after it, first one), so it costs the same on a submission of ten
runs or of 100,000.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

from django.db.models import F, QuerySet, Subquery
from django.db.models.expressions import Expression, OrderBy
from django.urls import reverse

from scoring.models import Result, Run, Submission, Verdict
from scoring.results.filtersets import RunFilterSet

NOT_PASSING = (Verdict.FAIL, Verdict.ERROR)
# Keys that tell a submission's runs apart (its table's constraints): an order by one of
# them needs no tie-break.
UNIQUE_WITHIN_SUBMISSION = ({"run__seq"}, {"run__case_key", "run__trial"})


@dataclass(frozen=True)
class TriageLinks:
    """Where the run page's keyboard and links lead, keeping the table's filters."""

    query: str  # the filters (and queue) as URL text, for links that keep them
    table: str  # the runs table, filtered as it was
    previous: str | None  # the previous failure of the filter
    next: str | None  # the next failure of the filter, or the next item of the queue
    queue: str = ""  # the review queue being worked through, if any


def triage_links(submission: Submission, run: Run, query) -> TriageLinks:
    """The links of the run page opened with ``query`` (a request's GET parameters). With a
    ``queue`` parameter, the queue decides what comes next (its own view picks the item)."""
    filters = RunFilterSet(query)
    kept = filters.as_query()
    if queue := queue_of(query):
        kept["queue"] = queue
    text = urlencode(kept)
    previous, following = failure_neighbours(submission, run, filters)
    shown = urlencode(filters.as_query())
    table = submission.get_absolute_url() + (f"?{shown}" if shown else "")
    following_url: str | None
    if queue:
        following_url = reverse("queue_next", args=[int(queue)])
    else:
        following_url = _run_url(submission, following, text)
    return TriageLinks(
        query=text,
        table=table,
        previous=_run_url(submission, previous, text),
        next=following_url,
        queue=queue,
    )


def queue_of(query) -> str:
    """The review queue the run page was opened from (its ``queue`` parameter), or ""."""
    queue = query.get("queue", "").strip()
    return queue if queue.isdigit() else ""


def failure_neighbours(
    submission: Submission, run: Run, filters: RunFilterSet
) -> tuple[int | None, int | None]:
    """The runs (ids) before and after ``run`` among the failures of ``filters``, in the
    table's order. ``run`` itself need not pass the filter (it may have just been re-scored
    to a pass): its place in the order is what counts."""
    failures = filters.results(submission).filter(verdict__in=NOT_PASSING)
    keys = _sort_keys(failures.query.order_by)
    named = {key.name for key, _ in keys if isinstance(key, F)}
    if not any(unique <= named for unique in UNIQUE_WITHIN_SUBMISSION):
        # A total order, so that "after" is well defined; the file order breaks ties, as
        # the table's own sorts do, and an index (submission, seq) serves it.
        keys.append((F("run__seq"), False))
    aliases = {f"triage_key_{i}": expression for i, (expression, _) in enumerate(keys)}
    here = Result.objects.filter(pk=run.pk).annotate(**aliases).values(*aliases).first()
    if here is None:  # not scored (yet): it has no place in the order
        return None, None
    failures = failures.alias(**aliases)
    names = list(aliases)
    forward = [descending for _, descending in keys]
    return (
        _next_in_order(failures, names, [not d for d in forward], here),
        _next_in_order(failures, names, forward, here),
    )


def _sort_keys(ordering) -> list[tuple[Expression | F | Subquery, bool]]:
    """The table's ordering as (expression, descending) pairs."""
    keys: list[tuple[Expression | F | Subquery, bool]] = []
    for item in ordering:
        if isinstance(item, OrderBy):
            keys.append((item.expression, item.descending))
        else:
            keys.append((F(item.lstrip("-")), item.startswith("-")))
    return keys


def _next_in_order(
    results: QuerySet[Result], names: list[str], descending: list[bool], here: dict
) -> int | None:
    """The first of ``results`` after ``here`` in the order of the keys ``names`` (each
    ascending unless ``descending``).

    "After" is: equal on every key but the last and further on it, or else equal on all
    but the last two and further on the one before, and so on. Written as one condition
    (an OR of those), PostgreSQL cannot walk an index for it and sorts every candidate;
    asked level by level, the deepest first (it shares the most keys, so it comes first in
    the order), each query is a range on an index prefix that stops at its first row."""
    for i in reversed(range(len(names))):
        prefix = {name: here[name] for name in names[:i]}
        further = {f"{names[i]}__{'lt' if descending[i] else 'gt'}": here[names[i]]}
        order = [f"-{n}" if d else n for n, d in zip(names[i:], descending[i:], strict=True)]
        found = results.filter(**prefix, **further).order_by(*order)
        pk = found.values_list("pk", flat=True).first()
        if pk is not None:
            return pk
    return None


def _run_url(submission: Submission, run_id: int | None, query: str) -> str | None:
    if run_id is None:
        return None
    url = reverse("run", args=[submission.pk, run_id])
    return f"{url}?{query}" if query else url


TRIALS_AROUND = 100  # the case's trials linked on each side of the run's own


@dataclass(frozen=True)
class NearbyTrials:
    """The case's trials around this run's: a case may have thousands, and the page links
    the closest, saying when there are more."""

    runs: list[dict]  # pk, trial, result__verdict
    more_before: bool
    more_after: bool


def nearby_trials(run: Run) -> NearbyTrials:
    trials = Run.objects.filter(submission_id=run.submission_id, case_key=run.case_key)
    fields = ("pk", "trial", "result__verdict")
    before = list(
        trials.filter(trial__lt=run.trial).order_by("-trial").values(*fields)[: TRIALS_AROUND + 1]
    )
    after = list(
        trials.filter(trial__gte=run.trial).order_by("trial").values(*fields)[: TRIALS_AROUND + 2]
    )
    return NearbyTrials(
        [*reversed(before[:TRIALS_AROUND]), *after[: TRIALS_AROUND + 1]],
        more_before=len(before) > TRIALS_AROUND,
        more_after=len(after) > TRIALS_AROUND + 1,
    )
