"""Review queue pages: make a queue of a filter's runs or of a failure group, see who has done
how much, and work through it ("next item" reserves a run and opens its page)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.text import capfirst
from django.views.decorators.http import require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers

from cases.permissions import can_edit_suite, can_resolve, resolves_as_editor
from scoring.forms import AssignForm, BlindDecisionForm, HandOnForm, QueueForm
from scoring.models import LABEL_LIMIT, QueueItem, ReviewQueue, Submission
from scoring.results.filtersets import RunFilterSet
from scoring.review import assigned_work, blind, queues
from scoring.views.access import submission_for

ITEMS_PER_PAGE = 50
DISPUTES_SHOWN = 25  # at once: the next come up as these are resolved


def queue_for(user, pk, *, edit: bool = False) -> ReviewQueue:
    """The queue, if the user may see its submission (and, with ``edit``, change it)."""
    queue = get_object_or_404(ReviewQueue.objects.select_related("created_by"), pk=pk)
    queue.submission = submission_for(user, queue.submission_id, edit=edit)
    return queue


def default_name(submission: Submission, filters: RunFilterSet, group: str) -> str:
    if group:
        return f"Failing {group}"[:200]
    described = filters.in_words()
    return (capfirst(described) or f"All runs of {submission.label or f'#{submission.pk}'}")[:200]


@login_required
def queue_list(request, pk):
    submission = submission_for(request.user, pk)
    made = submission.queues.select_related("created_by")
    progress = queues.progress_of_queues(made)
    context = {
        "submission": submission,
        "suite": submission.suite,
        "queues": [(queue, progress.get(queue.pk), queues.made_from(queue)) for queue in made],
        "can_edit": can_edit_suite(request.user, submission.suite),
    }
    return render(request, "scoring/queue_list.html", context)


@login_required
def queue_new(request, pk):
    """Make a queue of the runs of the filters in the query string (the submission page's
    current ones), or of the failure group ``?group=<failing predicate label>``."""
    submission = submission_for(request.user, pk, edit=True)
    group = request.GET.get("group", "").strip()[:LABEL_LIMIT]
    filters = RunFilterSet({"predicate": group}) if group else RunFilterSet(request.GET)
    group = queues.group_of(filters)
    form = QueueForm(
        request.POST if request.method == "POST" else None,
        submission=submission,
        initial={"name": default_name(submission, filters, group), "reviewers": [request.user]},
    )
    if form.is_valid():
        try:
            queue = queues.build_queue(
                submission,
                form.cleaned_data["name"],
                request.user,
                filters=filters,
                group=group,
                reviewers=form.cleaned_data["reviewers"],
                double_blind=form.cleaned_data["double_blind"],
            )
        except queues.NothingToReview:
            form.add_error(None, "No scored run matches these filters: nothing to review.")
        else:
            messages.success(request, f"Made the queue “{queue.name}”.")
            return redirect(queue)
    context = {
        "submission": submission,
        "suite": submission.suite,
        "form": form,
        "filters": filters,
        "group": group,
        "runs": filters.results(submission).count(),
    }
    return render(request, "scoring/queue_new.html", context, status=422 if form.errors else 200)


@login_required
@vary_on_headers("HX-Request")
def queue_detail(request, pk):
    """The queue's items, a page at a time (htmx: only them), with who has done how much:
    of a double-blind queue, each reviewer's own decisions only."""
    queue = queue_for(request.user, pk)
    page = Paginator(queues.listed_items(queue), ITEMS_PER_PAGE).get_page(request.GET.get("page"))
    context = {
        "queue": queue,
        "submission": queue.submission,
        "suite": queue.submission.suite,
        "page": page,
        "now": timezone.now(),
    }
    if queue.double_blind:
        context |= blind_items(queue, page, request.user)
    if request.htmx:
        return render(request, "scoring/queue_detail.html#items", context)
    context["made_from"] = queues.made_from(queue)
    can_edit = can_edit_suite(request.user, queue.submission.suite)
    if queue.double_blind:
        context |= blind_context(queue, request.user, can_edit=can_edit)
    else:
        context |= shared_context(queue, can_edit=can_edit)
    return render(request, "scoring/queue_detail.html", context)


