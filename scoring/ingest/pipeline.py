"""What pages, the API and commands ask of a submission (docs/pipeline.md): upload, re-score,
retry, delete, and resume the stalled ones. Each asks the conductor (``conductor``), then
sends the work it leaves to the workers (``tasks.send``) once it has committed; in the
embedded default that work is done there and then.
"""

from __future__ import annotations

from typing import BinaryIO

from cases.models import Suite, SuiteVersion
from scoring.ingest import conductor, tasks
from scoring.ingest.conductor import NotReady, Work
from scoring.models import Submission

__all__ = [
    "NotReady",
    "create_submission",
    "delete_submission",
    "rescore",
    "resume_stalled",
    "retry",
]


def create_submission(
    suite: Suite,
    uploader,
    stream: BinaryIO,
    *,
    filename: str = "",
    label: str = "",
    format_name: str = "",
    case_field: str = "",
) -> Submission:
    """Store an uploaded run file as a new submission against the suite's current version,
    and send its reading. Raises ``UploadRefused`` (and keeps nothing) when the file breaks
    a limit or is empty."""
    submission = conductor.create(
        suite,
        uploader,
        stream,
        filename=filename,
        label=label,
        format_name=format_name,
        case_field=case_field,
    )
    tasks.send(Work(submission.pk, read=True))
    return submission


def rescore(submission: Submission, version: SuiteVersion) -> None:
    """Score the submission's runs again, against ``version`` of its suite."""
    tasks.send(conductor.rescore(submission, version))
    submission.refresh_from_db()


def retry(submission: Submission) -> None:
    """Start a failed submission again from where it failed: reading, or scoring."""
    tasks.send(conductor.retry(submission))
    submission.refresh_from_db()


def delete_submission(submission: Submission) -> None:
    """Delete the submission, its uploaded file, runs and results."""
    conductor.delete(submission)


def resume_stalled() -> list[int]:
    """Send again the work of every submission that has made no progress for
    ``CASEBOOK_STALL_SECONDS`` (what the sweep does); returns their ids."""
    return tasks.sweep()
