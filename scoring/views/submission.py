"""The submission page: upload a run file, follow its scoring, read the results and the
runs table; re-score, retry and delete."""

from __future__ import annotations

from datetime import timedelta
from operator import itemgetter
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.defaultfilters import pluralize
from django.urls import reverse
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import HttpResponseClientRefresh, push_url

from cases import tool_catalog
from cases.forms import ToolsForm
from cases.natural import natural_sorted
from cases.permissions import can_edit_suite, reviewers, suite_for
from cases.views.htmx import announce, redirect_to
from scoring.benchmarks import tau_bench_suites
from scoring.forms import BulkReviewForm, RescoreForm, UploadForm
from scoring.ingest import pipeline
from scoring.ingest.uploads import UploadRefused
from scoring.matcher import pretty_json
from scoring.models import (
    EarlierResult,
    EarlierScore,
    ReviewStatus,
    Status,
    Submission,
    Verdict,
)
from scoring.results import exports, known_failures, rewards
from scoring.results.failures import Failures
from scoring.results.filtersets import RunFilterSet
from scoring.results.tables import (
    case_tags,
    case_trials,
    common_failures,
    review_counts,
    run_rows,
    short_reason,
    table_rows,
    version_tags,
)
from scoring.review import decisions

from .access import submission_for

INVALID_LINES_SHOWN = 100
RUNS_PER_PAGE = 50
GROUPS_PER_PAGE = 50
KNOWN_FAILURES_SHOWN = 50  # earlier decisions listed on the submission page


def sentence(exc: Exception) -> str:
    """An exception's message (``the file is empty``) as a sentence for the page."""
    text = str(exc)
    return f"{text[:1].upper()}{text[1:]}."


def versions_of(suite):
    """The suite's versions, newest first, without their documents."""
    return suite.versions.defer("document", "audit")


@login_required
def upload(request, pk):
    suite = suite_for(request.user, pk, edit=True)
    # Bound on every POST, even an empty one: a POST without a file is an error to show.
    form = UploadForm(request.POST, request.FILES) if request.method == "POST" else UploadForm()
    if form.is_valid():
        data = form.cleaned_data
        try:
            submission = pipeline.create_submission(
                suite,
                request.user,
                data["file"],
                filename=data["file"].name,
                label=data["label"],
                format_name=data["format"],
                case_field=data["case_field"],
            )
        except UploadRefused as exc:
            form.add_error("file", sentence(exc))
        else:
            url = submission.get_absolute_url()
            return redirect_to(request, url)
    context = {"suite": suite, "form": form, "version": versions_of(suite).first()}
    return render(request, "scoring/upload.html", context, status=422 if form.errors else 200)


# The runs table is swapped by htmx in two sizes: the table alone, as filters are typed (the
# form the user is typing in stays put), and the whole section with its form, for links that
# change the filters (sorting, a failure group, removing a filter).
TABLE, SECTION = "runs", "runs-section"


@login_required
@vary_on_headers("HX-Request", "HX-Target", "HX-History-Restore-Request")
def detail(request, pk):
    submission = submission_for(request.user, pk)
    filters = RunFilterSet(request.GET)
    can_edit = can_edit_suite(request.user, submission.suite)
    context = runs_context(request, submission, filters, can_edit=can_edit)
    partial = partial_target(request)
    if partial:
        response = render(request, f"scoring/submission.html#{partial}", context)
        push_url(response, table_url(submission, filters, context["page"].number))
        return announce(response, runs_announcement(context["page"], filters.active))
    finished = submission.finished
    invalid_lines = list(submission.invalid_lines.all()[:INVALID_LINES_SHOWN])
    context |= progress_context(submission) | {
        "trials": case_trials(submission) if finished else None,
        "failures": common_failures(submission) if finished else None,
        "triage": review_counts(submission) if finished else None,
        "known": known_failures_here(submission) if finished else None,
        # A list, not the dict: a template would read ``unknown_cases.items`` as the entry
        # of a case called "items".
        "unknown_cases": natural_sorted(submission.unknown_cases.items(), key=itemgetter(0)),
        "earlier_scores": earlier_scores(submission),
        "tau_bench_tasks": can_edit and tau_bench_suites.tasks_offered(submission),
        "invalid_lines": invalid_lines,
        "invalid_lines_more": submission.invalid - len(invalid_lines),
        "rescore_form": RescoreForm(
            versions=versions_of(submission.suite),
            initial={"version": submission.version.number},
        )
        if can_edit
        else None,
    }
    return render(request, "scoring/submission.html", context)


