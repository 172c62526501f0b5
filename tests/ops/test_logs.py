"""JSON log lines carry the request id (taken from X-Request-ID, or made) and, in a task,
the task's and the submission's ids."""

from __future__ import annotations

import io
import json
import logging

import pytest

from evalsite.logs import ContextFilter, JsonFormatter, current_request
from scoring.ingest.tasks import ingest_submission


@pytest.fixture
def json_lines():
    """What the root logger writes while the test runs, through the JSON format and the
    context filter as configured by ``LOG_FORMAT=json``; a function that parses it."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(ContextFilter())
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    yield lambda: [json.loads(line) for line in stream.getvalue().splitlines()]
    root.removeHandler(handler)
    root.setLevel(level)


@pytest.mark.django_db
def test_every_line_of_a_request_carries_its_id(client, json_lines):
    response = client.get("/no-such-page/", headers={"X-Request-ID": "edge-7f3a"})
    assert response.status_code == 404
    assert response["X-Request-ID"] == "edge-7f3a"
    lines = json_lines()
    by_logger = {line["logger"]: line for line in lines}
    # Django logs the 404 after the middleware has returned: the id is still known.
    assert by_logger["django.request"]["message"] == "Not Found: /no-such-page/"
    access = by_logger["evalsite.request"]
    assert access["message"] == "GET /no-such-page/ 404"
    assert (access["method"], access["path"], access["status"]) == ("GET", "/no-such-page/", 404)
    assert all(line["request_id"] == "edge-7f3a" for line in lines)
    assert {"time", "level", "logger", "message"} <= set(access)
    assert current_request.get() is None  # the next request starts with none


@pytest.mark.django_db
@pytest.mark.parametrize("offered", [None, "", "a b", "x" * 200, "id\nforged line"])
def test_a_missing_or_odd_request_id_is_replaced(client, json_lines, offered):
    headers = {"X-Request-ID": offered} if offered is not None else {}
    response = client.get("/healthz", headers=headers)
    made = response["X-Request-ID"]
    assert made != offered
    assert len(made) == 32
    assert int(made, 16) >= 0


@pytest.mark.django_db
def test_a_task_logs_its_own_id_its_submission_and_the_request_that_sent_it(json_lines):
    # A task run in-process (as with no broker) inside a request. (Its submission does not
    # exist: the task has nothing to do, and says it succeeded.)
    token = current_request.set("req-42")
    try:
        ingest_submission.apply(args=(987654,), task_id="task-1")
        done = next(line for line in json_lines() if line["logger"] == "celery.app.trace")
        assert done["message"].startswith(
            "Task scoring.ingest.tasks.ingest_submission[task-1] succ"
        )
        assert done["request_id"] == "req-42"
        assert done["task_id"] == "task-1"
        assert done["submission_id"] == 987654
        assert current_request.get() == "req-42"  # the request's id is back
    finally:
        current_request.reset(token)


def test_plain_lines_name_the_ids_known():
    record = logging.LogRecord("scoring", logging.INFO, "", 0, "resumed %s", (3,), None)
    token = current_request.set("abc")
    try:
        ContextFilter().filter(record)
    finally:
        current_request.reset(token)
    formatter = logging.Formatter("%(levelname)s %(name)s [%(context)s] %(message)s")
    assert formatter.format(record) == "INFO scoring [request_id=abc] resumed 3"
