"""/api/teams/ and /api/teams/{slug}/members/: creating teams and managing who is in them."""

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from cases.models import Membership, Role, Team
from tests.support.builders import make_team


def members_url(team, username=None):
    url = f"/api/teams/{team.slug}/members/"
    return f"{url}{username}/" if username else url


def role_of(user, team):
    return Membership.objects.filter(team=team, user=user).values_list("role", flat=True).first()


# --- teams -------------------------------------------------------------------------------


def test_creating_a_team_makes_the_caller_its_admin(api, outsider):
    response = api(outsider).post("/api/teams/", {"name": "Search Agents"}, format="json")
    assert response.status_code == 201
    assert response.json() == {"slug": "search-agents", "name": "Search Agents", "role": "admin"}
    team = Team.objects.get(slug="search-agents")
    assert role_of(outsider, team) == Role.ADMIN


def test_a_second_team_of_the_same_name_gets_its_own_slug(api, outsider, team):
    response = api(outsider).post("/api/teams/", {"name": team.name}, format="json")
    assert response.status_code == 201
    assert response.json()["slug"] == f"{team.slug}-2"


def test_a_team_needs_a_name(api, outsider):
    response = api(outsider).post("/api/teams/", {"name": ""}, format="json")
    assert response.status_code == 400
    assert "name" in response.json()
    assert not Team.objects.exists()


def test_the_team_list_holds_only_the_callers_teams_with_their_role(api, editor, team, other_team):
    make_team("Zebra", viewer=editor)
    response = api(editor).get("/api/teams/")
    assert response.status_code == 200
    body = response.json()
    assert body["count"] == 2
    assert [(t["slug"], t["role"]) for t in body["results"]] == [
        ("agents", "editor"),
        ("zebra", "viewer"),
    ]


def test_a_team_is_hidden_from_outsiders(api, outsider, viewer, team):
    assert api(outsider).get(f"/api/teams/{team.slug}/").status_code == 404
    response = api(viewer).get(f"/api/teams/{team.slug}/")
    assert response.status_code == 200
    assert response.json()["role"] == "viewer"


def test_anonymous_callers_are_refused(api, team):
    assert api().get("/api/teams/").status_code in (401, 403)
    assert api().post("/api/teams/", {"name": "x"}, format="json").status_code in (401, 403)
    assert api().get(members_url(team)).status_code in (401, 403)
    assert not Team.objects.filter(name="x").exists()


def test_a_token_authenticates_api_calls(outsider):
    token = Token.objects.create(user=outsider)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    response = client.post("/api/teams/", {"name": "Token Team"}, format="json")
    assert response.status_code == 201
    assert role_of(outsider, Team.objects.get(slug="token-team")) == Role.ADMIN


def test_a_wrong_token_is_refused(outsider):
    Token.objects.create(user=outsider)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token not-a-real-key")
    assert client.get("/api/teams/").status_code in (401, 403)


# --- members -----------------------------------------------------------------------------


def test_any_member_lists_the_members(api, viewer, team, admin, editor):
    response = api(viewer).get(members_url(team))
    assert response.status_code == 200
    assert response.json()["results"] == [
        {"username": admin.username, "role": "admin"},
        {"username": editor.username, "role": "editor"},
        {"username": viewer.username, "role": "viewer"},
    ]


def test_outsiders_do_not_see_the_members(api, outsider, team):
    assert api(outsider).get(members_url(team)).status_code == 404


def test_an_admin_adds_a_member_then_changes_their_role(api, admin, outsider, team):
    client = api(admin)
    added = client.post(
        members_url(team), {"username": outsider.username, "role": "viewer"}, format="json"
    )
    assert added.status_code == 201
    assert added.json() == {"username": outsider.username, "role": "viewer"}
    assert role_of(outsider, team) == Role.VIEWER

    changed = client.post(
        members_url(team), {"username": outsider.username, "role": "editor"}, format="json"
    )
    assert changed.status_code == 200
    assert changed.json()["role"] == "editor"
    assert role_of(outsider, team) == Role.EDITOR


@pytest.mark.parametrize("who", ["editor", "viewer"])
def test_members_who_are_not_admins_cannot_manage_members(request, api, who, outsider, team):
    client = api(request.getfixturevalue(who))
    response = client.post(
        members_url(team), {"username": outsider.username, "role": "admin"}, format="json"
    )
    assert response.status_code == 403
    assert role_of(outsider, team) is None
    admin = request.getfixturevalue("admin")
    assert client.delete(members_url(team, admin.username)).status_code == 403
    assert role_of(admin, team) == Role.ADMIN


def test_outsiders_cannot_manage_members(api, outsider, team, viewer):
    response = api(outsider).post(
        members_url(team), {"username": outsider.username, "role": "admin"}, format="json"
    )
    assert response.status_code == 404
    assert api(outsider).delete(members_url(team, viewer.username)).status_code == 404
    assert role_of(outsider, team) is None
    assert role_of(viewer, team) == Role.VIEWER


def test_an_unknown_username_or_role_is_refused_by_field(api, admin, outsider, team):
    client = api(admin)
    response = client.post(
        members_url(team), {"username": "nobody", "role": "viewer"}, format="json"
    )
    assert response.status_code == 400
    assert list(response.json()) == ["username"]
    response = client.post(
        members_url(team), {"username": outsider.username, "role": "owner"}, format="json"
    )
    assert response.status_code == 400
    assert list(response.json()) == ["role"]
    assert role_of(outsider, team) is None


def test_an_admin_removes_a_member(api, admin, viewer, team):
    response = api(admin).delete(members_url(team, viewer.username))
    assert response.status_code == 204
    assert role_of(viewer, team) is None
    assert api(admin).delete(members_url(team, viewer.username)).status_code == 404


def test_usernames_with_dots_and_at_signs_are_addressable(api, admin, make_user, team):
    odd = make_user("j.doe@example.com")
    Membership.objects.create(team=team, user=odd, role=Role.VIEWER)
    assert api(admin).delete(members_url(team, odd.username)).status_code == 204
    assert role_of(odd, team) is None


def test_the_last_admin_can_neither_leave_nor_step_down(api, admin, team):
    client = api(admin)
    response = client.delete(members_url(team, admin.username))
    assert response.status_code == 400
    assert "admin" in response.json()["detail"]
    response = client.post(
        members_url(team), {"username": admin.username, "role": "editor"}, format="json"
    )
    assert response.status_code == 400
    assert list(response.json()) == ["role"]
    assert role_of(admin, team) == Role.ADMIN


def test_an_admin_may_leave_when_another_admin_stays(api, admin, editor, team):
    client = api(admin)
    promoted = client.post(
        members_url(team), {"username": editor.username, "role": "admin"}, format="json"
    )
    assert promoted.status_code == 200
    assert client.delete(members_url(team, admin.username)).status_code == 204
    assert role_of(admin, team) is None
    assert role_of(editor, team) == Role.ADMIN
