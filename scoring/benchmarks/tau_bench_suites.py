"""τ-bench's results file as a suite, where Casebook keeps it
(docs/benchmarks.md#a-suite-from-the-results-file): a failed upload's tasks made the cases of
its suite, and the same upload scored again against them, with no new upload. The mapping
itself is ``cases.tau_bench``'s.

A τ-bench results file uploaded to a suite without its cases ends failed: none of its runs
is of a case the version has. The file is kept (``scoring.ingest.uploads``), and so are its
runs; the tasks are read back from it, written into the suite as one version (added beside
the suite's cases, whose keys none of them has), and the submission re-scored against it.
Into that suite rather than a new one: a submission belongs to its suite, and a re-score
needs a version of the same suite.
"""

from __future__ import annotations

from contextlib import closing

from django.conf import settings
from django.db import transaction

from cases import services
from cases.models import SuiteVersion
from cases.tau_bench import Results, read_results, suite_cases, writes_rule
from scoring.importers import tau_bench as tau_bench_format
from scoring.ingest import pipeline
from scoring.ingest.uploads import UploadRefused, open_upload
from scoring.matcher import InvalidInput
from scoring.models import Status, Submission


def read_limits() -> dict:
    """What one element of a results file may be (the limits of a line of a run file), and
    the rows its tasks may make (a suite's)."""
    return {
        "max_item_bytes": settings.CASEBOOK_MAX_LINE_BYTES,
        "max_depth": settings.CASEBOOK_MAX_JSON_DEPTH,
        "max_rows": settings.CASEBOOK_MAX_SUITE_ROWS,
    }


def tasks_offered(submission: Submission) -> int:
    """How many tasks the failed submission's file carries, when they can become its suite's
    cases: a τ-bench results file uploaded (not live traces) none of whose runs is of a case
    in its version. 0 otherwise. Read from what the upload counted, not from the file."""
    if (
        submission.status != Status.FAILED
        or submission.live_day is not None
        or submission.total
        or not submission.stored_runs
        or tau_bench_format.NAME not in submission.formats_seen
    ):
        return 0
    return len(submission.unknown_cases)


def submission_results(submission: Submission) -> Results:
    """The tasks of the submission's stored file; ``InvalidInput`` naming what is wrong."""
    try:
        with closing(open_upload(submission.pk)) as stream:
            return read_results(stream, **read_limits())
    except UploadRefused as exc:
        raise InvalidInput.single("", str(exc)) from None


def write_and_rescore(
    submission: Submission, results: Results, read_only: list[str], user, *, seen_version: int
) -> SuiteVersion:
    """The tasks of the submission's file (``results``, read by ``submission_results``) as
    cases of its suite, one version, the actions of ``read_only`` tools left out and the
    suite's rule on writes added; then the submission scored again against that version.

    ``services.SuiteChanged`` when the suite has a version newer than ``seen_version``, the
    one previewed; ``InvalidInput`` when a case cannot be saved."""
    cases = suite_cases(results, read_only)
    rule = writes_rule(results, read_only)
    message = f"{len(cases)} cases from the τ-bench tasks of submission #{submission.pk}"
    with transaction.atomic():
        version = services.save_cases(
            submission.suite,
            cases,
            user,
            seen_version=seen_version,
            message=message,
            suite_expectations=[rule] if rule else [],
        )
        pipeline.rescore(submission, version)
    return version
