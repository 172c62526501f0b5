"""The settings page: named API tokens made (each key shown once), given a new key and
revoked; the tokens then authenticate API calls until revoked or the password changes (by
the settings page's change or by a reset). Password reset is offered only with mail."""

import re

import pytest
from django.core import mail
from django.urls import reverse
from rest_framework.authtoken.models import Token

from cases.models import ApiToken
from tests.support.pages import escaped, text

SUITES = "/api/suites/"


def shown_key(html: str) -> str | None:
    match = re.search(r'<code id="new-key">([0-9a-f]{40})</code>', html)
    return match[1] if match else None


def make_token(client, name="ci") -> str:
    key = shown_key(text(client.post("/settings/", {"create": "1", "name": name})))
    assert key
    return key


def token_id(user, name) -> int:
    return ApiToken.objects.get(user=user, name=name).pk


def test_settings_page_says_there_is_no_token(as_user, editor):
    html = text(as_user(editor).get("/settings/"))
    assert "You have no token." in html
    assert "Create token" in html
    assert "Revoke" not in html


def test_a_new_tokens_key_is_shown_once_and_only_its_hash_is_kept(as_user, editor):
    client = as_user(editor)
    key = make_token(client, "nightly CI")
    token = ApiToken.objects.get(user=editor)
    assert token.name == "nightly CI"
    assert key not in token.key_hash
    again = text(client.get("/settings/"))
    assert key not in again
    assert "nightly CI" in again
    assert "never" in again  # not used yet


def test_several_named_tokens_each_revoked_alone(as_user, editor, api_client):
    client = as_user(editor)
    nightly, release = make_token(client, "nightly"), make_token(client, "release")
    html = text(client.get("/settings/"))
    assert html.index("nightly") < html.index("release")
    response = client.post("/settings/", {"revoke": token_id(editor, "nightly")}, follow=True)
    assert "Token “nightly” revoked" in text(response)
    refused(api_client.get(SUITES, headers={"Authorization": f"Token {nightly}"}))
    assert api_client.get(SUITES, headers={"Authorization": f"Token {release}"}).status_code == 200


def test_a_name_is_used_once_per_user_and_is_required(as_user, editor, viewer):
    client = as_user(editor)
    make_token(client, "ci")
    response = client.post("/settings/", {"create": "1", "name": "ci"})
    assert response.status_code == 422
    assert "You already have a token named “ci”." in text(response)
    assert client.post("/settings/", {"create": "1", "name": ""}).status_code == 422
    assert ApiToken.objects.filter(user=editor).count() == 1
    make_token(as_user(viewer), "ci")  # another user's token may share the name


def test_a_tokens_name_is_shown_escaped(as_user, editor):
    name = '<script>alert(1)</script>"'
    client = as_user(editor)
    make_token(client, name)
    html = text(client.get("/settings/"))
    assert name not in html
    assert escaped(name) in html


def test_a_new_key_for_a_token_keeps_its_name_and_drops_the_old_key(as_user, editor, api_client):
    client = as_user(editor)
    old = make_token(client, "ci")
    html = text(client.post("/settings/", {"replace": token_id(editor, "ci")}))
    new = shown_key(html)
    assert new
    assert new != old
    assert "Your new token “ci”" in html
    assert list(ApiToken.objects.filter(user=editor).values_list("name", flat=True)) == ["ci"]
    refused(api_client.get(SUITES, headers={"Authorization": f"Token {old}"}))
    assert api_client.get(SUITES, headers={"Authorization": f"Token {new}"}).status_code == 200


def test_no_one_revokes_or_replaces_another_users_token(as_user, editor, viewer):
    make_token(as_user(editor), "ci")
    theirs = token_id(editor, "ci")
    client = as_user(viewer)
    assert client.post("/settings/", {"revoke": theirs}).status_code == 404
    assert client.post("/settings/", {"replace": theirs}).status_code == 404
    assert client.post("/settings/", {"revoke": "x"}).status_code == 404
    assert client.post("/settings/", {"replace": "99999999999999999999"}).status_code == 404
    assert ApiToken.objects.filter(pk=theirs).exists()


def test_settings_require_sign_in(client, db):
    response = client.post("/settings/", {"create": "1", "name": "ci"})
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")
    assert ApiToken.objects.count() == 0


def refused(response):
    assert response.status_code == 401
    assert response.json() == {"detail": "Invalid token."}


@pytest.fixture
def api_client():
    from django.test import Client

    return Client()


