"""Log lines that say which request or task they belong to, as plain text or as JSON.

``LOG_FORMAT=json`` writes one JSON object a line (time, level, logger, message, the ids
known, and any ``extra=`` fields), for a log collector; the default is plain text. The ids
live in context variables: the request-id middleware sets the request's, and the Celery
signals below set a task's (its id, the request that sent it, the submission it works on),
so every line logged while handling either carries them without being passed them.
"""

from __future__ import annotations

import inspect
import json
import logging
from collections.abc import Mapping
from contextvars import ContextVar, Token
from datetime import UTC, datetime
from typing import Any

current_request: ContextVar[str | None] = ContextVar("current_request", default=None)
current_task: ContextVar[str | None] = ContextVar("current_task", default=None)
current_submission: ContextVar[int | None] = ContextVar("current_submission", default=None)
# The field each is logged as.
CONTEXT: dict[str, ContextVar[Any]] = {
    "request_id": current_request,
    "task_id": current_task,
    "submission_id": current_submission,
}

# What every LogRecord has; anything else on a record came from ``extra=`` and is logged.
_RECORD_ATTRIBUTES = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message",
    "asctime",
    "context",
    *CONTEXT,
}


class ContextFilter(logging.Filter):
    """Stamps each record with the ids of the request or task being handled (None if none),
    and ``context``, the ones known as ``name=value`` words for the plain format."""

    def filter(self, record: logging.LogRecord) -> bool:
        for name, variable in CONTEXT.items():
            if getattr(record, name, None) is None:
                setattr(record, name, variable.get())
        known = [f"{name}={getattr(record, name)}" for name in CONTEXT if getattr(record, name)]
        record.context = " ".join(known) or "-"
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object a line; ids that are not known are left out rather than null."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for name in CONTEXT:
            value = getattr(record, name, None)
            if value is not None:
                entry[name] = value
        for name, value in vars(record).items():
            if name not in _RECORD_ATTRIBUTES:
                entry[name] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return json.dumps(entry, default=str, ensure_ascii=False)


def logging_config(log_format: str, level: str) -> dict:
    """The LOGGING setting: one console handler, in the format asked for."""
    if log_format not in ("plain", "json"):
        raise ValueError(f"LOG_FORMAT must be plain or json, not {log_format!r}")
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"context": {"()": ContextFilter}},
        "formatters": {
            "plain": {"format": "%(asctime)s %(levelname)s %(name)s [%(context)s] %(message)s"},
            "json": {"()": JsonFormatter},
        },
        "handlers": {
            "console": {
                "class": "logging.StreamHandler",
                "formatter": log_format,
                "filters": ["context"],
            }
        },
        "root": {"handlers": ["console"], "level": level},
    }


# Celery: the request id travels with the task as a message header, and each task sets
# its ids for the lines it logs. Connected in evalsite/celery.py.


def add_request_id_header(headers: dict | None = None, **kwargs) -> None:
    """``before_task_publish``: send the current request's id along with the task."""
    if headers is not None and current_request.get() is not None:
        headers["request_id"] = current_request.get()


def bind_task_context(task_id: str | None = None, task=None, args=(), kwargs=None, **_) -> None:
    """``task_prerun``: the task's id, the request that sent it, and its submission (any
    task with a ``submission_id`` parameter). A task run in-process (no broker) keeps the
    request it runs in."""
    arguments: Mapping[str, Any]
    try:
        arguments = inspect.signature(task.run).bind_partial(*args, **(kwargs or {})).arguments
    except TypeError:
        arguments = {}
    values = {
        "task_id": task_id,
        "request_id": getattr(task.request, "request_id", None) or current_request.get(),
        "submission_id": arguments.get("submission_id"),
    }
    _bound[task_id] = [(CONTEXT[name], CONTEXT[name].set(value)) for name, value in values.items()]


def clear_task_context(task_id: str | None = None, **_) -> None:
    """``task_postrun``: back to the ids from before the task (none, in a worker)."""
    for variable, token in reversed(_bound.pop(task_id, [])):
        variable.reset(token)


_bound: dict[
    str | None, list[tuple[ContextVar[Any], Token[Any]]]
] = {}  # task id → what bind_task_context set, to undo it
