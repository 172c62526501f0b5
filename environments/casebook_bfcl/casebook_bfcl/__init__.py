"""BFCL's multi-turn backends (file system, math, messages, Twitter, tickets, trading,
travel, vehicle) as one Casebook environment, ``bfcl`` (docs/environments.md#bfcl).

The initial state is a BFCL test entry's ``{"involved_classes", "initial_config",
"long_context"}``. The backends are built as BFCL's checker builds them
(``multi_turn_utils.execute_multi_turn_func_call``): one instance per involved class, loaded
with its part of ``initial_config``; a method name shared by two classes reaches the later
one. A call's result is the text BFCL's checker compares (a string as it is, a dictionary as
JSON, anything else as ``str``); a call that raises is refused with the exception's text.
The state is each instance's public attributes, as BFCL's state check compares them, with
the file system's directories and files written as objects.
"""

from __future__ import annotations

import copy
import importlib
import inspect
import json
from collections.abc import Mapping
from typing import Any

from bfcl_eval.constants.executable_backend_config import (
    CLASS_FILE_PATH_MAPPING,
    STATELESS_CLASSES,
)
from bfcl_eval.eval_checker.multi_turn_eval.func_source_code.gorilla_file_system import (
    Directory,
    File,
)

# The classes of BFCL's multi-turn categories (the others share its pipeline, not its data).
CLASSES = (
    "GorillaFileSystem",
    "MathAPI",
    "MessageAPI",
    "TwitterAPI",
    "TicketAPI",
    "TradingBot",
    "TravelAPI",
    "VehicleControlAPI",
)
# Names BFCL's executor refuses to call, whatever the class.
REFUSED_NAMES = frozenset({"kill", "exit", "quit", "remove", "unlink", "popen", "Popen", "run"})


class BfclEnvironment:
    def __init__(self, initial_state: Mapping[str, Any]) -> None:
        classes = initial_state.get("involved_classes")
        if not isinstance(classes, list) or not classes:
            raise ValueError("involved_classes must be a non-empty list of BFCL class names")
        unknown = [name for name in classes if name not in CLASSES]
        if unknown:
            raise ValueError(f"not a BFCL multi-turn class: {', '.join(map(str, unknown))}")
        config = initial_state.get("initial_config") or {}
        long_context = bool(initial_state.get("long_context"))
        self.instances: dict[str, Any] = {}
        self.methods: dict[str, Any] = {}
        for name in classes:
            instance = getattr(importlib.import_module(CLASS_FILE_PATH_MAPPING[name]), name)()
            if name not in STATELESS_CLASSES:
                instance._load_scenario(
                    copy.deepcopy(config.get(name, {})), long_context=long_context
                )
            self.instances[name] = instance
            for method_name, method in inspect.getmembers(instance, predicate=inspect.ismethod):
                if not method_name.startswith("_"):
                    self.methods[method_name] = method

    def execute(self, name: str, arguments: Mapping[str, Any]) -> str:
        if name in REFUSED_NAMES:
            raise ValueError(f"Function call {name} is not allowed.")
        method = self.methods.get(name)
        if method is None:
            raise NameError(f"name '{name}' is not defined")
        result = method(**arguments)
        if isinstance(result, str):
            return result
        if isinstance(result, dict):
            try:
                return json.dumps(result)
            except (TypeError, ValueError):
                return str(result)
        return str(result)

    def state(self) -> dict[str, Any]:
        return {
            name: {
                attribute: _json(value)
                for attribute, value in vars(instance).items()
                if not attribute.startswith("_")
            }
            for name, instance in self.instances.items()
        }


def _json(value: Any) -> Any:
    """``value`` as JSON, equal where BFCL's state check finds the values equal."""
    if isinstance(value, Directory):
        return {"type": "directory", "name": value.name, "contents": _json(value.contents)}
    if isinstance(value, File):
        return {"type": "file", "name": value.name, "content": value.content}
    if isinstance(value, Mapping):
        return {str(key): _json(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_json(item) for item in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)
