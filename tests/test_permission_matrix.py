"""Who may see and change what, walked over every team, suite and case URL of the pages and the
API, as anonymous, outsider, viewer, editor and admin (docs/api.md#permissions).

A route that is missing from the table fails ``test_every_route_is_in_the_matrix``, so a new
page or endpoint cannot ship without its permissions being pinned down here.
"""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import get_resolver
from django.urls.resolvers import URLResolver
from rest_framework.authtoken.models import Token

from cases import services
from cases.models import Visibility
from tests.support.builders import DEMO, ROLES, RUN_FILE, World

NEW_CASE = {"key": "new-case", "expected_calls": [{"name": "f"}], "expectations": []}
EDITOR_FORM = {
    "key": "new-case",
    "extra_calls": "allow",
    "match_preset": "",
    "call-0-name": "f",
    "call-0-required_args": "{}",
    "action": "save",
}


# Expected status per role: anonymous, outsider, viewer, editor, admin.
PUBLIC = (200, 200, 200, 200, 200)
SIGNED_IN = (302, 200, 200, 200, 200)
READ = (302, 404, 200, 200, 200)
EDIT_PAGE = (302, 404, 403, 200, 200)
EDIT_POST = (302, 404, 403, 302, 302)
MANAGE_POST = (302, 404, 403, 403, 302)
API_READ = (401, 404, 200, 200, 200)
API_SIGNED_IN = (401, 200, 200, 200, 200)


def _case_document(world):
    return json.dumps(services.case_document(world.case) | {"title": "changed"})


