"""Run formats: each importer turns one uploaded line into a canonical run
(docs/formats.md#run-formats).

Every line is an object with ``case`` (and optionally ``trial``, ``meta``, ``error``) plus
the run in one of the formats below. ``to_canonical`` detects the format unless told. An
Inspect AI eval log (``.json`` or ``.eval``) and a JSON array of runs (τ-bench's results)
are one document rather than lines: ``scoring.runfiles.reader`` splits them into their samples or
elements, and each is then read as a line.

Detection tries the formats in this order; the first whose ``detect`` accepts the line wins:

1. ``canonical``: ``batches``.
2. ``inspect_ai``: ``messages`` beside ``epoch`` (an Inspect sample; its messages look like
   OpenAI's, so it goes first).
3. ``anthropic``: ``messages`` with a content block of a type only Anthropic uses
   (``tool_use``, ``tool_result``, ``thinking``, ...); a ``Message`` (``type: message``);
   a ``request`` beside a ``Message`` ``response``.
4. ``openai_chat``: any other ``messages`` list. A run of text turns alone reads the same
   in Anthropic's format, so nothing is lost by calling it this one. A ChatCompletion
   (``choices``); a ``request`` beside a ChatCompletion ``response``.
5. ``openai_responses``: ``output`` (a list) or ``responses``; a ``request`` beside a
   response with ``output``.
6. ``gemini``: ``contents``, or a GenerateContentResponse's ``candidates``.
7. ``otel``: ``resourceSpans`` or ``spans``.
8. ``bfcl``: ``result`` beside ``id`` and no ``case``.
9. ``tau_bench``: ``traj`` beside ``task_id`` (an element of τ-bench's results array).

No two formats share the key that detects them except the three ``messages`` formats, which
the content of the messages tells apart; so the order only settles lines that carry keys of
two formats at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, cast

from scoring.matcher import InvalidInput, json_type

from . import (
    anthropic,
    bfcl_results,
    canonical,
    gemini,
    inspect_ai,
    openai_chat,
    openai_responses,
    otel,
    streaming,
    tau_bench,
)
from .common import JSONObject, Run, object_at


class Importer(Protocol):
    """What each format module gives: its name, the keys that detect it (for a line no
    importer recognises), whether a line is in it, and the line's canonical run."""

    NAME: str
    SIGNATURE: str

    def detect(self, line: JSONObject) -> bool: ...

    def convert(self, line: JSONObject) -> JSONObject: ...


_IN_ORDER: tuple[Importer, ...] = (
    canonical,
    inspect_ai,
    anthropic,
    openai_chat,
    openai_responses,
    gemini,
    otel,
    bfcl_results,
    tau_bench,
)
IMPORTERS = {module.NAME: module for module in _IN_ORDER}
FORMAT_NAMES = tuple(IMPORTERS)

# The importers' public API; the format modules are the API of their format-specific parts
# (Inspect logs read whole by the run file reader, BFCL's refused multi-turn records, the
# case key of a τ-bench result, the JSON arrays read as streams).
__all__ = [
    "FORMAT_NAMES",
    "IMPORTERS",
    "bfcl_results",
    "detect_format",
    "inspect_ai",
    "object_at",
    "otel",
    "streaming",
    "tau_bench",
    "to_canonical",
]


def detect_format(line: JSONObject) -> str | None:
    """The name of the format ``line`` is in, or None when no importer recognises it."""
    for name, module in IMPORTERS.items():
        if module.detect(line):
            return name
    return None


def to_canonical(line: Any, format_name: str | None = None) -> Run:
    """The canonical run of one uploaded line; raises ``InvalidInput`` naming the field."""
    if type(line) is not dict and not isinstance(line, Mapping):  # an ABC check costs more
        raise InvalidInput.single("", f"a run line must be a JSON object, not {json_type(line)}")
    name = format_name or detect_format(line)
    if name is None:
        keys = ", ".join(dict.fromkeys(module.SIGNATURE for module in IMPORTERS.values()))
        raise InvalidInput.single("", f"unrecognised run format: expected one of the keys {keys}")
    # Each importer but the canonical one builds a new run; that one gives back the line,
    # parsed JSON (a dict), which is the run as it is stored (docs/formats.md#run-files).
    return cast(Run, IMPORTERS[name].convert(line))
