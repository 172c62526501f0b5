"""Fixtures of the ``/otlp/v1/traces`` tests: the producers' suite in a team with one member
of each role, and API clients holding their tokens."""

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from cases import services
from scoring.live import assembly
from tests.support.producers import SUITE


@pytest.fixture
def suite(team, admin):
    return services.create_suite(team, SUITE, admin)


@pytest.fixture
def client_of():
    def make(user) -> APIClient:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
        return client

    return make


@pytest.fixture
def sender(client_of, editor):
    return client_of(editor)


@pytest.fixture
def assembled_when_told(settings, monkeypatch):
    """No grace period, and no timer thread: ``assemble_due()`` is called by the test."""
    settings.CASEBOOK_TRACE_GRACE_SECONDS = 0
    monkeypatch.setattr(assembly.embedded_timer, "wake_in", lambda seconds: None)
