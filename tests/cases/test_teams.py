"""Team pages: creating a team, members and roles, and who may change them."""

import pytest

from cases.models import Membership, Role, Team
from tests.support.builders import make_team
from tests.support.pages import HX, escaped, text


def members_url(team, membership=None):
    if membership is None:
        return f"/teams/{team.slug}/members/"
    return f"/teams/{team.slug}/members/{membership.pk}/"


def role_of(team, user):
    return Membership.objects.filter(team=team, user=user).values_list("role", flat=True).first()


def test_creating_a_team_makes_the_creator_its_admin(as_user, make_user):
    creator = make_user("carol")
    response = as_user(creator).post("/teams/", {"name": "Search Quality"})
    team = Team.objects.get(name="Search Quality")
    assert response.status_code == 302
    assert response["Location"] == f"/teams/{team.slug}/"
    assert role_of(team, creator) == Role.ADMIN
    assert team.memberships.count() == 1


def test_team_names_that_slugify_alike_get_distinct_slugs(as_user, make_user, team):
    as_user(make_user("carol")).post("/teams/", {"name": "agents!"})
    assert sorted(Team.objects.values_list("slug", flat=True)) == ["agents", "agents-2"]


def test_creating_a_team_without_a_name_creates_nothing(as_user, make_user):
    response = as_user(make_user("carol")).post("/teams/", {"name": "  "})
    assert response.status_code == 200
    assert Team.objects.count() == 0
    html = text(response)
    # the error is an alert that the field names (docs/review.md#keyboard-and-screen-readers)
    assert 'id="id_name" aria-invalid="true" aria-describedby="id_name_error"' in html
    assert '<div class="field-error" id="id_name_error" role="alert">' in html
    assert "This field is required." in html


def test_team_list_shows_the_users_teams_with_their_role(as_user, editor, team, suite):
    html = text(as_user(editor).get("/teams/"))
    assert f'<a href="/teams/{team.slug}/">Agents</a>' in html
    assert '<span class="role editor">editor</span>' in html


def test_team_list_counts_every_member_and_suite_of_the_team(as_user, editor, team, suite):
    html = text(as_user(editor).get("/teams/"))
    assert '<td class="num">3</td><td class="num">1</td>' in html


def test_team_list_hides_teams_the_user_is_not_in(as_user, viewer, team, other_team):
    html = text(as_user(viewer).get("/teams/"))
    assert "Elsewhere" not in html


def test_team_page_lists_members_with_roles(as_user, viewer, team):
    html = text(as_user(viewer).get(f"/teams/{team.slug}/"))
    for name, role in (
        ("alice-admin", "admin"),
        ("eddie-editor", "editor"),
        ("vera-viewer", "viewer"),
    ):
        assert (
            f'<td>{name}</td>\n        <td>\n          <span class="role {role}">{role}</span>'
            in html
        )
    assert "Add a member" not in html


def test_admin_sees_the_member_management_forms(as_user, admin, team):
    html = text(as_user(admin).get(f"/teams/{team.slug}/"))
    assert "Add a member" in html
    assert 'aria-label="Role of eddie-editor"' in html


def test_admin_adds_a_member_by_username(as_user, admin, team, outsider):
    response = as_user(admin).post(
        members_url(team), {"username": "olga-outsider", "role": "editor"}
    )
    assert response.status_code == 302
    assert response["Location"] == f"/teams/{team.slug}/"
    assert role_of(team, outsider) == Role.EDITOR


def test_admin_adds_a_member_with_htmx_and_gets_the_members_partial(as_user, admin, team, outsider):
    response = as_user(admin).post(
        members_url(team), {"username": "olga-outsider", "role": "viewer"}, headers=HX
    )
    html = text(response)
    assert response.status_code == 200
    assert "<html" not in html
    assert "<td>olga-outsider</td>" in html
    assert role_of(team, outsider) == Role.VIEWER


def test_adding_an_unknown_username_shows_an_error_and_adds_nothing(as_user, admin, team):
    response = as_user(admin).post(members_url(team), {"username": "nobody", "role": "viewer"})
    assert response.status_code == 200
    assert escaped("No user is called 'nobody'.") in text(response)
    assert team.memberships.count() == 3


def test_adding_an_unknown_username_with_htmx_shows_the_error_in_the_partial(as_user, admin, team):
    response = as_user(admin).post(
        members_url(team), {"username": "nobody", "role": "viewer"}, headers=HX
    )
    html = text(response)
    assert "<html" not in html
    assert escaped("No user is called 'nobody'.") in html
    assert 'value="nobody"' in html
    assert team.memberships.count() == 3


def test_adding_an_existing_member_shows_an_error_and_keeps_their_role(
    as_user, admin, team, viewer
):
    response = as_user(admin).post(members_url(team), {"username": "vera-viewer", "role": "admin"})
    assert response.status_code == 200
    assert "vera-viewer is already a member; change their role below." in text(response)
    assert role_of(team, viewer) == Role.VIEWER
    assert team.memberships.count() == 3


def test_adding_a_member_with_an_unknown_role_adds_nothing(as_user, admin, team, outsider):
    response = as_user(admin).post(
        members_url(team), {"username": "olga-outsider", "role": "owner"}
    )
    assert response.status_code == 200
    assert "Select a valid choice." in text(response)
    assert role_of(team, outsider) is None


def test_admin_changes_a_members_role(as_user, admin, team, viewer):
    membership = Membership.objects.get(team=team, user=viewer)
    response = as_user(admin).post(members_url(team, membership), {"role": "editor"})
    assert response.status_code == 302
    assert role_of(team, viewer) == Role.EDITOR


