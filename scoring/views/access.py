"""Who may reach a submission and its runs: whoever may see the suite (``cases.permissions``)
sees its submissions; its editors and admins change them."""

from __future__ import annotations

from django.http import Http404
from django.shortcuts import get_object_or_404
from django.template.defaultfilters import pluralize

from cases.permissions import suite_for
from scoring.models import Run, Submission


def submission_for(user, pk, *, edit: bool = False) -> Submission:
    """The submission, if the user may see its suite (and change it, with ``edit``).

    The version's document (the whole suite file, which may be megabytes) is left unread:
    the pages show its number, and the progress poll asks for this every second."""
    submission = get_object_or_404(
        Submission.objects.select_related("version", "uploader").defer(
            "version__document", "version__audit"
        ),
        pk=pk,
    )
    submission.suite = suite_for(user, submission.suite_id, edit=edit)
    return submission


def run_for(user, pk, run_id, *, edit: bool = False) -> Run:
    """The run of the submission, if the user may see (or, with ``edit``, change) it; its
    ``submission`` is the one ``submission_for`` gives."""
    submission = submission_for(user, pk, edit=edit)
    run = Run.objects.filter(submission=submission, pk=run_id).first()
    if run is None and submission.runs_pruned:
        raise Http404(
            f"This run was removed by retention on {submission.runs_pruned:%Y-%m-%d}: the "
            f"suite keeps runs for {submission.retention_days} "
            f"day{pluralize(submission.retention_days)}. The submission's counts "
            "and summaries remain."
        )
    if run is None:
        raise Http404("No such run.")
    run.submission = submission
    return run
