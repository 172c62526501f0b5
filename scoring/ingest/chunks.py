"""Scoring one chunk of a submission's runs (docs/pipeline.md#scoring-chunks).

A chunk is the runs whose ``seq`` falls in one range. The matcher runs outside any
transaction; then, in one transaction under the submission's lock, the chunk's earlier
results (if it was scored before) are deleted, the new ones written in bulk with the
chunk's tally, and the submission's counts summed again from the tallies. Running a chunk
twice therefore rewrites the same rows and counts them once.
"""

from __future__ import annotations

import logging
from collections import Counter

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from scoring.environments import EnvironmentLimits, replayer_for
from scoring.ingest.bulk import insert_rows, relax_durability
from scoring.ingest.pipeline import finish_if_complete, update_counts
from scoring.matcher import ERROR, FAIL, PASS, Report, failure_signature, load_run, score
from scoring.matcher import PredicateResult as MatcherPredicate
from scoring.models import LABEL_LIMIT, PredicateResult, Result, Run, ScoredChunk, Submission

log = logging.getLogger(__name__)

RESULT_FIELDS = ("run_id", "submission_id", "verdict", "report", "scored_at", "signature")
PREDICATE_FIELDS = (
    "result_id",
    "submission_id",
    "kind",
    "index",
    "label",
    "passed",
    "detail",
    "cause_kind",
    "cause_tool",
    "cause_argument",
)


def _predicate_row(run_id: int, submission_id: int, p: MatcherPredicate) -> tuple:
    cause = p.cause
    return (
        run_id,
        submission_id,
        p.kind,
        p.index,
        p.label[:LABEL_LIMIT],
        p.passed,
        p.detail or "",
        cause.kind if cause else "",
        (cause.tool or "")[:LABEL_LIMIT] if cause else "",
        (cause.argument or "")[:LABEL_LIMIT] if cause else "",
    )


def score_chunk(submission_id: int, generation: int, index: int) -> None:
    submission = (
        Submission.objects.filter(pk=submission_id, generation=generation)
        .select_related("version")
        .defer("version__document")
        .first()
    )
    if submission is None:
        return  # deleted, or started again since this task was sent
    suite = submission.version.matcher_suite()
    first, last = submission.chunk_bounds(index)
    runs = Run.objects.filter(submission=submission, seq__range=(first, last))
    now = timezone.now()
    results, predicates, verdicts = [], [], Counter()
    for run_id, case_key, document in runs.values_list("pk", "case_key", "document"):
        case = suite.case(case_key)
        if case is None:
            continue  # a run of no case in this version: listed as unknown, not scored
        report = _score(case, document)
        verdicts[report.verdict] += 1
        signature = failure_signature(report) or ""
        results.append((run_id, submission_id, report.verdict, report.to_dict(), now, signature))
        predicates.extend(_predicate_row(run_id, submission_id, p) for p in report.predicates)

    with transaction.atomic():
        relax_durability()  # results can be scored again
        submission = Submission.objects.select_for_update().filter(pk=submission_id).first()
        if submission is None or submission.generation != generation:
            return
        scored_runs = [row[0] for row in results]
        if Run.objects.filter(pk__in=scored_runs).count() != len(scored_runs):
            # A range read again deleted them meanwhile (docs/pipeline.md#ranges): it sends
            # this chunk again as it writes the runs anew.
            return
        chunk = ScoredChunk.objects.filter(submission=submission, generation=generation)
        if chunk.filter(index=index).exists():
            earlier = Result.objects.filter(
                run__submission=submission, run__seq__range=(first, last)
            )
            PredicateResult.objects.filter(result__in=earlier.values("pk")).delete()
            earlier.only("pk").delete()
            chunk.filter(index=index).delete()
        insert_rows(Result, RESULT_FIELDS, results)
        insert_rows(PredicateResult, PREDICATE_FIELDS, predicates)
        ScoredChunk.objects.create(
            submission=submission,
            generation=generation,
            index=index,
            scored=len(results),
            passed=verdicts[PASS],
            failed=verdicts[FAIL],
            errored=verdicts[ERROR],
        )
        update_counts(submission)
        finish_if_complete(submission)
        submission.save()


def _score(case, document) -> Report:
    """The run's report; a run the matcher chokes on (a bug) is an error, not a lost chunk."""
    try:
        return score(
            case,
            load_run(document),
            time_budget=settings.CASEBOOK_RUN_TIME_BUDGET_SECONDS,
            replayer=replayer_for(EnvironmentLimits.from_settings(settings)),
        )
    except Exception as exc:
        trial = document.get("trial") if isinstance(document, dict) else None
        log.exception("scoring %s trial %s failed", case.key, trial)
        reason = f"Casebook could not score this run ({type(exc).__name__}); please report it"
        return Report(case.key, trial, ERROR, [], reason)
