"""The suite page: the suite's cases and history (``cases``' part of the page) with its
submissions and their pass-rate trend. Served here because it shows scoring's results:
``cases`` never imports ``scoring``."""

from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from cases.permissions import suite_for
from cases.views.suites import suite_page_context
from scoring.trends import suite_trend

SUBMISSIONS_SHOWN = 20


@login_required
def suite_detail(request, pk):
    suite = suite_for(request.user, pk)
    context = suite_page_context(request, suite) | {
        "submissions": suite.submissions.select_related("version", "uploader").defer(
            "version__document"
        )[:SUBMISSIONS_SHOWN],
        "trend": suite_trend(suite),
    }
    return render(request, "cases/suite_detail.html", context)
