"""Run formats: each importer turns one uploaded line into a canonical run (DESIGN.md §3.2).

Every line is an object with ``case`` (and optionally ``trial``, ``meta``, ``error``) plus
the run in one of the formats below. ``to_canonical`` detects the format unless told.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scoring.matcher import InvalidInput
from scoring.matcher.jsonvalue import json_type

from . import bfcl, canonical, openai_chat

# Detection tries these in order; the first whose ``detect`` accepts the line wins.
IMPORTERS = {module.NAME: module for module in (canonical, openai_chat, bfcl)}
FORMAT_NAMES = tuple(IMPORTERS)


def detect_format(line: Mapping) -> str | None:
    """The name of the format ``line`` is in, or None when no importer recognises it."""
    return next((name for name, module in IMPORTERS.items() if module.detect(line)), None)


def to_canonical(line: Any, format_name: str | None = None) -> dict:
    """The canonical run of one uploaded line; raises ``InvalidInput`` naming the field."""
    if not isinstance(line, Mapping):
        raise InvalidInput.single("", f"a run line must be a JSON object, not {json_type(line)}")
    name = format_name or detect_format(line)
    if name is None:
        keys = ", ".join(module.SIGNATURE for module in IMPORTERS.values())
        raise InvalidInput.single("", f"unrecognised run format: expected one of the keys {keys}")
    return IMPORTERS[name].convert(line)
