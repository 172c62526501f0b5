"""The Celery app (evalsite/celery.py): tasks registered by importing the modules they sit
in, and beat's schedule made of the task objects (docs/operations.md#production)."""

from __future__ import annotations

import re
from pathlib import Path

from celery import Task

from evalsite.celery import app
from scoring.ingest import tasks as ingest_tasks
from scoring.live import tasks as live_tasks
from scoring.retention import tasks as retention_tasks

ROOT = Path(__file__).resolve().parents[2]


def test_the_workers_register_every_task_of_each_area():
    app.loader.import_default_modules()
    registered = {name for name in app.tasks if name.startswith("scoring.")}
    expected = {
        task.name
        for module in (ingest_tasks, live_tasks, retention_tasks)
        for task in vars(module).values()
        if isinstance(task, Task)
    }
    assert len(expected) == 7
    assert registered == expected


def test_beat_sends_the_periodic_tasks_by_their_objects(settings):
    app.finalize()
    schedule = app.conf.beat_schedule
    assert {entry["task"] for entry in schedule.values()} == {
        ingest_tasks.sweep.name,
        live_tasks.assemble_due_traces.name,
        retention_tasks.prune_expired_runs.name,
    }
    assert schedule["resume-stalled-submissions"]["schedule"] == 60.0
    assert schedule["assemble-due-traces"]["schedule"] == settings.CASEBOOK_TRACE_SWEEP_SECONDS
    assert schedule["prune-expired-runs"]["schedule"].hour == {settings.CASEBOOK_PRUNE_HOUR}


def test_no_task_is_named_by_a_string():
    named = re.compile(r"""["']scoring(\.\w+)*\.tasks\.\w+["']""")
    found = [
        f"{path.relative_to(ROOT)}:{n}"
        for package in ("evalsite", "cases", "scoring")
        for path in (ROOT / package).rglob("*.py")
        for n, line in enumerate(path.read_text().splitlines(), start=1)
        if named.search(line)
    ]
    assert not found
