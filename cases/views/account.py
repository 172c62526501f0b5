"""The user's settings: named API tokens (docs/api.md#authentication: ``Authorization: Token KEY``)
and suite tokens, which are made on a suite's page, and the sign-in page's and password reset's
dependence on mail being configured."""

from functools import wraps

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import LoginView
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from rest_framework.authtoken.models import Token

from .. import tokens
from ..forms import TokenNameForm
from ..models import ApiToken
from ..permissions import visible_suites


@login_required
def account(request):
    """List the user's tokens; make one, give one a new key, or revoke one.

    A new key is shown once, right after it is made: afterwards the page only lists the
    token's name and dates, so a key left on screen is not a key given away."""
    form, new, new_key = TokenNameForm(), None, None
    if request.method == "POST":
        if revoked := _revoke(request):
            messages.success(request, revoked)
            return redirect("account")
        if "replace" in request.POST:
            new, new_key = tokens.replace(_own_token(request, "replace"))
        else:
            form = TokenNameForm(request.POST)
            if form.is_valid():
                try:
                    new, new_key = tokens.create(request.user, form.cleaned_data["name"])
                    form = TokenNameForm()
                except tokens.NameTaken as exc:
                    form.add_error("name", str(exc))
    context = {**_tokens_of(request.user), "form": form, "new": new, "new_key": new_key}
    return render(request, "account/settings.html", context, status=422 if form.errors else 200)


def _revoke(request) -> str | None:
    """Revoke the token the form names, if it asks to; what to tell the user then."""
    if "revoke" in request.POST:
        token = _own_token(request, "revoke")
        token.delete()
        return f"Token “{token.name}” revoked: requests using it are now refused."
    if "revoke_command_token" in request.POST:
        Token.objects.filter(user=request.user).delete()
        return "Token revoked: requests using it are now refused."
    return None


def _tokens_of(user) -> dict:
    mine = ApiToken.objects.filter(user=user).select_related("suite")
    return {
        "tokens": mine,
        # A suite token's suite is named only while its user may see it.
        "seen_suites": set(
            visible_suites(user).filter(pk__in=mine.values("suite")).values_list("pk", flat=True)
        ),
        "command_token": Token.objects.filter(user=user).first(),
    }


def _own_token(request, field: str) -> ApiToken:
    """The user's token whose id the form sent in ``field``; 404 for any other value."""
    value = request.POST[field]
    if not value.isdigit():
        raise Http404("No such token.")
    return get_object_or_404(ApiToken, user=request.user, pk=value)


class SignInView(LoginView):
    """The sign-in page; it offers a password reset only when mail can send one."""

    def get_context_data(self, **kwargs):
        return super().get_context_data(**kwargs) | {"password_reset": bool(settings.EMAIL_URL)}


def mail_required(view):
    """The password reset's pages, when mail is configured (EMAIL_URL); otherwise a 404 page
    saying who can set a new password."""

    @wraps(view)
    def wrapped(request, *args, **kwargs):
        if not settings.EMAIL_URL:
            return render(request, "registration/password_reset_unavailable.html", status=404)
        return view(request, *args, **kwargs)

    return wrapped
