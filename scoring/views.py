"""Submission pages: upload a run file, follow its scoring, read the results and runs.

Access is the suite's (``cases.permissions``): whoever sees the suite sees its submissions,
its editors and admins upload, re-score and delete.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import HttpResponseClientRedirect, HttpResponseClientRefresh

from cases.permissions import can_edit_suite, suite_for

from . import submissions
from .forms import RescoreForm, UploadForm
from .models import Result, Run, Submission
from .results import case_trials, run_rows
from .uploads import UploadRefused

INVALID_LINES_SHOWN = 100
RUNS_PER_PAGE = 50


def submission_for(user, pk, *, edit: bool = False) -> Submission:
    """The submission, if the user may see its suite (and change it, with ``edit``)."""
    submission = get_object_or_404(Submission.objects.select_related("version", "uploader"), pk=pk)
    submission.suite = suite_for(user, submission.suite_id, edit=edit)
    return submission


@login_required
def upload(request, pk):
    suite = suite_for(request.user, pk, edit=True)
    form = UploadForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
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
            form.add_error("file", str(exc))
        else:
            url = submission.get_absolute_url()
            return HttpResponseClientRedirect(url) if request.htmx else redirect(url)
    status = 422 if form.errors else 200
    return render(request, "scoring/upload.html", {"suite": suite, "form": form}, status=status)


@login_required
@vary_on_headers("HX-Request")
def submission_detail(request, pk):
    submission = submission_for(request.user, pk)
    verdict = request.GET.get("verdict", "")
    case = request.GET.get("case", "")
    results = Result.objects.filter(submission=submission).select_related("run")
    if verdict:
        results = results.filter(verdict=verdict)
    if case:
        results = results.filter(run__case_key=case)
    page = Paginator(results.order_by("run__seq"), RUNS_PER_PAGE).get_page(request.GET.get("page"))
    context = {
        "submission": submission,
        "suite": submission.suite,
        "page": page,
        "rows": run_rows(page),
        "verdict": verdict,
        "case": case,
    }
    if request.htmx and request.htmx.target == "runs":
        return render(request, "scoring/submission.html#runs", context)
    can_edit = can_edit_suite(request.user, submission.suite)
    context |= {
        "can_edit": can_edit,
        "trials": case_trials(submission) if submission.finished else None,
        "invalid_lines": submission.invalid_lines.all()[:INVALID_LINES_SHOWN],
        "rescore_form": RescoreForm(
            versions=submission.suite.versions.all(), initial={"version": submission.version.number}
        )
        if can_edit
        else None,
    }
    return render(request, "scoring/submission.html", context)


@login_required
def submission_progress(request, pk):
    """The progress partial, polled while the submission runs. Once it is finished the
    whole page is loaded again, with its results."""
    submission = submission_for(request.user, pk)
    if submission.finished and request.htmx:
        return HttpResponseClientRefresh()
    return render(request, "scoring/submission.html#progress", {"submission": submission})


@login_required
@require_POST
def submission_rescore(request, pk):
    submission = submission_for(request.user, pk, edit=True)
    form = RescoreForm(request.POST, versions=submission.suite.versions.all())
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
def submission_retry(request, pk):
    submission = submission_for(request.user, pk, edit=True)
    try:
        submissions.retry(submission)
    except submissions.NotReady as exc:
        messages.error(request, str(exc).capitalize() + ".")
    return redirect(submission)


@login_required
@require_POST
def submission_delete(request, pk):
    submission = submission_for(request.user, pk, edit=True)
    submissions.delete_submission(submission)
    messages.success(request, f"Deleted submission #{pk} and its runs.")
    return redirect(submission.suite)


@login_required
def run_detail(request, pk, run_id):
    submission = submission_for(request.user, pk)
    run = Run.objects.filter(submission=submission, pk=run_id).first()
    if run is None:
        raise Http404("No such run.")
    result = Result.objects.filter(run=run).first()
    trials = Run.objects.filter(submission=submission, case_key=run.case_key)
    context = {
        "submission": submission,
        "suite": submission.suite,
        "run": run,
        "report": result.report if result else None,
        "trials": trials.order_by("trial").values("pk", "trial", "result__verdict"),
    }
    return render(request, "scoring/run.html", context)
