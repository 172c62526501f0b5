"""How a page answers a form that goes elsewhere when done: one way, for htmx and not."""

from django.shortcuts import redirect
from django_htmx.http import HttpResponseClientRedirect


def redirect_to(request, url: str):
    """Go to ``url``: a whole page load, for a form sent by htmx too (django-htmx's
    ``HttpResponseClientRedirect``, whose ``HX-Redirect`` htmx follows), else an HTTP
    redirect."""
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)