def earlier_scores(submission: Submission) -> list[EarlierScore]:
    """The submission's results against the versions it was scored against before."""
    return list(
        submission.earlier_scores.select_related("version").defer(
            "version__document", "version__audit"
        )
    )


@login_required
def earlier_result(request, pk, number):
    """The submission's result against a version it was scored against before it was
    re-scored against another: its counts, and each run's verdict and first failure then,
    in file order (the current version's result is the submission page)."""
    submission = submission_for(request.user, pk)
    if number == submission.version.number:
        return redirect(submission)
    score = get_object_or_404(
        submission.earlier_scores.select_related("version").defer(
            "version__document", "version__audit"
        ),
        version__number=number,
    )
    verdict = request.GET.get("verdict", "")
    results = EarlierResult.objects.filter(submission=submission, version=score.version_id)
    if verdict in Verdict.values:
        results = results.filter(verdict=verdict)
    # In file order, as the runs table lists them first: read from the index, where an order
    # of the runs' keys would sort every run of the version.
    ordered = results.order_by("run_id")
    page = Paginator(ordered, RUNS_PER_PAGE).get_page(request.GET.get("page"))
    rows = page.object_list.values(
        "run_id", "run__line", "run__case_key", "run__trial", "verdict", "report"
    )
    context = {
        "submission": submission,
        "suite": submission.suite,
        "score": score,
        "earlier_scores": earlier_scores(submission),
        "verdict": verdict,
        "verdicts": Verdict.choices,
        "page": page,
        "rows": [row | {"failing": first_failure(row["report"])} for row in rows],
    }
    return render(request, "scoring/earlier_result.html", context)


def first_failure(report: dict) -> dict | None:
    """A report's first failed predicate (label and short reason), or None."""
    for predicate in report.get("predicates", ()):
        if not predicate.get("passed"):
            return {
                "label": predicate.get("label", ""),
                "reason": short_reason(predicate.get("detail") or ""),
            }
    return None


def known_failures_here(submission: Submission) -> dict:
    """The known failures here decided in other submissions: those failing again (marked
    fixed in an earlier one) and the decisions offered again, each with its runs here. A
    "fixed" made in a later submission is neither."""
    decisions = list(known_failures.earlier_decisions(submission)[:KNOWN_FAILURES_SHOWN])
    here = known_failures.runs_here(submission, [k.signature for k in decisions])
    for known in decisions:
        known.runs_here = here.get(known.signature, 0)
    return {
        "failing_again": [k for k in decisions if known_failures.fixed_before(k, submission.pk)],
        "offered": [k for k in decisions if k.status != ReviewStatus.FIXED],
    }


@login_required
@require_POST
def apply_decisions(request, pk):
    """Set the earlier decisions on this submission's runs that fail in their ways (all, or the
    one ``signature`` names); back to the page the form was on."""
    submission = submission_for(request.user, pk, edit=True)
    changed = decisions.apply_earlier_decisions(
        submission, request.user, request.POST.get("signature", "")[:32]
    )
    messages.success(request, f"Earlier decisions set on {changed} run{pluralize(changed)}.")
    back = request.POST.get("next", "")
    if url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}):
        return redirect(back)
    return redirect(submission)


def partial_target(request) -> str | None:
    """Which part of the runs section an htmx request asks for, if any. A history restore
    (the back button, when htmx has no copy of the page) gets the whole page."""
    if not request.htmx or request.htmx.history_restore_request:
        return None
    return request.htmx.target if request.htmx.target in (TABLE, SECTION) else None


def table_url(submission: Submission, filters: RunFilterSet, page_number: int = 1) -> str:
    """The address of the runs table as filtered: what the address bar shows, so that it
    can be shared and the back button comes back to it."""
    query = filters.as_query() | ({"page": page_number} if page_number > 1 else {})
    return submission.get_absolute_url() + (f"?{urlencode(query)}" if query else "")