# (route name, method, url kwargs, body, expected statuses)
TOOLS = {"tools": [{"name": "wave", "inputSchema": {"type": "object"}}]}
TOOLS_TEXT = json.dumps(TOOLS)
PAGES = [
    # Probes for load balancers (evalsite/health.py): no sign-in, nothing about any suite.
    ("healthz", "get", {}, None, PUBLIC),
    ("readyz", "get", {}, None, PUBLIC),
    ("home", "get", {}, None, SIGNED_IN),
    ("my_work", "get", {}, None, SIGNED_IN),
    ("account", "get", {}, None, SIGNED_IN),
    ("teams", "get", {}, None, SIGNED_IN),
    ("suite_new", "get", {}, None, SIGNED_IN),
    ("suite_import", "get", {}, None, SIGNED_IN),
    ("suite_import_bfcl", "get", {}, None, SIGNED_IN),
    # A forged confirmation of a previewed import: everyone is sent back, nothing is made.
    ("suite_import_confirm", "post", {}, {"file": "forged", "team": "team-id"}, (302,) * 5),
    ("suite_import_bfcl_confirm", "post", {}, {"file": "forged", "team": "team-id"}, (302,) * 5),
    ("suite_import_tau_bench", "get", {}, None, SIGNED_IN),
    ("editor_validate", "post", {}, {"kind": "regex", "field": "r", "r": "a+"}, SIGNED_IN),
    ("team", "get", {"slug": "team"}, None, READ),
    (
        "team_member_add",
        "post",
        {"slug": "team"},
        {"username": "newcomer", "role": "viewer"},
        MANAGE_POST,
    ),
    (
        "team_member",
        "post",
        {"slug": "team", "membership_id": "membership"},
        {"role": "editor"},
        MANAGE_POST,
    ),
    ("team_label_add", "post", {"slug": "team"}, {"name": "simulator error"}, EDIT_POST),
    (
        "team_label_edit",
        "post",
        {"slug": "team", "label_id": "label"},
        {"name": "renamed"},
        EDIT_POST,
    ),
    ("team_label_delete", "post", {"slug": "team", "label_id": "label"}, {}, EDIT_POST),
    # A team's model prices: its members see them, its admins change them.
    ("team_prices", "get", {"slug": "team"}, None, READ),
    (
        "team_prices",
        "post",
        {"slug": "team"},
        {"model": "my-model", "input_per_mtok": "1", "output_per_mtok": "2"},
        MANAGE_POST,
    ),
    (
        "team_price_edit",
        "post",
        {"slug": "team", "price_id": "price"},
        {"model": "house-llama", "input_per_mtok": "1", "output_per_mtok": "2"},
        MANAGE_POST,
    ),
    ("team_price_delete", "post", {"slug": "team", "price_id": "price"}, {}, MANAGE_POST),
    ("suite", "get", {"pk": "suite"}, None, READ),
    ("suite_export", "get", {"pk": "suite"}, None, READ),
    ("suite_settings", "get", {"pk": "suite"}, None, EDIT_PAGE),
    (
        "suite_settings",
        "post",
        {"pk": "suite"},
        {"name": "Renamed", "visibility": "team", "match_preset": ""},
        EDIT_POST,
    ),
    ("suite_replace", "get", {"pk": "suite"}, None, EDIT_PAGE),
    # A confirmation whose signed file is forged: editors are sent back to choose the file.
    ("suite_replace_confirm", "post", {"pk": "suite"}, {"file": "forged"}, EDIT_POST),
    ("suite_tools", "get", {"pk": "suite"}, None, EDIT_PAGE),
    # Pasted tools are previewed with the suite's audit; the forged confirmation is refused.
    ("suite_tools", "post", {"pk": "suite"}, {"text": TOOLS_TEXT}, EDIT_PAGE),
    ("suite_tools_confirm", "post", {"pk": "suite"}, {"file": "forged"}, EDIT_POST),
    ("suite_health", "get", {"pk": "suite"}, None, READ),
    # A viewer may open the copy form but has no team to copy into: sent back, nothing copied.
    ("suite_copy", "post", {"pk": "suite"}, {"team": "team-id"}, (302, 404, 302, 302, 302)),
    ("suite_version", "get", {"pk": "suite", "number": 1}, None, READ),
    ("suite_version_diff", "get", {"pk": "suite", "number": 2}, None, READ),
    ("suite_version_tag", "post", {"pk": "suite", "number": 1}, {"tag": "release"}, EDIT_POST),
    ("case_new", "get", {"pk": "suite"}, None, EDIT_PAGE),
    ("case_new", "post", {"pk": "suite"}, EDITOR_FORM, EDIT_POST),
    ("case_edit", "get", {"pk": "suite", "case_id": "case"}, None, READ),  # viewers read it
    (
        "case_edit",
        "post",
        {"pk": "suite", "case_id": "case"},
        EDITOR_FORM | {"key": "greeting"},
        EDIT_POST,
    ),
    ("case_delete", "post", {"pk": "suite", "case_id": "case"}, {}, EDIT_POST),
    ("case_try", "post", {"pk": "suite"}, EDITOR_FORM | {"run": '{"batches": []}'}, READ),
    ("case_audit", "post", {"pk": "suite"}, EDITOR_FORM, EDIT_PAGE),
    ("upload", "get", {"pk": "suite"}, None, EDIT_PAGE),
    ("upload", "post", {"pk": "suite"}, "run-file", EDIT_POST),
    ("submission", "get", {"pk": "submission"}, None, READ),
    ("submission_progress", "get", {"pk": "submission"}, None, READ),
    ("run", "get", {"pk": "submission", "run_id": "run"}, None, READ),
    ("run_end_state", "get", {"pk": "submission", "run_id": "run"}, None, EDIT_PAGE),
    ("run_review", "post", {"pk": "submission", "run_id": "run"}, {"status": "flaky"}, EDIT_POST),
    ("run_promote", "get", {"pk": "submission", "run_id": "run"}, {"call": "0-0"}, EDIT_PAGE),
    (
        "run_promote",
        "post",
        {"pk": "submission", "run_id": "run"},
        {"call": "0-0", "name": "wave", "required_args": "{}"},
        (302, 404, 403, 200, 200),
    ),
    ("run_draft_case", "get", {"pk": "submission", "run_id": "run"}, None, EDIT_PAGE),
    ("run_rescore", "post", {"pk": "submission", "run_id": "run"}, {"version": 1}, EDIT_POST),
    ("compare", "get", {"pk": "suite"}, None, READ),
    ("compare_runs", "get", {"a": "run", "b": "run"}, None, READ),
    ("suite_flaky", "get", {"pk": "suite"}, None, READ),
    ("submission_rescore", "post", {"pk": "submission"}, {"version": 1}, EDIT_POST),
    ("submission_retry", "post", {"pk": "submission"}, {}, EDIT_POST),
    ("submission_delete", "post", {"pk": "submission"}, {}, EDIT_POST),
    ("submission_failures", "get", {"pk": "submission"}, None, READ),
    # Its current version (2) is the submission page itself: sent there, if it may be seen.
    (
        "submission_earlier",
        "get",
        {"pk": "submission", "number": 2},
        None,
        (302, 404, 302, 302, 302),
    ),
    ("submission_review", "post", {"pk": "submission"}, {"status": "flaky"}, EDIT_POST),
    ("submission_apply_decisions", "post", {"pk": "submission"}, {}, EDIT_POST),
    ("suite_known_failures", "get", {"pk": "suite"}, None, READ),
    ("suite_unassigned", "get", {"pk": "suite"}, None, READ),
    # Suite tokens (docs/api.md#authentication): made by its editors, shown once on the page;
    # revoked by their maker (the editor's here) or the team's admins, unseen by anyone else.
    ("suite_token_new", "post", {"pk": "suite"}, {"name": "my agent"}, (302, 404, 403, 200, 200)),
    (
        "suite_token_revoke",
        "post",
        {"pk": "suite", "token_id": "suite_token"},
        {},
        (302, 404, 404, 302, 302),
    ),
    ("submission_tools", "get", {"pk": "submission"}, None, EDIT_PAGE),
    # A submission whose file is no failed τ-bench upload: its editors are sent back to it.
    ("submission_tau_bench", "get", {"pk": "submission"}, None, EDIT_POST),
    # Needs an editor: of the suite, or of a team to make a new suite in (the viewer is none).
    ("submission_case_drafts", "get", {"pk": "submission"}, None, EDIT_PAGE),
    (
        "submission_case_drafts",
        "post",
        {"pk": "submission"},
        {"shown": "1", "target": "suite", "include": "greeting", "action": "save"},
        # The world's one run fails: editors get past the rules to "nothing to save".
        (302, 404, 403, 422, 422),
    ),
    ("submission_csv", "get", {"pk": "submission"}, None, READ),
    ("submission_junit", "get", {"pk": "submission"}, None, READ),
    ("queues", "get", {"pk": "submission"}, None, READ),
    ("queue_new", "get", {"pk": "submission"}, None, EDIT_PAGE),
    ("queue_new", "post", {"pk": "submission"}, {"name": "Triage"}, EDIT_POST),
    ("queue", "get", {"pk": "queue"}, None, READ),
    ("queue_assign", "post", {"pk": "queue"}, {"reviewers": []}, EDIT_POST),
    ("queue_delete", "post", {"pk": "queue"}, {}, EDIT_POST),
    ("queue_hand_on", "post", {"pk": "blind_queue"}, {}, EDIT_POST),
    # Reserves the next run and opens it, on POST only; a GET (a link from anywhere) reserves
    # nothing and opens the queue's page, to whoever may read it.
    ("queue_next", "get", {"pk": "queue"}, None, (302, 404, 302, 302, 302)),
    ("queue_next", "post", {"pk": "queue"}, {}, EDIT_POST),
    # A blind decision, by one of the item's reviewers (the editor and the admin here).
    (
        "queue_decide",
        "post",
        {"pk": "blind_queue", "item_id": "blind_item"},
        {"status": "flaky"},
        EDIT_POST,
    ),
    # Resolved by someone other than the item's reviewers, or the queue's maker (the admin).
    (
        "queue_resolve",
        "post",
        {"pk": "blind_queue", "item_id": "blind_item"},
        {"status": "flaky"},
        (302, 404, 403, 403, 302),
    ),
]
API = [
    # Spans for the suite: accepted from its editors (docs/live-traces.md#the-receiver).
    ("otlp_traces", "post", {}, "otlp-export", (401, 404, 403, 200, 200)),
    ("otlp_logs", "post", {}, "otlp-logs-export", (401, 404, 403, 200, 200)),
    ("api:team-list", "get", {}, None, API_SIGNED_IN),
    ("api:team-list", "post", {}, {"name": "New team"}, (401, 201, 201, 201, 201)),
    ("api:team-detail", "get", {"slug": "team"}, None, API_READ),
    ("api:member-list", "get", {"team_slug": "team"}, None, API_READ),
    (
        "api:member-list",
        "post",
        {"team_slug": "team"},
        {"username": "newcomer", "role": "viewer"},
        (401, 404, 403, 403, 201),
    ),
    (
        "api:member-detail",
        "delete",
        {"team_slug": "team", "username": "viewer"},
        None,
        (401, 404, 403, 403, 204),
    ),
    ("api:team-label-list", "get", {"team_slug": "team"}, None, API_READ),
    (
        "api:team-label-list",
        "post",
        {"team_slug": "team"},
        {"name": "simulator error", "key": "s"},
        (401, 404, 403, 201, 201),
    ),
    ("api:team-label-detail", "get", {"team_slug": "team", "pk": "label"}, None, API_READ),
    (
        "api:team-label-detail",
        "patch",
        {"team_slug": "team", "pk": "label"},
        {"colour": "red"},
        (401, 404, 403, 200, 200),
    ),
    (
        "api:team-label-detail",
        "delete",
        {"team_slug": "team", "pk": "label"},
        None,
        (401, 404, 403, 204, 204),
    ),
    ("api:team-price-list", "get", {"team_slug": "team"}, None, API_READ),
    (
        "api:team-price-list",
        "post",
        {"team_slug": "team"},
        {"model": "my-model", "input_per_mtok": 1, "output_per_mtok": 2},
        (401, 404, 403, 403, 201),
    ),
    ("api:team-price-detail", "get", {"team_slug": "team", "pk": "price"}, None, API_READ),
    (
        "api:team-price-detail",
        "patch",
        {"team_slug": "team", "pk": "price"},
        {"output_per_mtok": 0.5},
        (401, 404, 403, 403, 200),
    ),
    (
        "api:team-price-detail",
        "delete",
        {"team_slug": "team", "pk": "price"},
        None,
        (401, 404, 403, 403, 204),
    ),
    ("api:suite-list", "get", {}, None, API_SIGNED_IN),
    ("api:suite-import-suite", "post", {}, DEMO, (401, 404, 403, 201, 201)),
    ("api:suite-detail", "get", {"pk": "suite"}, None, API_READ),
    (
        "api:suite-detail",
        "patch",
        {"pk": "suite"},
        {"description": "new"},
        (401, 404, 403, 200, 200),
    ),
    ("api:suite-export", "get", {"pk": "suite"}, None, API_READ),
    ("api:suite-tools", "post", {"pk": "suite"}, TOOLS, (401, 404, 403, 201, 201)),
    ("api:suite-copy", "post", {"pk": "suite"}, {"team": "agents"}, (401, 404, 403, 201, 201)),
    ("api:case-list", "get", {"suite_pk": "suite"}, None, API_READ),
    ("api:case-list", "post", {"suite_pk": "suite"}, NEW_CASE, (401, 404, 403, 201, 201)),
    ("api:case-detail", "get", {"suite_pk": "suite", "key": "key"}, None, API_READ),
    (
        "api:case-detail",
        "put",
        {"suite_pk": "suite", "key": "key"},
        "case-document",
        (401, 404, 403, 200, 200),
    ),
    (
        "api:case-detail",
        "delete",
        {"suite_pk": "suite", "key": "key"},
        None,
        (401, 404, 403, 204, 204),
    ),
    ("api:version-list", "get", {"suite_pk": "suite"}, None, API_READ),
    ("api:version-detail", "get", {"suite_pk": "suite", "number": 1}, None, API_READ),
    ("api:version-diff", "get", {"suite_pk": "suite", "number": 2}, None, API_READ),
    ("api:version-audit", "get", {"suite_pk": "suite", "number": 2}, None, API_READ),
    (
        "api:version-tag",
        "post",
        {"suite_pk": "suite", "number": 1},
        {"tag": "release"},
        (401, 404, 403, 200, 200),
    ),
    ("api:suite-submission-list", "get", {"suite_pk": "suite"}, None, API_READ),
    (
        "api:suite-submission-list",
        "post",
        {"suite_pk": "suite"},
        "run-file",
        (401, 404, 403, 202, 202),
    ),
    ("api:submission-detail", "get", {"pk": "submission"}, None, API_READ),
    ("api:submission-results", "get", {"pk": "submission"}, None, API_READ),
    ("api:submission-failures", "get", {"pk": "submission"}, None, API_READ),
    ("api:submission-comparison", "get", {"pk": "submission"}, None, API_READ),
    ("api:submission-case-drafts", "get", {"pk": "submission"}, None, (401, 404, 403, 200, 200)),
    (
        "api:submission-rescore",
        "post",
        {"pk": "submission"},
        {"version": 1},
        (401, 404, 403, 202, 202),
    ),
    ("api:submission-detail", "delete", {"pk": "submission"}, None, (401, 404, 403, 204, 204)),
    ("api:queue-detail", "get", {"pk": "queue"}, None, API_READ),
    ("api:queue-detail", "get", {"pk": "blind_queue"}, None, API_READ),
]
# Routes of the framework or of sign-in, not of teams, suites or cases.
NOT_OURS = {"api:api-root", "schema", "swagger-ui", "login", "logout"}


