"""The pipeline with a real broker and real workers (docs/pipeline.md#tasks): a redis-server
and ``celery worker`` processes of our own, on the test database, that the tests stop and kill.

- an upload through the API is ingested and scored by the worker, counted once;
- a worker killed (SIGKILL, the whole process group) in the middle of scoring leaves its
  messages unacknowledged; a new worker and the sweep finish the submission, and nothing is
  counted twice;
- with the broker down at upload time the file is still taken (202) and kept; once the broker
  and a worker are back, the sweep starts it.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time

import pytest

from scoring.ingest import tasks
from scoring.models import Status, Submission, UploadChunk
from tests.support import tau_bench
from tests.support.workers import STALL_SECONDS, TIMEOUT, stop, use_broker, wait_for

from .conftest import (
    REPEATS,
    assert_scored_once,
    finish_with_the_sweep,
    run_file,
    status_of,
    upload_over_api,
)

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_worker_ingests_and_scores_an_upload_of_two_thousand_runs(api, tau_suite, pipeline):
    _, workers = pipeline
    workers.start()
    body, invalid = run_file()
    submission_id = upload_over_api(api, tau_suite, body)

    def done():
        status = status_of(api, submission_id)
        assert status["status"] != Status.FAILED, status["error"]
        return status if status["status"] == Status.DONE else None

    status = wait_for(done, TIMEOUT, "the submission to be done", workers)
    assert status["total"] == status["scored"] == 2000
    assert status["counts"] == {
        "pass": tau_bench.PASSED * REPEATS,
        "fail": tau_bench.FAILED * REPEATS,
        "error": 0,
    }
    assert [line["line"] for line in status["invalid_lines"]] == sorted(invalid)
    assert all(line["reason"].startswith("invalid JSON") for line in status["invalid_lines"])
    assert status["unknown_cases"] == ["no-such-task"]
    assert status["formats_seen"] == ["canonical", "openai_chat"]
    assert_scored_once(submission_id)
    assert Submission.objects.get(pk=submission_id).generation == 1  # never restarted


@pytest.mark.parametrize(
    ("concurrency", "while_"),
    [(1, Status.SCORING), (2, Status.INGESTING)],
    ids=["while-scoring", "while-still-ingesting"],
)
def test_a_worker_killed_mid_way_is_replaced_and_nothing_counts_twice(
    api, tau_suite, pipeline, concurrency, while_
):
    """One process reads the whole file before it scores a chunk; with two, the worker is
    killed with the file half read and some chunks scored."""
    _, workers = pipeline
    first = workers.start(concurrency)
    submission_id = upload_over_api(api, tau_suite, run_file()[0])

    def under_way():
        status = status_of(api, submission_id)
        return status["status"] == while_ and 0 < status["scored"] < 1000 and status

    before = wait_for(under_way, TIMEOUT, f"scoring to be under way, {while_}", workers)
    stop(first)  # SIGKILL to the worker and its pool: its messages are never acknowledged
    time.sleep(STALL_SECONDS + 0.5)
    killed = status_of(api, submission_id)
    assert killed["status"] == while_
    assert before["scored"] <= killed["scored"] < 2000

    workers.start()
    tasks.sweep.delay()  # the sweep as a task, as Celery beat sends it
    finish_with_the_sweep(api, submission_id, workers)
    assert_scored_once(submission_id)
    # Killed while reading, its range is read again, not the file (docs/pipeline.md#ranges).
    assert Submission.objects.get(pk=submission_id).generation == 1


def test_with_the_broker_down_the_upload_is_kept_and_the_sweep_starts_it_later(
    api, tau_suite, pipeline
):
    broker, workers = pipeline
    broker.stop()
    started = time.monotonic()
    submission_id = upload_over_api(api, tau_suite, run_file()[0])
    assert time.monotonic() - started < 15  # the broker's absence costs a few seconds at most
    submission = Submission.objects.get(pk=submission_id)
    assert submission.status == Status.INGESTING
    assert UploadChunk.objects.filter(submission=submission).exists()
    time.sleep(STALL_SECONDS + 0.5)
    assert status_of(api, submission_id)["status"] == Status.INGESTING  # waiting, not lost

    broker.start()
    workers.start()
    finish_with_the_sweep(api, submission_id, workers)
    assert_scored_once(submission_id)


@pytest.fixture
def silent_broker():
    """The address of a broker that accepts connections and never answers (a hung server,
    or one whose packets a firewall drops after the handshake)."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(64)  # the kernel completes handshakes; nothing ever reads
        yield f"redis://127.0.0.1:{server.getsockname()[1]}/0"


def test_a_broker_that_never_answers_delays_an_upload_by_seconds_not_forever(
    api, tau_suite, pipeline, silent_broker
):
    use_broker(broker_url=silent_broker)
    sending = threading.Thread(target=_send_sweep, daemon=True)
    sending.start()
    sending.join(30)
    assert not sending.is_alive(), "sending a task to a silent broker hangs"

    started = time.monotonic()
    submission_id = upload_over_api(api, tau_suite, tau_bench.run_file(tau_bench.RECORDS[:10]))
    assert time.monotonic() - started < 30
    assert Submission.objects.get(pk=submission_id).status == Status.INGESTING


def _send_sweep():
    with contextlib.suppress(Exception):
        tasks.sweep.delay()
