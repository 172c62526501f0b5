"""Cases from a filter of passing runs (docs/review.md#cases-from-runs): the way a team turns
a good day of traffic into a regression suite. One draft case per case key, made (by
``cases.drafting``) from the key's first passing run, or the passing trial the author picks;
as a draft revision of the suite's case of that key, or as a case of a new suite. Nothing
here saves: the author reviews the drafts, and ``cases.services`` saves those they keep.

Bounded whatever the filter: drafts for at most ``DRAFTS_PER_REQUEST`` case keys (the
page says how many more there are), at most ``TRIALS_OFFERED`` trials offered per key, and
only the chosen runs' documents read."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from functools import lru_cache
from operator import itemgetter

from django.db import connection, transaction
from django.db.models import F, QuerySet, Window
from django.db.models.functions import RowNumber

from cases import services
from cases.diff import predicate_labels
from cases.drafting import draft_case, draft_revision
from cases.models import Suite, SuiteVersion, Team
from cases.tool_catalog import argument_schemas
from scoring.matcher import SUITE_SCHEMA, dump_json, parse_json
from scoring.models import CaseSummary, Run, Status, Submission, Verdict
from scoring.results.filtersets import RunFilterSet

DRAFTS_PER_REQUEST = 100
TRIALS_OFFERED = 20


@dataclass(frozen=True)
class Trial:
    run_id: int
    trial: int


@dataclass
class Draft:
    """One case key's draft: the case document, the run it was made from, the other
    passing trials it could be made from, and, for a revision, the case as it is now."""

    key: str
    run: Trial
    trials: list[Trial]
    case: dict
    current: dict | None = None
    labels: list[str] = field(default_factory=list)  # what the draft checks, in words
    current_labels: list[str] = field(default_factory=list)

    @property
    def revises(self) -> bool:
        return self.current is not None


@dataclass
class Drafts:
    drafts: list[Draft]
    keys: int  # case keys with a passing run under the filter (more than drafted if capped)
    runs: int  # passing runs under the filter

    @property
    def left_out(self) -> int:
        return self.keys - len(self.drafts)


def passing(filters: RunFilterSet) -> RunFilterSet:
    """The runs table's filters, narrowed to the runs that passed."""
    return filters.but(verdict=Verdict.PASS)


def draft_cases(
    submission: Submission,
    filters: RunFilterSet,
    *,
    into: Suite | None,
    picks: Collection[int] = (),
) -> Drafts:
    """A draft case for each case key of the filter's passing runs (the first
    ``DRAFTS_PER_REQUEST`` keys, in order), from the key's offered trial whose run id is
    among ``picks`` (the author's choice), else from its first passing run.

    ``into``: the suite the drafts are for; a key it has is drafted as a revision of its
    case. None: a new suite, every draft a new case."""
    passing_runs = passing(filters)
    # With the runs' submission given (``results``), their keys and trials are read from the
    # runs' (submission, case_key, seq) index, not their wide rows.
    of_runs = passing_runs.results(submission)
    keys = _passing_keys(submission, passing_runs)
    if keys is None:
        keys = of_runs.values_list("run__case_key", flat=True).distinct().order_by("run__case_key")
    # One key beyond the cap says whether there are more; only then are they counted.
    chosen_keys = list(keys[: DRAFTS_PER_REQUEST + 1])
    key_count = keys.count() if len(chosen_keys) > DRAFTS_PER_REQUEST else len(chosen_keys)
    chosen_keys = chosen_keys[:DRAFTS_PER_REQUEST]
    # Kept: the keys are those of the filters, and a done submission's runs do not change.
    trials = passing_runs.kept(
        submission, "trials-offered", lambda: _trials_offered(of_runs, chosen_keys)
    )
    picks = set(picks)
    runs = {
        key: next((t for t in offered if t.run_id in picks), offered[0])
        for key, offered in trials.items()
    }
    documents = dict(
        Run.objects.filter(pk__in=[t.run_id for t in runs.values()]).values_list("pk", "document")
    )
    tools = argument_schemas(services.suite_tools(into or submission.suite))
    current = {}
    if into is not None:
        cases = into.cases.filter(key__in=chosen_keys).prefetch_related(
            "expected_calls", "expectations"
        )
        current = {case.key: services.case_document(case) for case in cases}
    drafts = []
    for key in chosen_keys:
        drafted = draft_case(documents[runs[key].run_id], key, tools)
        case = draft_revision(current[key], drafted) if key in current else drafted
        drafts.append(Draft(key, runs[key], trials[key], case, current.get(key)))
    _label(drafts)
    return Drafts(drafts, keys=key_count, runs=passing_runs.count(submission))


