"""The run review page: a run's report beside its recorded calls."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from scoring.matcher import InvalidInput, load_run
from scoring.models import Result, Run

from .access import run_for


@login_required
def detail(request, pk, run_id):
    run = run_for(request.user, pk, run_id)
    submission = run.submission
    result = Result.objects.filter(run=run).first()
    trials = Run.objects.filter(submission=submission, case_key=run.case_key)
    try:
        # Read as the matcher reads it: arguments left out are {}, and so on.
        recorded = load_run(run.document)
    except InvalidInput:
        recorded = None  # stored before a rule tightened: the page shows the JSON as stored
    context = {
        "submission": submission,
        "suite": submission.suite,
        "run": run,
        "recorded": recorded,
        "report": result.report if result else None,
        "trials": trials.order_by("trial").values("pk", "trial", "result__verdict"),
    }
    return render(request, "scoring/run.html", context)
