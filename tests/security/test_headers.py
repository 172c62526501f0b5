"""The Content Security Policy header: every page carries it, strict; the API docs page alone
loosens it, for Swagger UI's files and styles, never for inline script."""

import re
from pathlib import Path

import pytest
from django.urls import reverse

TEMPLATES = Path(__file__).parents[2] / "templates"

STRICT = {
    "default-src": "'self'",
    "script-src": "'self'",
    "style-src": "'self'",
    "img-src": "'self' data:",
    "object-src": "'none'",
    "base-uri": "'self'",
    "frame-ancestors": "'none'",
    "form-action": "'self'",
}


def policy(response) -> dict[str, str]:
    header = response["Content-Security-Policy"]
    return dict(part.strip().split(" ", 1) for part in header.split(";") if part.strip())


@pytest.mark.parametrize("route", ["login", "home", "teams", "suite_new"])
def test_every_page_carries_the_strict_policy(client, user, route):
    client.force_login(user)
    response = client.get(reverse(route), HTTP_HX_REQUEST="true" if route == "teams" else "")
    assert policy(response) == STRICT


def test_the_login_page_before_sign_in_carries_it(client, db):
    assert policy(client.get(reverse("login"))) == STRICT


def test_the_api_docs_loosen_styles_only(client, user):
    client.force_login(user)
    docs = policy(client.get(reverse("swagger-ui")))
    assert "'unsafe-inline'" in docs["style-src"]
    assert "'unsafe-inline'" not in docs["script-src"]
    assert "'unsafe-eval'" not in docs["script-src"]
    # Swagger UI is the app's own static files: nothing from another origin
    assert "https:" not in " ".join(docs.values())
    assert docs["script-src"] == "'self'"
    # its page script comes as a file of its own, from the same view
    script = client.get(reverse("swagger-ui") + "?script=")
    assert script.status_code == 200
    assert script["Content-Type"].startswith("application/javascript")


# What a strict policy would block, or what would run code from markup: none in a template.
FORBIDDEN_MARKUP = re.compile(
    r"<script(?![^>]*\bsrc=)[^>]*>|<style|\sstyle=|\son[a-z]+=|hx-on|hx-vars|javascript:|js:",
    re.IGNORECASE,
)


@pytest.mark.parametrize(
    "template", sorted(TEMPLATES.rglob("*.html")), ids=lambda path: str(path.relative_to(TEMPLATES))
)
def test_no_template_has_inline_script_style_or_handlers(template):
    assert FORBIDDEN_MARKUP.findall(template.read_text()) == []


def test_htmx_is_told_to_add_no_style_and_evaluate_nothing(client, user):
    client.force_login(user)
    html = client.get(reverse("home")).text
    assert '"allowEval": false' in html
    assert '"includeIndicatorStyles": false' in html
