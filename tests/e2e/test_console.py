"""Every page runs without an error in the browser's console (docs/review.md#on-every-page):
each page the app serves to a browser, found from its URL patterns and opened with real data
(τ-bench's airline runs, a tool catalog, two submissions, known failures, queues), at 1400 and
800 px, logs no script error, no failed load and no Content Security Policy violation; and
neither do the run page's keys nor the case editor's matcher pickers."""

from __future__ import annotations

import io
import json
import re

import pytest
from django.contrib.auth.tokens import default_token_generator
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode
from playwright.sync_api import expect

from cases import services
from cases.models import ReviewLabel
from cases.tool_catalog import infer_tools
from scoring.ingest.pipeline import create_submission, rescore
from scoring.models import Run, Verdict
from scoring.results.filtersets import RunFilterSet
from scoring.review import decisions
from scoring.review.queues import build_queue
from tests.support import tau_bench

from .browsing import sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

TASKS = 10  # of τ-bench's 50, with their 4 trials: every kind of row, quick to score twice
FAILING_TASK = "4"  # its run misses update_reservation_flights: a diff, a known failure

# Each page by URL name: its arguments, and a query string, from the world below.
PAGES = {
    "home": lambda w: {},
    "my_work": lambda w: {},
    "account": lambda w: {},
    "teams": lambda w: {},
    "team": lambda w: {"slug": w["team"].slug},
    "suite_new": lambda w: {},
    "suite_import": lambda w: {},
    "suite_import_bfcl": lambda w: {},
    "suite_import_tau_bench": lambda w: {},
    "suite": lambda w: {"pk": w["suite"].pk},
    "suite_settings": lambda w: {"pk": w["suite"].pk},
    "suite_replace": lambda w: {"pk": w["suite"].pk},
    "suite_tools": lambda w: {"pk": w["suite"].pk},
    "suite_version": lambda w: {"pk": w["suite"].pk, "number": 1},
    "suite_version_diff": lambda w: {"pk": w["suite"].pk, "number": 2},
    "suite_unassigned": lambda w: {"pk": w["suite"].pk},
    "case_new": lambda w: {"pk": w["suite"].pk},
    "case_edit": lambda w: {"pk": w["suite"].pk, "case_id": w["case"].pk},
    "upload": lambda w: {"pk": w["suite"].pk},
    "submission": lambda w: {"pk": w["second"].pk},
    "submission_earlier": lambda w: {"pk": w["first"].pk, "number": 1},
    "submission_failures": lambda w: {"pk": w["second"].pk},
    "submission_case_drafts": lambda w: {"pk": w["second"].pk},
    "submission_tools": lambda w: {"pk": w["second"].pk},
    "run": lambda w: {"pk": w["second"].pk, "run_id": w["run"].pk},
    "run_draft_case": lambda w: {"pk": w["second"].pk, "run_id": w["run"].pk},
    "run_promote": lambda w: ({"pk": w["second"].pk, "run_id": w["run"].pk}, "call=0-0"),
    "compare": lambda w: ({"pk": w["suite"].pk}, f"candidate={w['second'].pk}"),
    "compare_runs": lambda w: {"a": w["baseline_run"].pk, "b": w["run"].pk},
    "queues": lambda w: {"pk": w["second"].pk},
    "queue_new": lambda w: {"pk": w["second"].pk},
    "queue": lambda w: {"pk": w["queue"].pk},
    "queue_next": lambda w: {"pk": w["blind_queue"].pk},  # lands on a blind run page
    "password_change": lambda w: {},
    "password_change_done": lambda w: {},
    "password_reset": lambda w: {},
    "password_reset_done": lambda w: {},
    "password_reset_confirm": lambda w: {"uidb64": w["uid"], "token": w["token"]},
    "password_reset_complete": lambda w: {},
    "swagger-ui": lambda w: {},
}
# Pages opened with a second query: the comparison itself, beside its picker.
MORE = {"compare": lambda w: f"baseline={w['first'].pk}&candidate={w['second'].pk}"}
SIGNED_OUT = {"login": lambda w: {}}

