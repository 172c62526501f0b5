"""The suite page: the suite's cases and history (``cases``' part of the page) with its
submissions and their pass-rate trend, and for its editors the "Send live traces" panel
(docs/live-traces.md#the-suite-pages-panel): the exporter's settings for this server, the
instrumentations' content-capture settings, and the suite tokens they make (the key shown
once, in the settings) and revoke. Served here because it shows scoring's results: ``cases``
never imports ``scoring``."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from cases import services, tokens
from cases.audits import stored_audit
from cases.forms import SuiteTokenForm
from cases.permissions import can_edit_suite, suite_for, suite_tokens
from cases.views.audits import audit_context
from cases.views.suites import suite_page_context
from scoring.importers.otel import INSTRUMENTATIONS
from scoring.live.routing import CASE, LABEL
from scoring.models import Run, Status
from scoring.results.case_history import HISTORY_SUBMISSIONS, suite_history
from scoring.results.known_failures import KNOWN_FAILURE_SUBMISSIONS, open_known_failures
from scoring.results.trends import suite_trend

SUBMISSIONS_SHOWN = 20
UNASSIGNED_PER_PAGE = 50
PRUNED_NOTES_SHOWN = 10  # the latest notes of reviewed runs removed by retention
KEY_PLACEHOLDER = "<token>"  # the panel's key, before a token is made
PANEL = "cases/suite_detail.html#live"
HISTORY_NAMED = 30  # cases the health panel names of those never passed, and of the saturated


def unassigned(suite):
    """The runs of the suite's live traces that named no case (``scoring.live.traces``)."""
    return Run.objects.filter(
        submission__suite=suite, submission__live_day__isnull=False, case_key=""
    )


@login_required
def suite_detail(request, pk):
    suite = suite_for(request.user, pk)
    return _suite_page(request, suite, _panel_context(request, suite))


def _suite_page(request, suite, panel: dict, status: int = 200):
    context = suite_page_context(request, suite) | {
        "submissions": suite.submissions.select_related("version", "uploader").defer(
            "version__document", "version__audit"
        )[:SUBMISSIONS_SHOWN],
        "trend": suite_trend(suite),
        "unassigned": unassigned(suite).count(),
        "pruned_notes": suite.pruned_runs.all()[:PRUNED_NOTES_SHOWN],
    }
    return render(request, "cases/suite_detail.html", context | panel, status=status)


def _panel_context(request, suite, *, form=None, new=None, new_key=None) -> dict:
    """What the live-traces panel shows; nothing for those who do not edit the suite."""
    if not can_edit_suite(request.user, suite):
        return {"live": None}
    endpoint = request.build_absolute_uri(reverse("otlp_traces").removesuffix("/v1/traces"))
    key = new_key or KEY_PLACEHOLDER
    environment = [
        f"OTEL_EXPORTER_OTLP_ENDPOINT={endpoint}",
        f"OTEL_EXPORTER_OTLP_HEADERS=Authorization=Token {key}",
        "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
    ]
    live = {
        "environment": "\n".join(environment),
        "attributes": {"case": CASE, "label": LABEL},
        "instrumentations": [
            (each, "\n".join(each.settings_for(endpoint, key))) for each in INSTRUMENTATIONS
        ],
        "tokens": suite_tokens(request.user, suite),
        "form": form or SuiteTokenForm(),
        "new": new,
        "new_key": new_key,
    }
    return {"live": live}


@login_required
@require_POST
def token_new(request, pk):
    """Make a suite token: the panel again, its key in the settings, shown this once."""
    suite = suite_for(request.user, pk, edit=True)
    form, new, new_key = SuiteTokenForm(request.POST), None, None
    if form.is_valid():
        data = form.cleaned_data
        try:
            new, new_key = tokens.create(
                request.user, data["name"], suite=suite, label=data["label"]
            )
            form = None
        except tokens.NameTaken as exc:
            form.add_error("name", str(exc))
    panel = _panel_context(request, suite, form=form, new=new, new_key=new_key)
    if request.htmx:
        return render(request, PANEL, {"suite": suite} | panel)
    # Without htmx, the whole page: a redirect would lose the key.
    return _suite_page(request, suite, panel, status=422 if form and form.errors else 200)


@login_required
@require_POST
def token_revoke(request, pk, token_id):
    """Revoke one of the suite's tokens (``suite_tokens``: one's own, or any for an admin)."""
    suite = suite_for(request.user, pk)
    token = get_object_or_404(suite_tokens(request.user, suite), pk=token_id)
    token.delete()
    if request.htmx:
        return render(request, PANEL, {"suite": suite} | _panel_context(request, suite))
    messages.success(request, f"Token “{token.name}” revoked: its exports are now refused.")
    return redirect(f"{suite.get_absolute_url()}#live")


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


@login_required
def suite_health(request, pk):
    """The "Suite health" panel, which the suite page loads after it (htmx): the latest
    version's audit, kept with it (docs/audit.md), its problems by kind each linked to the
    case editor, and the cases the submissions never passed or always pass."""
    suite = suite_for(request.user, pk)
    latest = suite.versions.defer("document").order_by("-number").first()
    context = {"suite": suite, "latest": latest, "catalog": bool(services.suite_tools(suite))}
    if latest is not None:
        case_ids = dict(suite.cases.values_list("key", "pk"))
        history = suite_history(suite, list(case_ids))
        context |= audit_context(stored_audit(latest), case_ids) | {
            "history": history,
            "history_limit": HISTORY_SUBMISSIONS,
            "never_passed": [(k, case_ids.get(k)) for k in history.never_passed[:HISTORY_NAMED]],
            "saturated": [(k, case_ids.get(k)) for k in history.saturated[:HISTORY_NAMED]],
        }
    return render(request, "scoring/_suite_health.html", context)
