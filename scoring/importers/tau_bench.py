"""τ-bench results (docs/formats.md#tau-bench-results): each element of the array τ-bench
writes is a run.

An element is ``{"task_id", "trial", "reward", "info", "traj"}``: the case is
``str(task_id)`` (unless the record already names a ``case``), the trial ``trial``, and the
run is ``traj``, OpenAI Chat messages read by the ``openai_chat`` importer. ``meta`` holds
``reward`` and the small scalar fields of ``info`` (``source``, ``user_cost``), not the
task and its ground truth. A task that crashed has ``info.error`` (and an empty ``traj``):
that is the run's error.

τ-bench's environment answers an action it refuses (a payment that does not add up, a
reservation that cannot be changed) with a tool result starting ``Error:``, and leaves its
database as it was. That is the benchmark's convention, so it is read here: such a call is a
tool error (``is_error``), as an Anthropic ``tool_result``'s ``is_error`` is.
"""

from collections.abc import Mapping
from typing import Any

from scoring.matcher import InvalidInput, Problem

from . import openai_chat
from .common import JSONObject, Run, is_join_key, list_at, with_error, with_meta

NAME = "tau_bench"
SIGNATURE = "traj"

# Scalars of ``info`` worth showing beside the run; longer text (a traceback) is left out.
_META_TEXT_LIMIT = 200
_NOT_META = frozenset({"error", "traceback"})
# How τ-bench's environment starts the result of an action it refused (its ``Env.step``).
REFUSED_PREFIX = "Error:"


def detect(line: JSONObject) -> bool:
    return "task_id" in line and isinstance(line.get("traj"), list)


def case_key(line: JSONObject) -> str:
    """The case a result is of: its task id as a string (``3`` is ``"3"``), as a suite made
    from the file keys its cases (``cases.tau_bench``)."""
    task_id = line.get("task_id")
    if not is_join_key(task_id):
        raise InvalidInput.single("task_id", "required: the task id, a string or a number")
    return str(task_id)


def convert(line: JSONObject) -> Run:
    traj = list_at(line.get("traj"), "traj")
    record = {key: line[key] for key in ("case", "trial", "error") if key in line}
    if "case" not in record:
        record["case"] = case_key(line)
    try:
        run = openai_chat.convert({**record, "messages": traj})
    except InvalidInput as exc:  # its paths name "messages": here they are "traj"
        raise InvalidInput(
            Problem("traj" + p.path.removeprefix("messages"), p.message, p.line)
            for p in exc.problems
        ) from None
    _mark_refused(run)
    info: JSONObject = line["info"] if isinstance(line.get("info"), Mapping) else {}
    if isinstance(info.get("error"), str):
        with_error(run, info["error"])
    meta: dict[str, Any] = {"reward": line.get("reward")} if "reward" in line else {}
    meta.update((key, value) for key, value in info.items() if _small_scalar(key, value))
    if isinstance(line.get("meta"), Mapping):
        meta.update(line["meta"])
    return with_meta(run, meta)


def _mark_refused(run: Run) -> None:
    """Each call whose result is τ-bench's refusal (``Error: …``) marked a tool error."""
    for batch in run["batches"]:
        for call in batch:
            result = call.get("result")
            if isinstance(result, str) and result.startswith(REFUSED_PREFIX):
                call["is_error"] = True


def _small_scalar(key: str, value: Any) -> bool:
    if key in _NOT_META:
        return False
    if isinstance(value, str):
        return len(value) <= _META_TEXT_LIMIT
    return value is None or isinstance(value, bool | int | float)
