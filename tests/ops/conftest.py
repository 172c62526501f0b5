"""Fixtures for the operations tests: a redis-server of our own, and the Celery app pointed
at it (or at a port where nothing listens) as a deployment with ``REDIS_URL`` would be."""

from __future__ import annotations

import pytest

from evalsite.celery import app as celery_app
from tests.support.workers import Broker, free_port


@pytest.fixture
def broker(tmp_path):
    server = Broker(tmp_path / "redis.log")
    server.start()
    yield server
    server.stop()


@pytest.fixture
def use_broker():
    """Point the Celery app at a broker URL, tasks no longer run in-process."""
    saved = {name: celery_app.conf[name] for name in ("task_always_eager", "broker_url")}

    def use(url: str) -> None:
        celery_app.conf.update(task_always_eager=False, broker_url=url)

    yield use
    celery_app.conf.update(saved)


@pytest.fixture
def closed_port_url():
    return f"redis://127.0.0.1:{free_port()}/0"