NOT_PAGES = {
    # answers to forms and buttons (POST), each leading back to a page above
    "team_member_add", "team_member", "team_label_add", "team_label_edit", "team_label_delete",
    "suite_copy", "suite_replace_confirm", "suite_version_tag", "case_delete", "case_try",
    "editor_validate", "case_audit", "suite_import_confirm", "suite_import_bfcl_confirm",
    "suite_tools_confirm", "submission_rescore", "submission_retry", "submission_delete",
    "submission_review", "submission_apply_decisions", "run_review", "run_rescore",
    "queue_assign", "queue_hand_on", "queue_delete", "queue_decide", "queue_resolve", "logout",
    "otlp_traces", "otlp_logs", "suite_token_new", "suite_token_revoke",
    # files to download
    "suite_export", "submission_csv", "submission_junit", "schema",
    # fragments that the pages above load after themselves
    "submission_progress", "suite_flaky", "suite_known_failures", "suite_health",
    "run_end_state",
    # pages of a failed upload of τ-bench's results alone (tests/e2e/test_tau_bench_suite.py)
    "submission_tau_bench",
    # probes for the orchestrator
    "healthz", "readyz",
}  # fmt: skip
# The REST API (JSON for clients; its page is swagger-ui) and Django's admin.
NOT_PAGE_NAMESPACES = {"api", "admin"}


def url_names(resolver: URLResolver | None = None) -> set[str]:
    names = set()
    for pattern in (resolver or get_resolver()).url_patterns:
        if isinstance(pattern, URLResolver):
            if pattern.namespace not in NOT_PAGE_NAMESPACES:
                names |= url_names(pattern)
        elif isinstance(pattern, URLPattern) and pattern.name:
            names.add(pattern.name)
    return names


@pytest.fixture
def world(user, make_user, settings) -> dict:
    """τ-bench's airline suite keyed as its results file names tasks, its catalog inferred
    from the runs (version 2); two submissions of the same runs, the first re-scored against
    version 2 and some of its failures marked fixed, so the second has regressions; a review
    queue and a double-blind one of the second's runs; a team label."""
    settings.EMAIL_URL = "smtp://localhost:25"  # the password reset's pages are offered
    bob = make_user("bob")
    team = services.create_team("Airline", user)
    services.set_member_role(team, bob, "editor")
    ReviewLabel.objects.create(team=team, name="wrong tool", key="w", colour="red")
    suite = services.create_suite(team, tau_bench.suite_document(prefix=""), user)
    content = json.dumps([r for r in tau_bench.RECORDS if r["task_id"] < TASKS]).encode()
    # Outside any transaction: the tasks run (eagerly) as each upload commits.
    first, second = (
        create_submission(suite, user, io.BytesIO(content), filename="tau.json", label=label)
        for label in ("first", "second")
    )
    calls = [
        (call["name"], call["arguments"])
        for document in first.runs.values_list("document", flat=True)
        for batch in document["batches"]
        for call in batch
    ]
    version = services.replace_tools(suite, infer_tools(calls), user, "tools inferred")
    rescore(first, version)
    failing = Run.objects.filter(submission=first, result__verdict=Verdict.FAIL)
    fixed = list(failing.values_list("pk", flat=True)[:3])
    decisions.set_status(Run.objects.filter(pk__in=fixed), "fixed", user)
    run = Run.objects.get(submission=second, case_key=FAILING_TASK, trial=0)
    return {
        "team": team,
        "suite": suite,
        "case": suite.cases.get(key=FAILING_TASK),
        "first": first,
        "second": second,
        "run": run,
        "baseline_run": Run.objects.get(submission=first, case_key=FAILING_TASK, trial=0),
        "queue": build_queue(second, "to review", user, reviewers=[user]),
        # of the passing runs, so that the failing one is reviewed by hand
        "blind_queue": build_queue(
            second,
            "blind",
            user,
            filters=RunFilterSet({"verdict": "pass"}),
            reviewers=[user, bob],
            double_blind=True,
        ),
        "uid": urlsafe_base64_encode(force_bytes(user.pk)),
        "token": default_token_generator.make_token(user),
    }


