"""Inspect AI eval logs (docs/formats.md#inspect-ai-eval-logs): each sample of a log is a run.

A ``.json`` log is one JSON document, ``eval`` (task, model, ...) first and then
``samples``; a ``.eval`` log is a zip archive holding ``header.json`` (or, while the eval
runs, ``_journal/start.json``) with ``eval``, and an entry per sample,
``samples/<id>_epoch_<n>.json``. ``read_log`` and ``read_eval`` stream the samples of each
without loading it whole, and ``convert`` turns one sample into a run; a sample on a line of
its own (``id``, ``epoch``, ``messages``) is detected as this format too.

The case is the sample ``id``, the trial ``epoch - 1`` (epochs count from 1), and meta holds
the model and the epoch. The ``tool_calls`` of each assistant message are one batch:
``function`` is the name and ``arguments`` already an object. A call with a ``parse_error``
has no arguments; its text, when Inspect kept it in the error, is ``arguments_raw``. Tool
messages give results by ``tool_call_id``, and their ``error`` makes a failed call. The final
text is ``output.completion``, else the text of the last assistant message. The sample's
``error`` (or the limit that halted it) is the run's error; failing those, a final output cut
off at the token limit (``output.choices[0].stop_reason`` ``max_tokens``) is.
"""

import re
import zipfile
from collections.abc import Iterator, Mapping
from typing import IO, Any

import ijson

from scoring.matcher import InvalidInput, is_finite_number, number_as_parsed

from . import usage
from .common import (
    CallsById,
    JSONObject,
    Run,
    ToolCall,
    Turn,
    arguments_fields,
    content_text,
    cut_off,
    envelope_fields,
    is_join_key,
    list_at,
    name_at,
    object_at,
    turn,
    with_error,
    with_meta,
    with_transcript,
)
from .streaming import BoundedValues, Readable, ijson_message
from .ziparchive import Budget, open_archive, open_entry

NAME = "inspect_ai"
SIGNATURE = "samples"

# How Inspect words a parse error (inspect_ai.model._call_tools.tool_parse_error_message);
# the model's text sits between the two fixed parts.
_PARSE_ERROR = re.compile(
    r"Error parsing the following tool call arguments:\n\n(.*)\n\nError details: ", re.DOTALL
)


# The fields of a sample a run is made of; read_log skips the others.
_SAMPLE_FIELDS = frozenset(
    {"id", "epoch", "messages", "output", "error", "limit", "model_usage", "total_time"}
)
MAX_DEPTH = 256  # by default: as deep as orjson writes, so any run read here can be stored
# ijson parses a chunk at a time, building a prefix string as long as the depth for each
# event: small chunks let the depth check stop a file of brackets before that work grows
# quadratic (a 64 KiB chunk of them took 20 s and 10 GB, a 4 KiB one 42 MB; 1 KiB ones
# cost 3 MB, and normal logs no more time).
_CHUNK = 1024
# Entries an .eval archive may hold: listing each costs memory before any is read.
MAX_ARCHIVE_ENTRIES = 200_000
_EVAL_HEADERS = ("header.json", "_journal/start.json")  # the first one there names the model
# An ijson event: its prefix (the path to it), its kind and its value.
_Event = tuple[str, str, Any]


def detect(line: JSONObject) -> bool:
    """A single sample (a line of a log's samples)."""
    return "epoch" in line and isinstance(line.get("messages"), list)


def is_log(value: Any) -> bool:
    """Whether ``value`` is a whole eval log (rather than a run or a sample)."""
    # Asked of every run line: a list of samples, rare in a run, is looked for first.
    return (
        (type(value) is dict or isinstance(value, Mapping))
        and isinstance(value.get("samples"), list)
        and isinstance(value.get("eval"), Mapping)
    )


def log_samples(log: JSONObject) -> Iterator[tuple[Any, str | None]]:
    """(sample, the log's model) for each sample of a log already in memory."""
    model = log["eval"].get("model")
    for sample in log["samples"]:
        yield sample, model if isinstance(model, str) else None


