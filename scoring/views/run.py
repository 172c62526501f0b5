"""The run review page: the report's predicates beside the side-by-side timeline, the run's
final text, error and meta, and the review panel; moving to the previous or next failure of
the runs table's filter; and turning a recorded call into an expectation of the case."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST
from django.views.decorators.vary import vary_on_headers

from cases import services
from cases.drafting import draft_case
from cases.models import Case
from cases.permissions import REPLAY_REFUSED, can_edit_suite, can_replay, reviewers
from cases.tool_catalog import argument_schemas
from cases.views.editor import render_draft
from cases.views.htmx import announce, redirect_to
from scoring.forms import PromoteForm, ReviewForm
from scoring.ingest import pipeline
from scoring.matcher import InvalidInput
from scoring.models import Result, Run
from scoring.results import known_failures
from scoring.results.end_state import has_end_state, run_end_state
from scoring.results.timeline import timeline_of
from scoring.review import blind, decisions
from scoring.review.triage import nearby_trials, queue_of, triage_links
from scoring.views.access import run_for
from scoring.views.review_queues import next_in_queue

REVIEW_REFUSED = (
    "Nothing was changed: choose a status, or an assignee among the team's editors and admins."
)


@login_required
def detail(request, pk, run_id):
    run = run_for(request.user, pk, run_id)
    can_edit = can_edit_suite(request.user, run.submission.suite)
    result = Result.objects.filter(run=run).only("verdict", "report", "signature").first()
    report = result.report if result else None
    timeline = timeline_of(run, report)
    if timeline is not None and can_edit:
        timeline = timeline.promotable(reverse("run_promote", args=[pk, run.pk]))
    links = triage_links(run.submission, run, request.GET)
    blind_review = blind_context(run, links.queue, request.user)
    end_state = has_end_state(run)
    context = {
        "submission": run.submission,
        "suite": run.submission.suite,
        "run": run,
        "timeline": timeline,
        "report": report,
        "links": links,
        "query": links.query,
        "queue": links.queue,
        "trials": nearby_trials(run),
        "end_state": end_state,
        "can_replay": end_state and can_replay(request.user, run.submission.suite),
        "newer_version": newer_version(run.submission) if can_edit else None,
        # Not while blind: the known failure's card tells an earlier decision on it.
        "known_failure": known_failures.run_known_failure(run, result.signature)
        if result and not blind_review
        else None,
    } | review_context(run, can_edit=can_edit, blind=blind_review)
    return render(request, "scoring/run.html", context)


@login_required
def end_state(request, pk, run_id):
    """The run's end-state diff, loaded after its page (a replay takes a moment), for
    those who may replay calls."""
    run = run_for(request.user, pk, run_id)
    if not can_replay(request.user, run.submission.suite):
        raise PermissionDenied(REPLAY_REFUSED)
    return render(request, "scoring/_end_state.html", {"comparisons": run_end_state(run)})


def newer_version(submission):
    """The suite's latest version when the submission was scored against an older one: the
    run page offers to re-score against it (after a promote, and on every later visit)."""
    latest = submission.suite.latest_version
    if latest is not None and latest.number > submission.version.number:
        return latest
    return None


def review_context(
    run: Run, *, can_edit: bool, form: ReviewForm | None = None, blind: dict | None = None
) -> dict:
    """What the review panel shows: the decision, the labels, the thread and, for editors,
    the controls; or, for a reviewer of a double-blind queue's item, only their own
    decision (``blind``): not the run's thread, where the other reviewer may have written."""
    if blind:
        keyed = [label for label, _ in blind["labels"] if label.key]
        return {"blind": blind, "can_edit": can_edit, "keyed_labels": keyed}
    members = reviewers(run.submission.suite)
    labels = decisions.team_labels(run)
    return {
        "keyed_labels": [label for label in labels if label.key] if can_edit else (),
        "review": decisions.review_of(run),
        "run_labels": decisions.labels_of(run),
        "team_labels": labels if can_edit else (),
        "history": decisions.history(run),
        "can_edit": can_edit,
        "review_form": form or ReviewForm(members=members, labels=labels),
        "members": members if can_edit else (),
    }