def runs_context(request, submission, filters: RunFilterSet, *, can_edit: bool) -> dict:
    """What the runs section shows: one page of the filtered table (keys, verdicts, failing
    labels and reviews; never a run's document or report), the filters' choices, and the
    bulk review form for editors."""
    rows = table_rows(filters.paged(submission), meta=bool(filters.columns))
    paginator = Paginator(rows, RUNS_PER_PAGE)
    # Counted on the filters alone: the ordered query joins the runs for its order, which a
    # count of every matching run does not need (and pays for on 100,000 runs).
    paginator.count = filters.count(submission)
    page = paginator.get_page(request.GET.get("page"))
    team_labels = list(decisions.labels_of_team(submission.suite.team_id))
    return {
        "submission": submission,
        "suite": submission.suite,
        "can_edit": can_edit,
        "filters": filters,
        "page": page,
        "runs_count": runs_count(page, filters.active),
        "rows": run_rows(page.object_list, case_tags(submission), filters.column_names),
        "column_choices": column_choices(submission, filters),
        "tags": version_tags(submission),
        "reward": rewards.agreement(submission),
        "reward_choices": rewards.CHOICES,
        "verdicts": Verdict.choices,
        "review_statuses": ReviewStatus.choices,
        "team_labels": team_labels,
        "bulk_form": BulkReviewForm(assignees=reviewers(submission.suite), labels=team_labels)
        if can_edit
        else None,
    }


def runs_count(page, filtered: bool) -> str:
    """The table's count in words, shown above it: "72 runs match"."""
    count = page.paginator.count
    words = f"{count} run{pluralize(count)}"
    return f"{words} match{pluralize(count, 'es,')}" if filtered else words


def runs_announcement(page, filtered: bool) -> str:
    """What the live region says when a swap changes the table: "Runs table: 72 match, page
    2 of 3". Worded unlike the count shown, so that the page never holds its words twice."""
    count = page.paginator.count
    words = (
        f"Runs table: {count} match{pluralize(count, 'es,')}"
        if filtered
        else f"Runs table: all {count}"
    )
    if page.paginator.num_pages > 1:
        words += f", page {page.number} of {page.paginator.num_pages}"
    return words


def column_choices(submission: Submission, filters: RunFilterSet) -> list[tuple[str, bool]]:
    """The meta keys the table may show as columns, each with whether it is shown: those
    the runs have, and any the address names besides (so that it can be unticked)."""
    shown = filters.column_names
    keys = [*submission.meta_keys, *(name for name in shown if name not in submission.meta_keys)]
    return [(key, key in shown) for key in keys]


@login_required
def failures(request, pk):
    """The submission's failures grouped by cause (kind and tool, then argument, then the
    exact predicates), most runs first, for the runs of the table's filters in the query
    string; each group links to its runs and to a review queue of them, and editors set a
    status on a whole group from here."""
    submission = submission_for(request.user, pk)
    can_edit = can_edit_suite(request.user, submission.suite)
    filters = RunFilterSet(request.GET)
    failures = Failures(submission, filters)
    page = Paginator(failures.top_level(), GROUPS_PER_PAGE).get_page(request.GET.get("page"))
    team_labels = list(decisions.labels_of_team(submission.suite.team_id))
    context = {
        "submission": submission,
        "suite": submission.suite,
        "page": page,
        "groups": failures.groups(page.object_list),
        "failing_runs": failures.failing_runs(),
        "filters": filters,
        "tags": version_tags(submission),
        "review_statuses": ReviewStatus.choices,
        "can_edit": can_edit,
        "bulk_form": BulkReviewForm(assignees=reviewers(submission.suite), labels=team_labels)
        if can_edit
        else None,
    }
    return render(request, "scoring/failures.html", context)


@login_required
@require_POST
def review_runs(request, pk):
    """Set a review status and/or an assignee on every run of the filter posted with it (a
    failure group is the filter ``predicate=label``)."""
    submission = submission_for(request.user, pk, edit=True)
    filters = RunFilterSet(request.POST)
    labels = decisions.labels_of_team(submission.suite.team_id)
    form = BulkReviewForm(request.POST, assignees=reviewers(submission.suite), labels=labels)
    if form.is_valid():
        runs = filters.runs(submission)
        notice = decisions.review_runs(runs, request.user, **form.changes()).notice
        level = messages.SUCCESS
    else:
        notice = " ".join(form.errors.get("__all__", [])) or "Choose a valid status or assignee."
        level = messages.ERROR
    if request.htmx:
        context = runs_context(request, submission, filters, can_edit=True)
        context |= {"notice": notice, "triage": review_counts(submission), "triage_oob": True}
        response = render(request, f"scoring/submission.html#{SECTION}", context)
        return push_url(response, table_url(submission, filters))
    messages.add_message(request, level, notice)
    if request.POST.get("back") == "failures":
        # Back to the groups as they were shown: the page's filters, not the group's own.
        shown = filters.but(predicate="", cause="", argument="")
        query = f"?{shown.querystring}" if shown.querystring else ""
        return redirect(reverse("submission_failures", args=[submission.pk]) + query)
    return redirect(f"{table_url(submission, filters)}#runs-section")


