"""The API docs in Chromium: /api/docs/ renders Swagger UI with the API's operations from the
app's own static files, with no request to another origin (as on a machine without internet)
and no Content Security Policy violation."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from .browsing import sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_the_api_docs_render_offline_under_the_policy(
    page, live_server, user, password, violations
):
    elsewhere = []

    def only_this_site(route):
        if route.request.url.startswith(live_server.url):
            route.continue_()
        else:  # as without internet
            elsewhere.append(route.request.url)
            route.abort()

    page.route("**/*", only_this_site)
    sign_in(page, live_server, user.username, password)
    page.goto(f"{live_server.url}/api/docs/")

    expect(page.locator(".swagger-ui .info .title")).to_contain_text("Casebook API")
    upload = page.locator(".opblock-post .opblock-summary-path").filter(
        has_text="/api/suites/{suite_pk}/submissions/"
    )
    expect(upload).to_be_visible()
    assert page.locator(".opblock").count() >= 20
    back = page.get_by_role("link", name="Back to Casebook")
    expect(back).to_be_visible()
    back.click()
    page.wait_for_url(f"{live_server.url}/")
    assert elsewhere == []
    assert violations == []
