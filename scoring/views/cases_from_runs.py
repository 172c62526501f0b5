"""Cases from these runs (issue 15 §3): a draft case per case key of the runs table's
filter's passing runs, listed for the author to review (which to keep, from which trial,
into this suite or a new one); saving makes those kept, as one version. Nothing is saved
before the author says so."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Max
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
    suite = submission.suite
    into_suite, teams = draft_targets(request.user, suite)
    filters = RunFilterSet(request.GET)
    latest = suite.versions.aggregate(last=Max("number"))["last"]
    label = submission.label or f"submission #{submission.pk}"
    initial = {
        "seen_version": latest,
        "name": f"{suite.name}: {label}"[:200],
        "team": suite.team_id if teams.filter(pk=suite.team_id).exists() else None,
    }
    saving = request.method == "POST" and request.POST.get("action") == "save"
    if request.method == "POST" and not saving:
        # A preview shows the choices as they were made, checked only when saving (and
        # against the suite as it is now: the drafts are made again from it).
        initial |= {
            name: request.POST[name] for name in ("target", "name", "team") if name in request.POST
        }
    form = CasesFromRunsForm(
        request.POST if saving else None, into_suite=into_suite, teams=teams, initial=initial
    )
    picks, kept = CasesFromRunsForm.picks(request.POST)
    new_suite = form.chosen_target == CasesFromRunsForm.NEW_SUITE
    drafts = case_drafts.draft_cases(
        submission, filters, into=None if new_suite else suite, picks=picks
    )
    context = {
        "submission": submission,
        "suite": suite,
        "filters": filters,
        "self_url": request.get_full_path(),
        "form": form,
        "drafts": drafts,
        "kept": kept,
        "new_suite": new_suite,
        "problems": [],
    }
    status = 200
    if saving:
        chosen = [d for d in drafts.drafts if kept is None or d.key in kept]
        if not chosen:
            form.add_error(None, "Tick at least one draft to save.")
        elif form.is_valid():
            try:
                target, notice = _save(request.user, submission, form.cleaned_data, chosen)
            except services.SuiteChanged as exc:
                form = _form_seeing(request.POST, exc.number, into_suite=into_suite, teams=teams)
                form.add_error(
                    None,
                    f"Someone changed the suite meanwhile (now version {exc.number}): the "
                    "drafts below are made again against it. Review them, then save.",
                )
                context["form"] = form
            except InvalidInput as exc:
                context["problems"] = exc.problems
            else:
                messages.success(request, notice)
                return redirect_to(request, target)
        status = 422
    template = "scoring/cases_from_runs.html"
    return render(
        request, f"{template}#drafts" if request.htmx else template, context, status=status
    )


def _save(user, submission, data: dict, chosen: list[case_drafts.Draft]) -> tuple[str, str]:
    """Save the chosen drafts where the form says; the page to go to, and what was done."""
    new_suite = data["target"] == CasesFromRunsForm.NEW_SUITE
    saved = case_drafts.save_drafts(
        submission,
        chosen,
        user,
        new_suite=(data["team"], data["name"].strip()) if new_suite else None,
        seen_version=data["seen_version"],
    )
    count = f"{len(chosen)} case{pluralize(len(chosen))}"
    source = f"passing runs of submission #{submission.pk}"
    if new_suite:
        return (
            saved.suite.get_absolute_url(),
            f"Made the suite {saved.suite.name} of {count} from {source}.",
        )
    notice = (
        f"Saved {count} from {source} as version {saved.version.number}: "
        f"{saved.revised} revised, {saved.added} added."
    )
    return saved.suite.get_absolute_url(), notice


def _form_seeing(posted, number: int, **options) -> CasesFromRunsForm:
    """The posted form, now reviewing version ``number`` of the suite."""
    data = posted.copy()
    data["seen_version"] = str(number)
    form = CasesFromRunsForm(data, **options)
    form.is_valid()
    return form
