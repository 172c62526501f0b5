"""The settings page: an API token made, shown once, replaced and revoked; the token then
authenticates API calls."""

import re

import pytest
from django.urls import NoReverseMatch, reverse
from rest_framework.authtoken.models import Token

from .conftest import text


def api_url() -> str:
    """GET /api/suites/ where the suites API exists; else the schema (which needs sign-in)."""
    try:
        return reverse("api:suite-list")
    except NoReverseMatch:
        return "/api/schema/"


def shown_key(html: str) -> str | None:
    match = re.search(r'<code id="new-key">([0-9a-f]{40})</code>', html)
    return match[1] if match else None


def test_settings_page_says_there_is_no_token(as_user, editor):
    html = text(as_user(editor).get("/settings/"))
    assert "You have no token." in html
    assert "Create token" in html
    assert "Revoke" not in html


def test_creating_a_token_shows_its_key_once(as_user, editor):
    client = as_user(editor)
    html = text(client.post("/settings/", {"create": "1"}))
    key = shown_key(html)
    assert key == Token.objects.get(user=editor).key
    again = text(client.get("/settings/"))
    assert key not in again
    assert "You have a token, created" in again
    assert "Replace token" in again


def test_replacing_a_token_makes_a_new_key_and_drops_the_old(as_user, editor):
    client = as_user(editor)
    old = shown_key(text(client.post("/settings/", {"create": "1"})))
    new = shown_key(text(client.post("/settings/", {"create": "1"})))
    assert new
    assert old
    assert new != old
    assert list(Token.objects.filter(user=editor).values_list("key", flat=True)) == [new]


def test_revoking_a_token_deletes_it(as_user, editor):
    client = as_user(editor)
    client.post("/settings/", {"create": "1"})
    response = client.post("/settings/", {"revoke": "1"}, follow=True)
    assert not Token.objects.filter(user=editor).exists()
    assert "API token revoked: requests using it are now refused." in text(response)
    assert "You have no token." in text(response)


def test_each_user_has_their_own_token(as_user, editor, viewer):
    client = as_user(editor)
    client.post("/settings/", {"create": "1"})
    as_user(viewer).post("/settings/", {"create": "1"})
    as_user(viewer).post("/settings/", {"revoke": "1"})
    assert Token.objects.filter(user=editor).exists()
    assert not Token.objects.filter(user=viewer).exists()


def test_settings_require_sign_in(client, db):
    response = client.post("/settings/", {"create": "1"})
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")
    assert Token.objects.count() == 0


def refused(response):
    """DRF refuses a bad token with 401, or 403 when session authentication is listed first
    (it sends no WWW-Authenticate challenge); either way it says the token is invalid."""
    assert response.status_code in (401, 403)
    assert response.json() == {"detail": "Invalid token."}


@pytest.fixture
def api_client():
    from django.test import Client

    return Client()


def test_the_token_authenticates_api_calls_until_revoked(as_user, editor, api_client):
    key = shown_key(text(as_user(editor).post("/settings/", {"create": "1"})))
    url = api_url()
    assert api_client.get(url).status_code in (401, 403)
    assert api_client.get(url, headers={"Authorization": f"Token {key}"}).status_code == 200
    as_user(editor).post("/settings/", {"revoke": "1"})
    refused(api_client.get(url, headers={"Authorization": f"Token {key}"}))


def test_a_replaced_token_no_longer_authenticates(as_user, editor, api_client):
    client = as_user(editor)
    old = shown_key(text(client.post("/settings/", {"create": "1"})))
    new = shown_key(text(client.post("/settings/", {"create": "1"})))
    url = api_url()
    refused(api_client.get(url, headers={"Authorization": f"Token {old}"}))
    assert api_client.get(url, headers={"Authorization": f"Token {new}"}).status_code == 200


def test_the_token_acts_as_its_user(as_user, editor, outsider, suite, private_suite, api_client):
    """Through the token, the API shows what the user may see and nothing else."""
    if api_url() == "/api/schema/":
        pytest.skip("the suites API is not there yet")
    key = shown_key(text(as_user(editor).post("/settings/", {"create": "1"})))
    response = api_client.get(api_url(), headers={"Authorization": f"Token {key}"})
    ids = {item["id"] for item in response.json()["results"]}
    assert ids == {suite.pk}
