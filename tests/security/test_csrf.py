"""CSRF on every state-changing request: every URL pattern, pages, admin and API, is POSTed by
a signed-in admin (a session cookie, as a browser sends it) without a CSRF token, plain and as
htmx, and must be refused with 403 before any view runs.

Token-authenticated API requests need no CSRF token by design: a browser never attaches an
``Authorization: Token`` header on its own, so a forged cross-site request cannot carry one
(DRF's TokenAuthentication does not check CSRF; its SessionAuthentication does). An endpoint
that accepts only tokens (the OTLP receiver, docs/live-traces.md) refuses the session itself:
401, whatever the CSRF token.
"""

import pytest
from django.test import Client
from django.urls import NoReverseMatch, get_resolver, reverse
from django.urls.resolvers import URLResolver
from rest_framework.authtoken.models import Token

from cases.models import User

# A value for every URL parameter; a pattern's regex picks the one it accepts.
CANDIDATE_VALUES = ("1", "a", "a-b", "1.json", "cases")  # the last for admin:app_list
TOKEN_ONLY = {"otlp_traces", "otlp_logs"}  # routes a session does not authenticate at all


def _patterns(patterns=None, namespace=None):
    """(route name, regex of its parameters) for every named URL pattern."""
    for pattern in get_resolver().url_patterns if patterns is None else patterns:
        if isinstance(pattern, URLResolver):
            yield from _patterns(pattern.url_patterns, pattern.namespace or namespace)
        elif pattern.name:
            name = f"{namespace}:{pattern.name}" if namespace else pattern.name
            yield name, pattern.pattern.regex.groupindex


def _url(name, parameters):
    for value in CANDIDATE_VALUES:
        try:
            return reverse(name, kwargs=dict.fromkeys(parameters, value))
        except NoReverseMatch:
            continue
    raise AssertionError(f"no URL built for {name}")


def _routes():
    routes = {}
    for name, parameters in _patterns():
        routes.setdefault(name, parameters)
    return sorted(routes.items())


@pytest.fixture
def admin_client(db, password):
    """A superuser (who may use every page, the admin's too) signed in with a session
    cookie, and CSRF enforced as in a browser."""
    user = User.objects.create_superuser("root", password=password)
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    return client


def _assert_refused_for_csrf(response):
    assert response.status_code == 403, (response.status_code, response.content[:200])
    # The reason, from Django's CSRF view or from DRF (whose HTML renderers leave it out of
    # the body, as on the API docs page).
    reason = str(response.data["detail"]) if hasattr(response, "data") else response.text
    assert "CSRF" in reason, reason[:300]


@pytest.mark.parametrize(
    ("name", "parameters"), _routes(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_a_post_without_a_csrf_token_is_refused(admin_client, name, parameters):
    url = _url(name, parameters)
    if name in TOKEN_ONLY:
        assert admin_client.post(url, {"name": "x"}).status_code == 401
        return
    _assert_refused_for_csrf(admin_client.post(url, {"name": "x"}))
    # htmx sends its requests with HX-Request; the token comes only from base.html's
    # hx-headers, so one without it is a forgery too.
    _assert_refused_for_csrf(admin_client.post(url, {"name": "x"}, HTTP_HX_REQUEST="true"))


@pytest.mark.parametrize("method", ["put", "patch", "delete"])
def test_other_unsafe_methods_without_a_token_are_refused_too(admin_client, method):
    response = getattr(admin_client, method)(
        reverse("api:suite-detail", kwargs={"pk": 1}), "{}", content_type="application/json"
    )
    _assert_refused_for_csrf(response)


def test_the_same_post_with_the_token_gets_through(admin_client):
    """The control: the refusals above are for the missing token, not for the request."""
    admin_client.get(reverse("teams"))  # sets the CSRF cookie
    token = admin_client.cookies["csrftoken"].value
    response = admin_client.post(
        reverse("api:team-list"), {"name": "Red team"}, HTTP_X_CSRFTOKEN=token
    )
    assert response.status_code == 201, response.content[:300]


def test_token_authenticated_api_requests_need_no_csrf_token(db, password):
    user = User.objects.create_user("bot", password=password)
    client = Client(
        enforce_csrf_checks=True,
        HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}",
    )
    response = client.post(reverse("api:team-list"), {"name": "Bots"})
    assert response.status_code == 201, response.content[:300]


def test_every_route_was_walked():
    """Nothing hidden from the walk by the candidate values: every named route is in it."""
    walked = {name for name, _ in _routes()}
    assert {
        "home",
        "run_review",
        "submission_review",
        "queue_next",  # reserves a run: a forged POST must not hand one out
        "login",
        "logout",
        "api:team-list",
    } <= walked
    assert any(name.startswith("admin:") for name in walked)
