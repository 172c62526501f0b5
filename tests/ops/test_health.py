"""``/healthz`` answers with no dependency; ``/readyz`` checks the database and the broker and
names what failed, with a 503."""

from __future__ import annotations

import pytest
from django.db import OperationalError, connections
from django.test.utils import CaptureQueriesContext

from evalsite import health
from tests.support.workers import free_port


def test_liveness_needs_nothing_but_the_process(client):
    # No database access is allowed in this test: touching it would fail the test.
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert response["Cache-Control"].startswith("max-age=0")


@pytest.mark.django_db
def test_ready_when_the_database_and_the_broker_answer(client, broker, use_broker):
    use_broker(broker.url)
    response = client.get("/readyz")
    assert response.status_code == 200
    assert response.json() == {"status": "ready", "checks": {"database": "ok", "broker": "ok"}}


@pytest.mark.django_db
def test_in_eager_mode_there_is_no_broker_to_reach(client):
    response = client.get("/readyz")
    assert response.status_code == 200
    assert response.json()["checks"]["broker"] == "not used (tasks run in-process)"


@pytest.mark.django_db
def test_a_broker_that_is_down_makes_the_process_unready(client, use_broker, closed_port_url):
    use_broker(closed_port_url)
    response = client.get("/readyz")
    assert response.status_code == 503
    body = response.json()
    assert body["failed"] == ["broker"]
    assert body["checks"] == {"database": "ok", "broker": "failed"}
    assert "127.0.0.1" not in response.content.decode()  # details are logged, not sent


@pytest.fixture
def unreachable_database(tmp_path):
    """A connection like the tests' own, to a port where no PostgreSQL listens (on SQLite,
    to a file in a directory that does not exist)."""
    default = connections["default"]
    if default.vendor == "sqlite":
        where = {"NAME": str(tmp_path / "missing" / "casebook.sqlite3")}
    else:
        where = {"PORT": free_port()}
    settings = default.settings_dict | where
    connections["down"] = connections["default"].__class__(settings, alias="down")
    yield "down"
    connections["down"].close()
    del connections["down"]


@pytest.mark.django_db
def test_the_database_check_fails_on_a_connection_that_fails(unreachable_database):
    with pytest.raises(OperationalError):
        health.check_database(unreachable_database)


@pytest.mark.django_db
def test_a_database_that_is_down_makes_the_process_unready(
    client, monkeypatch, unreachable_database
):
    monkeypatch.setitem(
        health.CHECKS, "database", lambda: health.check_database(unreachable_database)
    )
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["failed"] == ["database"]


@pytest.mark.django_db
def test_the_database_check_is_one_query_with_a_statement_timeout_on_postgresql():
    with CaptureQueriesContext(connections["default"]) as captured:
        assert health.check_database() == "ok"
    # Less the savepoint of the transaction the check runs in (the test's own is around it).
    statements = [q["sql"] for q in captured.captured_queries if "SAVEPOINT" not in q["sql"]]
    if connections["default"].vendor == "postgresql":
        assert statements == ["SET LOCAL statement_timeout = 2000", "SELECT 1"]
    else:  # SQLite is a file read in the process: no server whose answer could hang
        assert statements == ["SELECT 1"]


@pytest.mark.parametrize("path", ["/healthz", "/readyz"])
def test_probes_are_read_only(client, path):
    assert client.post(path).status_code == 405
