"""Who may see and change what: the one place pages and the API both ask.

- A suite is seen by its team's members, and by every signed-in user when its
  visibility is ``everyone``; it is changed by the team's editors and admins.
- A team is seen by its members; its members are managed by its admins.
- A suite's runs are reviewed by those who may change the suite, so only they are offered,
  and accepted, as the assignee of a run or a review queue (``reviewers``).
- A team's review labels are seen by its members and managed by its editors and admins
  (those who review its runs).
- A team's own model prices (what its runs are costed at) are seen by its members and
  changed by its admins (``team_prices_for``).
- In a double-blind review queue, an item the two reviewers disagree on is resolved by
  someone who may review the suite's runs and is neither of them, or by the queue's maker.
- Cases drafted from a suite's runs are saved into the suite by its editors, or as a new
  suite by anyone who may see the runs into a team where they are an editor
  (``draft_targets``).
- A suite's tokens (suite tokens, which send it live traces) are made by its editors; on
  its page, each editor sees and revokes their own, and its team's admins all of them
  (``suite_tokens``).
- Replaying calls in an environment on request (the case editor's "try a run" of a case
  that replays, a run page's end-state diff) costs a sandbox process's CPU and memory:
  only those who may change the suite ask for it (``can_replay``); scoring replays what
  its uploads and traces need by itself.
- Something a user may not see is answered with 404, never its content; something they
  may see but not change, with 403.
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.db.models import Q, QuerySet
from django.http import Http404

from .models import ApiToken, Membership, Role, Suite, Team, User

_RANK: dict[str, int] = {Role.VIEWER: 1, Role.EDITOR: 2, Role.ADMIN: 3}


def role_in(user, team: Team | int) -> str | None:
    """The user's role in the team, or None for an outsider (or an anonymous user)."""
    if not user.is_authenticated:
        return None
    team_id = team.pk if isinstance(team, Team) else team
    return (
        Membership.objects.filter(team_id=team_id, user=user).values_list("role", flat=True).first()
    )


def has_role(user, team: Team | int, at_least: str) -> bool:
    role = role_in(user, team)
    return role is not None and _RANK[role] >= _RANK[at_least]


def visible_suites(user) -> QuerySet[Suite]:
    if not user.is_authenticated:
        return Suite.objects.none()
    return Suite.objects.filter(
        Q(team__memberships__user=user) | Q(visibility="everyone")
    ).distinct()


def can_view_suite(user, suite: Suite) -> bool:
    if not user.is_authenticated:
        return False
    return suite.visibility == "everyone" or role_in(user, suite.team_id) is not None


def can_edit_suite(user, suite: Suite) -> bool:
    return has_role(user, suite.team_id, Role.EDITOR)


def can_replay(user, suite: Suite) -> bool:
    """Whether the user may have calls replayed in the suite's environments on request."""
    return can_edit_suite(user, suite)


REPLAY_REFUSED = "Only the suite's editors and admins replay calls in its environments."


def suite_tokens(user, suite: Suite) -> QuerySet[ApiToken]:
    """The suite's tokens the user sees and may revoke on its page: their own while they
    edit it, every one for its team's admins; none for anyone else."""
    tokens = ApiToken.objects.filter(suite=suite).select_related("user").order_by("name", "pk")
    role = role_in(user, suite.team_id)
    if role == Role.ADMIN:
        return tokens
    return tokens.filter(user=user) if role == Role.EDITOR else tokens.none()


def reviewers(suite: Suite) -> QuerySet[User]:
    """Who may be assigned the suite's runs to review: the users who may change the suite
    (``can_edit_suite``), its team's editors and admins, by username."""
    return User.objects.filter(
        memberships__team_id=suite.team_id, memberships__role__in=_roles(at_least=Role.EDITOR)
    ).order_by("username")


def can_manage_team(user, team: Team) -> bool:
    return has_role(user, team, Role.ADMIN)


LABELS_MANAGED_BY = Role.EDITOR  # and the roles above it


def can_manage_labels(user, team: Team | int) -> bool:
    return has_role(user, team, LABELS_MANAGED_BY)


PRICES_CHANGED_BY = Role.ADMIN


def can_change_prices(user, team: Team | int) -> bool:
    return has_role(user, team, PRICES_CHANGED_BY)


def team_prices_for(user, slug: str, *, change: bool = False) -> Team:
    """The team whose model prices the user reads (any member) or, with ``change``,
    changes (its admins): 404 for an outsider, 403 for a member who may not change them."""
    team = team_for(user, slug)
    if change and not can_change_prices(user, team):
        raise PermissionDenied("Only the team's admins change its model prices.")
    return team


def can_resolve(user, suite: Suite, *, reviewer_ids, maker_id: int | None) -> bool:
    """Whether the user may pick the final decision of a double-blind item decided by
    ``reviewer_ids``, in a queue made by ``maker_id``."""
    return can_edit_suite(user, suite) and resolves_as_editor(
        user, reviewer_ids=reviewer_ids, maker_id=maker_id
    )


def resolves_as_editor(user, *, reviewer_ids, maker_id: int | None) -> bool:
    """``can_resolve`` for a user already known to edit the suite (no query: a page
    listing many items asks it of each)."""
    return user.pk == maker_id or user.pk not in set(reviewer_ids)


def teams_of(user, *, at_least: str = Role.VIEWER) -> QuerySet[Team]:
    """The teams where the user holds at least that role."""
    if not user.is_authenticated:
        return Team.objects.none()
    return Team.objects.filter(
        memberships__user=user, memberships__role__in=_roles(at_least=at_least)
    ).distinct()


def draft_targets(user, suite: Suite) -> tuple[bool, QuerySet[Team]]:
    """Where the user may save cases drafted from the runs of ``suite`` (which they may
    see): into the suite itself (True for its editors), and the teams where a new suite of
    them may go. ``PermissionDenied`` when neither."""
    into_suite = can_edit_suite(user, suite)
    teams = teams_of(user, at_least=Role.EDITOR).order_by("name", "pk")
    if not into_suite and not teams.exists():
        raise PermissionDenied(
            "Only editors save cases: of this suite, or of a team to make a new suite in."
        )
    return into_suite, teams


def _roles(*, at_least: str) -> list[str]:
    return [role for role, rank in _RANK.items() if rank >= _RANK[at_least]]


def suite_for(user, pk, *, edit: bool = False) -> Suite:
    """The suite, if the user may see it (and change it, with ``edit``): else 404 / 403."""
    suite = Suite.objects.select_related("team").filter(pk=pk).first()
    if suite is None or not can_view_suite(user, suite):
        raise Http404("No such suite.")
    if edit and not can_edit_suite(user, suite):
        raise PermissionDenied("Only the team's editors and admins change its suites.")
    return suite


def team_for(user, slug: str, *, at_least: str = Role.VIEWER) -> Team:
    """The team, if the user is a member holding at least that role: 404 for an outsider
    (or no such team), 403 for a member below it."""
    team = Team.objects.filter(slug=slug).first()
    role = role_in(user, team) if team is not None else None
    if team is None or role is None:
        raise Http404("No such team.")
    if _RANK[role] < _RANK[at_least]:
        if at_least == Role.ADMIN:
            raise PermissionDenied("Only the team's admins manage its members.")
        raise PermissionDenied("Only the team's editors and admins add suites and labels to it.")
    return team
