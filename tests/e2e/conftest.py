"""Playwright driving Debian's Chromium against Django's live server."""

import os
import shutil

import pytest

# Playwright's sync API runs an event loop in this thread; Django would refuse DB access.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="session")
def browser():
    if not shutil.which(CHROMIUM):
        if os.environ.get("CI"):
            pytest.fail(f"Chromium not found at {CHROMIUM}; CI must install it")
        pytest.skip(f"Chromium not found at {CHROMIUM} (apt-get install chromium)")
    from playwright.sync_api import expect, sync_playwright

    # Waits in these tests are expect(...) and locators, never wait_for_function: Playwright
    # polls a function by eval, which the Content Security Policy forbids.
    expect.set_options(timeout=10_000)

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    context = browser.new_context()
    page = context.new_page()
    page.set_default_timeout(10_000)
    yield page
    context.close()


# Records every violation the page reports, across navigations (an exposed function
# outlives the page's own globals).
WATCH = """
document.addEventListener("securitypolicyviolation", (event) => window.__cspViolation(
    `${event.violatedDirective} blocked ${event.blockedURI || "inline"} in ${event.sourceFile}`
));
"""


@pytest.fixture
def violations(page):
    found = []
    page.expose_function("__cspViolation", lambda text: found.append(text))
    page.add_init_script(WATCH)
    page.on(
        "console",
        lambda message: (
            found.append(message.text) if "Content Security Policy" in message.text else None
        ),
    )
    return found


@pytest.fixture
def world(user, make_user, settings) -> dict:
    """τ-bench's airline suite keyed as its results file names tasks, its catalog inferred
    from the runs (version 2); two submissions of the same runs, the first re-scored against
    version 2 and some of its failures marked fixed, so the second has regressions; a review
    queue and a double-blind one of the second's runs; a team label and a model price
    (every_page.py opens each page with it)."""
    import io
    import json

    from django.contrib.auth.tokens import default_token_generator
    from django.utils.encoding import force_bytes
    from django.utils.http import urlsafe_base64_encode

    from cases import services
    from cases.models import ReviewLabel
    from cases.tool_catalog import infer_tools
    from scoring.ingest.pipeline import create_submission, rescore
    from scoring.models import ModelPrice, Run, Verdict
    from scoring.results.filtersets import RunFilterSet
    from scoring.review import decisions
    from scoring.review.queues import build_queue
    from tests.support import tau_bench

    from .every_page import FAILING_TASK, TASKS

    settings.EMAIL_URL = "smtp://localhost:25"  # the password reset's pages are offered
    bob = make_user("bob")
    team = services.create_team("Airline", user)
    services.set_member_role(team, bob, "editor")
    ReviewLabel.objects.create(team=team, name="wrong tool", key="w", colour="red")
    ModelPrice.objects.create(
        team=team, model="house-llama", input_per_mtok=0.2, output_per_mtok=0.6
    )
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