def _route_names():
    def walk(patterns, namespace=None):
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                if pattern.namespace != "admin":
                    yield from walk(pattern.url_patterns, pattern.namespace or namespace)
            elif pattern.name and not pattern.name.startswith("password_"):
                yield f"{namespace}:{pattern.name}" if namespace else pattern.name

    return set(walk(get_resolver().url_patterns))


def test_every_route_is_in_the_matrix():
    covered = {name for name, *_ in PAGES + API} | NOT_OURS
    assert _route_names() - covered == set()


@pytest.fixture
def world(db, password):
    return World(password)


def _request(client, world, route, method, kwargs, body, api):
    from django.urls import reverse

    ids = world.ids()
    resolved = {
        key: ids.get(value, value) if isinstance(value, str) else value
        for key, value in kwargs.items()
    }
    url = reverse(route, kwargs=resolved)
    if body == "case-document":
        body = _case_document(world)
    elif body == "otlp-export":
        body = _otlp_export(ids["suite"])
    elif body == "otlp-logs-export":
        body = _otlp_logs_export(ids["suite"])
    elif isinstance(body, dict) and body.get("team") == "team-id":
        body = {"team": world.team.pk}
    if body == "run-file":
        if api:
            return getattr(client, method)(url, data=RUN_FILE, content_type="application/x-ndjson")
        body = {"file": SimpleUploadedFile("runs.jsonl", RUN_FILE), "label": "uploaded"}
    if api:
        if route == "api:suite-import-suite":
            url += f"?team={world.team.slug}"
        data = body if isinstance(body, str) else json.dumps(body) if body is not None else None
        return getattr(client, method)(url, data=data, content_type="application/json")
    return getattr(client, method)(url, data=body or {})


