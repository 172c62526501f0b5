"""BFCL model results (DESIGN.md §4.3): ``{"id", "result": [{"function": arguments}]}``.

All calls of a result are one batch (BFCL asks for them in one turn). Arguments are an
object or a JSON string; one that does not parse is kept as ``arguments_raw``. A result
that is a string (a model that answered in text) is a run with no calls and that text
as its final text. Token counts and latency go to ``meta``.
"""

from collections.abc import Mapping
from typing import Any

from scoring.matcher import InvalidInput, json_type

from .common import arguments_fields

NAME = "bfcl"
SIGNATURE = "result"
_META = ("latency", "input_token_count", "output_token_count")


def detect(line: Mapping) -> bool:
    return "result" in line and "id" in line and "case" not in line


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
        run["final_text"] = result
        return run
    if not isinstance(result, list):
        raise InvalidInput.single(
            "result", f"must be a list of calls or a string, not {json_type(result)}"
        )
    calls = []
    for index, item in enumerate(result):
        if not isinstance(item, Mapping) or len(item) != 1:
            raise InvalidInput.single(f"result[{index}]", "must be an object naming one function")
        ((name, arguments),) = item.items()
        calls.append({"name": name, **arguments_fields(arguments)})
    if calls:
        run["batches"] = [calls]
    return run
