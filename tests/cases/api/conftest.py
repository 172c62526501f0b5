"""Builders for the API tests: users, a team holding one member of each role, an outsider,
and a suite made the way the app makes them (``services.create_suite``)."""

from __future__ import annotations

import copy

import pytest
from rest_framework.test import APIClient

from cases import services
from cases.models import User

# One long decimal a float cannot hold: it must come back exactly as written.
EXACT = "0.1000000000000000055511151231257827"


def suite_file(name: str = "file-ops") -> dict:
    """A valid suite file (docs/formats.md#suite-files) of two cases; a fresh copy each call."""
    return copy.deepcopy(
        {
            "schema": "casebook.suite/1",
            "name": name,
            "description": "File tools",
            "match": {"tool_names": "exact", "arg_names": "exact", "null_args": "must_be_null"},
            "cases": [
                {
                    "key": "delete-if-exists",
                    "title": "Delete a file only after checking it exists",
                    "prompt": "Delete notes.txt if it is there.",
                    "tags": ["files"],
                    "expected_calls": [
                        {"name": "file_exists", "required_args": {"path": "notes.txt"}},
                        {
                            "name": "delete_file",
                            "required_args": {"path": "notes.txt"},
                            "ordered": True,
                            "depends_on_result": True,
                        },
                    ],
                    "extra_calls": "allow",
                    "expectations": [
                        {"type": "did_not_call_tool", "tool": "format_disk"},
                        {"type": "final_text_contains", "text": "deleted"},
                    ],
                    "reviewer": "kept: an unknown field",
                },
                {
                    "key": "weather.paris-v2",
                    "prompt": "Weather in Paris?",
                    "expected_calls": [{"name": "get_weather", "required_args": {"city": "Paris"}}],
                    "expectations": [{"type": "final_text_contains", "text": "Paris"}],
                },
            ],
        }
    )


@pytest.fixture
def suite(team, admin):
    return services.create_suite(team, suite_file(), admin)


@pytest.fixture
def api():
    """``api(user)``: an API client signed in (by session) as the user; ``api()``: anonymous."""

    def client(user: User | None = None) -> APIClient:
        api_client = APIClient()
        if user is not None:
            api_client.force_login(user)
        return api_client

    return client
