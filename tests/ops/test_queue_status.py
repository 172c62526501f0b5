"""``manage.py queue_status``: the broker's queue depth and the unfinished submissions."""

from __future__ import annotations

import io
import json
from datetime import timedelta
from pathlib import Path

import pytest
import redis
from django.core.management import call_command
from django.utils import timezone

from cases import services
from cases.models import Team
from scoring.models import Status, Submission

DEMO = json.loads((Path(__file__).parents[2] / "cases/demo/assistant.suite.json").read_text())


def queue_status(*args) -> str:
    out = io.StringIO()
    call_command("queue_status", *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def submissions(user, settings):
    """One submission of each status; the one scoring has not moved for ten minutes."""
    settings.CASEBOOK_STALL_SECONDS = 120
    suite = services.create_suite(Team.objects.create(name="Agents", slug="agents"), DEMO, user)
    made = {}
    for status in Status:
        made[status] = Submission.objects.create(
            suite=suite, version=suite.latest_version, status=status, chunk_runs=1000
        )
    Submission.objects.filter(pk=made[Status.SCORING].pk).update(
        stored_runs=400, total=400, scored=100, heartbeat=timezone.now() - timedelta(minutes=10)
    )
    Submission.objects.filter(pk=made[Status.INGESTING].pk).update(stored_runs=2500)
    return made


@pytest.mark.django_db
def test_eager_mode_has_no_queue():
    assert queue_status().splitlines() == [
        "broker: none, eager mode (REDIS_URL unset: tasks run in-process)",
        "unfinished submissions: 0",
    ]
    report = json.loads(queue_status("--json"))
    assert report == {
        "broker": {"mode": "eager", "queues": {}, "unacked": 0},
        "unfinished": {"count": 0, "oldest": []},
    }


@pytest.mark.django_db
def test_the_depth_of_the_queue_in_redis(broker, use_broker):
    use_broker(broker.url)
    client = redis.Redis.from_url(broker.url)
    client.rpush("celery", *[f"message {n}" for n in range(7)])
    client.hset("unacked", mapping={"tag-1": "m", "tag-2": "m"})
    report = json.loads(queue_status("--json"))["broker"]
    assert report["mode"] == "redis"
    assert report["queues"] == {"celery": 7}
    assert report["unacked"] == 2
    lines = queue_status().splitlines()
    # As Celery shows it: a password, if any, masked.
    assert lines[0] == f"broker: redis://:**@127.0.0.1:{broker.port}/0"
    assert lines[1:3] == [
        "  queue 'celery': 7 waiting",
        "  taken by workers, not yet acknowledged: 2",
    ]


@pytest.mark.django_db
def test_a_broker_that_cannot_be_reached_is_reported_and_fails(use_broker, closed_port_url):
    use_broker(closed_port_url)
    out = io.StringIO()
    with pytest.raises(SystemExit) as exited:
        call_command("queue_status", stdout=out)
    assert exited.value.code == 1
    assert "unreachable: ConnectionError" in out.getvalue()


@pytest.mark.django_db
def test_unfinished_submissions_oldest_first_with_progress_and_stall(submissions):
    report = json.loads(queue_status("--json"))["unfinished"]
    assert report["count"] == 2
    ingesting, scoring = report["oldest"]
    assert (ingesting["id"], ingesting["status"]) == (submissions[Status.INGESTING].pk, "ingesting")
    assert ingesting["stored_runs"] == 2500
    assert ingesting["stalled"] is False
    assert scoring["status"] == "scoring"
    assert (scoring["scored"], scoring["total"], scoring["progress"]) == (100, 400, 0.25)
    assert scoring["stalled"] is True
    assert 595 <= scoring["heartbeat_age_seconds"] <= 660

    table = queue_status().splitlines()
    assert table[1] == "unfinished submissions: 2"
    assert table[2].split() == ["id", "status", "age", "progress", "heartbeat", "stalled", "suite"]
    assert "2500 runs read" in table[3]
    assert table[3].split()[-2] == "no"
    assert "100/400 (25%)" in table[4]
    assert "10m ago" in table[4]
    assert "STALLED" in table[4]
    assert table[4].endswith(DEMO["name"])


@pytest.mark.django_db
def test_the_list_is_cut_at_the_limit(submissions):
    lines = queue_status("--limit", "1").splitlines()
    assert lines[-1] == "... and 1 more"
    assert len(json.loads(queue_status("--json", "--limit", "1"))["unfinished"]["oldest"]) == 1
