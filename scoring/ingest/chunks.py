"""Scoring one chunk of a submission's runs (docs/pipeline.md#scoring-chunks).

A chunk is the runs whose ``seq`` falls in one range; several chunks may be scored together
(a live submission's batch of one-run chunks). The matcher runs outside any transaction;
then, in one transaction under the submission's lock, the chunks' earlier results (if they
were scored before) are deleted and their tallies taken back from the counts, the new
results written in bulk with each chunk's tally, and the counts moved by those tallies: they
stay the sums of the scored chunks' tallies. Running a chunk twice therefore rewrites the
same rows and counts them once.
"""

from __future__ import annotations

import logging
from collections import Counter
from itertools import groupby

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from scoring.environments import EnvironmentLimits, replayer_for
from scoring.ingest.bulk import insert_rows, relax_durability
from scoring.ingest.pipeline import finish_if_complete
from scoring.matcher import ERROR, FAIL, PASS, Report, failure_signature, load_run, score
from scoring.matcher import PredicateResult as MatcherPredicate
from scoring.matcher import Run as MatcherRun
from scoring.models import LABEL_LIMIT, PredicateResult, Result, Run, ScoredChunk, Submission

log = logging.getLogger(__name__)

RESULT_FIELDS = ("run_id", "submission_id", "verdict", "report", "scored_at", "signature")
PREDICATE_FIELDS = (
    "result_id",
    "submission_id",
    "kind",
    "index",
    "label",
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
        p.detail or "",
        cause.kind if cause else "",
        (cause.tool or "")[:LABEL_LIMIT] if cause else "",
        (cause.argument or "")[:LABEL_LIMIT] if cause else "",
    )


def score_chunk(submission_id: int, generation: int, index: int) -> None:
    score_runs(submission_id, generation, [index])


