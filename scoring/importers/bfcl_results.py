"""BFCL model results (docs/formats.md#bfcl-model-results):
``{"id", "result": [{"function": arguments}]}``.

All calls of a result are one batch (BFCL asks for them in one turn). Arguments are an
object or a JSON string; one that does not parse is kept as ``arguments_raw``. A result
that is a string is what BFCL's prompting (non-function-calling) models write: Python call
syntax, decoded as BFCL's default decoder does (``python_calls``; parsed, never evaluated).
A string that does not decode is a run with no calls, the text as its final text and a note
saying why: BFCL's checker counts it as a failure, or on ``irrelevance`` as a success, and
so does the case. Token counts and latency go to ``meta``.

A multi-turn result (``result`` a list of turns, each a list of steps) keeps its turns: each
turn starts with a ``user`` entry of the transcript, each step whose calls decode is a batch
named by an ``assistant`` entry, as the end-state expectations read turns
(docs/matcher.md#turns). A step is a list of ``{function: arguments}`` (function-calling
models), or the text of Python calls (prompting models); a step that does not decode, or
decodes to no call, is left out with a note, as BFCL's checker leaves it out
(docs/benchmarks.md#multi-turn-categories).
"""

from collections.abc import Mapping
from typing import Any

from scoring.importers.common import JSONObject, Run, ToolCall, Turn, arguments_fields
from scoring.importers.python_calls import Undecodable, decode_calls
from scoring.matcher import InvalidInput, is_finite_number, json_type

from . import usage

NAME = "bfcl"
SIGNATURE = "result"
_META = ("latency", "input_token_count", "output_token_count")


def detect(line: JSONObject) -> bool:
    return "result" in line and "id" in line and "case" not in line


def is_multi_turn(line: JSONObject) -> bool:
    """A multi-turn result: ``result`` a list of turns, each a list of steps."""
    result = line.get("result")
    return isinstance(result, list) and bool(result) and all(isinstance(t, list) for t in result)


def convert(line: JSONObject) -> Run:
    case = line.get("id")
    if not isinstance(case, str) or not case:
        raise InvalidInput.single("id", "must be a non-empty string (the BFCL test id)")
    result = line.get("result")
    run: Run = {"case": case, "batches": [], "final_text": None}
    meta = {key: line[key] for key in _META if key in line}
    if meta:
        run["meta"] = meta
    run["usage"] = _usage(line)
    if isinstance(result, str):
        try:
            result, notes = decode_calls(result)
        except Undecodable as exc:
            run["final_text"] = result
            run["notes"] = [f"result: not read as calls ({exc}); scored as a text answer"]
            return run
        if notes:
            run["notes"] = [f"result: {note}" for note in notes]
    if not isinstance(result, list):
        raise InvalidInput.single(
            "result", f"must be a list of calls or a string, not {json_type(result)}"
        )
    if is_multi_turn(line):
        return _multi_turn(run, result)
    calls = _calls(result, "result")
    if calls:
        run["batches"] = [calls]
    return run


def _usage(line: JSONObject) -> dict[str, Any]:
    """The usage BFCL's handler recorded: ``input_token_count``, ``output_token_count`` and
    ``latency`` (seconds) of each model call, one number for a single-turn entry, a list per
    turn of one per step for a multi-turn one. The model is named by the file's folder, not
    the line."""
    inputs, outputs = (
        _leaves(line.get("input_token_count")),
        _leaves(line.get("output_token_count")),
    )
    made = max(len(inputs), len(outputs)) if isinstance(line.get("input_token_count"), list) else 1
    calls = [
        usage.call(
            input_tokens=usage.count(inputs[k]) if k < len(inputs) else None,
            output_tokens=usage.count(outputs[k]) if k < len(outputs) else None,
        )
        for k in range(made)
    ]
    seconds = [s for s in _leaves(line.get("latency")) if is_finite_number(s) and s >= 0]
    duration = float(sum(seconds)) * 1000 if seconds else None
    return usage.run_usage(calls, duration_ms=duration)


def _leaves(value: Any) -> list[Any]:
    """The numbers of a number or of nested lists of them, in order."""
    if isinstance(value, list):
        return [leaf for item in value for leaf in _leaves(item)]
    return [] if value is None else [value]


def _calls(items: list[Any], where: str) -> list[ToolCall]:
    calls: list[ToolCall] = []
    for index, item in enumerate(items):
        if not isinstance(item, Mapping) or len(item) != 1:
            raise InvalidInput.single(f"{where}[{index}]", "must be an object naming one function")
        ((name, arguments),) = item.items()
        calls.append({"name": name, **arguments_fields(arguments)})
    return calls


def _multi_turn(run: Run, turns: list[Any]) -> Run:
    batches: list[list[ToolCall]] = []
    transcript: list[Turn] = []
    notes: list[str] = run.setdefault("notes", [])
    for t, steps in enumerate(turns):
        transcript.append({"role": "user", "text": None, "batch": None})
        for s, step in enumerate(steps):
            where = f"result[{t}][{s}]"
            if isinstance(step, str):
                try:
                    step, step_notes = decode_calls(step)
                except Undecodable as exc:
                    notes.append(f"{where}: not read as calls ({exc}); left out, as BFCL does")
                    continue
                notes.extend(f"{where}: {note}" for note in step_notes)
            if not isinstance(step, list):
                raise InvalidInput.single(where, f"must be a list of calls, not {json_type(step)}")
            calls = _calls(step, where)
            if calls:
                transcript.append({"role": "assistant", "text": None, "batch": len(batches)})
                batches.append(calls)
    run.update(batches=batches, transcript=transcript)
    if not notes:
        del run["notes"]
    return run