def shared_context(queue: ReviewQueue, *, can_edit: bool) -> dict:
    """A queue's progress per reviewer and, for its editors, the form that deals it out."""
    assign_form = None
    if can_edit:
        reviewers = queues.reviewers_of(queue)
        assign_form = AssignForm(submission=queue.submission, initial={"reviewers": reviewers})
    return {"progress": queues.progress(queue), "can_edit": can_edit, "assign_form": assign_form}


def blind_items(queue: ReviewQueue, page, user) -> dict:
    """Each listed item's state as the user may know it: their own decision, never the
    other reviewer's until the item is resolved."""
    items = list(page)
    mine = blind.own_decisions(items, user)
    decided = blind.decided_counts(items)
    return {"blind_rows": [(item, mine.get(item.pk), decided.get(item.pk, 0)) for item in items]}


def blind_context(queue: ReviewQueue, user, *, can_edit: bool) -> dict:
    """A double-blind queue's progress; its agreement once both reviewers have decided
    every item; and the disagreements, with both decisions, to those who may resolve
    them (the queue's maker only once their own share is decided)."""
    progress = blind.progress(queue)
    own_left = blind.next_item(queue, user) is not None
    disputes = []
    if can_edit and progress.disputed:
        labels = blind.labels_for(queue)
        shown = blind.to_resolve(queue)[:DISPUTES_SHOWN]
        for item, decisions in blind.with_decisions(shown):
            reviewer_ids = [d.reviewer_id for d in decisions]
            if user.pk in reviewer_ids and own_left:
                continue
            if resolves_as_editor(user, reviewer_ids=reviewer_ids, maker_id=queue.created_by_id):
                form = BlindDecisionForm(
                    labels=labels, initial={"status": decisions[0].status}, prefix=f"item{item.pk}"
                )
                disputes.append((item, decisions, form))
    return {
        "hand_on_form": HandOnForm(queue=queue) if can_edit and not progress.all_decided else None,
        "blind_progress": progress,
        "agreement": blind.agreement(queue, final=True) if progress.all_decided else None,
        "own_left": own_left,
        "disputes": disputes,
        "can_edit": can_edit,
        "decision_labels": blind.labels_for(queue),
    }


@login_required
@require_POST
def queue_decide(request, pk, item_id):
    """A reviewer's blind decision on an item; then their next item, or the queue's page."""
    queue = queue_for(request.user, pk, edit=True)
    item = get_object_or_404(QueueItem, pk=item_id, queue=queue)
    form = BlindDecisionForm(request.POST, labels=blind.labels_for(queue))
    if not form.is_valid():
        messages.error(request, "Choose one of the statuses.")
    else:
        try:
            blind.decide(
                item, request.user, form.cleaned_data["status"], form.cleaned_data["labels"]
            )
        except (blind.NotYours, blind.Settled) as exc:
            messages.error(request, f"Not recorded: {exc}.")
        else:
            return redirect(next_in_queue(request, queue.pk, after=item.run_id))
    return redirect(_in_queue(queue, item.run_id))


@login_required
@require_POST
def queue_resolve(request, pk, item_id):
    """The final decision on an item the two reviewers disagree on: the run's review."""
    queue = queue_for(request.user, pk, edit=True)
    item = get_object_or_404(QueueItem, pk=item_id, queue=queue)
    decisions = blind.decisions_of(item)
    allowed = can_resolve(
        request.user,
        queue.submission.suite,
        reviewer_ids=[d.reviewer_id for d in decisions],
        maker_id=queue.created_by_id,
    )
    if not allowed:
        raise PermissionDenied(
            "Someone other than its two reviewers, or the queue's maker, resolves it."
        )
    form = BlindDecisionForm(request.POST, labels=blind.labels_for(queue), prefix=f"item{item.pk}")
    if not form.is_valid():
        messages.error(request, "Choose one of the statuses.")
        return redirect(queue)
    try:
        blind.resolve(item, request.user, form.cleaned_data["status"], form.cleaned_data["labels"])
    except blind.NotReady as exc:
        messages.error(request, f"Not resolved: {exc}.")
    else:
        messages.success(request, f"Resolved #{item.position}: its run's review is set.")
    return redirect(f"{queue.get_absolute_url()}#resolve")


