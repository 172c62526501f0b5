"""Signing in and out in a real browser."""

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_a_user_signs_in_sees_the_library_and_signs_out(page, live_server, user, password):
    page.goto(f"{live_server.url}/")
    assert "/accounts/login/" in page.url
    page.get_by_label("Username").fill(user.username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{live_server.url}/")
    assert page.get_by_role("heading", name="Library").is_visible()
    assert page.get_by_text(user.username).first.is_visible()
    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url("**/accounts/login/")


def test_a_wrong_password_is_refused_with_a_message(page, live_server, user):
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("Username").fill(user.username)
    page.get_by_label("Password").fill("wrong")
    page.get_by_role("button", name="Sign in").click()
    assert page.get_by_text("Please enter a correct username and password").is_visible()
