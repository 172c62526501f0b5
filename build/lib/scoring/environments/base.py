"""What an environment is (docs/environments.md#writing-an-environment)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class Environment:
    """A simulated world an agent's tool calls act on, built from a JSON document.

    Subclasses take the initial state in ``__init__`` (refusing a bad one by raising),
    carry out a call in ``execute`` and report their state as JSON in ``state``. A call
    the environment refuses raises: the exception's text is the refusal. Each replay gets a
    fresh instance, in a separate process with limits on CPU time, memory and wall-clock
    time (docs/operations.md#environments)."""

    def __init__(self, initial_state: Any) -> None:
        self.initial_state = initial_state

    def execute(self, name: str, arguments: Mapping[str, Any]) -> Any:
        """The result of calling tool ``name`` with ``arguments``: a JSON value."""
        raise NotImplementedError

    def state(self) -> Any:
        """The state as a JSON document; two runs are judged by comparing theirs."""
        raise NotImplementedError
