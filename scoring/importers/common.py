"""What every run format shares: the envelope fields, arguments, text and shape checks.

Every line of a run file passes through here, so the checks for a JSON object test for
``dict`` first (what parsed JSON holds) and fall back to ``Mapping``: an ``isinstance``
check against an abstract class costs ten times one against ``dict``.
"""

from collections.abc import Iterable, Mapping
from typing import Any, TypeGuard

import orjson

from scoring.matcher import InvalidInput, json_type, parse_json

# A JSON object of a run line as read: parsed JSON (a dict), or a Mapping standing for one.
JSONObject = Mapping[str, Any]
# What an importer writes (docs/formats.md#run-files): the canonical run, and each call of
# its batches and turn of its transcript, all JSON objects.
Run = dict[str, Any]
ToolCall = dict[str, Any]
Turn = dict[str, Any]
# Calls by their id (``is_join_key``), each with its batch (to give each its result).
CallsById = dict[str | int, tuple[ToolCall, int]]

# The roles of a transcript (docs/formats.md#transcripts), and the names formats give them.
_ROLES = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "model": "assistant",
    "ai": "assistant",
    "tool": "tool",
    "function": "tool",
    "ipython": "tool",
}


def envelope_fields(line: JSONObject) -> Run:
    """The fields every format shares: the case key, trial, meta and run-level error."""
    out: Run = {"case": line.get("case")}
    for key in ("trial", "meta", "error", "notes"):
        if key in line:
            out[key] = line[key]
    return out


def with_error(run: Run, error: str | None) -> Run:
    """``run`` with ``error``, what the format itself says went wrong, unless the line
    already gives one (an empty string is an error too: docs/formats.md#run-fields)."""
    if run.get("error") is None:
        run["error"] = error
    return run


def with_meta(run: Run, extra: JSONObject) -> Run:
    """``run`` with ``extra`` added to its meta; a meta that is not an object is left for
    ``load_run`` to report."""
    meta = run.get("meta")
    if meta is None or isinstance(meta, Mapping):
        run["meta"] = {**(meta or {}), **extra}
    return run


# How a model's response says it was cut off at the token limit (docs/formats.md#truncation):
# the field that says why it stopped, and its values that mean the limit. OpenAI writes
# ``length``; Anthropic ``max_tokens`` or ``model_context_window_exceeded``; Gemini
# ``MAX_TOKENS`` (as ``finishReason``, or ``finish_reason`` in snake_case); Inspect
# ``max_tokens`` or ``model_length``. OpenTelemetry's finish reasons carry whatever the
# instrumentation passed on, so each provider's word is read there.
_CUT_OFF = {
    "finish_reason": frozenset({"length", "max_tokens", "MAX_TOKENS"}),
    "finishReason": frozenset({"MAX_TOKENS"}),
    "stop_reason": frozenset({"max_tokens", "model_context_window_exceeded", "model_length"}),
}


def is_cut_off(field: str, value: Any) -> bool:
    """Whether ``value``, a stop or finish reason given as ``field``, is the token limit."""
    return type(value) is str and value in _CUT_OFF.get(field, ())


def cut_off(*carriers: Any) -> str | None:
    """The run error when the final message of a run was cut off at the token limit, read
    wherever it is said: on the message itself, or on what carries it (a choice, a
    candidate, a response), each given in ``carriers``; None when none says so."""
    for carrier in carriers:
        if type(carrier) is dict or isinstance(carrier, Mapping):
            for field in _CUT_OFF:
                if is_cut_off(field, carrier.get(field)):
                    return truncation_error(field, carrier[field])
    return None


def truncation_error(field: str, value: str) -> str:
    """The run error of a response cut off at the token limit, naming how the format says it."""
    return f"the response was cut off at the token limit ({field} {value})"


def turn(role: Any, text: Any, batch: int | None = None, **figures: Any) -> Turn | None:
    """One transcript turn (docs/formats.md#transcripts), or None for a role the transcript has no
    name for. ``text`` that is not a string (a tool's result object, say) is written as JSON.
    ``figures`` are an assistant turn's tokens and time (``usage.turn_figures``)."""
    role = _ROLES.get(role) if type(role) is str else None
    if role is None:
        return None
    if text is not None and type(text) is not str:
        text = as_text(text)
    if batch is None:
        return {"role": role, "text": text, **figures}
    return {"role": role, "text": text, "batch": batch, **figures}


def as_text(value: Any) -> str | None:
    """``value`` as text: a string as it is, None as None, anything else as JSON."""
    if value is None or isinstance(value, str):
        return value
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return str(value)


def with_transcript(run: Run, turns: Iterable[Turn | None]) -> Run:
    """``run`` with its transcript: ``turns`` less those ``turn`` left out."""
    run["transcript"] = [t for t in turns if t is not None]
    return run


def with_note(run: Run, note: str) -> Run:
    """``run`` with ``note`` added to its notes (once)."""
    notes = run.get("notes")
    if notes is None:
        run["notes"] = [note]
    elif isinstance(notes, list) and note not in notes:  # else load_run reports the notes
        run["notes"] = [*notes, note]
    return run


def arguments_fields(raw: Any) -> ToolCall:
    """``arguments`` of a call whose arguments came as an object or a JSON string; text
    that is not a JSON object is kept as ``arguments_raw`` with ``arguments: null``."""
    if type(raw) is not str:
        if type(raw) is dict or isinstance(raw, Mapping):
            return {"arguments": raw}
        if not isinstance(raw, str):
            return {"arguments": None, "arguments_raw": None if raw is None else str(raw)}
    try:
        parsed = {} if not raw or raw.isspace() else parse_json(raw)
    except InvalidInput:
        parsed = None
    if type(parsed) is dict:
        return {"arguments": parsed}
    return {"arguments": None, "arguments_raw": raw}


def content_text(content: Any) -> str | None:
    """Message content as text: a string, or the text parts (``{"type": "text", "text"}``)
    of a list of parts joined; None when there is no text."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            text
            for p in content
            if (type(p) is dict or isinstance(p, Mapping))
            and p.get("type") == "text"
            and isinstance(text := p.get("text"), str)
        ]
        return "".join(parts) if parts else None
    return None


def is_join_key(value: Any) -> TypeGuard[str | int]:
    """Whether ``value`` can join a call to its result: a string or a number, as call ids are
    (anything else is no id, and must not be used as a dict key)."""
    kind = type(value)
    return kind is str or kind is int or (isinstance(value, str | int) and kind is not bool)


def object_at(value: Any, where: str) -> JSONObject:
    """``value`` when it is a JSON object; otherwise ``InvalidInput`` naming ``where``."""
    if type(value) is not dict and not isinstance(value, Mapping):
        raise InvalidInput.single(where, f"must be an object, not {json_type(value)}")
    return value


def list_at(value: Any, where: str) -> list[Any]:
    """``value`` when it is a JSON array; otherwise ``InvalidInput`` naming ``where``."""
    if not isinstance(value, list):
        raise InvalidInput.single(where, f"must be a list, not {json_type(value)}")
    return value


def name_at(container: JSONObject, key: str, where: str) -> str:
    """The tool name at ``container[key]``, which must be a string."""
    if key not in container:
        raise InvalidInput.single(f"{where}.{key}", "required: the tool name, a string")
    name = container[key]
    if not isinstance(name, str):
        raise InvalidInput.single(f"{where}.{key}", f"must be a string, not {json_type(name)}")
    return name