def read_log(
    stream: Readable,
    *,
    keep: str | None = None,
    max_depth: int = MAX_DEPTH,
    max_value_bytes: int | None = None,
) -> Iterator[tuple[Any, str | None]]:
    """(sample, the log's model) for each sample of the log in ``stream``, read one sample at
    a time: memory holds one sample, however large the log. ``keep`` is a further field of
    the samples to read (where ``case_field`` finds the case).

    ``eval.model`` comes before ``samples`` in Inspect's logs; in a log where it does not,
    the model is None here and ``convert`` takes each sample's own. Raises ``InvalidInput``
    when the document breaks off, nests deeper than ``max_depth``, holds a value longer than
    ``max_value_bytes`` (``BoundedValues``) or has no samples."""
    bounded = BoundedValues(stream, max_value_bytes)
    parsed = ijson.parse(bounded, buf_size=_CHUNK, use_float=False)
    events = _run_events(parsed, keep=keep, max_depth=max_depth, bounded=bounded)
    model = None
    try:
        for prefix, event, value in events:
            if prefix == "eval.model" and event == "string":
                model = value
            elif prefix == "samples":
                if event == "start_array":
                    break
                raise InvalidInput.single("samples", "this log holds none (written header-only?)")
        else:
            raise InvalidInput.single(
                "",
                "a run file holds one JSON object per line; this one is a single JSON document,"
                " and not an Inspect AI eval log either (it has no samples)",
            )
        for sample in ijson.items(events, "samples.item"):
            yield sample, model
    except ijson.JSONError as exc:
        raise InvalidInput.single("", f"invalid JSON: {ijson_message(exc)}") from None


def read_eval(
    file: IO[bytes],
    *,
    max_uncompressed_bytes: int | None = None,
    max_entries: int = MAX_ARCHIVE_ENTRIES,
    keep: str | None = None,
    max_depth: int = MAX_DEPTH,
    max_value_bytes: int | None = None,
) -> Iterator[tuple[Any, str | None]]:
    """(sample, the log's model) for each sample of the ``.eval`` archive in ``file`` (which
    must seek), one entry at a time; a sample whose entry cannot be read comes as the
    ``InvalidInput`` saying why, in its place. ``keep``, ``max_depth`` and
    ``max_value_bytes`` are as ``read_log``'s.

    Raises ``InvalidInput`` when ``file`` is no readable archive, holds more than
    ``max_entries`` entries or no samples, or its entries expand past
    ``max_uncompressed_bytes`` in all (a zip bomb)."""
    archive = open_archive(file, max_entries=max_entries)
    budget = Budget(max_uncompressed_bytes)
    entries = archive.infolist()
    names = {info.filename: info for info in entries}
    model = None
    header = next((names[name] for name in _EVAL_HEADERS if name in names), None)
    if header is not None:
        with open_entry(archive, header, budget) as stream:
            bounded = BoundedValues(stream, max_value_bytes)
            parsed = ijson.parse(bounded, buf_size=_CHUNK, use_float=False)
            # Read as a sample of one field: the header's other fields are never built.
            events = _run_events(
                parsed, sample="", keep="eval", max_depth=max_depth, bounded=bounded
            )
            try:
                found = next(ijson.items(events, "eval.model"), None)
            except InvalidInput as exc:  # nested too deep, a value too long
                raise InvalidInput.single(header.filename, exc.problems[0].message) from None
            except ijson.JSONError as exc:
                message = f"invalid JSON: {ijson_message(exc)}"
                raise InvalidInput.single(header.filename, message) from None
        model = found if isinstance(found, str) else None
    samples = [
        info
        for info in entries
        if info.filename.startswith("samples/") and info.filename.endswith(".json")
    ]
    if not samples:
        raise InvalidInput.single("samples/", "this .eval log holds none (written header-only?)")
    for info in samples:
        sample = _eval_sample(
            archive, info, budget, keep=keep, max_depth=max_depth, max_value_bytes=max_value_bytes
        )
        yield sample, model


