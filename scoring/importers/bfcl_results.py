"""BFCL model results (docs/formats.md#bfcl-model-results):
``{"id", "result": [{"function": arguments}]}``.

All calls of a result are one batch (BFCL asks for them in one turn). Arguments are an
object or a JSON string; one that does not parse is kept as ``arguments_raw``. A result
that is a string is what BFCL's prompting (non-function-calling) models write: Python call
syntax, decoded as BFCL's default decoder does (``python_calls``; parsed, never evaluated).
A string that does not decode is a run with no calls, the text as its final text and a note
saying why: BFCL's checker counts it as a failure, or on ``irrelevance`` as a success, and
so does the case. Token counts and latency go to ``meta``.

A multi-turn result (``result`` a list of turns, each a list of steps) is refused: BFCL
scores those by executing the calls against its simulated APIs
(docs/benchmarks.md#multi-turn-categories-are-refused).
"""

from collections.abc import Mapping
from typing import Any

from scoring.importers.common import arguments_fields
from scoring.importers.python_calls import Undecodable, decode_calls
from scoring.matcher import InvalidInput, json_type

NAME = "bfcl"
SIGNATURE = "result"
_META = ("latency", "input_token_count", "output_token_count")
MULTI_TURN_REFUSAL = (
    "a multi-turn result (a list of turns): BFCL scores multi_turn categories by running the "
    "calls against its simulated APIs and comparing their state, which expected calls cannot "
    "reproduce; Casebook does not import them"
)


def detect(line: Mapping) -> bool:
    return "result" in line and "id" in line and "case" not in line


def is_multi_turn(line: Mapping) -> bool:
    """A multi-turn result: ``result`` a list of turns, each a list of steps."""
    result = line.get("result")
    return isinstance(result, list) and bool(result) and all(isinstance(t, list) for t in result)


def convert(line: Mapping) -> dict:
    case = line.get("id")
    if not isinstance(case, str) or not case:
        raise InvalidInput.single("id", "must be a non-empty string (the BFCL test id)")
    result = line.get("result")
    run: dict[str, Any] = {"case": case, "batches": [], "final_text": None}
    meta = {key: line[key] for key in _META if key in line}
    if meta:
        run["meta"] = meta
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
        raise InvalidInput.single("result", MULTI_TURN_REFUSAL)
    calls = []
    for index, item in enumerate(result):
        if not isinstance(item, Mapping) or len(item) != 1:
            raise InvalidInput.single(f"result[{index}]", "must be an object naming one function")
        ((name, arguments),) = item.items()
        calls.append({"name": name, **arguments_fields(arguments)})
    if calls:
        run["batches"] = [calls]
    return run
