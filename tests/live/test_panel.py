"""The suite page's "Send live traces" panel (docs/live-traces.md#the-suite-pages-panel): shown
to the suite's editors only, with the exporter's settings and a placeholder until a suite
token is made; the key shown once; the tokens listed and revoked there and on the settings
page; and the instrumentations, from one data module, named in the README and the docs."""

from __future__ import annotations

import html
import re

import pytest
from rest_framework.test import APIClient

from cases import tokens
from cases.models import ApiToken
from scoring.importers.otel import INSTRUMENTATIONS
from scoring.models import TraceSpan
from tests.support.otlp_data import FIXTURE_SPANS, export, post, status_of
from tests.support.pages import HX, ROOT, escaped, text

pytestmark = pytest.mark.django_db

ENDPOINT = "OTEL_EXPORTER_OTLP_ENDPOINT=http://testserver/otlp"
PROTOCOL = "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf"


def shown_key(page: str) -> str | None:
    found = re.search(r'<code id="live-key">([0-9a-f]{40})</code>', page)
    return found[1] if found else None


def make_token(client, suite, *, name="agent", label="", htmx=True):
    headers = HX if htmx else {}
    return client.post(
        f"/suites/{suite.pk}/tokens/", {"name": name, "label": label}, headers=headers
    )


def test_editors_see_the_settings_with_a_placeholder_until_a_token_is_made(as_user, editor, suite):
    page = text(as_user(editor).get(f"/suites/{suite.pk}/"))
    assert "Send live traces" in page
    assert ENDPOINT in page
    assert "OTEL_EXPORTER_OTLP_HEADERS=Authorization=Token &lt;token&gt;" in page
    assert PROTOCOL in page
    assert "casebook.case" in page
    assert "No suite token yet." in page
    assert "Make a suite token" in page


def test_viewers_see_no_panel_and_no_token_form(as_user, viewer, suite):
    page = text(as_user(viewer).get(f"/suites/{suite.pk}/"))
    assert "Send live traces" not in page
    assert "Make a suite token" not in page
    assert "OTEL_EXPORTER_OTLP" not in page


def test_a_new_tokens_key_is_shown_once_in_the_settings_and_only_its_hash_kept(
    as_user, editor, suite
):
    client = as_user(editor)
    response = make_token(client, suite, name="laptop", label="gpt-4o")
    assert response.status_code == 200
    panel = text(response)
    key = shown_key(panel)
    assert key
    assert f"OTEL_EXPORTER_OTLP_HEADERS=Authorization=Token {key}" in panel
    assert ENDPOINT in panel
    assert PROTOCOL in panel
    assert f"TRACELOOP_HEADERS=Authorization=Token {key}" in panel  # OpenLLMetry's own
    assert "<html" not in panel  # the panel alone, under htmx
    token = ApiToken.objects.get(user=editor)
    assert (token.suite, token.label, token.name) == (suite, "gpt-4o", "laptop")
    assert key not in token.key_hash
    again = text(client.get(f"/suites/{suite.pk}/"))
    assert key not in again
    assert "laptop" in again
    assert "gpt-4o" in again
    settings = text(client.get("/settings/"))
    assert key not in settings
    assert "live traces of" in settings
    assert escaped(suite.name) in settings


def test_without_htmx_the_whole_page_shows_the_key(as_user, editor, suite):
    response = make_token(as_user(editor), suite, htmx=False)
    assert response.status_code == 200
    assert "<html" in text(response)
    assert shown_key(text(response))


def test_a_name_taken_for_the_suite_or_no_name_is_refused_saying_so(as_user, editor, suite):
    client = as_user(editor)
    make_token(client, suite, name="agent")
    panel = text(make_token(client, suite, name="agent"))
    assert shown_key(panel) is None
    assert escaped("You already have a token named “agent” for this suite.") in panel
    assert make_token(client, suite, name="", htmx=False).status_code == 422
    assert ApiToken.objects.count() == 1
    # A named token of the settings page may share the name.
    assert tokens.create(editor, "agent")[0].suite is None


def test_the_key_posts_an_export_without_resource_attributes_into_the_suite(as_user, editor, suite):
    key = shown_key(text(make_token(as_user(editor), suite)))
    exporter = APIClient()
    exporter.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    response = post(exporter, export(None))
    assert response.status_code == 200, status_of(response).message
    assert TraceSpan.objects.filter(trace__suite=suite).count() == len(FIXTURE_SPANS)


def test_editors_revoke_their_own_tokens_and_admins_any(as_user, editor, admin, suite):
    mine, _ = tokens.create(editor, "mine", suite=suite)
    theirs, _ = tokens.create(admin, "theirs", suite=suite)
    client = as_user(editor)
    page = text(client.get(f"/suites/{suite.pk}/"))
    assert "mine" in page
    assert "theirs" not in page
    assert client.post(f"/suites/{suite.pk}/tokens/{theirs.pk}/revoke/").status_code == 404
    panel = text(client.post(f"/suites/{suite.pk}/tokens/{mine.pk}/revoke/", headers=HX))
    assert "No suite token yet." in panel
    mine, _ = tokens.create(editor, "mine", suite=suite)
    client = as_user(admin)
    page = text(client.get(f"/suites/{suite.pk}/"))
    assert "mine" in page
    assert "theirs" in page
    response = client.post(f"/suites/{suite.pk}/tokens/{mine.pk}/revoke/")
    assert response.status_code == 302
    assert response["Location"] == f"/suites/{suite.pk}/#live"
    assert list(ApiToken.objects.values_list("name", flat=True)) == ["theirs"]


def test_token_names_and_labels_are_shown_escaped(as_user, editor, suite):
    client = as_user(editor)
    name, label = "<b>agent</b>", '"><script>x</script>'
    panel = text(make_token(client, suite, name=name, label=label))
    assert "<b>agent</b>" not in panel
    assert "<script>x" not in panel
    assert escaped(name) in panel
    settings = text(client.get("/settings/"))
    assert "<script>x" not in settings
    assert escaped(label) in settings


def test_every_instrumentation_is_on_the_panel_and_in_the_readme_and_the_docs(
    as_user, editor, suite
):
    page = html.unescape(text(as_user(editor).get(f"/suites/{suite.pk}/")))
    readme = (ROOT / "README.md").read_text()
    docs = (ROOT / "docs/live-traces.md").read_text()
    for each in INSTRUMENTATIONS:
        assert each.name in page
        assert each.via in page
        assert each.install in page
        assert each.code in page
        assert each.docs in page
        assert f"Tried with {each.tried}." in page
        assert each.name in readme, each.name
        # Its row of the page's list: the library, the instrumentation, the versions tried.
        assert f"| {each.name} | {each.via} | {each.tried} |" in docs, each.title
        for line in each.settings:
            assert line.split("=", 1)[0] in docs, line
