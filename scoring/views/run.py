"""The run review page: the report's predicates beside the side-by-side timeline, the run's
final text, error and meta, and the review panel; moving to the previous or next failure of
the runs table's filter; and turning a recorded call into an expectation of the case."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import HttpResponseClientRedirect

from cases import services
from cases.drafts import draft_case
from cases.models import Case
from cases.permissions import can_edit_suite
from cases.views.editor import render_draft
from scoring import reviews, submissions
from scoring.forms import PromoteForm, ReviewForm
from scoring.matcher import InvalidInput
from scoring.matcher.jsonvalue import pretty_json
from scoring.models import Result, Run
from scoring.timeline import timeline_of
from scoring.triage import triage_links

from .access import run_for


@login_required
def detail(request, pk, run_id):
    run = run_for(request.user, pk, run_id)
    can_edit = can_edit_suite(request.user, run.submission.suite)
    result = Result.objects.filter(run=run).only("verdict", "report").first()
    report = result.report if result else None
    timeline = timeline_of(run, report)
    if timeline is not None and can_edit:
        timeline = timeline.promotable(reverse("run_promote", args=[pk, run.pk]))
    links = triage_links(run.submission, run, request.GET)
    context = {
        "submission": run.submission,
        "suite": run.submission.suite,
        "run": run,
        "timeline": timeline,
        "report": report,
        "links": links,
        "query": links.query,
        "trials": nearby_trials(run),
    } | review_context(run, can_edit=can_edit)
    return render(request, "scoring/run.html", context)


TRIALS_AROUND = 100  # the case's trials linked on each side of the run's own


@dataclass(frozen=True)
class NearbyTrials:
    """The case's trials around this run's: a case may have thousands, and the page links
    the closest, saying when there are more."""

    runs: list[dict]  # pk, trial, result__verdict
    more_before: bool
    more_after: bool


def nearby_trials(run: Run) -> NearbyTrials:
    trials = Run.objects.filter(submission_id=run.submission_id, case_key=run.case_key)
    fields = ("pk", "trial", "result__verdict")
    before = list(
        trials.filter(trial__lt=run.trial).order_by("-trial").values(*fields)[: TRIALS_AROUND + 1]
    )
    after = list(
        trials.filter(trial__gte=run.trial).order_by("trial").values(*fields)[: TRIALS_AROUND + 2]
    )
    return NearbyTrials(
        [*reversed(before[:TRIALS_AROUND]), *after[: TRIALS_AROUND + 1]],
        more_before=len(before) > TRIALS_AROUND,
        more_after=len(after) > TRIALS_AROUND + 1,
    )


def review_context(run: Run, *, can_edit: bool, form: ReviewForm | None = None) -> dict:
    """What the review panel shows: the decision, the thread and, for editors, the controls."""
    members = team_members(run)
    return {
        "review": reviews.review_of(run),
        "history": reviews.history(run),
        "can_edit": can_edit,
        "review_form": form or ReviewForm(members=members),
        "members": members if can_edit else (),
    }


def team_members(run: Run):
    """Whom a run of this suite may be assigned to: the members of the suite's team."""
    team_id = run.submission.suite.team_id
    return get_user_model().objects.filter(memberships__team_id=team_id).order_by("username")


@login_required
@require_POST
@vary_on_headers("HX-Request")
def review(request, pk, run_id):
    """Change the run's review: its status, its assignee, or a comment. Answers the review
    panel (htmx), or the next failure when the reviewer asked to move on after deciding."""
    run = run_for(request.user, pk, run_id, edit=True)
    form = ReviewForm(request.POST, members=team_members(run))
    status = 200
    if form.is_valid():
        data, runs = form.cleaned_data, Run.objects.filter(pk=run.pk)
        if form.sent("status") and data["status"]:
            reviews.set_status(runs, data["status"], request.user)
        if form.sent("assignee"):
            reviews.assign(runs, data["assignee"], request.user)
        if data["comment"]:
            reviews.comment(run, data["comment"], request.user)
        if data["advance"] and form.sent("status"):
            following = triage_links(run.submission, run, request.GET).next
            if following:
                return (
                    HttpResponseClientRedirect(following) if request.htmx else redirect(following)
                )
        form = None  # the changes are made: a fresh form
    else:
        status = 422
    if not request.htmx:
        if status == 422:
            messages.error(request, "Nothing was changed: choose a status or a member of the team.")
        return redirect(_run_url(run, request.GET.urlencode()))
    context = {"run": run, "submission": run.submission, "query": request.GET.urlencode()}
    context |= review_context(run, can_edit=True, form=form)
    return render(request, "scoring/run.html#review", context, status=status)