def _eval_sample(
    archive: zipfile.ZipFile,
    info: zipfile.ZipInfo,
    budget: Budget,
    *,
    keep: str | None,
    max_depth: int,
    max_value_bytes: int | None,
) -> Any:
    """The sample in one entry of an archive, or the ``InvalidInput`` saying why not; a
    zip bomb (the archive's budget spent) stops the whole archive."""
    try:
        with open_entry(archive, info, budget) as stream:
            bounded = BoundedValues(stream, max_value_bytes)
            parsed = ijson.parse(bounded, buf_size=_CHUNK, use_float=False)
            events = _run_events(parsed, sample="", keep=keep, max_depth=max_depth, bounded=bounded)
            return next(ijson.items(events, ""))
    except InvalidInput as exc:
        if budget.left is not None and budget.left < 0:
            raise
        return exc
    except ijson.JSONError as exc:
        return InvalidInput.single("", f"{info.filename}: invalid JSON: {ijson_message(exc)}")


def _run_events(
    events: Iterator[_Event],
    *,
    sample: str = "samples.item",
    keep: str | None = None,
    max_depth: int = MAX_DEPTH,
    bounded: BoundedValues | None = None,
) -> Iterator[_Event]:
    """``events`` less those of the sample fields a run is not made of (``events``,
    ``attachments``, ``store``, ...: most of a log's bytes), so they are never built;
    ``sample`` is the prefix of a sample's fields, ``keep`` one more to read.

    A document nested deeper than ``max_depth`` is refused (see ``_CHUNK``); ``bounded``,
    the stream parsed, is told of each event."""
    fields = _SAMPLE_FIELDS | {keep} if keep else _SAMPLE_FIELDS
    depth = 0
    skip_until = None  # skipping a container's events until its depth closes
    skip_value = False  # the next event is the value of a skipped field
    for event in events:
        if bounded is not None:
            bounded.event()
        prefix, kind, value = event
        if kind == "start_map" or kind == "start_array":
            depth += 1
            if depth > max_depth:
                raise InvalidInput.single("", f"nested more than {max_depth} levels deep")
            if skip_value:
                skip_value, skip_until = False, depth - 1
                continue
        elif kind == "end_map" or kind == "end_array":
            depth -= 1
            if skip_until is not None and depth == skip_until:
                skip_until = None
                continue
        elif skip_value:  # a skipped field's scalar value
            skip_value = False
            continue
        if skip_until is not None:
            continue
        if kind == "map_key" and prefix == sample and value not in fields:
            skip_value = True
            continue
        if kind == "number":  # as parse_json reads it: the matcher compares written values
            event = (prefix, kind, number_as_parsed(value))
        yield event


def convert(line: JSONObject, *, model: str | None = None) -> Run:
    """The run of one sample; ``model`` is the log's (``eval.model``), when known."""
    messages = list_at(line.get("messages"), "messages")
    epoch = line.get("epoch")
    if not isinstance(epoch, int) or isinstance(epoch, bool) or epoch < 1:
        raise InvalidInput.single("epoch", "must be a whole number ≥ 1 (epochs count from 1)")
    run = envelope_fields(line)
    if "case" not in line:
        if not is_join_key(line.get("id")):
            raise InvalidInput.single("id", "required: the sample id, a string or a number")
        run["case"] = str(line["id"])
    run.setdefault("trial", epoch - 1)
    batches: list[list[ToolCall]] = []
    transcript: list[Turn | None] = []
    last_text = None
    awaiting: CallsById = {}  # tool call id → (its call, its batch), until its tool message
    for i, message in enumerate(messages):
        role = object_at(message, f"messages[{i}]").get("role")
        if role == "tool":
            result = _tool_result(message)
            call, batch = None, None
            if is_join_key(message.get("tool_call_id")):
                call, batch = awaiting.pop(message["tool_call_id"], (None, None))
            if call is not None:
                call.update(result)
            transcript.append(turn("tool", result["result"], batch))
            continue
        if role != "assistant":
            transcript.append(turn(role, content_text(message.get("content"))))
            continue
        last_text = content_text(message.get("content"))
        tool_calls = message.get("tool_calls")
        tool_calls = [] if tool_calls is None else list_at(tool_calls, f"messages[{i}].tool_calls")
        calls = [_call(call, f"messages[{i}].tool_calls[{j}]") for j, call in enumerate(tool_calls)]
        awaiting.update(
            (call["id"], (call, len(batches))) for call in calls if is_join_key(call["id"])
        )
        if calls:
            batches.append(calls)
        transcript.append(turn("assistant", last_text, len(batches) - 1 if calls else None))
    output = line.get("output")
    completion = output.get("completion") if isinstance(output, Mapping) else None
    run["batches"] = batches
    run["final_text"] = completion if isinstance(completion, str) and completion else last_text
    run["error"] = _sample_error(line)  # Inspect's own error field, not the envelope's text
    with_error(run, cut_off(*_final_output(output)))
    if model is None and isinstance(output, Mapping) and isinstance(output.get("model"), str):
        model = output["model"]
    with_transcript(run, transcript)
    run["usage"] = _usage(line, messages)
    return with_meta(run, {"model": model, "epoch": epoch} if model else {"epoch": epoch})


