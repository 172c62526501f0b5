"""Team pages: the user's teams, and a team's members and roles (its admins change them)."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Count, OuterRef, Subquery
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST
from django.views.decorators.vary import vary_on_headers

from .. import services
from ..forms import LabelForm, MemberForm, RoleForm, TeamForm
from ..models import LabelColour, Membership, ReviewLabel, Role, Suite
from ..permissions import (
    LABELS_MANAGED_BY,
    can_manage_labels,
    can_manage_team,
    role_in,
    team_for,
    teams_of,
)


@login_required
def team_list(request):
    form = TeamForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        team = services.create_team(form.cleaned_data["name"], request.user)
        messages.success(request, f"Team {team.name} created; you are its admin.")
        return redirect(team)
    # Counted in subqueries: teams_of joins the user's own membership, so a join-and-count
    # would count that one row.
    members = Membership.objects.filter(team=OuterRef("pk")).values("team")
    suites = Suite.objects.filter(team=OuterRef("pk")).values("team")
    teams = teams_of(request.user).annotate(
        member_count=Subquery(members.annotate(n=Count("pk")).values("n")),
        suite_count=Subquery(suites.annotate(n=Count("pk")).values("n")),
    )
    roles = dict(Membership.objects.filter(user=request.user).values_list("team_id", "role"))
    rows = [(team, roles.get(team.pk)) for team in teams]
    return render(request, "cases/team_list.html", {"rows": rows, "form": form})


def _members_context(request, team, form=None):
    return {
        "team": team,
        "members": team.memberships.select_related("user").order_by("user__username"),
        "can_manage": can_manage_team(request.user, team),
        "my_role": role_in(request.user, team),
        "form": form or MemberForm(team=team),
        "roles": Role.choices,
        "suites": team.suites.order_by("name"),
    } | _labels_context(request, team)


def _labels_context(request, team):
    can_manage = can_manage_labels(request.user, team)
    return {
        "labels": team.review_labels.all(),
        "can_manage_labels": can_manage,
        "label_form": LabelForm(team=team) if can_manage else None,
        "colours": LabelColour.choices,
    }


@login_required
@vary_on_headers("HX-Request")
def team_detail(request, slug):
    team = team_for(request.user, slug)
    return render(request, "cases/team_detail.html", _members_context(request, team))


@login_required
@require_POST
def member_add(request, slug):
    team = team_for(request.user, slug, at_least=Role.ADMIN)
    form = MemberForm(request.POST, team=team)
    if form.is_valid():
        services.set_member_role(team, form.user, form.cleaned_data["role"])
        form = None
    template = "cases/team_detail.html#members" if request.htmx else "cases/team_detail.html"
    if not request.htmx and form is None:
        return redirect(team)
    return render(request, template, _members_context(request, team, form))


@login_required
@require_POST
def member_change(request, slug, membership_id):
    """Change a member's role, or remove them (``remove``); a team keeps at least one admin."""
    team = team_for(request.user, slug, at_least=Role.ADMIN)
    membership = get_object_or_404(Membership, pk=membership_id, team=team)
    form = RoleForm(request.POST)
    try:
        if "remove" in request.POST:
            services.remove_member(membership)
        elif form.is_valid():
            services.set_member_role(team, membership.user, form.cleaned_data["role"])
        else:
            messages.error(request, "Choose a role: viewer, editor or admin.")
    except services.LastAdmin as exc:
        messages.error(request, str(exc))
    if role_in(request.user, team) is None:
        return redirect("teams")  # the user removed themselves
    template = "cases/team_detail.html#members" if request.htmx else "cases/team_detail.html"
    if not request.htmx:
        return redirect(team)
    return render(request, template, _members_context(request, team))


def _label_saved(request, team, form, refused: dict):
    """Save a label form: the team page (a message if refused), or under htmx the labels
    part again, with ``refused`` (the form and its errors) in its context if refused."""
    saved = form.is_valid()
    if saved:
        try:
            services.save_label(form.save(commit=False))
        except services.LabelTaken as exc:
            form.add_error(None, str(exc))
            saved = False
    if not request.htmx:
        if not saved:
            messages.error(request, " ".join(e for errors in form.errors.values() for e in errors))
        return redirect(team)
    context = {"team": team} | _labels_context(request, team) | ({} if saved else refused)
    return render(request, "cases/team_detail.html#labels", context, status=200 if saved else 422)


@login_required
@require_POST
@vary_on_headers("HX-Request")
def label_add(request, slug):
    """Add a review label to the team (its editors and admins)."""
    team = team_for(request.user, slug, at_least=LABELS_MANAGED_BY)
    form = LabelForm(request.POST, team=team)
    return _label_saved(request, team, form, {"label_form": form})


@login_required
@require_POST
@vary_on_headers("HX-Request")
def label_edit(request, slug, label_id):
    """Rename a review label, or change its key or colour (the team's editors and admins):
    the runs that have it show it as it is called now."""
    team = team_for(request.user, slug, at_least=LABELS_MANAGED_BY)
    label = get_object_or_404(ReviewLabel, pk=label_id, team=team)
    form = LabelForm(request.POST, instance=label, team=team)
    return _label_saved(request, team, form, {"edit_form": form, "edited": label.pk})


@login_required
@require_POST
@vary_on_headers("HX-Request")
def label_delete(request, slug, label_id):
    """Delete a review label: it comes off every run (their history keeps its name)."""
    team = team_for(request.user, slug, at_least=LABELS_MANAGED_BY)
    get_object_or_404(ReviewLabel, pk=label_id, team=team).delete()
    if not request.htmx:
        return redirect(team)
    return render(
        request, "cases/team_detail.html#labels", {"team": team} | _labels_context(request, team)
    )
