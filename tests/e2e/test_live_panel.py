"""The suite page's "Send live traces" panel in a real browser
(docs/live-traces.md#the-suite-pages-panel): an editor makes a suite token, sees its key once in
the exporter's three settings, and an export sent with that key alone lands in the suite."""

import re
import urllib.request

import pytest
from playwright.sync_api import expect

from scoring.models import TraceSpan
from tests.support.otlp_data import ENDPOINT, FIXTURE_SPANS, body_of, export

from .browsing import sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_an_editor_makes_a_suite_token_and_its_key_sends_traces_to_the_suite(
    page, live_server, violations, editor, password, suite
):
    errors = []
    page.on(
        "console", lambda message: errors.append(message.text) if message.type == "error" else None
    )
    sign_in(page, live_server, editor.username, password)
    page.goto(f"{live_server.url}/suites/{suite.pk}/")
    panel = page.locator("#live")
    settings = panel.locator("#live-environment")
    expect(settings).to_contain_text("Authorization=Token <token>")

    panel.get_by_label("Name").fill("laptop agent")
    panel.get_by_label("Label").fill("gpt-4o")
    panel.get_by_role("button", name="Make a suite token").click()

    key = panel.locator("#live-key")
    expect(key).to_have_text(re.compile(r"^[0-9a-f]{40}$"))
    shown = key.inner_text()
    expect(settings).to_have_text(
        f"OTEL_EXPORTER_OTLP_ENDPOINT={live_server.url}/otlp\n"
        f"OTEL_EXPORTER_OTLP_HEADERS=Authorization=Token {shown}\n"
        "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf"
    )
    expect(panel.get_by_role("cell", name="laptop agent", exact=True)).to_be_visible()
    page.reload()
    expect(page.locator("#live-key")).to_have_count(0)
    assert shown not in page.content()

    body, content_type = body_of(export(None))  # no resource attribute at all
    request = urllib.request.Request(
        f"{live_server.url}{ENDPOINT}",
        data=body,
        headers={"Content-Type": content_type, "Authorization": f"Token {shown}"},
    )
    with urllib.request.urlopen(request) as response:
        assert response.status == 200
    assert TraceSpan.objects.filter(trace__suite=suite, trace__label="gpt-4o").count() == len(
        FIXTURE_SPANS
    )
    assert violations == []
    assert errors == []
