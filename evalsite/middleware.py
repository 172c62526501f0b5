"""Request ids: each request gets one (the caller's ``X-Request-ID`` if it sent a sane one),
sent back in the response's ``X-Request-ID`` and stamped on every log line of the request,
and on the tasks it enqueues (evalsite/logs.py). One access log line a request."""

from __future__ import annotations

import logging
import re
import time
import uuid

from django.core.signals import request_finished
from django.dispatch import receiver

from .logs import current_request

HEADER = "X-Request-ID"
# What a proxy or load balancer sends (a UUID, or a token of its own); anything else, or
# anything longer, could forge or flood log lines, and is replaced by a new id.
ACCEPTED = re.compile(r"[A-Za-z0-9._:-]{1,128}")
# Probes call every few seconds: their lines would drown the others at INFO.
QUIET_PATHS = {"/healthz", "/readyz"}

access_log = logging.getLogger("evalsite.request")


class RequestIdMiddleware:
    """First in MIDDLEWARE, so that what every other middleware logs carries the id."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        offered = request.headers.get(HEADER, "")
        request.id = offered if ACCEPTED.fullmatch(offered) else uuid.uuid4().hex
        current_request.set(request.id)
        started = time.perf_counter()
        response = self.get_response(request)
        response[HEADER] = request.id
        access_log.log(
            logging.DEBUG if request.path in QUIET_PATHS else logging.INFO,
            "%s %s %s",
            request.method,
            request.path,
            response.status_code,
            extra={
                "method": request.method,
                "path": request.path,
                "status": response.status_code,
                "duration_ms": round((time.perf_counter() - started) * 1000, 1),
            },
        )
        return response


@receiver(request_finished)
def forget_request_id(**kwargs):
    """Django logs a 4xx or 5xx response after the middleware has returned, so the id is
    kept until the response is finished, then dropped: a line logged between requests
    belongs to none."""
    current_request.set(None)