def _passing_keys(submission: Submission, passing_runs: RunFilterSet) -> QuerySet | None:
    """The case keys with a passing run, from the stored case summaries when no filter but
    the verdict narrows the runs: a million runs hold 750,000 passing ones to read for their
    keys. None when the summaries cannot say: another filter, scoring not done, or a live
    submission (its summaries are those of when it was first done, docs/live-traces.md)."""
    if passing_runs.narrowing() != {"verdict"} or submission.live_day is not None:
        return None
    if submission.status != Status.DONE:
        return None
    stored = CaseSummary.objects.filter(
        submission=submission, generation=submission.generation, passed__gt=0
    )
    if not stored.exists():  # summarized before summaries existed
        return None
    return stored.order_by("case_key").values_list("case_key", flat=True)


def _trials_offered(results, keys: list[str]) -> dict[str, list[Trial]]:
    """The first ``TRIALS_OFFERED`` passing runs of each key, in file order (one query)."""
    columns = ("run__case_key", "run__seq", "run_id", "run__trial")
    if not keys:
        return {}
    if connection.features.supports_slicing_ordering_in_compound:
        # PostgreSQL: each key's first runs read from the runs' (submission, case_key, seq)
        # index, stopping at the last one offered; ranking every passing run of the keys
        # (below) sorts them all, a tenth of a second at 100,000 runs.
        firsts = [
            results.filter(run__case_key=key).order_by("run__seq").values_list(*columns)
            for key in keys
        ]
        rows = firsts[0][:TRIALS_OFFERED].union(
            *(first[:TRIALS_OFFERED] for first in firsts[1:]), all=True
        )
    else:  # SQLite takes no LIMIT in the parts of a UNION
        rows = (
            results.filter(run__case_key__in=keys)
            .annotate(
                rank=Window(
                    RowNumber(), partition_by=F("run__case_key"), order_by=F("run__seq").asc()
                )
            )
            .filter(rank__lte=TRIALS_OFFERED)
            .order_by("run__case_key", "run__seq")
            .values_list(*columns)
        )
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # Each key's few index entries are read in a millisecond; starting parallel
            # workers for each part of the UNION cost ten times that.
            cursor.execute("SET LOCAL max_parallel_workers_per_gather = 0")
        rows = list(rows)
    offered: dict[str, list[Trial]] = {key: [] for key in keys}
    for key, _, run_id, trial in sorted(rows, key=itemgetter(1)):  # a UNION keeps no order
        offered[key].append(Trial(run_id, trial))
    return offered


def _label(drafts: list[Draft]) -> None:
    """Each draft's predicates in words, as its reports will label them (and the current
    case's, for a revision)."""
    for draft in drafts:
        draft.labels = list(_case_labels(dump_json(draft.case)))
        draft.current_labels = list(_case_labels(dump_json(draft.current))) if draft.revises else []


@lru_cache(maxsize=1024)
def _case_labels(case_json: bytes) -> tuple[str, ...]:
    """A case's predicate labels, by its JSON text. The page labels the same drafts and the
    same current cases on every view and on every change of trial (the preview redraws
    them all): compiling 50 cases to label them was over a third of its time."""
    case = parse_json(case_json)
    return tuple(predicate_labels(_suite_of([case])).get(case.get("key"), ()))


def _suite_of(cases: list[dict], **fields) -> dict:
    return {"schema": SUITE_SCHEMA, "name": "drafts", **fields, "cases": cases}


def new_suite_document(name: str, submission: Submission, drafts: list[Draft]) -> dict:
    """The suite file of a new suite made of ``drafts``, with the submission's suite's tool
    catalog (the drafts' calls are calls of those tools)."""
    tools = services.suite_tools(submission.suite)
    return _suite_of([d.case for d in drafts], name=name, **({"tools": tools} if tools else {}))


@dataclass(frozen=True)
class Saved:
    suite: Suite
    version: SuiteVersion
    revised: int  # drafts saved as revisions of the suite's cases
    added: int  # drafts saved as new cases


def save_drafts(
    submission: Submission,
    chosen: list[Draft],
    user,
    *,
    new_suite: tuple[Team, str] | None = None,
    seen_version: int | None = None,
) -> Saved:
    """Save the drafts the author kept, as one version: into the submission's suite (each
    a revision of the case of its key, or a new case; ``services.SuiteChanged`` when the
    suite has a newer version than ``seen_version``), or as the new suite ``new_suite``
    names (its team and name). ``InvalidInput`` names a draft by its place."""
    source = f"passing runs of submission #{submission.pk}"
    if new_suite is not None:
        team, name = new_suite
        document = new_suite_document(name, submission, chosen)
        made = services.create_suite(team, document, user, message=f"Made from {source}")
        return Saved(made, made.latest_version, 0, len(chosen))
    count = f"{len(chosen)} case{'' if len(chosen) == 1 else 's'}"
    version = services.save_cases(
        submission.suite,
        [d.case for d in chosen],
        user,
        seen_version=seen_version,
        message=f"{count} from {source}",
    )
    revised = sum(d.revises for d in chosen)
    return Saved(submission.suite, version, revised, len(chosen) - revised)
