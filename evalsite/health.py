"""Probes for a load balancer or an orchestrator; no sign-in, and nothing secret said.

``/healthz`` (liveness) answers as long as the process can serve a request: it touches
nothing else, so a database outage never gets healthy web processes restarted.
``/readyz`` (readiness) checks what a request needs, the database and the broker, each with
a timeout of seconds, and answers 503 naming the checks that failed (the details are logged,
not sent: an error message can name hosts and users).
"""

from __future__ import annotations

import logging
from contextlib import nullcontext

from django.db import connections, transaction
from django.http import JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe
from kombu import Connection

from .celery import app as celery_app

log = logging.getLogger(__name__)

TIMEOUT_SECONDS = 2


def check_database(alias: str = "default") -> str:
    """One query, cut short by PostgreSQL after the timeout. (Connecting has its own
    timeout: ``DB_CONNECT_TIMEOUT``, in the settings.)"""
    connection = connections[alias]
    postgresql = connection.vendor == "postgresql"
    # The transaction only scopes PostgreSQL's timeout. On SQLite it would take the write
    # lock (IMMEDIATE transactions, in the settings) and wait behind a long write.
    scope = transaction.atomic(using=alias) if postgresql else nullcontext()
    with scope, connection.cursor() as cursor:
        if postgresql:
            cursor.execute("SET LOCAL statement_timeout = %s", [TIMEOUT_SECONDS * 1000])
        cursor.execute("SELECT 1")
        cursor.fetchone()
    return "ok"


def check_broker(app=celery_app) -> str:
    """A fresh connection to the broker (not the pool's, which could hide an outage), given
    no retries. With no broker (tasks run in-process) there is nothing to reach."""
    if app.conf.task_always_eager:
        return "not used (tasks run in-process)"
    timeouts = {"socket_connect_timeout": TIMEOUT_SECONDS, "socket_timeout": TIMEOUT_SECONDS}
    with Connection(
        app.conf.broker_url, connect_timeout=TIMEOUT_SECONDS, transport_options=timeouts
    ) as connection:
        connection.ensure_connection(max_retries=0)
    return "ok"


CHECKS = {"database": check_database, "broker": check_broker}


@never_cache
@require_safe
def healthz(request):
    return JsonResponse({"status": "ok"})


@never_cache
@require_safe
def readyz(request):
    results, failed = {}, []
    for name, check in CHECKS.items():
        try:
            results[name] = check()
        except Exception:
            log.warning("readiness check %r failed", name, exc_info=True)
            results[name] = "failed"
            failed.append(name)
    body = {"status": "unavailable" if failed else "ready", "checks": results}
    if failed:
        body["failed"] = failed
    return JsonResponse(body, status=503 if failed else 200)
