"""The user's settings: the API token (DESIGN.md §8: ``Authorization: Token KEY``)."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from rest_framework.authtoken.models import Token


@login_required
def account(request):
    """Show whether a token exists; create (or replace) it, or revoke it.

    A new key is shown once, right after it is made: afterwards the page only says that a
    token exists, so a key left on screen is not a key given away."""
    token = Token.objects.filter(user=request.user).first()
    if request.method == "POST":
        if "revoke" in request.POST:
            Token.objects.filter(user=request.user).delete()
            messages.success(request, "API token revoked: requests using it are now refused.")
            return redirect("account")
        Token.objects.filter(user=request.user).delete()
        token = Token.objects.create(user=request.user)
        return render(request, "account/settings.html", {"token": token, "new_key": token.key})
    return render(request, "account/settings.html", {"token": token})
