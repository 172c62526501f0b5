"""Scoring one chunk of a submission's runs (docs/pipeline.md#scoring-chunks).

A chunk is the runs whose ``seq`` falls in one range; several chunks may be scored together
(a live submission's batch of one-run chunks). The matcher runs outside any transaction;
the run store then writes the reports (``store.write_results``): in one transaction under
the submission's lock, the chunks' earlier results (if they were scored before) are deleted
and their tallies taken back from the counts, the new results written in bulk with each
chunk's tally, and the counts moved by those tallies: they stay the sums of the scored
chunks' tallies. Running a chunk twice therefore rewrites the same rows and counts them
once.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings

from scoring.environments import EnvironmentLimits, replayer_for
from scoring.ingest.store import Scored, seq_ranges, write_results
from scoring.matcher import ERROR, Case, Report, load_run, score
from scoring.matcher import Run as MatcherRun
from scoring.models import Run, Submission

log = logging.getLogger(__name__)


def score_chunk(submission_id: int, generation: int, index: int) -> None:
    score_runs(submission_id, generation, [index])


def score_runs(
    submission_id: int,
    generation: int,
    indexes: list[int],
    read: list[tuple[int, int, Scored]] | None = None,
) -> None:
    """Score the chunks ``indexes`` of the submission together: read at once, written in
    one transaction, the counts moved once by their tally (a live submission's batch of
    traces is many one-run chunks, docs/live-traces.md#assembly).

    ``read``: the chunks' runs as ``(id, seq, scored)``, scored by the reader that just
    wrote them as it parsed them, so they are not read back (docs/pipeline.md#ranges)."""
    submission = (
        Submission.objects.filter(pk=submission_id, generation=generation)
        .select_related("version")
        .defer("version__document", "version__audit")
        .first()
    )
    if submission is None:
        return  # deleted, or started again since this task was sent
    if read is None:
        suite = submission.version.matcher_suite()
        stored = Run.objects.filter(seq_ranges(submission, indexes), submission=submission)
        documents = stored.order_by("seq").values_list("pk", "seq", "case_key", "document")
        read = []
        for run_id, seq, case_key, document in documents:
            case = suite.case(case_key)
            if case is None:
                continue  # a run of no case in this version: listed as unknown, not scored
            read.append((run_id, seq, score_run(case, document)))
    write_results(submission_id, generation, indexes, read)


def score_run(case: Case, run: MatcherRun | dict[str, Any]) -> Scored:
    """The run's report (the run parsed, or its stored document), as the store writes it; a
    run the matcher chokes on (a bug) is an error, not a lost chunk."""
    try:
        report = score(
            case,
            run if isinstance(run, MatcherRun) else load_run(run),
            time_budget=settings.CASEBOOK_RUN_TIME_BUDGET_SECONDS,
            replayer=replayer_for(EnvironmentLimits.from_settings(settings)),
        )
    except Exception as exc:
        trial = run.trial if isinstance(run, MatcherRun) else run.get("trial")
        log.exception("scoring %s trial %s failed", case.key, trial)
        reason = f"Casebook could not score this run ({type(exc).__name__}); please report it"
        report = Report(case.key, trial, ERROR, [], reason)
    return Scored.of(report)
