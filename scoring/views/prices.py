"""A team's own model prices (docs/formats.md#cost): its members see them, its admins add,
change and delete them (``cases.permissions.team_prices_for``). Runs read after a change
are costed at the new prices; a submission is costed again on request (``reprice``)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from cases.permissions import can_change_prices, team_prices_for
from scoring.forms import ModelPriceForm
from scoring.models import ModelPrice


def _page(request, team, *, form=None, edited=None):
    prices = list(ModelPrice.objects.filter(team=team).order_by("model"))
    may_change = can_change_prices(request.user, team)
    context = {
        "team": team,
        "prices": prices,
        "can_change": may_change,
        "form": form or (ModelPriceForm(team=team) if may_change else None),
        "edited": edited,
    }
    return render(request, "scoring/team_prices.html", context)


@login_required
def team_prices(request, slug):
    """The team's prices; a POST (its admins) adds one."""
    team = team_prices_for(request.user, slug, change=request.method == "POST")
    if request.method != "POST":
        return _page(request, team)
    form = ModelPriceForm(request.POST, team=team)
    if not form.is_valid():
        return _page(request, team, form=form)
    saved = form.save()
    messages.success(request, f"Runs of {saved.model} read from now are costed at its price.")
    return redirect(reverse("team_prices", args=[team.slug]))


@login_required
@require_POST
def price_edit(request, slug, price_id):
    """Change one of the team's prices (its admins)."""
    team = team_prices_for(request.user, slug, change=True)
    price = get_object_or_404(ModelPrice, pk=price_id, team=team)
    form = ModelPriceForm(request.POST, instance=price, team=team)
    if not form.is_valid():
        return _page(request, team, form=form, edited=price.pk)
    form.save()
    messages.success(request, f"The price of {price.model} is changed.")
    return redirect(reverse("team_prices", args=[team.slug]))


@login_required
@require_POST
def price_delete(request, slug, price_id):
    """Delete one of the team's prices (its admins): its model is costed at the catalogue's
    price again, if it has one."""
    team = team_prices_for(request.user, slug, change=True)
    price = get_object_or_404(ModelPrice, pk=price_id, team=team)
    price.delete()
    messages.success(request, f"The price of {price.model} is deleted.")
    return redirect(reverse("team_prices", args=[team.slug]))