def score_runs(
    submission_id: int,
    generation: int,
    indexes: list[int],
    read: list[tuple[int, int, MatcherRun]] | None = None,
) -> None:
    """Score the chunks ``indexes`` of the submission together: read at once, written in
    one transaction, the counts moved once by their tally (a live submission's batch of
    traces is many one-run chunks, docs/live-traces.md#assembly).

    ``read``: the chunks' runs as ``(id, seq, run)``, parsed by the reader that just wrote
    them, so they are not read back (docs/pipeline.md#ranges)."""
    submission = (
        Submission.objects.filter(pk=submission_id, generation=generation)
        .select_related("version")
        .defer("version__document", "version__audit")
        .first()
    )
    if submission is None:
        return  # deleted, or started again since this task was sent
    suite = submission.version.matcher_suite()
    in_chunks = _seq_ranges(submission, indexes)
    if read is None:
        stored = Run.objects.filter(in_chunks, submission=submission).order_by("seq")
        runs = stored.values_list("pk", "seq", "case_key", "document")
    else:
        runs = ((run_id, seq, run.case, run) for run_id, seq, run in read)
    reports = []
    for run_id, seq, case_key, run in runs:
        case = suite.case(case_key)
        if case is None:
            continue  # a run of no case in this version: listed as unknown, not scored
        reports.append((run_id, seq, _score(case, run)))

    with transaction.atomic():
        relax_durability()  # results can be scored again
        submission = Submission.objects.select_for_update().filter(pk=submission_id).first()
        if submission is None or submission.generation != generation:
            return
        # The runs as they are now: settling a file read in ranges may have renumbered some
        # or deleted repeats since they were read (docs/pipeline.md#ranges).
        present = Run.objects.filter(in_chunks, submission=submission)
        trials, occupied = {}, set()
        for run_id, seq, trial in present.values_list("pk", "seq", "trial"):
            trials[run_id] = trial
            occupied.add((seq - 1) // submission.chunk_runs)
        live = submission.live_day is not None
        if any(run_id not in trials for run_id, _, _ in reports):
            if live or submission.ingest_finished is None:
                # A range read again, or a live run made again, deleted them meanwhile: it
                # sends this chunk again as it writes the runs anew.
                return
            reports = [item for item in reports if item[0] in trials]  # refused repeats
        # A chunk of a file left with no run (all refused as repeats) has no tally: only
        # the chunks that hold runs are scored (``chunk_indexes``).
        tallies = {index: Counter() for index in indexes if live or index in occupied}
        predicates, results, now = [], [], timezone.now()
        for run_id, seq, report in reports:
            report.trial = trials[run_id]
            tallies[(seq - 1) // submission.chunk_runs][report.verdict] += 1
            predicates.extend(
                _predicate_row(run_id, submission_id, p) for p in report.predicates if not p.passed
            )
            signature = failure_signature(report) or ""
            results.append(
                # The usage is the run's own columns: not stored again with each report.
                (
                    run_id,
                    submission_id,
                    report.verdict,
                    report.to_dict(with_usage=False),
                    now,
                    signature,
                )
            )
        chunks = ScoredChunk.objects.filter(submission=submission, generation=generation)
        # Bounded as well as listed: read as a range of the (submission, generation, index)
        # index, not a filter over every chunk of a live submission.
        earlier = chunks.filter(index__range=(min(indexes), max(indexes)), index__in=indexes)
        if earlier.exists():  # scored before: its results are replaced, its tally taken back
            _count(submission, earlier, sign=-1)
            scored_before = Result.objects.filter(
                _seq_ranges(submission, earlier.values_list("index", flat=True), "run__seq"),
                submission=submission,
            )
            PredicateResult.objects.filter(result__in=scored_before.values("pk")).delete()
            scored_before.only("pk").delete()
            earlier.delete()
        insert_rows(Result, RESULT_FIELDS, results)
        insert_rows(PredicateResult, PREDICATE_FIELDS, predicates)
        new = ScoredChunk.objects.bulk_create(
            ScoredChunk(
                submission=submission,
                generation=generation,
                index=index,
                scored=tally.total(),
                passed=tally[PASS],
                failed=tally[FAIL],
                errored=tally[ERROR],
            )
            for index, tally in tallies.items()
        )
        _count(submission, new, sign=1)
        finish_if_complete(submission)
        submission.save()


def _seq_ranges(submission: Submission, indexes, field: str = "seq") -> Q:
    """The runs of the chunks ``indexes``: a range of ``seq`` per stretch of consecutive
    chunks."""
    ranges = Q(pk__in=[])
    for _, stretch in groupby(enumerate(sorted(indexes)), key=lambda pair: pair[1] - pair[0]):
        stretch = [index for _, index in stretch]
        first, _ = submission.chunk_bounds(stretch[0])
        _, last = submission.chunk_bounds(stretch[-1])
        ranges |= Q(**{f"{field}__range": (first, last)})
    return ranges


def _count(submission: Submission, chunks, *, sign: int) -> None:
    """Move the submission's counts by the chunks' tallies: they stay the sums of its
    scored chunks, without summing them all again."""
    for chunk in chunks:
        submission.scored += sign * chunk.scored
        submission.passed += sign * chunk.passed
        submission.failed += sign * chunk.failed
        submission.errored += sign * chunk.errored


def _score(case, run: MatcherRun | dict) -> Report:
    """The report of the run (parsed, or its stored document); a run the matcher chokes on
    (a bug) is an error, not a lost chunk."""
    try:
        return score(
            case,
            run if isinstance(run, MatcherRun) else load_run(run),
            time_budget=settings.CASEBOOK_RUN_TIME_BUDGET_SECONDS,
            replayer=replayer_for(EnvironmentLimits.from_settings(settings)),
        )
    except Exception as exc:
        trial = run.trial if isinstance(run, MatcherRun) else run.get("trial")
        log.exception("scoring %s trial %s failed", case.key, trial)
        reason = f"Casebook could not score this run ({type(exc).__name__}); please report it"
        return Report(case.key, trial, ERROR, [], reason)
