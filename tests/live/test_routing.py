"""Routing of live traces (scoring/live/routing.py, docs/live-traces.md#routing): a suite named
by its id or by ``team-slug/suite-slug``, and suite tokens, which need no resource attribute,
send to their suite alone, and are refused by the rest of the API
(docs/api.md#authentication)."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from cases import services, tokens
from cases.models import Membership, Role
from scoring.live.routing import INVALID, Route, Router
from scoring.models import Trace, TraceSpan
from tests.support.otlp_data import FIXTURE_SPANS, answer_of, export, post, status_of
from tests.support.producers import SUITE

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("assembled_when_told")]


def slugs(suite) -> str:
    return f"{suite.team.slug}/{suite.slug}"


def stored_in(suite) -> int:
    return TraceSpan.objects.filter(trace__suite=suite).count()


# --- by slug ------------------------------------------------------------------------------------


def test_a_suite_named_by_its_team_and_suite_slugs_receives_the_spans(sender, suite):
    response = post(sender, export(slugs(suite), label="gpt-4o"))
    assert response.status_code == 200, status_of(response).message
    assert not answer_of(response).HasField("partial_success")
    assert stored_in(suite) == len(FIXTURE_SPANS)
    assert Trace.objects.get().label == "gpt-4o"


def test_an_unknown_slug_or_another_teams_suite_is_no_such_suite_404(
    sender, suite, private_suite, shared_suite
):
    for reference in (f"{suite.team.slug}/nope", f"nope/{suite.slug}", slugs(private_suite)):
        response = post(sender, export(reference))
        assert response.status_code == 404, reference
        assert status_of(response).message == (
            f"casebook.suite {reference}: no such suite ({len(FIXTURE_SPANS)} spans)"
        )
    # Seen (visible to everyone) but not the sender's to change.
    response = post(sender, export(slugs(shared_suite)))
    assert response.status_code == 403
    assert "only the suite's editors and admins send runs" in status_of(response).message
    assert not TraceSpan.objects.exists()


@pytest.mark.parametrize("reference", ["agents", "agents/", "/x", "a/b/c", "agents/ä", "a b/c"])
def test_a_reference_neither_an_id_nor_slugs_is_refused_400_naming_it(sender, suite, reference):
    response = post(sender, export(reference))
    assert response.status_code == 400
    assert (
        f"casebook.suite must be a suite's id or team-slug/suite-slug, not {reference!r}"
        in status_of(response).message
    )


def test_the_router_looks_each_suite_up_once_per_export(suite, editor, django_assert_num_queries):
    router = Router(editor)
    by_id, by_slugs = {"casebook.suite": suite.pk}, {"casebook.suite": slugs(suite)}
    with django_assert_num_queries(6):  # a reference: its suite, may the sender see, edit it
        routes = [router.route(by_id), router.route(by_slugs), router.route(by_id)]
    assert routes == [Route(suite, ""), Route(suite, ""), Route(suite, "")]
    assert router.route({})[0] == INVALID


# --- suite tokens -------------------------------------------------------------------------------


def client_with(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


@pytest.fixture
def suite_token(editor, suite):
    """The editor's token for ``suite``, without a label: (the token, an API client with it)."""
    token, key = tokens.create(editor, "agent", suite=suite)
    return token, client_with(key)


def test_a_suite_tokens_spans_need_no_resource_attribute(suite_token, suite):
    token, client = suite_token
    response = post(client, export(None))
    assert response.status_code == 200, status_of(response).message
    assert stored_in(suite) == len(FIXTURE_SPANS)
    token.refresh_from_db()
    assert token.last_used is not None


def test_the_tokens_label_wins_else_the_resources(editor, suite):
    _, labelled = tokens.create(editor, "labelled", suite=suite, label="gpt-4o")
    assert post(client_with(labelled), export(None, label="claude", trace=1)).status_code == 200
    _, unlabelled = tokens.create(editor, "unlabelled", suite=suite)
    assert post(client_with(unlabelled), export(None, label="claude", trace=2)).status_code == 200
    labels = dict(Trace.objects.values_list("trace_id", "label"))
    assert labels == {f"{1:032x}": "gpt-4o", f"{2:032x}": "claude"}


def test_a_suite_token_sends_to_its_own_suite_named_by_id_or_slugs(suite_token, suite):
    _, client = suite_token
    assert post(client, export(suite.pk, trace=1)).status_code == 200
    assert post(client, export(slugs(suite), trace=2)).status_code == 200
    assert Trace.objects.filter(suite=suite).count() == 2


def test_a_suite_token_naming_another_suite_is_refused_403_saying_which_it_is_for(
    suite_token, suite, team, admin
):
    _, client = suite_token
    other = services.create_suite(team, SUITE | {"name": "Other agent"}, admin)
    for reference in (other.pk, slugs(other), 999_999):
        response = post(client, export(reference))
        assert response.status_code == 403
        assert status_of(response).message == (
            f"casebook.suite {reference}: this token sends to suite {suite.pk} ({slugs(suite)}) "
            f"only ({len(FIXTURE_SPANS)} spans)"
        )
    assert not TraceSpan.objects.exists()


def test_a_suite_token_is_refused_by_the_rest_of_the_api_403_saying_why(suite_token, suite):
    _, client = suite_token
    for response in (client.get("/api/suites/"), client.get(f"/api/suites/{suite.pk}/export/")):
        assert response.status_code == 403
        assert response.json() == {"detail": tokens.ONLY_OTLP}


def test_a_revoked_suite_token_is_refused_401(suite_token):
    token, client = suite_token
    token.delete()
    response = post(client, export(None))
    assert response.status_code == 401
    assert status_of(response).message.startswith("Invalid token.")


def test_a_suite_token_stops_working_when_its_user_stops_editing_the_suite(
    suite_token, suite, editor
):
    _, client = suite_token
    membership = Membership.objects.get(team=suite.team, user=editor)
    membership.role = Role.VIEWER
    membership.save()
    response = post(client, export(None))
    assert response.status_code == 403
    assert "only the suite's editors and admins send runs" in status_of(response).message
    membership.delete()
    assert post(client, export(None)).status_code == 404
    assert not TraceSpan.objects.exists()
