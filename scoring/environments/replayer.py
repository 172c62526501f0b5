"""Replaying calls in a separate process with limits (docs/operations.md#environments):
the ``Replayer`` the matcher's end-state expectations are given.

One sandbox process (``sandbox``) serves the replays of a ``SandboxReplayer`` in turn; a
replay past a limit costs that process alone, and the next replay starts another. Nothing of
an environment runs in this process: it reads the sandbox's answer, no more than
``max_answer_bytes`` of it (the sandbox refuses a larger one itself; one that does not is
stopped), and compares the states.

The answers for a case's reference calls are kept, keyed by the environment, its initial
state and the calls (they are the same for every run of the case), as the bytes the
sandbox sent, up to ``reference_cache_bytes`` of them (least recently used first out): a
kept answer is parsed again for each use, so that what a worker holds between runs is
bounded in bytes, not in entries of any size.
"""

from __future__ import annotations

import hashlib
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from scoring.matcher import CallOutcome, CaseEnvironment, ReplayFailed, TurnEnd

# The directory holding the ``scoring`` package: the sandbox runs from it.
PROJECT_ROOT = Path(__file__).resolve().parents[2]
# The start-up line is a few bytes; an answer too long to read is told apart from any line.
_READY_BYTES = 1024
_TOO_LONG = b"\0"
# How long a new sandbox may take to start (import Python and the project), before which
# no replay's wall-clock limit runs: a loaded machine starts processes slowly.
START_SECONDS = 60.0


@dataclass(frozen=True, slots=True)
class EnvironmentLimits:
    """What one replay may use: CPU seconds, megabytes of address space, wall-clock seconds,
    and bytes of its answer (the states and results, as JSON); and the bytes of reference
    answers kept between runs."""

    cpu_seconds: float = 5.0
    memory_mb: int = 1024
    wall_seconds: float = 10.0
    max_answer_bytes: int = 8 << 20
    reference_cache_bytes: int = 32 << 20

    @classmethod
    def from_settings(cls, settings: Any) -> EnvironmentLimits:
        """The limits of Django's settings (``CASEBOOK_ENVIRONMENT_*``), given as an object."""
        return cls(
            settings.CASEBOOK_ENVIRONMENT_CPU_SECONDS,
            settings.CASEBOOK_ENVIRONMENT_MEMORY_MB,
            settings.CASEBOOK_ENVIRONMENT_WALL_SECONDS,
            settings.CASEBOOK_ENVIRONMENT_MAX_ANSWER_BYTES,
            settings.CASEBOOK_ENVIRONMENT_REFERENCE_CACHE_BYTES,
        )


