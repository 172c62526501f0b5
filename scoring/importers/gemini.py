"""Google Gemini ``contents`` (formats.md §4).

The ``functionCall`` parts of one ``model`` content are one batch (the Python SDK writes
``function_call``; both are read); ``args`` is already an object. ``functionResponse``
parts give the results: joined by ``id`` when there is one, and otherwise, since ``id`` is
optional, by order among the calls of the same name in the latest model turn (the API wants
one response per call, so two parallel calls of one tool each get their own). A response
holding an ``error`` key is a failed call. The final text is the text parts of the last
model content, without thought summaries (``thought: true``).
"""

from collections import deque
from collections.abc import Mapping
from typing import Any

from .common import (
    arguments_fields,
    envelope_fields,
    is_join_key,
    list_at,
    name_at,
    object_at,
)

NAME = "gemini"
SIGNATURE = "contents"


def detect(line: Mapping) -> bool:
    return isinstance(line.get("contents"), list)


def convert(line: Mapping) -> dict:
    contents = list_at(line.get("contents"), "contents")
    batches: list[list[dict]] = []
    final_text = None
    calls_by_id: dict = {}
    unanswered: dict[str, deque] = {}  # the latest model turn's calls by name, in order
    for i, content in enumerate(contents):
        where = f"contents[{i}]"
        parts = list_at(object_at(content, where).get("parts", []), f"{where}.parts")
        if content.get("role") == "model":
            calls, texts = [], []
            for j, part in enumerate(parts):
                part_where = f"{where}.parts[{j}]"
                key, function_call = _either(
                    object_at(part, part_where), "functionCall", part_where
                )
                if function_call is not None:
                    calls.append(_call(function_call, f"{part_where}.{key}"))
                elif isinstance(part.get("text"), str) and not part.get("thought"):
                    texts.append(part["text"])
            final_text = "".join(texts) if texts else None
            if calls:
                batches.append(calls)
                unanswered = {}
                for call in calls:
                    unanswered.setdefault(call["name"], deque()).append(call)
                    if is_join_key(call["id"]):
                        calls_by_id[call["id"]] = call
        else:
            for j, part in enumerate(parts):
                part_where = f"{where}.parts[{j}]"
                key, response = _either(object_at(part, part_where), "functionResponse", part_where)
                if response is not None:
                    _answer(response, f"{part_where}.{key}", calls_by_id, unanswered)
    run = envelope_fields(line)
    run["batches"] = batches
    run["final_text"] = final_text
    return run


def _either(part: Mapping, camel: str, where: str) -> tuple[str, Mapping | None]:
    """The part's ``camel`` field or its snake_case twin, with the key it was under."""
    snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in camel)
    for key in (camel, snake):
        if part.get(key) is not None:
            return key, object_at(part[key], f"{where}.{key}")
    return camel, None


def _call(function_call: Mapping, where: str) -> dict:
    call = {"id": function_call.get("id"), "name": name_at(function_call, "name", where)}
    call.update(arguments_fields(function_call.get("args") or {}))
    return call


def _answer(response: Mapping, where: str, calls_by_id: dict, unanswered: dict) -> None:
    """Give ``response`` to the call it answers: by id, else the first unanswered call of its
    name in the latest model turn. A response that answers no call is left out."""
    response_id = response.get("id")
    call = calls_by_id.get(response_id) if is_join_key(response_id) else None
    if call is None:
        waiting = unanswered.get(name_at(response, "name", where), deque())
        while waiting and "result" in waiting[0]:  # already answered by id
            waiting.popleft()
        call = waiting.popleft() if waiting else None
    if call is None:
        return
    result: Any = response.get("response")
    call["result"] = result
    if isinstance(result, Mapping) and "error" in result:
        call["is_error"] = True
