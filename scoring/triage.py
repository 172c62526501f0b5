"""Moving through failures from the run page: the previous and next failing run of the runs
table's filter, or the next item of a review queue.

The run page is opened from the runs table with the table's filters in its query string
(``RunFilters.as_query``); "next failure" is the next run in that table's order whose
verdict is not ``pass``. It is found in SQL from the current run's place in the order (a
keyset query: the runs after it, first one), so it costs the same on a submission of ten
runs or of 100,000.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

from django.db.models import F, Q, QuerySet
from django.db.models.expressions import OrderBy
from django.urls import reverse

from .models import Result, Run, Submission, Verdict
from .results import RunFilters

NOT_PASSING = (Verdict.FAIL, Verdict.ERROR)


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
    filters = RunFilters.from_query(query)
    kept = filters.as_query()
    queue = query.get("queue", "").strip()
    if queue.isdigit():
        kept["queue"] = queue
    else:
        queue = ""
    text = urlencode(kept)
    previous, following = failure_neighbours(submission, run, filters)
    shown = urlencode(filters.as_query())
    table = submission.get_absolute_url() + (f"?{shown}" if shown else "")
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


def failure_neighbours(
    submission: Submission, run: Run, filters: RunFilters
) -> tuple[int | None, int | None]:
    """The runs (ids) before and after ``run`` among the failures of ``filters``, in the
    table's order. ``run`` itself need not pass the filter (it may have just been re-scored
    to a pass): its place in the order is what counts."""
    failures = filters.results(submission).filter(verdict__in=NOT_PASSING)
    keys = [*_sort_keys(failures.query.order_by), (F("pk"), False)]
    aliases = {f"triage_key_{i}": expression for i, (expression, _) in enumerate(keys)}
    here = Result.objects.filter(pk=run.pk).annotate(**aliases).values(*aliases).first()
    if here is None:  # not scored (yet): it has no place in the order
        return None, None
    failures = failures.alias(**aliases)
    names = list(aliases)
    after = _beyond(names, [descending for _, descending in keys], here)
    before = _beyond(names, [not descending for _, descending in keys], here)
    ascending = [f"-{n}" if d else n for n, (_, d) in zip(names, keys, strict=True)]
    descending = [n if d else f"-{n}" for n, (_, d) in zip(names, keys, strict=True)]
    return (
        _first_run(failures.filter(before).order_by(*descending)),
        _first_run(failures.filter(after).order_by(*ascending)),
    )


def _sort_keys(ordering) -> list[tuple[object, bool]]:
    """The table's ordering as (expression, descending) pairs."""
    keys = []
    for item in ordering:
        if isinstance(item, OrderBy):
            keys.append((item.expression, item.descending))
        else:
            keys.append((F(item.lstrip("-")), item.startswith("-")))
    return keys


def _beyond(names: list[str], descending: list[bool], here: dict) -> Q:
    """The rows that come after ``here`` in the order (each key ascending unless
    ``descending``): the first key further along, or equal and the next key further, ..."""
    condition = Q(pk__in=[])
    for i, name in enumerate(names):
        step = Q(**{f"{name}__{'lt' if descending[i] else 'gt'}": here[name]})
        for earlier in names[:i]:
            step &= Q(**{earlier: here[earlier]})
        condition |= step
    return condition


def _first_run(results: QuerySet[Result]) -> int | None:
    return results.values_list("pk", flat=True).first()


def _run_url(submission: Submission, run_id: int | None, query: str) -> str | None:
    if run_id is None:
        return None
    url = reverse("run", args=[submission.pk, run_id])
    return f"{url}?{query}" if query else url