def _run_url(run: Run, query: str) -> str:
    url = reverse("run", args=[run.submission_id, run.pk])
    return f"{url}?{query}" if query else url


@login_required
@vary_on_headers("HX-Request")
def promote(request, pk, run_id):
    """Make a recorded call (``?call=<batch>-<position>``) an expected call of the case:
    added, or in place of one, with its arguments editable before saving. Saving makes a
    new suite version; the answer offers to re-score the submission against it."""
    run = run_for(request.user, pk, run_id, edit=True)
    at = (request.POST if request.method == "POST" else request.GET).get("call", "")
    call = _recorded_call(run, at)
    case = Case.objects.filter(suite=run.submission.suite, key=run.case_key).first()
    context = {"run": run, "submission": run.submission, "call": call, "at": at, "case": case}
    if case is None:
        return render(request, _promote_template(request), context, status=409)
    document = services.case_document(case)
    if request.method != "POST":
        initial = {
            "name": call["name"],
            "required_args": pretty_json(call.get("arguments") or {}).decode().rstrip("\n"),
            "replace": _same_named(document["expected_calls"], call["name"]),
            "revision": case.revision,
        }
        form = PromoteForm(initial=initial, expected_calls=document["expected_calls"])
        return render(request, _promote_template(request), context | {"form": form})
    form = PromoteForm(request.POST, expected_calls=document["expected_calls"])
    context["form"] = form
    if not form.is_valid():
        return render(request, _promote_template(request), context, status=422)
    data = form.cleaned_data
    document["expected_calls"] = _with_call(
        document["expected_calls"], data["replace"], data["name"], data["required_args"]
    )
    verb = "Replaced expected call" if data["replace"] is not None else "Added expected call"
    try:
        saved = services.save_case(
            run.submission.suite,
            document,
            request.user,
            case=case,
            revision=data["revision"],
            message=f"{verb} {data['name']} of case {case.key} from run {run.pk}",
        )
    except services.StaleEdit as exc:
        context["stale"] = exc.case
        return render(request, _promote_template(request), context, status=409)
    except InvalidInput as exc:
        context["problems"] = exc.problems
        return render(request, _promote_template(request), context, status=422)
    context["version"] = saved.version
    return render(request, _promote_template(request), context)


def _promote_template(request) -> str:
    return "scoring/_run_promote.html#promote" if request.htmx else "scoring/_run_promote.html"


def _recorded_call(run: Run, at: str) -> dict:
    """The stored call at ``<batch>-<position>`` of the run (404 if there is none)."""
    batch, _, position = at.partition("-")
    try:
        call = run.document["batches"][int(batch)][int(position)]
    except (KeyError, IndexError, TypeError, ValueError):
        raise Http404("No such recorded call.") from None
    if not isinstance(call, dict) or not isinstance(call.get("name"), str):
        raise Http404("No such recorded call.")
    return call


def _same_named(expected_calls: list[dict], name: str) -> int | None:
    """The expected call a recorded call most likely corrects: the first of the same name."""
    return next((i for i, call in enumerate(expected_calls) if call.get("name") == name), None)


def _with_call(expected_calls: list[dict], replace: int | None, name: str, args: dict) -> list:
    """The expected calls with the new one added, or put in place of ``replace`` (keeping
    that call's order and dependency flags)."""
    if replace is None:
        return [*expected_calls, {"name": name, "required_args": args}]
    calls = list(expected_calls)
    calls[replace] = {**calls[replace], "name": name, "required_args": args}
    return calls


@login_required
@require_POST
def rescore(request, pk, run_id):
    """Re-score the run's submission against a version of its suite (the one a promotion
    just made), and come back to the run to see its new verdict."""
    run = run_for(request.user, pk, run_id, edit=True)
    number = request.POST.get("version", "")
    version = (
        run.submission.suite.versions.filter(number=number).first() if number.isdigit() else None
    )
    if version is None:
        messages.error(request, "Choose one of the suite's versions.")
    else:
        try:
            submissions.rescore(run.submission, version)
        except submissions.NotReady as exc:
            messages.error(request, f"Cannot re-score yet: {exc}.")
        else:
            messages.success(request, f"Re-scored against version {version.number}.")
    return redirect(_run_url(run, request.GET.urlencode()))


@login_required
def draft(request, pk, run_id):
    """The new-case editor holding a draft made from this run's calls, for the author to
    trim and save (nothing is saved until then)."""
    run = run_for(request.user, pk, run_id, edit=True)
    suite = run.submission.suite
    key = f"{run.case_key[:150]}-run-{run.pk}"
    document = draft_case(run.document, key, services.suite_tools(suite))
    return render_draft(request, suite, document)