def test_admin_changes_a_role_with_htmx_and_gets_the_members_partial(as_user, admin, team, viewer):
    membership = Membership.objects.get(team=team, user=viewer)
    response = as_user(admin).post(members_url(team, membership), {"role": "admin"}, headers=HX)
    assert response.status_code == 200
    assert "<html" not in text(response)
    assert role_of(team, viewer) == Role.ADMIN


def test_admin_removes_a_member(as_user, admin, team, editor):
    membership = Membership.objects.get(team=team, user=editor)
    response = as_user(admin).post(members_url(team, membership), {"remove": "1"})
    assert response.status_code == 302
    assert role_of(team, editor) is None
    assert team.memberships.count() == 2


def test_the_last_admin_cannot_be_demoted(as_user, admin, team):
    membership = Membership.objects.get(team=team, user=admin)
    client = as_user(admin)
    response = client.post(members_url(team, membership), {"role": "editor"}, follow=True)
    assert role_of(team, admin) == Role.ADMIN
    assert "A team needs an admin: make someone else admin first." in text(response)


def test_the_last_admin_cannot_be_removed(as_user, admin, team):
    membership = Membership.objects.get(team=team, user=admin)
    response = as_user(admin).post(members_url(team, membership), {"remove": "1"}, follow=True)
    assert role_of(team, admin) == Role.ADMIN
    assert "A team needs an admin: make someone else admin first." in text(response)


def test_the_last_admin_refusal_is_shown_in_the_htmx_partial(as_user, admin, team):
    membership = Membership.objects.get(team=team, user=admin)
    response = as_user(admin).post(members_url(team, membership), {"remove": "1"}, headers=HX)
    assert "A team needs an admin" in text(response)
    assert role_of(team, admin) == Role.ADMIN


def test_an_admin_can_step_down_once_another_admin_exists(as_user, admin, editor, team):
    Membership.objects.filter(team=team, user=editor).update(role=Role.ADMIN)
    membership = Membership.objects.get(team=team, user=admin)
    response = as_user(admin).post(members_url(team, membership), {"role": "viewer"})
    assert response.status_code == 302
    assert role_of(team, admin) == Role.VIEWER


def test_an_admin_who_removes_themselves_is_sent_to_the_team_list(as_user, admin, editor, team):
    Membership.objects.filter(team=team, user=editor).update(role=Role.ADMIN)
    membership = Membership.objects.get(team=team, user=admin)
    response = as_user(admin).post(members_url(team, membership), {"remove": "1"})
    assert response.status_code == 302
    assert response["Location"] == "/teams/"
    assert role_of(team, admin) is None


@pytest.mark.parametrize("who", ["editor", "viewer"])
def test_non_admins_get_403_adding_members(as_user, request, team, outsider, who):
    user = request.getfixturevalue(who)
    response = as_user(user).post(members_url(team), {"username": "olga-outsider", "role": "admin"})
    assert response.status_code == 403
    assert role_of(team, outsider) is None


@pytest.mark.parametrize("who", ["editor", "viewer"])
def test_non_admins_get_403_changing_roles(as_user, request, team, who):
    user = request.getfixturevalue(who)
    membership = Membership.objects.get(team=team, user=user)
    response = as_user(user).post(members_url(team, membership), {"role": "admin"})
    assert response.status_code == 403
    assert role_of(team, user) == who


@pytest.mark.parametrize("who", ["editor", "viewer"])
def test_non_admins_get_403_removing_members(as_user, request, admin, team, who):
    membership = Membership.objects.get(team=team, user=admin)
    response = as_user(request.getfixturevalue(who)).post(
        members_url(team, membership), {"remove": "1"}
    )
    assert response.status_code == 403
    assert role_of(team, admin) == Role.ADMIN


def test_outsiders_get_404_on_another_teams_page(as_user, outsider, team, other_team):
    client = as_user(outsider)
    assert client.get(f"/teams/{team.slug}/").status_code == 404
    assert client.get(f"/teams/{other_team.slug}/").status_code == 200


def test_outsiders_get_404_managing_another_teams_members(as_user, outsider, admin, team):
    membership = Membership.objects.get(team=team, user=admin)
    client = as_user(outsider)
    add = client.post(members_url(team), {"username": "olga-outsider", "role": "admin"})
    change = client.post(members_url(team, membership), {"role": "viewer"})
    remove = client.post(members_url(team, membership), {"remove": "1"})
    assert (add.status_code, change.status_code, remove.status_code) == (404, 404, 404)
    assert role_of(team, outsider) is None
    assert role_of(team, admin) == Role.ADMIN


def test_a_membership_of_another_team_cannot_be_changed_through_this_one(
    as_user, admin, team, outsider
):
    """An admin of one team posting another team's membership id gets 404, not a change."""
    elsewhere = make_team("Labs", admin=admin, viewer=outsider)
    foreign = Membership.objects.get(team=elsewhere, user=outsider)
    other = make_team("Far away", admin=outsider)
    far = Membership.objects.get(team=other, user=outsider)
    response = as_user(admin).post(members_url(team, far), {"role": "viewer"})
    assert response.status_code == 404
    assert role_of(other, outsider) == Role.ADMIN
    assert role_of(elsewhere, outsider) == foreign.role


def test_team_pages_require_sign_in(client, team):
    response = client.get(f"/teams/{team.slug}/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")