@login_required
@require_POST
def queue_assign(request, pk):
    """Share the queue's unreviewed runs out again, among the reviewers chosen."""
    queue = queue_for(request.user, pk, edit=True)
    form = AssignForm(request.POST, submission=queue.submission)
    if queue.double_blind:
        # Dealt out again, runs would lose the decisions made on them: one reviewer's
        # undecided runs are handed on instead (``queue_hand_on``).
        messages.error(
            request,
            "A double-blind queue's runs stay with the reviewers it was made for: hand on "
            "one reviewer's undecided runs to someone else instead.",
        )
    elif form.is_valid():
        chosen = form.cleaned_data["reviewers"]
        queues.deal_out(queue, chosen)
        names = ", ".join(r.get_username() for r in chosen) or "whoever starts reviewing"
        messages.success(request, f"The unreviewed runs now go to {names}.")
    else:
        messages.error(request, "Choose reviewers among the team's editors and admins.")
    return redirect(queue)


@login_required
@require_POST
def queue_hand_on(request, pk):
    """Give one reviewer's undecided runs of a double-blind queue to someone else."""
    queue = queue_for(request.user, pk, edit=True)
    if not queue.double_blind:
        raise Http404("Only a double-blind queue's runs are handed on; share the others out.")
    form = HandOnForm(request.POST, queue=queue)
    if not form.is_valid():
        messages.error(request, "Choose a reviewer with runs left, and someone else to take them.")
        return redirect(queue)
    reviewer, to = form.cleaned_data["reviewer"], form.cleaned_data["to"]
    handed = blind.hand_on(queue, reviewer, to)
    message = f"{handed.moved} of {reviewer}'s undecided runs now go to {to}."
    if handed.kept:
        message += f" {handed.kept} stay with {reviewer}: {to} is already their other reviewer."
    messages.success(request, message)
    return redirect(queue)


@login_required
@require_POST
def queue_delete(request, pk):
    """Delete the queue (its items with it); the reviews made through it stay with their runs."""
    queue = queue_for(request.user, pk, edit=True)
    queue.delete()
    messages.success(request, f"Deleted the review queue “{queue.name}”; its reviews are kept.")
    return redirect("queues", queue.submission_id)


# Reserving changes who is given what, so only a POST does it (the queue page's button, the
# run page's "next in queue" button and the review form's "then open the next"): a link on
# another site must not hand a run to whoever follows it. A GET, an old bookmark, opens the
# queue's page, whose button starts.
@login_required
@require_http_methods(["GET", "POST"])
def queue_next(request, pk):
    """POST: reserve the next run of the queue to the user and open its page, moving on
    from the run ``after`` names (the run page's). GET: the queue's page, nothing reserved."""
    if request.method == "GET":
        return redirect(queue_for(request.user, pk))
    after = request.POST.get("after", "")
    return redirect(next_in_queue(request, pk, after=int(after) if after.isdigit() else None))


def next_in_queue(request, pk, *, after: int | None = None) -> str:
    """Reserve the next run of queue ``pk`` to the user (an editor of its suite), moving on
    from run ``after`` (skipped, decided or not: docs/review.md#review-queues), and answer
    where to go: that run's page in the queue; or, saying why there is none, back to run
    ``after`` when it is the one left to them, else the queue's page."""
    queue = queue_for(request.user, pk, edit=True)
    # By run__pk, not run_id: an id out of the column's range then matches nothing.
    current = queue.items.filter(run__pk=after).first() if after is not None else None
    found = assigned_work.reserve_next(queue, request.user, current)
    if found.item is not None:
        return _in_queue(queue, found.item.run_id)
    level = messages.SUCCESS if found.finished else messages.INFO
    messages.add_message(request, level, found.why_none)
    if found.only_this_left and current is not None:  # the run they were on, run ``after``
        return _in_queue(queue, current.run_id)
    return queue.get_absolute_url()


def _in_queue(queue: ReviewQueue, run_id: int) -> str:
    return f"{reverse('run', args=[queue.submission_id, run_id])}?queue={queue.pk}"
