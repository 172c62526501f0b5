"""Login throttling (docs/operations.md#site-and-security, cases/throttling.py): failed
sign-ins per (username, address) pair and per address, on the sign-in page and the admin's, and
failed API tokens per address."""

import time

import pytest
from django.core.cache import cache
from django.urls import reverse
from rest_framework.authtoken.models import Token

from cases.models import User

REFUSED = "Too many failed sign-ins"


@pytest.fixture(autouse=True)
def throttling(settings):
    settings.CASEBOOK_SIGN_IN_FAILURES = 3
    settings.CASEBOOK_SIGN_IN_FAILURES_PER_ADDRESS = 5
    settings.CASEBOOK_TOKEN_FAILURES_PER_ADDRESS = 3
    cache.clear()
    yield settings
    cache.clear()


def sign_in(client, username, password, address="10.0.0.1", url=None):
    return client.post(
        url or reverse("login"),
        {"username": username, "password": password},
        REMOTE_ADDR=address,
    )


def test_an_account_is_refused_at_an_address_after_its_failures_even_with_the_right_password(
    client, user, password
):
    for _ in range(3):
        response = sign_in(client, user.username, "wrong")
        assert response.status_code == 200
        assert REFUSED not in response.text
    response = sign_in(client, user.username, password)
    assert response.status_code == 200  # the form again, not the redirect of a success
    assert REFUSED in response.text
    assert "try again in 15 minutes" in response.text
    assert "_auth_user_id" not in client.session


def test_an_attacker_at_one_address_does_not_lock_the_user_out_at_another(client, user, password):
    attacker, owner = "203.0.113.9", "198.51.100.4"
    for _ in range(10):  # past the pair's limit (3) and the address's (5)
        sign_in(client, user.username, "wrong", address=attacker)
    assert REFUSED in sign_in(client, user.username, password, address=attacker).text
    assert sign_in(client, user.username, password, address=owner).status_code == 302


def test_the_pair_is_locked_before_the_address_is(client, user, make_user, password):
    for _ in range(3):
        sign_in(client, user.username, "wrong")
    assert REFUSED in sign_in(client, user.username, password).text
    # the address has 3 failures of its 5: another account signs in from it
    other = make_user("grace")
    assert sign_in(client, other.username, password).status_code == 302


def test_failures_below_the_limit_are_forgotten_after_a_success(client, user, password):
    for _ in range(2):
        sign_in(client, user.username, "wrong")
    assert sign_in(client, user.username, password).status_code == 302
    client.logout()
    for _ in range(2):
        sign_in(client, user.username, "wrong")
    assert sign_in(client, user.username, password).status_code == 302


def test_an_address_is_refused_after_failures_for_many_usernames(client, user, password):
    for number in range(5):
        assert REFUSED not in sign_in(client, f"guess{number}", "wrong").text
    assert REFUSED in sign_in(client, user.username, password).text
    # another address still signs the same user in
    assert sign_in(client, user.username, password, address="10.0.0.9").status_code == 302


def test_the_lockout_ends(client, user, password, throttling):
    throttling.CASEBOOK_THROTTLE_LOCKOUT_SECONDS = 1
    for _ in range(3):
        sign_in(client, user.username, "wrong")
    assert REFUSED in sign_in(client, user.username, password).text
    time.sleep(1.2)
    assert sign_in(client, user.username, password).status_code == 302


def test_the_address_behind_a_proxy_is_the_one_the_proxy_adds(client, user, throttling):
    throttling.CASEBOOK_CLIENT_IP_HEADER = "HTTP_X_FORWARDED_FOR"
    for number in range(5):
        # the client makes up the first entry each time; the proxy's last one is the same
        client.post(
            reverse("login"),
            {"username": f"guess{number}", "password": "wrong"},
            HTTP_X_FORWARDED_FOR=f"1.2.3.{number}, 10.0.0.7",
        )
    response = client.post(
        reverse("login"),
        {"username": user.username, "password": "x"},
        HTTP_X_FORWARDED_FOR="9.9.9.9, 10.0.0.7",
    )
    assert REFUSED in response.text


def test_the_admin_sign_in_is_throttled_too(client, db, password):
    User.objects.create_superuser("root", password=password)
    url = reverse("admin:login")
    for _ in range(3):
        sign_in(client, "root", "wrong", url=url)
    response = sign_in(client, "root", password, url=url)
    assert REFUSED in response.text
    assert "_auth_user_id" not in client.session


def test_bad_api_tokens_from_an_address_are_answered_429(client, user):
    url = reverse("api:team-list")
    for _ in range(3):
        response = client.get(url, HTTP_AUTHORIZATION="Token nope", REMOTE_ADDR="10.0.0.1")
        assert response.status_code == 401
    good = f"Token {Token.objects.create(user=user).key}"
    response = client.get(url, HTTP_AUTHORIZATION=good, REMOTE_ADDR="10.0.0.1")
    assert response.status_code == 429
    assert "invalid token" in response.json()["detail"]
    assert int(response["Retry-After"]) > 0
    # other addresses, and signed-in browsers at this one, are not affected
    assert client.get(url, HTTP_AUTHORIZATION=good, REMOTE_ADDR="10.0.0.2").status_code == 200
    client.force_login(user)
    assert client.get(url, REMOTE_ADDR="10.0.0.1").status_code == 200