def _otlp_export(suite_id) -> str:
    """An OTLP/JSON export of one span, for the suite."""
    span = {"traceId": "01" * 16, "spanId": "02" * 8, "name": "agent", "startTimeUnixNano": "1"}
    resource = {"attributes": [{"key": "casebook.suite", "value": {"stringValue": str(suite_id)}}]}
    return json.dumps(
        {"resourceSpans": [{"resource": resource, "scopeSpans": [{"spans": [span]}]}]}
    )


def _otlp_logs_export(suite_id) -> str:
    """An OTLP/JSON export of one log record, for the suite."""
    record = {"traceId": "01" * 16, "spanId": "02" * 8, "eventName": "gen_ai.choice"}
    resource = {"attributes": [{"key": "casebook.suite", "value": {"stringValue": str(suite_id)}}]}
    return json.dumps(
        {"resourceLogs": [{"resource": resource, "scopeLogs": [{"logRecords": [record]}]}]}
    )


def _client_for(client, world, role, *, api):
    if role == "anonymous":
        return client
    user = world.users[role]
    if api:
        token = Token.objects.create(user=user)
        client.defaults["HTTP_AUTHORIZATION"] = f"Token {token.key}"
    else:
        client.force_login(user)
    return client


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize(
    ("route", "method", "kwargs", "body", "expected"),
    PAGES,
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_pages_answer_each_role_as_the_rules_say(
    client, world, role, route, method, kwargs, body, expected
):
    response = _request(
        _client_for(client, world, role, api=False), world, route, method, kwargs, body, api=False
    )
    assert response.status_code == expected[ROLES.index(role)], response.content[:300]


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize(
    ("route", "method", "kwargs", "body", "expected"),
    API,
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_api_answers_each_role_as_the_rules_say(
    client, world, role, route, method, kwargs, body, expected
):
    response = _request(
        _client_for(client, world, role, api=True), world, route, method, kwargs, body, api=True
    )
    assert response.status_code == expected[ROLES.index(role)], response.content[:300]


def test_an_outsider_never_sees_a_private_suites_content(client, world):
    client.force_login(world.users["outsider"])
    for route, method, kwargs, body, _ in PAGES:
        if "pk" in kwargs and method == "get":
            response = _request(client, world, route, method, kwargs, body, api=False)
            assert response.status_code == 404
            assert DEMO["name"].encode() not in response.content


# Routes of a suite or of what is under it (a team's own routes, its labels', are not).
SUITE_ROUTES = [
    route
    for route in PAGES + API
    if {"pk", "suite_pk"} & set(route[2]) and "team_slug" not in route[2]
]


@pytest.mark.parametrize(
    ("route", "method", "kwargs", "body", "expected"),
    SUITE_ROUTES,
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_a_suite_visible_to_everyone_is_read_by_outsiders_but_changed_only_by_its_team(
    client, world, route, method, kwargs, body, expected
):
    world.suite.visibility = Visibility.EVERYONE
    world.suite.save()
    api = route.startswith("api:")
    client = _client_for(client, world, "outsider", api=api)
    response = _request(client, world, route, method, kwargs, body, api=api)
    if route in ("suite_copy", "api:suite-copy"):
        # Seeing the suite is enough to copy it, but only into a team of one's own: the
        # page sends the outsider back (agents is not theirs), the API answers 404 for it.
        assert response.status_code == (404 if api else 302)
        assert not world.team.suites.exclude(pk=world.suite.pk).exists()
        return
    if route == "api:submission-case-drafts":
        # Drafts for a new suite of the outsider's own team, never revisions of this one.
        assert response.status_code == 403
        return
    if route == "submission_case_drafts":
        # Cases drafted from its runs may go into a new suite of the outsider's own team
        # (as a copy may), never into this suite: "into this suite" is no choice of theirs.
        assert response.status_code == (200 if method == "get" else 422)
        assert b'name="target" value="suite"' not in response.content
        assert world.suite.versions.count() == 2
        return
    assert response.status_code == expected[ROLES.index("viewer")], response.content[:300]
