"""The suite page: the suite's cases and history (``cases``' part of the page) with its
submissions and their pass-rate trend. Served here because it shows scoring's results:
``cases`` never imports ``scoring``."""

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.shortcuts import render

from cases.permissions import can_edit_suite, suite_for
from cases.views.suites import suite_page_context
from scoring.models import Run, Status
from scoring.results.known_failures import KNOWN_FAILURE_SUBMISSIONS, open_known_failures
from scoring.results.trends import suite_trend

SUBMISSIONS_SHOWN = 20
UNASSIGNED_PER_PAGE = 50


def unassigned(suite):
    """The runs of the suite's live traces that named no case (``scoring.live.traces``)."""
    return Run.objects.filter(
        submission__suite=suite, submission__live_day__isnull=False, case_key=""
    )


@login_required
def suite_detail(request, pk):
    suite = suite_for(request.user, pk)
    context = suite_page_context(request, suite) | {
        "submissions": suite.submissions.select_related("version", "uploader").defer(
            "version__document"
        )[:SUBMISSIONS_SHOWN],
        "trend": suite_trend(suite),
        "unassigned": unassigned(suite).count(),
    }
    return render(request, "cases/suite_detail.html", context)


@login_required
def unassigned_runs(request, pk):
    """The runs of traces that named no case (production traffic, say), newest first: each
    can be reviewed, and made a case of ("new case from this run")."""
    suite = suite_for(request.user, pk)
    runs = (
        unassigned(suite)
        .select_related("submission")
        .defer("document")
        .order_by("-submission__live_day", "-seq")
    )
    context = {
        "suite": suite,
        "page": Paginator(runs, UNASSIGNED_PER_PAGE).get_page(request.GET.get("page")),
        "can_edit": can_edit_suite(request.user, suite),
    }
    return render(request, "scoring/unassigned.html", context)


@login_required
def known_failures(request, pk):
    """The suite page's open known failures over its latest submissions, which it loads after the
    page (htmx): grouping every failing run of ten submissions takes a moment."""
    suite = suite_for(request.user, pk)
    window = list(
        suite.submissions.filter(status=Status.DONE, scored__gt=0)
        .order_by("-created", "-pk")
        .values_list("pk", flat=True)[:KNOWN_FAILURE_SUBMISSIONS]
    )
    context = {"suite": suite, "known_failures": open_known_failures(window), "window": len(window)}
    return render(request, "scoring/_open_known_failures.html", context)