class SandboxReplayer:
    """Replays calls in a sandbox process, under ``limits``. ``environments`` maps names to
    ``"module:Class"`` ahead of the installed ones (tests use it)."""

    def __init__(
        self, limits: EnvironmentLimits, environments: Mapping[str, str] | None = None
    ) -> None:
        self.limits = limits
        self.environments = dict(environments or {})
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._owner = 0
        self._references: OrderedDict[str, bytes] = OrderedDict()  # answers, as sent
        self._referenced_bytes = 0

    def replay(
        self,
        environment: CaseEnvironment,
        turns: Sequence[Sequence[tuple[str, Any]]],
        *,
        reference: bool = False,
    ) -> tuple[TurnEnd, ...]:
        request = {
            "environment": environment.name,
            "initial_state": environment.initial_state,
            "turns": [[list(call) for call in turn] for turn in turns],
            "overrides": self.environments,
        }
        text = json.dumps(request, default=str)
        key = hashlib.sha256(text.encode()).hexdigest() if reference else None
        with self._lock:
            line = self._references.get(key) if key is not None else None
            if key is not None and line is not None:
                self._references.move_to_end(key)
            else:
                line = self._ask(text)
                if key is not None:
                    self._keep(key, line)
        return _turn_ends(json.loads(line))

    def _keep(self, key: str, line: bytes) -> None:
        """Keep a reference's answer, the least recently used going first past the cache's
        bytes; one larger than the whole cache is not kept."""
        if len(line) > self.limits.reference_cache_bytes:
            return
        self._references[key] = line
        self._referenced_bytes += len(line)
        while self._referenced_bytes > self.limits.reference_cache_bytes:
            _, dropped = self._references.popitem(last=False)
            self._referenced_bytes -= len(dropped)

    def close(self) -> None:
        with self._lock:
            self._stop()

    def _ask(self, text: str) -> bytes:
        """The sandbox's answer to a request: the line of its turns (``ReplayFailed`` for
        any other)."""
        process = self._started()
        assert process.stdin is not None  # opened as a pipe
        try:
            process.stdin.write((text + "\n").encode())
            process.stdin.flush()
        except OSError:
            raise self._ended() from None
        limits = self.limits
        line = self._read_line(
            process, time.monotonic() + limits.wall_seconds, limits.max_answer_bytes
        )
        if line is None:
            self._stop()
            raise ReplayFailed(
                f"the replay took longer than {limits.wall_seconds:g} s of wall-clock "
                "time (CASEBOOK_ENVIRONMENT_WALL_SECONDS) and was stopped"
            )
        if line is _TOO_LONG:
            self._stop()  # the rest of the answer is in the pipe: the process goes with it
            raise ReplayFailed(
                f"the replay's answer passed {limits.max_answer_bytes:,} bytes "
                "(CASEBOOK_ENVIRONMENT_MAX_ANSWER_BYTES) and was stopped"
            )
        if not line:
            raise self._ended()
        if not line.startswith(b'{"turns"'):  # an answer of turns is kept whole, unread
            answer = json.loads(line)
            if answer.get("limit") == "memory":
                self._stop()
                raise ReplayFailed(
                    f"the environment ran out of memory: it may use {limits.memory_mb} MB "
                    "(CASEBOOK_ENVIRONMENT_MEMORY_MB)"
                )
            raise ReplayFailed(answer.get("error") or "the sandbox answered nothing readable")
        return line

    def _started(self) -> subprocess.Popen[bytes]:
        # A forked worker (Celery's prefork pool) must not share its parent's sandbox.
        if self._process is None or self._owner != os.getpid():
            self._process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "scoring.environments.sandbox",
                    str(self.limits.cpu_seconds),
                    str(self.limits.memory_mb),
                    str(self.limits.max_answer_bytes),
                ],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                cwd=PROJECT_ROOT,
            )
            self._owner = os.getpid()
            ready = self._read_line(self._process, time.monotonic() + START_SECONDS)
            if not ready:
                self._stop()
                raise ReplayFailed(f"the sandbox process did not start in {START_SECONDS:g} s")
        return self._process

    @staticmethod
    def _read_line(
        process: subprocess.Popen[bytes], deadline: float, max_bytes: int = _READY_BYTES
    ) -> bytes | None:
        """The next line of the sandbox's answers; empty when it ended, None past the
        deadline, ``_TOO_LONG`` once it passes ``max_bytes`` (what was read is dropped)."""
        chunks = []
        size = 0
        assert process.stdout is not None  # opened as a pipe
        stream = process.stdout.fileno()
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([stream], [], [], left)[0]:
                return None
            chunk = os.read(stream, 1 << 16)
            if not chunk:
                return b""
            size += len(chunk)
            if size > max_bytes + 1:  # its newline
                return _TOO_LONG
            chunks.append(chunk)
            if chunk.endswith(b"\n"):
                return b"".join(chunks)

    def _ended(self) -> ReplayFailed:
        process = self._process
        status = process.wait() if process is not None else None
        self._process = None
        if status == -signal.SIGXCPU:
            return ReplayFailed(
                f"the replay used more than {self.limits.cpu_seconds:g} s of CPU time "
                "(CASEBOOK_ENVIRONMENT_CPU_SECONDS) and was stopped"
            )
        return ReplayFailed(f"the environment's process ended unexpectedly (status {status})")

    def _stop(self) -> None:
        if self._process is not None and self._owner == os.getpid():
            self._process.kill()
            self._process.wait()
        self._process = None


def _turn_ends(answer: dict) -> tuple[TurnEnd, ...]:
    """The turns of an answer, as the matcher reads them."""
    return tuple(
        TurnEnd(
            turn["state"],
            tuple(CallOutcome(o.get("value"), o.get("refused")) for o in turn["outcomes"]),
        )
        for turn in answer["turns"]
    )


@lru_cache(maxsize=4)
def replayer_for(limits: EnvironmentLimits) -> SandboxReplayer:
    """The process's replayer under ``limits``: every caller of ``score`` shares it, so
    that the worker, ``manage.py score`` and the pages judge alike."""
    return SandboxReplayer(limits)
