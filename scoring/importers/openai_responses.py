"""OpenAI Responses API (formats.md §2).

The line holds one response's ``output`` items (the line is then that response, and its
``status`` and ``error`` count), or ``responses``: the response objects of a multi-turn run,
in order. The ``function_call`` items of one response are one batch; ``call_id`` is the
call's id (``id`` is only the item's) and ``arguments`` a JSON string. Results come from the
``function_call_output`` items of ``input`` lists, the line's or a response's own (logs that
keep each request beside its response), joined by ``call_id``; calls echoed back in those
inputs are not counted again. The final text is the ``output_text`` parts of the ``message``
items of the last response. A last response that failed, was cancelled or came back
incomplete gives the run its error (an earlier one that failed was retried). Reasoning and
other item types are skipped.
"""

from collections.abc import Mapping
from typing import Any

from .common import (
    arguments_fields,
    envelope_fields,
    is_join_key,
    list_at,
    name_at,
    object_at,
    with_error,
)

NAME = "openai_responses"
SIGNATURE = "output or responses"


def detect(line: Mapping) -> bool:
    return isinstance(line.get("output"), list) or isinstance(line.get("responses"), list)


def convert(line: Mapping) -> dict:
    if "responses" in line:
        responses = [
            (f"responses[{k}]", object_at(response, f"responses[{k}]"))
            for k, response in enumerate(list_at(line["responses"], "responses"))
        ]
        results = _outputs_by_call_id([line, *(response for _, response in responses)])
    else:
        responses = [("", line)]
        results = _outputs_by_call_id([line])
    batches = []
    for where, response in responses:
        calls = [
            _call(item, path, results)
            for path, item in _output_items(response, where)
            if item.get("type") == "function_call"
        ]
        if calls:
            batches.append(calls)
    run = envelope_fields(line)
    run["batches"] = batches
    run["final_text"] = None
    if responses:
        where, last = responses[-1]
        run["final_text"] = _output_text(_output_items(last, where))
        with_error(run, _response_error(last))
    return run


def _output_items(response: Mapping, where: str) -> list[tuple[str, Mapping]]:
    prefix = f"{where}.output" if where else "output"
    items = list_at(response.get("output", []), prefix)
    return [(f"{prefix}[{j}]", object_at(item, f"{prefix}[{j}]")) for j, item in enumerate(items)]


def _call(item: Mapping, where: str, results: dict) -> dict:
    call_id = item.get("call_id")
    call = {"id": call_id, "name": name_at(item, "name", where)}
    call.update(arguments_fields(item.get("arguments")))
    if is_join_key(call_id) and call_id in results:
        call["result"] = results[call_id]
    return call


def _outputs_by_call_id(holders: list[Mapping]) -> dict:
    """``call_id`` → ``output`` of every ``function_call_output`` item in the ``input`` lists
    of ``holders``."""
    results = {}
    for holder in holders:
        items = holder.get("input")
        if not isinstance(items, list):  # absent, or a plain text prompt
            continue
        for item in items:
            if (
                isinstance(item, Mapping)
                and item.get("type") == "function_call_output"
                and is_join_key(item.get("call_id"))
            ):
                results[item["call_id"]] = item.get("output")
    return results


def _output_text(items: list[tuple[str, Mapping]]) -> str | None:
    texts = [
        part["text"]
        for _, item in items
        if item.get("type") == "message" and isinstance(item.get("content"), list)
        for part in item["content"]
        if isinstance(part, Mapping)
        and part.get("type") == "output_text"
        and isinstance(part.get("text"), str)
    ]
    return "".join(texts) if texts else None


def _response_error(response: Mapping) -> str | None:
    """Why a response did not complete, or None when it did."""
    error: Any = response.get("error")
    status = response.get("status")
    if isinstance(error, Mapping):
        detail = ": ".join(str(error[key]) for key in ("code", "message") if error.get(key))
        return f"response failed: {detail}" if detail else "response failed"
    if error:
        return f"response failed: {error}"
    if status == "incomplete":
        details = response.get("incomplete_details")
        reason = details.get("reason") if isinstance(details, Mapping) else None
        return f"response incomplete: {reason}" if reason else "response incomplete"
    if status in ("failed", "cancelled"):
        return f"response {status}"
    return None