def blind_context(run: Run, queue_id: str, user) -> dict | None:
    """The user's decision on the run while they review it blind: as an item of queue
    ``queue_id`` (the address's), or of any open double-blind queue."""
    item = decisions.blind_item(run, user, queue_id)
    if item is None:
        return None
    decision = blind.own_decision(item, user)
    assert decision is not None, "``blind_item`` finds the item by the user's own decision"
    chosen = set(decision.labels.values_list("pk", flat=True))
    return {
        "queue": item.queue,
        "item": item,
        "decision": decision,
        "labels": [(label, label.pk in chosen) for label in blind.labels_for(item.queue)],
        "statuses": blind.DECISION_STATUSES,
        "locked": blind.disputed(item),  # both decided: theirs stands until resolved
    }


@login_required
@require_POST
@vary_on_headers("HX-Request")
def review(request, pk, run_id):
    """Change the run's review: its status, its assignee, a label or a comment. Answers the
    review panel (htmx), or the next failure when the reviewer asked to move on after
    deciding."""
    run = run_for(request.user, pk, run_id, edit=True)
    form = ReviewForm(
        request.POST, members=reviewers(run.submission.suite), labels=decisions.team_labels(run)
    )
    if not form.is_valid():
        return _review_answer(request, run, form=form, status=422)
    try:
        done = decisions.review_run(run, request.user, **form.changes())
    except decisions.ReviewingBlind as exc:
        return _review_answer(request, run, refusal=str(exc), status=409)
    if form.cleaned_data["advance"] and form.sent("status"):
        links = triage_links(run.submission, run, request.GET)
        # In a queue, the next run is reserved here, by this POST (queue_next's rule).
        following = next_in_queue(request, links.queue, after=run.pk) if links.queue else links.next
        if following:
            return redirect_to(request, following)
    return announce(_review_answer(request, run), done)


def _review_answer(request, run: Run, *, form=None, refusal: str = "", status: int = 200):
    """The review panel after a change (``form`` holding its errors, or the ``refusal`` of
    a run the user reviews blind, with their blind panel); without htmx, back to the run
    page saying what went wrong."""
    if not request.htmx:
        if refusal or status == 422:
            messages.error(request, refusal or REVIEW_REFUSED)
        return redirect(_run_url(run, request.GET.urlencode()))
    blind_review = blind_context(run, "", request.user) if refusal else None
    context = {
        "run": run,
        "submission": run.submission,
        "query": request.GET.urlencode(),
        "queue": queue_of(request.GET),
    }
    context |= review_context(run, can_edit=True, form=form, blind=blind_review)
    context["blind_refusal"] = refusal
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
        return _promote_answer(request, context, status=409)
    expected_calls = services.case_document(case)["expected_calls"]
    if call.get("arguments") is None:
        # The agent's arguments were not a JSON object: say so, rather than start from {}.
        context["unparsed"] = call.get("arguments_raw") or ""
    if request.method != "POST":
        form = PromoteForm.for_call(call, case, expected_calls)
        return _promote_answer(request, context | {"form": form})
    form = PromoteForm(request.POST, expected_calls=expected_calls)
    context["form"] = form
    if not form.is_valid():
        return _promote_answer(request, context, status=422)
    try:
        saved = services.put_expected_call(
            case, request.user, **form.cleaned_data, source=f"run {run.pk}"
        )
    except services.StaleEdit as exc:
        return _promote_answer(request, context | {"stale": exc.case}, status=409)
    except services.NothingToChange:
        return _promote_answer(request, context | {"unchanged": True})
    except InvalidInput as exc:
        return _promote_answer(request, context | {"problems": exc.problems}, status=422)
    return _promote_answer(request, context | {"version": saved.version})


def _promote_answer(request, context: dict, status: int = 200):
    return render(request, _promote_template(request), context, status=status)


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
            pipeline.rescore(run.submission, version)
        except pipeline.NotReady as exc:
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
    key = f"{run.case_key[:150] or 'trace'}-run-{run.pk}"  # an unassigned trace's has none
    document = draft_case(run.document, key, argument_schemas(services.suite_tools(suite)))
    return render_draft(request, suite, document)
