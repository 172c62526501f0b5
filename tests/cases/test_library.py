"""The library page: what a user may see, search, the team filter, htmx partials, pages."""

import pytest
from django.urls import reverse

from cases import services
from tests.support.pages import HX, small_document, suite_ids, text

LIBRARY = "/"


@pytest.fixture
def three_suites(suite, private_suite, shared_suite):
    return suite, private_suite, shared_suite


def test_library_lists_own_team_and_everyone_suites_but_not_another_teams_private_one(
    as_user, viewer, three_suites
):
    suite, _, shared_suite = three_suites
    html = text(as_user(viewer).get(LIBRARY))
    assert suite_ids(html) == {suite.pk, shared_suite.pk}
    assert "secret-ops" not in html
    assert "assistant-basics" in html
    assert "shared-weather" in html


def test_library_shows_the_private_suite_to_its_own_team(as_user, outsider, three_suites):
    _, private_suite, shared_suite = three_suites
    html = text(as_user(outsider).get(LIBRARY))
    assert suite_ids(html) == {private_suite.pk, shared_suite.pk}
    assert "assistant-basics" not in html


def test_library_shows_the_case_count_of_each_suite(as_user, viewer, suite):
    html = text(as_user(viewer).get(LIBRARY))
    assert '<td class="num">4</td>' in html


def test_library_requires_sign_in(client, suite):
    response = client.get(LIBRARY)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


@pytest.mark.parametrize(
    ("query", "what"),
    [
        ("assistant-BAS", "name, ignoring case"),
        ("weather lookups", "description"),
        ("orders", "case tag"),
        ("issue_refund", "tool name of an expected call"),
    ],
)
def test_search_finds_the_suite_by(as_user, viewer, three_suites, query, what):
    suite, _, shared_suite = three_suites
    html = text(as_user(viewer).get(LIBRARY, {"q": query}))
    assert suite.pk in suite_ids(html), what
    assert shared_suite.pk not in suite_ids(html)


@pytest.mark.parametrize(
    "query", ["assistant-BAS", "weather lookups", "orders", "issue_refund", "forecast", "["]
)
def test_the_api_finds_the_suites_the_page_finds(as_user, viewer, three_suites, query):
    """One FilterSet serves both: the API searches tags and tool names as the page does."""
    client = as_user(viewer)
    page = suite_ids(text(client.get(LIBRARY, {"q": query}, headers=HX)))
    api = {suite["id"] for suite in client.get("/api/suites/", {"q": query}).json()["results"]}
    assert api == page


def test_search_finds_a_suite_by_its_own_tag(as_user, viewer, team, suite, admin):
    tagged = services.create_suite(team, small_document("tagged-suite"), admin)
    services.update_settings(tagged, admin, tags=["nightly-regression"])
    html = text(as_user(viewer).get(LIBRARY, {"q": "nightly"}))
    assert suite_ids(html) == {tagged.pk}


def test_search_finds_an_everyone_visible_suite_of_another_team_by_its_tool(
    as_user, viewer, three_suites
):
    _, _, shared_suite = three_suites
    html = text(as_user(viewer).get(LIBRARY, {"q": "forecast"}))
    assert suite_ids(html) == {shared_suite.pk}


@pytest.mark.parametrize(
    "query", ["secret-ops", "hush", "confidential", "classified", "launch_missiles"]
)
def test_search_never_reveals_another_teams_private_suite(as_user, viewer, three_suites, query):
    html = text(as_user(viewer).get(LIBRARY, {"q": query}, headers=HX))
    assert suite_ids(html) == set()
    assert f"No suite matches “{query}”" in html
    rest = html.replace(f"“{query}”", "")
    assert "secret-ops" not in rest
    assert "hush hush" not in rest


def test_search_lists_a_suite_once_even_when_several_cases_match(as_user, viewer, suite):
    # Two of the demo suite's cases call get_weather / have "weather" in tags and tools.
    html = text(as_user(viewer).get(LIBRARY, {"q": "e"}))
    assert html.count(f'href="/suites/{suite.pk}/"') == 1
    assert '<td class="num">4</td>' in html