@pytest.fixture
def console(page) -> list[str]:
    """What the page logs as an error (a script error, a load that failed, a Content Security
    Policy violation) or throws, with the address it was at."""
    errors = []
    page.on("console", lambda m: m.type == "error" and errors.append(f"{page.url}: {m.text}"))
    page.on("pageerror", lambda error: errors.append(f"{page.url}: {error}"))
    return errors


def addresses(world: dict, pages: dict) -> list[str]:
    found = []
    for name, make in pages.items():
        made = make(world)
        kwargs, query = made if isinstance(made, tuple) else (made, "")
        url = reverse(name, kwargs=kwargs)
        found.append(f"{url}?{query}" if query else url)
        if name in MORE:
            found.append(f"{url}?{MORE[name](world)}")
    return found


def test_every_url_is_a_page_opened_here_or_said_not_to_be_one():
    unlisted = url_names() - set(PAGES) - set(SIGNED_OUT) - NOT_PAGES
    stale = (set(PAGES) | set(SIGNED_OUT) | NOT_PAGES) - url_names()
    assert (unlisted, stale) == (set(), set())


def test_every_page_logs_no_error_at_1400_and_800_px(
    page, live_server, user, password, world, console
):
    for width in (1400, 800):
        page.set_viewport_size({"width": width, "height": 900})
        page.context.clear_cookies()
        for url in addresses(world, SIGNED_OUT):
            assert page.goto(f"{live_server.url}{url}").ok, url
            page.wait_for_load_state("networkidle")
        sign_in(page, live_server, user.username, password)
        for url in addresses(world, PAGES):
            response = page.goto(f"{live_server.url}{url}")
            assert response.ok, (url, response.status)
            page.wait_for_load_state("networkidle")  # the parts loaded after the page
    assert console == []


def test_the_run_pages_keys_and_the_editors_matcher_pickers_log_no_error(
    page, live_server, user, password, world, console
):
    sign_in(page, live_server, user.username, password)
    page.goto(f"{live_server.url}{world['run'].get_absolute_url()}")
    panel = page.locator("#review")
    # A comment box resized by the reviewer carries a style attribute into the swap.
    page.locator("#review-comment").evaluate("box => { box.style.height = '8rem'; }")
    page.keyboard.press("3")
    expect(panel.locator("dd .review-status")).to_have_text("expectation wrong")
    page.locator("#review-comment").evaluate("box => { box.style.height = '9rem'; }")
    page.keyboard.press("a")
    expect(panel.locator("dl.review-state")).to_contain_text(user.username)
    page.keyboard.press("?")
    expect(page.locator("#triage-keys")).to_be_visible()
    page.keyboard.press("Escape")

    page.goto(f"{live_server.url}{world['case'].get_absolute_url()}")
    args = page.locator("textarea[name='call-0-required_args']")
    field = page.locator("#call-0 .argfield[data-param='payment_id']")
    field.get_by_label("payment_id matcher").select_option("")
    expect(args).not_to_have_value(re.compile("payment_id"))
    field.get_by_label("payment_id matcher").select_option("text")
    field.get_by_label("payment_id value").fill("gift_card_8190333")
    expect(args).to_have_value(re.compile(r'"payment_id": \{ "\$text": \{ "value": "gift_card_'))
    field.get_by_label("payment_id matcher").select_option("regex")
    field.get_by_label("payment_id value").fill(r"gift_card_\d+")
    expect(args).to_have_value(re.compile(r'"payment_id": \{ "\$regex": "gift_card_'))
    flights = page.locator("#call-0").get_by_label("flights matcher")
    for kind in ("subset", "exact", ""):
        flights.select_option(kind)
    assert console == []
