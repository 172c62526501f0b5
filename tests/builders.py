"""Builders the database tests share."""

from cases.models import Membership, Role, Team, User


def make_team(name: str, **members: User) -> Team:
    """A team; ``members`` maps each role name to a user (``admin=alice``)."""
    team = Team.objects.create(name=name, slug=Team.unique_slug(name))
    for role, user in members.items():
        Membership.objects.create(team=team, user=user, role=Role(role))
    return team
