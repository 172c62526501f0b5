"""The process calls are replayed in:
``python -m scoring.environments.sandbox CPU MEMORY ANSWER_BYTES``.

Once started it writes ``{"ready": true}``; then it reads one request per line on standard
input (``{"environment", "initial_state", "turns", "overrides"}``) and writes one answer per
line: ``{"turns": [{"state", "outcomes"}]}``, ``{"error": why}`` when the replay could not
be made or its answer would pass ANSWER_BYTES, or ``{"limit": "memory"}`` before it exits
when the environment ran out of memory. Limits are set here, on this process alone: its
address space (MEMORY megabytes) once, and CPU seconds (CPU) afresh for each request, so
that one process serves many replays. Past the CPU limit the kernel kills it; the
wall-clock limit is the parent's (``replayer``), and so is a second bound on the answer's
size, should this process not keep its own. What environments print goes nowhere: standard
output carries the answers alone.
"""

from __future__ import annotations

import json
import math
import os
import resource
import sys
from collections.abc import Mapping
from typing import Any

from scoring.environments.registry import UnknownEnvironment, load_environment


def replay(request: Mapping) -> dict:
    """The answer to one request (``MemoryError`` passes through: the process must end)."""
    try:
        environment_class = load_environment(request["environment"], request.get("overrides"))
    except UnknownEnvironment as exc:
        return {"error": str(exc)}
    except MemoryError:
        raise
    except Exception as exc:
        return {"error": f"environment {request['environment']!r} could not be loaded: {exc}"}
    try:
        environment = environment_class(request["initial_state"])
    except MemoryError:
        raise
    except Exception as exc:
        return {"error": f"the environment refused its initial state: {_text(exc)}"}
    turns = []
    for calls in request["turns"]:
        outcomes = [_execute(environment, name, arguments) for name, arguments in calls]
        try:
            state = environment.state()
        except MemoryError:
            raise
        except Exception as exc:
            return {"error": f"the environment could not report its state: {_text(exc)}"}
        turns.append({"state": state, "outcomes": outcomes})
    return {"turns": turns}


def _execute(environment: Any, name: str, arguments: Any) -> dict:
    if not isinstance(arguments, Mapping):
        return {"refused": "the arguments are not a JSON object"}
    try:
        return {"value": environment.execute(name, arguments)}
    except MemoryError:
        raise
    except Exception as exc:
        return {"refused": _text(exc)}


def _text(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


def _limit_cpu(seconds: float) -> None:
    """The soft CPU limit ``seconds`` past what this process has used so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    used = usage.ru_utime + usage.ru_stime
    resource.setrlimit(resource.RLIMIT_CPU, (math.ceil(used + seconds), resource.RLIM_INFINITY))


def answer_line(answer: dict, max_bytes: int) -> str:
    """``answer`` as its line of JSON, or an error in its place past ``max_bytes``: a state
    that doubles with each call (a shallow copy copied again) must not reach the parent,
    whose memory every later replay shares (docs/operations.md#environments)."""
    text = json.dumps(answer, default=str)  # ASCII: as many bytes as characters
    if len(text) > max_bytes:
        return json.dumps(
            {
                "error": f"the replay's states and results are {len(text):,} bytes of JSON: "
                f"over the limit, CASEBOOK_ENVIRONMENT_MAX_ANSWER_BYTES = {max_bytes:,}"
            }
        )
    return text


def main(cpu_seconds: float, memory_mb: int, max_answer_bytes: int) -> None:
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")
    quiet = os.open(os.devnull, os.O_WRONLY)
    os.dup2(quiet, sys.stdout.fileno())
    memory = memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    answers.write('{"ready": true}\n')  # the replays' wall-clock limits start from here
    answers.flush()
    for line in sys.stdin:
        _limit_cpu(cpu_seconds)
        try:
            answer = answer_line(replay(json.loads(line)), max_answer_bytes)
        except MemoryError:
            answers.write('{"limit": "memory"}\n')
            answers.flush()
            os._exit(1)
        answers.write(answer + "\n")
        answers.flush()


if __name__ == "__main__":
    main(float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]))
