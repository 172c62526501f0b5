"""OpenAI Responses API (docs/formats.md#openai-responses; pairs:
docs/formats.md#request-and-response-pairs).

The line holds one response (its ``output`` items; its ``status`` and ``error`` count), or
``responses``: the response objects of a multi-turn run, in order, or a ``{"request",
"response"}`` pair as request logs and API proxies record it. The ``input`` list beside them
(the line's, or the request's) is the conversation so far, as OpenAI's own multi-turn loop
builds it (``input_list += response.output``, then a ``function_call_output`` per call): its
``function_call`` items are calls too, batched by turn (consecutive ``function_call`` items
are one batch), before the calls of the responses' outputs. The ``function_call`` items of
one response's output are one batch; ``call_id`` is the call's id (``id`` is only the item's)
and ``arguments`` a JSON string. Results come from the ``function_call_output`` items of
``input`` lists, the line's or a response's own (logs that keep each request beside its
response), joined by ``call_id``; a call echoed in an ``input`` and also in a response's
output is counted once, from the response. The final text is the ``output_text`` parts of the
``message`` items of the last response. A last response that failed, was cancelled or came
back incomplete (cut off at the token limit, say; without the response's ``status``, its last
message item's says so) gives the run its error (an earlier one that failed was retried).
Reasoning and other item types are skipped.
"""

from collections.abc import Mapping
from typing import Any

from . import usage
from .common import (
    JSONObject,
    Run,
    ToolCall,
    Turn,
    arguments_fields,
    envelope_fields,
    is_join_key,
    list_at,
    name_at,
    object_at,
    turn,
    with_error,
    with_transcript,
)

NAME = "openai_responses"
SIGNATURE = "output or responses"

_TEXT_PARTS = frozenset({"input_text", "output_text", "text"})
# ``output`` of each ``function_call_output`` item, by its ``call_id``.
_Results = dict[str | int, Any]


def detect(line: JSONObject) -> bool:
    if isinstance(line.get("output"), list) or isinstance(line.get("responses"), list):
        return True
    response = line.get("response")
    return (
        isinstance(line.get("request"), Mapping)
        and isinstance(response, Mapping)
        and isinstance(response.get("output"), list)
    )


def convert(line: JSONObject) -> Run:
    if "responses" in line:
        holder, holder_where = line, ""
        responses: list[tuple[str, JSONObject]] = [
            (f"responses[{k}]", object_at(response, f"responses[{k}]"))
            for k, response in enumerate(list_at(line["responses"], "responses"))
        ]
    elif "output" not in line and "request" in line:
        holder, holder_where = object_at(line["request"], "request"), "request"
        responses = [("response", object_at(line.get("response"), "response"))]
    else:
        holder, holder_where = line, ""
        responses = [("", line)]
    results = _outputs_by_call_id([holder, *(response for _, response in responses)])
    from_outputs = {
        call_id
        for where, response in responses
        for _, item in _output_items(response, where)
        if item.get("type") == "function_call" and is_join_key(call_id := item.get("call_id"))
    }
    batches: list[list[ToolCall]] = []
    transcript: list[Turn | None] = []
    _read_input(holder, holder_where, results, from_outputs, batches, transcript)
    made = []  # each response's model call
    for where, response in responses:
        made.append(usage.openai_call(response.get("usage"), response.get("model")))
        items = _output_items(response, where)
        calls = [
            _call(item, path, results)
            for path, item in items
            if item.get("type") == "function_call"
        ]
        if calls:
            batches.append(calls)
        text = _output_text(items)
        if calls or text is not None:
            batch = len(batches) - 1 if calls else None
            transcript.append(turn("assistant", text, batch, **usage.turn_figures(made[-1])))
    _number_tool_turns(transcript, batches)
    run = envelope_fields(line)
    run["batches"] = batches
    run["final_text"] = None
    if responses:
        where, last = responses[-1]
        items = _output_items(last, where)
        run["final_text"] = _output_text(items)
        with_error(run, _response_error(last, items))
    run["usage"] = usage.run_usage(made, requested=holder.get("model"))
    return with_transcript(run, transcript)


