"""The submission page: upload a run file, follow its scoring, read the results and the
runs table; re-score, retry and delete."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import HttpResponseClientRedirect, HttpResponseClientRefresh

from cases.permissions import can_edit_suite, suite_for
from scoring import submissions
from scoring.forms import RescoreForm, UploadForm
from scoring.models import Submission
from scoring.results import RunFilters, case_trials, common_failures, run_rows
from scoring.uploads import UploadRefused

from .access import submission_for

INVALID_LINES_SHOWN = 100
RUNS_PER_PAGE = 50


def sentence(exc: Exception) -> str:
    """An exception's message (``the file is empty``) as a sentence for the page."""
    text = str(exc)
    return f"{text[:1].upper()}{text[1:]}."


def versions_of(suite):
    """The suite's versions, newest first, without their documents."""
    return suite.versions.defer("document")


@login_required
def upload(request, pk):
    suite = suite_for(request.user, pk, edit=True)
    # Bound on every POST, even an empty one: a POST without a file is an error to show.
    form = UploadForm(request.POST, request.FILES) if request.method == "POST" else UploadForm()
    if form.is_valid():
        data = form.cleaned_data
        try:
            submission = submissions.create_submission(
                suite,
                request.user,
                data["file"],
                filename=data["file"].name,
                label=data["label"],
                format_name=data["format"],
            )
        except UploadRefused as exc:
            form.add_error("file", sentence(exc))
        else:
            url = submission.get_absolute_url()
            return HttpResponseClientRedirect(url) if request.htmx else redirect(url)
    context = {"suite": suite, "form": form, "version": versions_of(suite).first()}
    return render(request, "scoring/upload.html", context, status=422 if form.errors else 200)


@login_required
@vary_on_headers("HX-Request", "HX-Target")
def detail(request, pk):
    submission = submission_for(request.user, pk)
    filters = RunFilters.from_query(request.GET)
    # The documents stay unread: the table shows keys, verdicts and failing labels only.
    results = (
        filters.results(submission)
        .select_related("run")
        .defer("run__document", "run__final_text", "run__tools")
    )
    page = Paginator(results, RUNS_PER_PAGE).get_page(request.GET.get("page"))
    context = {
        "submission": submission,
        "suite": submission.suite,
        "page": page,
        "rows": run_rows(page),
        "filters": filters,
    }
    if request.htmx and request.htmx.target == "runs":
        return render(request, "scoring/submission.html#runs", context)
    can_edit = can_edit_suite(request.user, submission.suite)
    context |= progress_context(submission) | {
        "can_edit": can_edit,
        "trials": case_trials(submission) if submission.finished else None,
        "failures": common_failures(submission) if submission.finished else None,
        # A list, not the dict: a template would read ``unknown_cases.items`` as the entry
        # of a case called "items".
        "unknown_cases": sorted(submission.unknown_cases.items()),
        "invalid_lines": submission.invalid_lines.all()[:INVALID_LINES_SHOWN],
        "rescore_form": RescoreForm(
            versions=versions_of(submission.suite),
            initial={"version": submission.version.number},
        )
        if can_edit
        else None,
    }
    return render(request, "scoring/submission.html", context)


def progress_context(submission: Submission) -> dict:
    """What the progress box says beyond the stored counts: the runs of cases the version
    lacks, how long reading the file took, and whether the submission has stalled (no worker has
    touched it for a while; the sweep resumes it)."""
    quiet = timezone.now() - submission.heartbeat
    started, finished = submission.ingest_started, submission.ingest_finished
    return {
        "unknown_runs": submission.stored_runs - submission.total,
        "read_in": finished - started if started and finished else None,
        "stalled": not submission.finished
        and quiet > timedelta(seconds=settings.CASEBOOK_STALL_SECONDS),
    }


@login_required
def progress(request, pk):
    """The progress partial, polled while the submission runs. Once it is finished the
    whole page is loaded again, with its results."""
    submission = submission_for(request.user, pk)
    if submission.finished and request.htmx:
        return HttpResponseClientRefresh()
    context = {"submission": submission} | progress_context(submission)
    return render(request, "scoring/submission.html#progress", context)


@login_required
@require_POST
def rescore(request, pk):
    submission = submission_for(request.user, pk, edit=True)
    form = RescoreForm(request.POST, versions=versions_of(submission.suite))
    if not form.is_valid():
        messages.error(request, "Choose one of the suite's versions.")
        return redirect(submission)
    version = submission.suite.versions.get(number=form.cleaned_data["version"])
    try:
        submissions.rescore(submission, version)
    except submissions.NotReady as exc:
        messages.error(request, f"Cannot re-score yet: {exc}.")
    else:
        messages.success(request, f"Re-scoring against version {version.number}.")
    return redirect(submission)


@login_required
@require_POST
def retry(request, pk):
    submission = submission_for(request.user, pk, edit=True)
    try:
        submissions.retry(submission)
    except submissions.NotReady as exc:
        messages.error(request, sentence(exc))
    return redirect(submission)


@login_required
@require_POST
def delete(request, pk):
    submission = submission_for(request.user, pk, edit=True)
    submissions.delete_submission(submission)
    messages.success(request, f"Deleted submission #{pk} and its runs.")
    return redirect(submission.suite)