def _usage(line: JSONObject, messages: list[Any]) -> dict[str, Any]:
    """The sample's usage: its ``model_usage`` by model, a model call per assistant message,
    and its ``total_time`` (seconds) as the run's wall time."""
    by_model = line.get("model_usage")
    calls = (
        [usage.inspect_call(counts, model) for model, counts in by_model.items()]
        if isinstance(by_model, Mapping)
        else []
    )
    made = sum(1 for m in messages if isinstance(m, Mapping) and m.get("role") == "assistant")
    seconds: Any = line.get("total_time")  # a number when is_finite_number says so
    duration = float(seconds) * 1000 if is_finite_number(seconds) and seconds >= 0 else None
    return usage.run_usage(calls, duration_ms=duration, model_calls=made)


def _final_output(output: Any) -> tuple[Any, Any, JSONObject] | tuple[()]:
    """The final output's message, with the choice and the output that carry it."""
    if not isinstance(output, Mapping):
        return ()
    choices = output.get("choices")
    choice = choices[0] if isinstance(choices, list) and choices else None
    message = choice.get("message") if isinstance(choice, Mapping) else None
    return message, choice, output


def _call(call: Any, where: str) -> ToolCall:
    call = object_at(call, where)
    out: ToolCall = {"id": call.get("id"), "name": name_at(call, "function", where)}
    if call.get("parse_error"):
        out.update(arguments=None, arguments_raw=_raw_arguments(call))
    else:
        out.update(arguments_fields(call.get("arguments", {})))
    return out


def _raw_arguments(call: JSONObject) -> str | None:
    """The model's text for arguments Inspect could not parse, where it is still there."""
    arguments = call.get("arguments")
    if isinstance(arguments, str):
        return arguments
    found = _PARSE_ERROR.match(str(call["parse_error"]))
    return found.group(1) if found else None


def _tool_result(message: JSONObject) -> dict[str, Any]:
    """The ``result`` (and ``is_error``) a tool message gives its call."""
    result: dict[str, Any] = {"result": content_text(message.get("content"))}
    error = message.get("error")
    if error:
        result["is_error"] = True
        if not result["result"]:  # Inspect leaves the content empty and says why in error
            result["result"] = _message_of(error)
    return result


def _sample_error(sample: JSONObject) -> str | None:
    if sample.get("error"):
        return _message_of(sample["error"])
    limit = sample.get("limit")
    if isinstance(limit, Mapping) and limit.get("type"):
        value = limit.get("limit")
        shown = f" ({value:g})" if isinstance(value, int | float) else ""
        return f"{limit['type']} limit reached{shown}"
    return None


def _message_of(error: Any) -> str:
    """An Inspect error (``{message, ...}``, or a string) as text."""
    if isinstance(error, Mapping) and error.get("message"):
        kind = error.get("type")
        return f"{kind}: {error['message']}" if kind else str(error["message"])
    return str(error)