def test_team_filter_shows_only_that_teams_suites(as_user, viewer, team, three_suites):
    suite, _, shared_suite = three_suites
    client = as_user(viewer)
    assert suite_ids(text(client.get(LIBRARY, {"team": team.slug}))) == {suite.pk}
    other = shared_suite.team.slug
    assert suite_ids(text(client.get(LIBRARY, {"team": other}))) == {shared_suite.pk}


def test_team_filter_offers_only_the_users_own_teams(as_user, viewer, team, three_suites):
    html = text(as_user(viewer).get(LIBRARY))
    assert f'<option value="{team.slug}"' in html
    assert '<option value="elsewhere"' not in html


def test_team_filter_and_search_combine(as_user, viewer, team, three_suites):
    client = as_user(viewer)
    html = text(client.get(LIBRARY, {"team": team.slug, "q": "forecast"}))
    assert suite_ids(html) == set()
    assert "No suite matches" in html


def test_htmx_search_returns_only_the_results_partial(as_user, viewer, three_suites):
    suite, _, _ = three_suites
    response = as_user(viewer).get(LIBRARY, {"q": "assistant"}, headers=HX)
    html = text(response)
    assert response.status_code == 200
    assert "<html" not in html
    assert 'class="filters"' not in html
    assert "<table" in html
    assert suite_ids(html) == {suite.pk}


def test_htmx_empty_search_returns_the_empty_state_partial(as_user, viewer, three_suites):
    html = text(as_user(viewer).get(LIBRARY, {"q": "zzz-nothing"}, headers=HX))
    assert "<html" not in html
    assert "No suite matches “zzz-nothing”" in html


def test_library_response_varies_on_the_htmx_header(as_user, viewer, suite):
    response = as_user(viewer).get(LIBRARY)
    assert "HX-Request" in response["Vary"]


@pytest.fixture
def many_suites(team, admin):
    return [services.create_suite(team, small_document(f"bulk-{n:02d}"), admin) for n in range(30)]


def test_library_paginates_25_suites_a_page(as_user, viewer, many_suites):
    client = as_user(viewer)
    first = text(client.get(LIBRARY))
    second = text(client.get(LIBRARY, {"page": 2}))
    ids = [s.pk for s in many_suites]
    assert suite_ids(first) == set(ids[:25])
    assert suite_ids(second) == set(ids[25:])
    assert "Page 1 of 2" in first
    assert "Page 2 of 2" in second
    assert "?page=2" in first
    assert "Next →" not in second


def test_pagination_keeps_the_search_in_its_links(as_user, viewer, many_suites):
    html = text(as_user(viewer).get(LIBRARY, {"q": "bulk"}))
    assert "?q=bulk&amp;page=2" in html


def test_htmx_pagination_returns_the_partial_of_the_next_page(as_user, viewer, many_suites):
    html = text(as_user(viewer).get(LIBRARY, {"page": 2}, headers=HX))
    assert "<html" not in html
    assert len(suite_ids(html)) == 5


def test_a_page_number_past_the_end_shows_the_last_page(as_user, viewer, many_suites):
    html = text(as_user(viewer).get(LIBRARY, {"page": 99}))
    assert "Page 2 of 2" in html


def test_empty_library_invites_to_create_or_import(as_user, make_user):
    html = text(as_user(make_user("newcomer")).get(LIBRARY))
    assert "No suites yet." in html
    assert 'href="/suites/new/"' in html
    assert 'href="/suites/import/"' in html


def test_search_without_a_match_says_so_and_keeps_the_query(as_user, viewer, suite):
    html = text(as_user(viewer).get(LIBRARY, {"q": "no-such-thing"}))
    assert "No suite matches “no-such-thing”." in html
    assert 'value="no-such-thing"' in html
    assert "No suites yet." not in html


@pytest.mark.parametrize("query", ["[", '"', '", "'])
def test_search_does_not_match_the_json_syntax_of_tags(as_user, viewer, suite, query):
    html = text(as_user(viewer).get(LIBRARY, {"q": query}, headers=HX))
    assert suite_ids(html) == set()
