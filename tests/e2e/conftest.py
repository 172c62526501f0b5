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
