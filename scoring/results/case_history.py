"""What a suite's finished submissions say of its cases, for the "Suite health" panel
(docs/audit.md#history): one grouped query over their case summaries (``CaseSummary``)
that returns only the cases no submission passed and those the newest passed in every
run; the rule itself is the audit's (``scoring.audit.history_notes``)."""

from __future__ import annotations

from django.db.models import Count, F, Q, Sum

from cases.models import Suite
from scoring.audit import SATURATION_WINDOW, CaseHistory, HistoryNotes, history_notes
from scoring.models import CaseSummary, Status

# The newest finished submissions read: "never passed" means by none of these.
HISTORY_SUBMISSIONS = 100


def suite_history(suite: Suite, keys: list[str]) -> HistoryNotes:
    submissions = list(
        suite.submissions.filter(status=Status.DONE, scored__gt=0)
        .order_by("-created", "-pk")
        .values_list("pk", flat=True)[:HISTORY_SUBMISSIONS]
    )
    window = submissions[:SATURATION_WINDOW]
    rows = (
        CaseSummary.objects.filter(
            submission_id__in=submissions, generation=F("submission__generation")
        )
        .values("case_key")
        .annotate(
            scored_in=Count("id"),
            passed_runs=Sum("passed"),
            clean_in_window=Count(
                "id", filter=Q(submission_id__in=window, passed=F("runs"), runs__gt=0)
            ),
        )
        .filter(Q(passed_runs=0) | Q(clean_in_window__gte=SATURATION_WINDOW))
        .values_list("case_key", "scored_in", "passed_runs", "clean_in_window")
    )
    histories = {
        key: CaseHistory(scored_in, passed, clean) for key, scored_in, passed, clean in rows
    }
    return history_notes(keys, histories, len(submissions))
