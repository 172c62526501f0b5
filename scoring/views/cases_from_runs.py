"""Cases from these runs (docs/review.md#cases-from-runs): a draft case per case key of the
runs table's filter's passing runs, listed for the author to review (which to keep, from
which trial, into this suite or a new one); saving makes those kept, as one version. Nothing
is saved before the author says so."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.template.defaultfilters import pluralize
from django.views.decorators.vary import vary_on_headers

from cases import services
from cases.permissions import draft_targets
from cases.views.htmx import redirect_to
from scoring.forms import CasesFromRunsForm
from scoring.matcher import InvalidInput
from scoring.results import case_drafts
from scoring.results.filtersets import RunFilterSet
from scoring.views.access import submission_for


@login_required
@vary_on_headers("HX-Request")
def cases_from_runs(request, pk):
    """GET: the drafts for the filters in the query string. POST: the same page after the
    author changed where they go or which trial a draft comes from (``action=preview``),
    or the drafts kept, saved (``action=save``)."""
    submission = submission_for(request.user, pk)
    into_suite, teams = draft_targets(request.user, submission.suite)
    saving = request.method == "POST" and request.POST.get("action") == "save"
    form = CasesFromRunsForm.of_page(
        request.POST, saving=saving, submission=submission, into_suite=into_suite, teams=teams
    )
    picks, kept = CasesFromRunsForm.picks(request.POST)
    filters = RunFilterSet(request.GET)
    into = None if form.new_suite else submission.suite
    drafts = case_drafts.draft_cases(submission, filters, into=into, picks=picks)
    context = {
        "submission": submission,
        "suite": submission.suite,
        "filters": filters,
        "self_url": request.get_full_path(),
        "form": form,
        "drafts": drafts,
        "kept": kept,
        "new_suite": form.new_suite,
        "problems": [],
    }
    if not saving:
        return _page(request, context)
    chosen = [d for d in drafts.drafts if kept is None or d.key in kept]
    if not chosen:
        form.add_error(None, "Tick at least one draft to save.")
    elif form.is_valid():
        return _save(request, submission, form, chosen, context)
    return _page(request, context, status=422)


def _page(request, context: dict, status: int = 200):
    template = "scoring/cases_from_runs.html"
    return render(
        request, f"{template}#drafts" if request.htmx else template, context, status=status
    )


def _save(request, submission, form: CasesFromRunsForm, chosen, context: dict):
    """Save the chosen drafts where the form says, and go to the suite saying what was done;
    or the page again, saying why nothing was saved."""
    data = form.cleaned_data
    try:
        saved = case_drafts.save_drafts(
            submission,
            chosen,
            request.user,
            new_suite=(data["team"], data["name"].strip()) if form.new_suite else None,
            seen_version=data["seen_version"],
        )
    except services.SuiteChanged as exc:
        context["form"] = form.seeing(exc.number)
        context["form"].add_error(
            None,
            f"Someone changed the suite meanwhile (now version {exc.number}): the drafts "
            "below are made again against it. Review them, then save.",
        )
        return _page(request, context, status=422)
    except InvalidInput as exc:
        context["problems"] = exc.problems
        return _page(request, context, status=422)
    messages.success(request, _saved_notice(submission, saved, len(chosen), form.new_suite))
    return redirect_to(request, saved.suite.get_absolute_url())


def _saved_notice(submission, saved, count: int, new_suite: bool) -> str:
    cases = f"{count} case{pluralize(count)}"
    source = f"passing runs of submission #{submission.pk}"
    if new_suite:
        return f"Made the suite {saved.suite.name} of {cases} from {source}."
    return (
        f"Saved {cases} from {source} as version {saved.version.number}: "
        f"{saved.revised} revised, {saved.added} added."
    )