def test_a_token_authenticates_as_its_user_and_records_its_use(
    as_user, editor, suite, private_suite, api_client
):
    """Through the token, the API shows what the user may see and nothing else."""
    key = make_token(as_user(editor))
    refused(api_client.get(SUITES, headers={"Authorization": "Token " + "0" * 40}))
    response = api_client.get(SUITES, headers={"Authorization": f"Token {key}"})
    assert {item["id"] for item in response.json()["results"]} == {suite.pk}
    assert ApiToken.objects.get(user=editor).last_used is not None
    assert "never" not in text(as_user(editor).get("/settings/"))


def test_the_drf_create_token_commands_token_still_works_and_is_listed(as_user, editor, api_client):
    key = Token.objects.create(user=editor).key  # what manage.py drf_create_token makes
    assert api_client.get(SUITES, headers={"Authorization": f"Token {key}"}).status_code == 200
    client = as_user(editor)
    assert "drf_create_token" in text(client.get("/settings/"))
    client.post("/settings/", {"revoke_command_token": "1"})
    refused(api_client.get(SUITES, headers={"Authorization": f"Token {key}"}))


# --- password changes revoke the tokens -------------------------------------------------------


def test_changing_the_password_revokes_every_token(as_user, editor, password, api_client):
    client = as_user(editor)
    key = make_token(client, "ci")
    command_key = Token.objects.create(user=editor).key
    response = client.post(
        reverse("password_change"),
        {
            "old_password": password,
            "new_password1": "a quite new passphrase",
            "new_password2": "a quite new passphrase",
        },
    )
    assert response.status_code == 302, text(response)
    for revoked in (key, command_key):
        refused(api_client.get(SUITES, headers={"Authorization": f"Token {revoked}"}))
    assert not ApiToken.objects.filter(user=editor).exists()


def test_signing_in_with_a_rehashed_password_keeps_the_tokens(
    client, as_user, editor, password, settings
):
    """Django stores a sign-in's password again under a newer hasher: not a change."""
    make_token(as_user(editor), "ci")
    client.logout()
    settings.PASSWORD_HASHERS = [
        "django.contrib.auth.hashers.PBKDF2SHA1PasswordHasher",
        "django.contrib.auth.hashers.MD5PasswordHasher",
    ]
    response = client.post(reverse("login"), {"username": editor.username, "password": password})
    assert response.status_code == 302
    editor.refresh_from_db()
    assert editor.password.startswith("pbkdf2_sha1$")  # re-hashed and saved
    assert ApiToken.objects.filter(user=editor).exists()


@pytest.fixture
def mail_configured(settings):
    settings.EMAIL_URL = "smtp://mail.example.com:25"  # the test runner's backend sends nothing


def test_resetting_the_password_revokes_every_token(
    client, editor, mail_configured, api_client, as_user
):
    key = make_token(as_user(editor), "ci")
    client.logout()
    response = client.post(reverse("password_reset"), {"email": editor.email})
    assert response.status_code == 302
    (message,) = mail.outbox
    link = re.search(r"https?://[^/]+(/accounts/reset/\S+/)", message.body)[1]
    form_url = client.get(link)["Location"]  # the token moves out of the URL
    response = client.post(
        form_url,
        {"new_password1": "a quite new passphrase", "new_password2": "a quite new passphrase"},
    )
    assert response.status_code == 302, text(response)
    refused(api_client.get(SUITES, headers={"Authorization": f"Token {key}"}))


# --- password reset only with mail ------------------------------------------------------------


def test_without_mail_no_reset_is_offered(client, db):
    assert "Forgot your password?" not in text(client.get(reverse("login")))
    for url in (
        reverse("password_reset"),
        reverse("password_reset_done"),
        reverse("password_reset_confirm", args=["MQ", "set-password"]),
        reverse("password_reset_complete"),
    ):
        response = client.get(url)
        assert response.status_code == 404
        assert "manage.py changepassword" in text(response)
    assert client.post(reverse("password_reset"), {"email": "a@example.com"}).status_code == 404
    assert not mail.outbox


def test_with_mail_the_sign_in_page_offers_a_reset_that_mails_a_link(
    client, editor, mail_configured
):
    html = text(client.get(reverse("login")))
    assert f'href="{reverse("password_reset")}">Forgot your password?' in html
    assert client.get(reverse("password_reset")).status_code == 200
    client.post(reverse("password_reset"), {"email": editor.email})
    assert [m.to for m in mail.outbox] == [[editor.email]]