@login_required
def export_csv(request, pk):
    """The runs table as CSV, every row under the filters in the query string."""
    submission = submission_for(request.user, pk)
    filters = RunFilterSet(request.GET)
    lines = exports.runs_csv(submission, filters, request.build_absolute_uri("/").rstrip("/"))
    return attachment(lines, "text/csv; charset=utf-8", f"submission-{submission.pk}-runs.csv")


@login_required
def export_junit(request, pk):
    """The submission as JUnit XML: a test case per scored run."""
    submission = submission_for(request.user, pk)
    pieces = exports.submission_junit(submission)
    return attachment(
        pieces, "application/xml; charset=utf-8", f"submission-{submission.pk}-junit.xml"
    )


def attachment(pieces, content_type: str, filename: str) -> StreamingHttpResponse:
    """A file download made while it streams."""
    response = StreamingHttpResponse(pieces, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def progress_context(submission: Submission) -> dict:
    """What the progress box says beyond the stored counts: the runs of cases the version
    lacks, how long reading the file took and everything took, from the upload (or from the
    re-score or retry that started the results shown) to the last run scored, and whether
    the submission has stalled (no worker has touched it for a while; the sweep resumes
    it). A live submission's runs come as traces do: no duration means anything there."""
    quiet = timezone.now() - submission.heartbeat
    started, finished = submission.ingest_started, submission.ingest_finished
    since = submission.scoring_restarted or submission.created
    # A re-score reads no file: the reading timed is the upload's, or a retry's.
    read_in = (
        finished - started
        if not submission.live_day and started and finished and started >= since
        else None
    )
    return {
        "unknown_runs": submission.stored_runs - submission.total,
        "read_in": read_in,
        "took": submission.scoring_finished - since
        if submission.scoring_finished and not submission.live_day
        else None,
        "restarted_by": ("retry" if read_in is not None else "re-score")
        if submission.scoring_restarted
        else "",
        "stalled": not submission.finished
        and quiet > timedelta(seconds=settings.CASEBOOK_STALL_SECONDS),
    }


@login_required
def progress(request, pk):
    """The progress partial, polled while the submission runs. Once it is finished the
    whole page is loaded again, with its results."""
    submission = submission_for(request.user, pk)
    if submission.finished and request.htmx:
        # Said by the page that loads next (its messages are announced: casebook.js).
        scored = f"{submission.scored} run{pluralize(submission.scored)}"
        if submission.status == Status.DONE:
            messages.success(request, f"Scoring done: {scored}.")
        else:
            messages.error(request, f"Scoring failed after {scored}.")
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
        pipeline.rescore(submission, version)
    except pipeline.NotReady as exc:
        messages.error(request, f"Cannot re-score yet: {exc}.")
    else:
        messages.success(request, f"Re-scoring against version {version.number}.")
    return redirect(submission)


@login_required
@require_POST
def retry(request, pk):
    submission = submission_for(request.user, pk, edit=True)
    try:
        pipeline.retry(submission)
    except pipeline.NotReady as exc:
        messages.error(request, sentence(exc))
    return redirect(submission)


@login_required
@require_POST
def delete(request, pk):
    submission = submission_for(request.user, pk, edit=True)
    pipeline.delete_submission(submission)
    messages.success(request, f"Deleted submission #{pk} and its runs.")
    return redirect(submission.suite)


# Runs read to infer a catalog: enough to see every tool of a real agent, bounded in time.
RUNS_INFERRED = 5000


@login_required
def infer_tools(request, pk):
    """A tool catalog drafted from the calls of the submission's runs, shown in the suite's
    tools form for the author to review and import (nothing is saved here)."""
    submission = submission_for(request.user, pk, edit=True)
    runs = submission.runs.order_by("seq").values_list("document", flat=True)[:RUNS_INFERRED]
    documents = list(runs)
    calls = [
        (call.get("name"), call.get("arguments"))
        for document in documents
        for batch in document.get("batches") or ()
        for call in batch
        if isinstance(call, dict)
    ]
    drafted = tool_catalog.infer_tools(calls)
    form = ToolsForm(initial={"text": pretty_json(drafted).decode()})
    context = {
        "suite": submission.suite,
        "form": form,
        "problems": [],
        "inferred": {"submission": submission, "runs": len(documents), "calls": len(calls)},
    }
    return render(request, "cases/suite_tools.html", context)
