"""Google Gemini (docs/formats.md#gemini): a ``contents`` list, or a
``GenerateContentResponse`` (``candidates``, as google-genai's ``model_dump()`` or
``to_json_dict()`` writes it, in snake_case or camelCase; docs/formats.md#sdk-objects) whose
first candidate's content is the one model turn. A contents list may hold a candidate, or a
whole response, where a content would be: it is read as its (first candidate's) content. A
last model content cut off at the token limit (``finishReason`` ``MAX_TOKENS``, on the
content or on the candidate it came in) is an error.

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

from scoring.matcher import InvalidInput

from . import usage
from .common import (
    CallsById,
    JSONObject,
    Run,
    ToolCall,
    Turn,
    arguments_fields,
    cut_off,
    envelope_fields,
    is_join_key,
    list_at,
    name_at,
    object_at,
    turn,
    with_error,
    with_transcript,
)

NAME = "gemini"
SIGNATURE = "contents or candidates"

# The latest model turn's calls by name, in order.
_ByName = dict[str, deque[ToolCall]]


def detect(line: JSONObject) -> bool:
    return isinstance(line.get("contents"), list) or isinstance(line.get("candidates"), list)


def convert(line: JSONObject) -> Run:
    located = _conversation(line)
    batches: list[list[ToolCall]] = []
    transcript: list[Turn | None] = []
    final_text = None
    # The last model content, and the candidate it came in.
    last: tuple[JSONObject, JSONObject | None] | tuple[()] = ()
    calls_by_id: CallsById = {}  # call id → (call, its batch)
    unanswered: _ByName = {}  # the latest model turn's calls by name, in order
    responses: list[usage.Call] = []  # each model content's model call
    for where, content, candidate in located:
        content = object_at(content, where)
        element = line if candidate is not None else content
        if candidate is None and "parts" not in content and "role" not in content:
            where, content, candidate = _held(where, content)
        parts = list_at(content.get("parts", []), f"{where}.parts")
        if content.get("role") == "model":
            last = (content, candidate)
            made = _response_usage(element)
            responses.append(made)
            calls: list[ToolCall] = []
            texts: list[str] = []
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
                        calls_by_id[call["id"]] = (call, len(batches) - 1)
            batch = len(batches) - 1 if calls else None
            transcript.append(turn("assistant", final_text, batch, **usage.turn_figures(made)))
            continue
        texts = []
        for j, part in enumerate(parts):
            part_where = f"{where}.parts[{j}]"
            key, response = _either(object_at(part, part_where), "functionResponse", part_where)
            if response is not None:
                batch = _answer(response, f"{part_where}.{key}", calls_by_id, unanswered, batches)
                transcript.append(turn("tool", response.get("response"), batch))
            elif isinstance(part.get("text"), str):
                texts.append(part["text"])
        if texts:
            transcript.append(turn(content.get("role"), "".join(texts)))
    run = envelope_fields(line)
    run["batches"] = batches
    run["final_text"] = final_text
    with_error(run, cut_off(*last))
    run["usage"] = usage.run_usage(responses, requested=line.get("model"))
    return with_transcript(run, transcript)


def _response_usage(element: JSONObject) -> usage.Call:
    """The usage of a model content's call: its ``GenerateContentResponse``'s, where the
    line holds one, its model as the response names it (``modelVersion``)."""
    metadata = element.get("usageMetadata", element.get("usage_metadata"))
    return usage.gemini_call(metadata, element.get("modelVersion", element.get("model_version")))


def _conversation(line: JSONObject) -> list[tuple[str, Any, JSONObject | None]]:
    """The line's contents, each with its path and the candidate it came in (None for the
    contents of a ``contents`` line). A ``GenerateContentResponse`` line is its first
    candidate's content."""
    if "candidates" not in line or "contents" in line:
        contents = list_at(line.get("contents"), "contents")
        return [(f"contents[{i}]", content, None) for i, content in enumerate(contents)]
    candidates = list_at(line.get("candidates"), "candidates")
    if not candidates:
        raise InvalidInput.single("candidates", "holds no candidate: the response has no content")
    candidate = object_at(candidates[0], "candidates[0]")
    content = _model_content(candidate)
    return [] if content is None else [("candidates[0].content", content, candidate)]


def _model_content(candidate: JSONObject) -> Any:
    """A candidate's content, which is the model's."""
    content = candidate.get("content")
    if isinstance(content, Mapping) and content.get("role") is None:  # a candidate is the model's
        content = {**content, "role": "model"}
    return content


def _held(where: str, element: JSONObject) -> tuple[str, JSONObject, JSONObject | None]:
    """A contents list's element, read as a content: a candidate, or a whole response, held
    where a content would be is its (first candidate's) content, with that candidate."""
    candidate, inside, candidates = element, "", element.get("candidates")
    if isinstance(candidates, list) and candidates and isinstance(candidates[0], Mapping):
        candidate, inside = candidates[0], ".candidates[0]"
    content = _model_content(candidate)
    if not isinstance(content, Mapping):
        return where, element, None
    return f"{where}{inside}.content", content, candidate


def _either(part: JSONObject, camel: str, where: str) -> tuple[str, JSONObject | None]:
    """The part's ``camel`` field or its snake_case twin, with the key it was under."""
    snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in camel)
    for key in (camel, snake):
        if part.get(key) is not None:
            return key, object_at(part[key], f"{where}.{key}")
    return camel, None


def _call(function_call: JSONObject, where: str) -> ToolCall:
    call: ToolCall = {"id": function_call.get("id"), "name": name_at(function_call, "name", where)}
    call.update(arguments_fields(function_call.get("args") or {}))
    return call


def _answer(
    response: JSONObject,
    where: str,
    calls_by_id: CallsById,
    unanswered: _ByName,
    batches: list[list[ToolCall]],
) -> int | None:
    """Give ``response`` to the call it answers: by id, else the first unanswered call of its
    name in the latest model turn; return that call's batch. A response that answers no call
    is left out."""
    response_id = response.get("id")
    call, batch = (
        calls_by_id.get(response_id, (None, None))
        if is_join_key(response_id)
        else (
            None,
            None,
        )
    )
    if call is None:
        waiting = unanswered.get(name_at(response, "name", where), deque())
        while waiting and "result" in waiting[0]:  # already answered by id
            waiting.popleft()
        call, batch = (waiting.popleft(), len(batches) - 1) if waiting else (None, None)
    if call is None:
        return None
    result: Any = response.get("response")
    call["result"] = result
    if isinstance(result, Mapping) and "error" in result:
        call["is_error"] = True
    return batch