def _read_input(
    holder: JSONObject,
    where: str,
    results: _Results,
    from_outputs: set[str | int],
    batches: list[list[ToolCall]],
    transcript: list[Turn | None],
) -> None:
    """The calls and turns of ``holder``'s ``input`` (a text prompt, or a list of items):
    consecutive ``function_call`` items are one batch, closed by any other item but
    reasoning; calls that a response's output also holds are left to it."""
    items = holder.get("input")
    if isinstance(items, str):
        transcript.append(turn("user", items))
        return
    if not isinstance(items, list):
        return
    prefix = f"{where}.input" if where else "input"
    open_batch: list[ToolCall] | None = None
    for j, item in enumerate(items):
        item = object_at(item, f"{prefix}[{j}]")
        kind = item.get("type")
        if kind == "function_call":
            if is_join_key(item.get("call_id")) and item["call_id"] in from_outputs:
                continue
            if open_batch is None:
                open_batch = []
                batches.append(open_batch)
                transcript.append(turn("assistant", None, len(batches) - 1))
            open_batch.append(_call(item, f"{prefix}[{j}]", results))
            continue
        if kind == "reasoning":
            continue
        open_batch = None
        if kind == "function_call_output":
            tool_turn = turn("tool", item.get("output"))
            assert tool_turn is not None  # "tool" is a role of the transcript
            tool_turn["call_id"] = item.get("call_id")  # its batch is known once all are read
            transcript.append(tool_turn)
        elif kind in (None, "message"):
            transcript.append(turn(item.get("role"), _message_text(item.get("content"))))


def _number_tool_turns(transcript: list[Turn | None], batches: list[list[ToolCall]]) -> None:
    """Give each tool turn the batch of the call whose output it carries."""
    batch_of = {
        call["id"]: b
        for b, batch in enumerate(batches)
        for call in batch
        if is_join_key(call["id"])
    }
    for t in transcript:
        if t is not None and "call_id" in t:
            call_id = t.pop("call_id")
            if is_join_key(call_id) and call_id in batch_of:
                t["batch"] = batch_of[call_id]


def _message_text(content: Any) -> str | None:
    """A message item's content as text: a string, or its text parts joined."""
    if content is None or isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    texts = [
        part["text"]
        for part in content
        if isinstance(part, Mapping)
        and isinstance(part.get("type"), str)
        and part["type"] in _TEXT_PARTS
        and isinstance(part.get("text"), str)
    ]
    return "".join(texts) if texts else None


def _output_items(response: JSONObject, where: str) -> list[tuple[str, JSONObject]]:
    prefix = f"{where}.output" if where else "output"
    items = list_at(response.get("output", []), prefix)
    return [(f"{prefix}[{j}]", object_at(item, f"{prefix}[{j}]")) for j, item in enumerate(items)]


def _call(item: JSONObject, where: str, results: _Results) -> ToolCall:
    call_id = item.get("call_id")
    call: ToolCall = {"id": call_id, "name": name_at(item, "name", where)}
    call.update(arguments_fields(item.get("arguments")))
    if is_join_key(call_id) and call_id in results:
        call["result"] = results[call_id]
    return call


def _outputs_by_call_id(holders: list[JSONObject]) -> _Results:
    """``call_id`` → ``output`` of every ``function_call_output`` item in the ``input`` lists
    of ``holders``."""
    results: _Results = {}
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


def _output_text(items: list[tuple[str, JSONObject]]) -> str | None:
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


def _response_error(response: JSONObject, items: list[tuple[str, JSONObject]]) -> str | None:
    """Why a response did not complete, or None when it did: as the response says, or as
    its last message item does when the response's own status was not kept."""
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
    messages = [item for _, item in items if item.get("type") == "message"]
    if status is None and messages and messages[-1].get("status") == "incomplete":
        return "response incomplete"
    return None
