"""The upload's ``?format=NAME`` (docs/api.md#conventions) through the API, for every run
format: the parameter is the run format, not DRF's choice of renderer (which answered it
404)."""

from __future__ import annotations

import json

import pytest
from django.test import TestCase
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from cases import services
from scoring.importers import FORMAT_NAMES, to_canonical
from scoring.models import Result, Submission
from tests.importers.examples import LINES, openai_chat

pytestmark = pytest.mark.django_db

SUITE = {
    "schema": "casebook.suite/1",
    "name": "formats",
    "cases": [
        {
            "key": "weather",
            "expected_calls": [
                {"name": "get_weather", "required_args": {"city": "Paris"}},
                {"name": "get_weather", "required_args": {"city": "Tokyo"}},
            ],
        }
    ],
}
# The weather example in the formats that tests/importers/examples.py has no line of.
OTHER_LINES = {
    "canonical": lambda: to_canonical(openai_chat()),
    "bfcl": lambda: {
        "id": "weather",
        "result": [{"get_weather": {"city": "Paris"}}, {"get_weather": {"city": "Tokyo"}}],
    },
}


def example_line(name: str) -> bytes:
    line = {**LINES, **OTHER_LINES}[name]()
    if name != "bfcl":  # a BFCL line names its case by ``id``
        line["case"] = "weather"
    return json.dumps(line).encode() + b"\n"


@pytest.fixture
def api(user):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


@pytest.fixture
def suite(team, user):
    return services.create_suite(team, SUITE, user)


def upload(api, suite, body: bytes, format_name: str):
    with TestCase.captureOnCommitCallbacks(execute=True):
        return api.post(
            f"/api/suites/{suite.pk}/submissions/?format={format_name}&label=forced",
            data=body,
            content_type="application/x-ndjson",
        )


def test_every_format_has_an_example():
    assert set(FORMAT_NAMES) == set(LINES) | set(OTHER_LINES)


@pytest.mark.parametrize("name", FORMAT_NAMES)
def test_format_forces_the_run_format_of_an_upload(api, suite, name):
    response = upload(api, suite, example_line(name), name)
    assert response.status_code == 202, response.content
    submission = Submission.objects.get(pk=response.json()["id"])
    assert submission.format == name
    assert list(Result.objects.filter(submission=submission).values_list("verdict", flat=True)) == [
        "pass"
    ]


@pytest.mark.parametrize("name", FORMAT_NAMES)
def test_a_line_of_another_format_is_not_read_as_its_own_when_one_is_forced(api, suite, name):
    other = "bfcl" if name != "bfcl" else "canonical"
    response = upload(api, suite, example_line(other), name)
    assert response.status_code == 202, response.content
    status = api.get(response.json()["status_url"]).json()
    # Detected, the line would be a run of "weather" that passes.
    assert (status["total"], status["counts"]["pass"]) == (0, 0), status


def test_an_unknown_format_is_a_400_naming_the_parameter(api, suite):
    response = upload(api, suite, example_line("canonical"), "yaml")
    assert response.status_code == 400
    assert "format" in response.json()
