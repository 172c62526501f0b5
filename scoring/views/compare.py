"""Comparing two submissions of a suite case by case, two runs of a case side by side, and
the suite's flaky cases (the part of its trend that reads every result)."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import render
from django.views.decorators.vary import vary_on_headers

from cases.permissions import suite_for
from scoring.forms import ComparisonForm
from scoring.models import Result, Run, Submission
from scoring.results.comparison import SORTS, Change, Comparison, default_pair, scope_of
from scoring.results.timeline import Timeline, timeline_of
from scoring.results.trends import suite_trend
from scoring.review.triage import NearbyTrials, nearby_trials

from .access import run_for

CASES_PER_PAGE = 50


@login_required
@vary_on_headers("HX-Request", "HX-Target")
def submissions(request, pk):
    """``/suites/<pk>/compare/?baseline=<id>&candidate=<id>``: the picker, then the
    comparison. ``change`` narrows it to one class, ``sort`` orders it, ``identical``
    leaves out the cases defined differently in the two versions."""
    suite = suite_for(request.user, pk)
    picked = {name: request.GET.get(name) for name in ("baseline", "candidate")}
    if picked["baseline"] and picked["candidate"]:
        form = ComparisonForm(picked, suite=suite)
    else:
        form = ComparisonForm(suite=suite, initial=_initial_pick(suite, picked["candidate"]))
    if form.names_another_suites_submission:
        raise Http404("No such submission in this suite.")
    context = {"suite": suite, "form": form}
    if not form.is_valid():
        return render(request, "scoring/compare.html", context, status=422 if form.errors else 200)
    baseline, candidate = form.cleaned_data["baseline"], form.cleaned_data["candidate"]
    change, sort = request.GET.get("change", ""), request.GET.get("sort", "")
    comparison = Comparison(
        baseline,
        candidate,
        scope_of(baseline, candidate, identical_only=request.GET.get("identical") == "1"),
        change=Change(change) if change in Change.values else None,
        sort=sort if sort in SORTS else "change",
    )
    context |= {
        "comparison": comparison,
        "page": comparison.page(request.GET.get("page"), CASES_PER_PAGE),
    }
    if request.htmx and request.htmx.target == "comparison":
        return render(request, "scoring/compare.html#comparison", context)
    return render(request, "scoring/compare.html", context)


def _initial_pick(suite, candidate_id) -> dict:
    """With only a candidate named (the submission page's link), the pair offered for it."""
    if not (candidate_id and candidate_id.isdigit()):
        return {}
    submission = Submission.objects.filter(suite=suite, pk=int(candidate_id)).first()
    if submission is None:
        return {}
    baseline, candidate = default_pair(submission)
    return {"baseline": baseline, "candidate": candidate}


@dataclass(frozen=True)
class RunSide:
    """One column of the side-by-side page."""

    run: Run
    report: dict | None
    timeline: Timeline | None  # None when the stored run no longer reads as a valid run
    trials: NearbyTrials  # of its case in its submission, for the trial picker

    @property
    def error(self) -> str | None:
        return self.run.document.get("error")


def _run_side(user, run_id: int) -> RunSide:
    submission_id = Run.objects.filter(pk=run_id).values_list("submission_id", flat=True).first()
    if submission_id is None:
        raise Http404("No such run.")
    run = run_for(user, submission_id, run_id)
    report = Result.objects.filter(run=run).values_list("report", flat=True).first()
    timeline = timeline_of(run, report)
    # Side by side, the calls are what is compared; each run's page has its conversation.
    calls = timeline.calls_only() if timeline is not None else None
    return RunSide(run, report, calls, nearby_trials(run))


@login_required
def runs(request, a, b):
    """``/compare/runs/<a>/<b>/``: two runs of one case (of two submissions of a suite, or
    two trials of one) in two columns, each with a picker for the other trials."""
    left, right = _run_side(request.user, a), _run_side(request.user, b)
    if left.run.submission.suite_id != right.run.submission.suite_id:
        raise Http404("These runs are of different suites.")
    if left.run.case_key != right.run.case_key:
        raise Http404("These runs are of different cases.")
    context = {"suite": left.run.submission.suite, "left": left, "right": right}
    return render(request, "scoring/compare_runs.html", context)


@login_required
def flaky_cases(request, pk):
    """The suite page's list of flaky cases, which it loads after the page (htmx) when they
    are not cached yet."""
    suite = suite_for(request.user, pk)
    context = {"suite": suite, "trend": suite_trend(suite, find_flaky=True)}
    return render(request, "scoring/_trend.html#flaky", context)
