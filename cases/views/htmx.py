"""How a page answers htmx: a form that goes elsewhere when done (one way, for htmx and
not), and a change to announce."""

from django.shortcuts import redirect
from django_htmx.http import HttpResponseClientRedirect, trigger_client_event


def redirect_to(request, url: str):
    """Go to ``url``: a whole page load, for a form sent by htmx too (django-htmx's
    ``HttpResponseClientRedirect``, whose ``HX-Redirect`` htmx follows), else an HTTP
    redirect."""
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)


def announce(response, words: str):
    """Have the page say ``words`` in its live region (base.html's ``#announcer``, filled by
    casebook.js on the ``announce`` event): how a screen reader learns what a swap changed
    (docs/review.md#keyboard-and-screen-readers)."""
    return trigger_client_event(response, "announce", {"value": words}) if words else response
