"""Teams and their members: a new team's admin, roles, leaving, and the rule that a team
keeps an admin."""

from __future__ import annotations

from django.db import IntegrityError, transaction

from cases.models import (
    Membership,
    Role,
    Team,
)


class LastAdmin(Exception):
    """The change would leave the team without an admin."""

    def __init__(self):
        super().__init__("A team needs an admin: make someone else admin first.")


def created_with_unique_slug(create, make_slug, attempts: int = 5):
    """``create(slug)`` with a free slug; two creations racing for one slug retry."""
    for attempt in range(attempts):
        try:
            with transaction.atomic():
                return create(make_slug())
        except IntegrityError:
            if attempt == attempts - 1:
                raise
    return None  # not reached


@transaction.atomic
def create_team(name: str, user) -> Team:
    """A new team; its creator is its admin."""
    team = created_with_unique_slug(
        lambda slug: Team.objects.create(name=name, slug=slug), lambda: Team.unique_slug(name)
    )
    Membership.objects.create(team=team, user=user, role=Role.ADMIN)
    return team


@transaction.atomic
def set_member_role(team: Team, user, role: str) -> tuple[Membership, bool]:
    """Add ``user`` to the team with ``role``, or change their role; True when added.

    Membership changes of one team take its row lock, so two admins demoting each other at
    once cannot leave it without an admin (``LastAdmin``)."""
    Team.objects.select_for_update().get(pk=team.pk)
    found = Membership.objects.filter(team=team, user=user).first()
    added = found is None
    membership = Membership(team=team, user=user) if found is None else found
    if not added and membership.role == Role.ADMIN and role != Role.ADMIN:
        _keep_an_admin(team, membership)
    membership.role = role
    membership.save()
    return membership, added


@transaction.atomic
def remove_member(membership: Membership) -> None:
    """Take the user out of the team (``LastAdmin`` if they are its only admin)."""
    Team.objects.select_for_update().get(pk=membership.team_id)
    current = Membership.objects.filter(pk=membership.pk).first()
    if current is None:  # removed meanwhile
        return
    if current.role == Role.ADMIN:
        _keep_an_admin(current.team, current)
    current.delete()


def _keep_an_admin(team: Team, leaving: Membership) -> None:
    others = Membership.objects.filter(team=team, role=Role.ADMIN).exclude(pk=leaving.pk)
    if not others.exists():
        raise LastAdmin
