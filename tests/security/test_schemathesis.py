"""Schemathesis against the OpenAPI schema: every operation of /api/schema/, with generated
data valid and invalid, as the token of a team admin whose team has a suite with cases, two
versions, a scored submission and a review queue (the permission matrix's world). No answer may
be a 5xx, and each must match the schema documented for its status.

Each example is sent twice: with the path parameters generated (mostly objects that do not
exist) and with those of the world's objects, so the handlers behind the 404s see the data.
"""

import json

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from django.test import TestCase
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from rest_framework.authtoken.models import Token
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import response_schema_conformance

from evalsite.wsgi import application
from tests.support.builders import RUN_FILE, World

# A run file as the upload's body: lines of the world's cases, of any JSON, and of any
# bytes, in any mix (schemathesis knows no generator for this media type).
RUN_LINES = st.one_of(
    st.just(RUN_FILE.strip()),
    st.binary(max_size=100),
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=20),
        lambda children: (
            st.lists(children, max_size=3)
            | st.dictionaries(st.sampled_from(["case", "batches", "final_text", "name"]), children)
        ),
        max_leaves=8,
    ).map(lambda value: json.dumps(value).encode()),
)
schemathesis.openapi.media_type(
    "application/x-ndjson", st.lists(RUN_LINES, min_size=1, max_size=5).map(b"\n".join)
)
schema = schemathesis.openapi.from_wsgi("/api/schema/", application)

EXAMPLES = 30  # per operation; each sent twice (about a minute on 2 cores)


@pytest.fixture
def world(db, password):
    return World(password)


@pytest.fixture(autouse=True)
def connection_kept_between_requests():
    """The WSGI app closes the database connection after each request, and with it the
    test's transaction; Django's test client keeps it open the same way."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def token(world):
    return Token.objects.create(user=world.users["admin"]).key


def real_path_parameters(world, path: str, generated: dict) -> dict:
    """The generated path parameters with the world's objects put in: a submission or a
    suite by its id, the case by its key, version 2 (the one with a parent to diff)."""
    ids = {
        "id": world.submission.pk if path.startswith("/api/submissions/") else world.suite.pk,
        "suite_pk": world.suite.pk,
        "key": world.case.key,
        "number": 2,
        "slug": world.team.slug,
        "team_slug": world.team.slug,
        "username": "viewer",
    }
    return {name: ids.get(name, value) for name, value in generated.items()}


@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    phases=[Phase.explicit, Phase.generate],  # a failure is reported as found, unshrunk
    suppress_health_check=list(HealthCheck),
)
def test_no_operation_answers_a_server_error(case, world, token):
    headers = {"Authorization": f"Token {token}"}
    checks = [not_a_server_error, response_schema_conformance]
    # What a request leaves to the workers (reading an upload, scoring) runs here too, so a
    # crash there fails the test as a 500 would.
    with TestCase.captureOnCommitCallbacks(execute=True):
        case.call_and_validate(headers=headers, checks=checks)
    if case.path_parameters:
        case.path_parameters = real_path_parameters(
            world, case.operation.path, case.path_parameters
        )
        with TestCase.captureOnCommitCallbacks(execute=True):
            case.call_and_validate(headers=headers, checks=checks)
