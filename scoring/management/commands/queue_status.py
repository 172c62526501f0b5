"""``manage.py queue_status [--json] [--limit N]``: the work waiting and under way.

The broker: how many task messages wait in each queue the app uses (Redis ``LLEN``), and how
many workers have taken and not yet acknowledged (Redis transport's ``unacked`` hash); with
no ``REDIS_URL`` tasks run in-process and there is no queue. The database: every unfinished
submission, oldest first, with its age, progress, last heartbeat and whether it has stalled
(no heartbeat for ``CASEBOOK_STALL_SECONDS``: the sweep will resume it). Exit status 1 when
the broker cannot be reached.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import redis
from django.conf import settings
from django.core.management.base import BaseCommand
from django.utils import timezone
from kombu import Connection

from evalsite.celery import app as celery_app
from scoring.models import Status, Submission

UNFINISHED = (Status.INGESTING, Status.SCORING)
# Where kombu's Redis transport keeps the messages delivered to a worker and not yet acked.
UNACKED_KEY = "unacked"


def broker_status(app=celery_app) -> dict:
    """Messages waiting per queue, and taken by workers, as the broker says."""
    if app.conf.task_always_eager:
        return {"mode": "eager", "queues": {}, "unacked": 0}
    url = app.conf.broker_url
    status: dict[str, Any] = {
        "mode": "redis",
        "url": Connection(url).as_uri(),
        "queues": {},
        "unacked": None,
    }
    if not url.startswith(("redis://", "rediss://", "unix://")):
        return status | {"mode": "other", "error": "queue depth is read from Redis only"}
    client = redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=2)
    try:
        with client.pipeline(transaction=False) as pipe:
            names = sorted(app.amqp.queues)
            for name in names:
                pipe.llen(name)
            pipe.hlen(UNACKED_KEY)
            *depths, unacked = pipe.execute()
    except redis.RedisError as exc:
        return status | {"error": f"unreachable: {type(exc).__name__}"}
    finally:
        client.close()
    return status | {"queues": dict(zip(names, depths, strict=True)), "unacked": unacked}


def unfinished_submissions(limit: int) -> tuple[int, list[dict]]:
    """How many submissions are unfinished, and the oldest ``limit`` of them."""
    now = timezone.now()
    stall_cutoff = now - timedelta(seconds=settings.CASEBOOK_STALL_SECONDS)
    unfinished = Submission.objects.filter(status__in=UNFINISHED)
    rows = (
        unfinished.order_by("created")
        .select_related("suite")
        .only(
            "suite__name",
            "label",
            "status",
            "created",
            "heartbeat",
            "stored_runs",
            "scored",
            "total",
        )[:limit]
    )
    submissions = [
        {
            "id": submission.pk,
            "suite": submission.suite.name,
            "label": submission.label,
            "status": submission.status,
            "age_seconds": round((now - submission.created).total_seconds()),
            "stored_runs": submission.stored_runs,
            "scored": submission.scored,
            "total": submission.total,
            "progress": round(submission.progress, 4),
            "heartbeat": submission.heartbeat.isoformat(),
            "heartbeat_age_seconds": round((now - submission.heartbeat).total_seconds()),
            "stalled": submission.heartbeat < stall_cutoff,
        }
        for submission in rows
    ]
    return unfinished.count(), submissions


def _duration(seconds: int) -> str:
    if seconds < 120:
        return f"{seconds}s"
    if seconds < 2 * 3600:
        return f"{seconds // 60}m"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


class Command(BaseCommand):
    help = "Report the task queue's depth and the unfinished submissions."

    def add_arguments(self, parser):
        parser.add_argument("--json", action="store_true", dest="as_json", help="print JSON")
        parser.add_argument(
            "--limit", type=int, default=50, help="submissions listed, oldest first (50)"
        )

    def handle(self, *, as_json, limit, **options):
        broker = broker_status()
        count, submissions = unfinished_submissions(limit)
        if as_json:
            report = {"broker": broker, "unfinished": {"count": count, "oldest": submissions}}
            self.stdout.write(json.dumps(report, indent=2))
        else:
            self._write_broker(broker)
            self._write_submissions(count, submissions)
        if "error" in broker and broker["mode"] == "redis":
            raise SystemExit(1)

    def _write_broker(self, broker: dict) -> None:
        if broker["mode"] == "eager":
            self.stdout.write("broker: none, eager mode (REDIS_URL unset: tasks run in-process)")
            return
        self.stdout.write(f"broker: {broker['url']}")
        if "error" in broker:
            self.stdout.write(self.style.ERROR(f"  {broker['error']}"))
            return
        for name, depth in broker["queues"].items():
            self.stdout.write(f"  queue {name!r}: {depth} waiting")
        self.stdout.write(f"  taken by workers, not yet acknowledged: {broker['unacked']}")

    def _write_submissions(self, count: int, submissions: list[dict]) -> None:
        self.stdout.write(f"unfinished submissions: {count}")
        if not submissions:
            return
        header = ("id", "status", "age", "progress", "heartbeat", "stalled", "suite")
        lines = [header]
        for row in submissions:
            if row["status"] == Status.INGESTING:
                progress = f"{row['stored_runs']} runs read"
            else:
                progress = f"{row['scored']}/{row['total']} ({row['progress']:.0%})"
            lines.append(
                (
                    str(row["id"]),
                    row["status"],
                    _duration(row["age_seconds"]),
                    progress,
                    f"{_duration(row['heartbeat_age_seconds'])} ago",
                    "STALLED" if row["stalled"] else "no",
                    row["suite"],
                )
            )
        widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
        for line in lines:
            cells = (cell.ljust(width) for cell, width in zip(line, widths, strict=True))
            self.stdout.write("  ".join(cells).rstrip())
        if count > len(submissions):
            self.stdout.write(f"... and {count - len(submissions)} more")
