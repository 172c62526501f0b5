"""DRF's side of ``cases.permissions``: these classes decide nothing themselves.

Every answer comes from ``cases.permissions``, the module the pages ask too, so the API and
the pages cannot drift apart: what a user may not see answers 404, what they may see but
not change answers 403.
"""

from __future__ import annotations

from contextlib import contextmanager

from django.core.exceptions import PermissionDenied
from django.http import Http404
from rest_framework import exceptions
from rest_framework.permissions import SAFE_METHODS, IsAuthenticated

from cases import permissions as rules
from cases.models import Role, Team


def _writes(request) -> bool:
    return request.method not in SAFE_METHODS


@contextmanager
def _as_api_errors():
    """Django's 404 and 403 as DRF's own, which DRF expects of permission checks (the
    browsable API, asking whether to show a form, catches only those)."""
    try:
        yield
    except Http404 as exc:
        raise exceptions.NotFound(str(exc)) from None
    except PermissionDenied as exc:
        raise exceptions.PermissionDenied(str(exc)) from None


class CanSeeSuite(IsAuthenticated):
    """On a suite object: whoever may see it (else 404).

    The views' querysets are ``visible_suites``, so a suite the caller may not see is
    already a 404 before this runs; the check is repeated so that a view with a wider
    queryset still cannot leak one.
    """

    def has_object_permission(self, request, view, obj):
        if not rules.can_view_suite(request.user, obj):
            raise exceptions.NotFound("No such suite.")
        return True


class SuiteAccess(CanSeeSuite):
    """On a suite object: read by whoever may see it, changed by its editors and admins."""

    message = "Only the team's editors and admins change its suites."

    def has_object_permission(self, request, view, obj):
        super().has_object_permission(request, view, obj)
        return not _writes(request) or rules.can_edit_suite(request.user, obj)


class InSuiteAccess(IsAuthenticated):
    """For views under ``/suites/{suite_pk}/`` (cases, versions).

    Reads need the suite visible (else 404), writes need its editors and admins (else 403).
    The suite is left on the view as ``view.suite``.
    """

    def has_permission(self, request, view):
        if not super().has_permission(request, view):
            return False
        with _as_api_errors():
            view.suite = rules.suite_for(
                request.user, view.kwargs["suite_pk"], edit=_writes(request)
            )
        return True


class TeamMembersAccess(IsAuthenticated):
    """For ``/teams/{team_slug}/members/``: members read the list, admins change it.

    Outsiders get 404, members who are not admins 403. The team is left as ``view.team``.
    """

    def has_permission(self, request, view):
        if not super().has_permission(request, view):
            return False
        with _as_api_errors():
            at_least = Role.ADMIN if _writes(request) else Role.VIEWER
            view.team = rules.team_for(request.user, view.kwargs["team_slug"], at_least=at_least)
        return True


class TeamLabelsAccess(IsAuthenticated):
    """For ``/teams/{team_slug}/labels/``: members read them, editors and admins change
    them (``rules.LABELS_MANAGED_BY``). Outsiders get 404. The team is left as
    ``view.team``."""

    def has_permission(self, request, view):
        if not super().has_permission(request, view):
            return False
        with _as_api_errors():
            at_least = rules.LABELS_MANAGED_BY if _writes(request) else Role.VIEWER
            view.team = rules.team_for(request.user, view.kwargs["team_slug"], at_least=at_least)
        return True


class TeamPricesAccess(IsAuthenticated):
    """For ``/teams/{team_slug}/prices/``: members read a team's model prices, its admins
    change them (``rules.team_prices_for``). The team is left as ``view.team``."""

    def has_permission(self, request, view):
        if not super().has_permission(request, view):
            return False
        with _as_api_errors():
            view.team = rules.team_prices_for(
                request.user, view.kwargs["team_slug"], change=_writes(request)
            )
        return True


def team_to_author_in(user, slug: str) -> Team:
    """The team, if the user may add suites to it: 404 unless a member, 403 unless an editor
    or admin (the role ``can_edit_suite`` asks of a suite's team)."""
    with _as_api_errors():
        return rules.team_for(user, slug, at_least=Role.EDITOR)
