"""What the runs table shows of a run besides its verdict, read without its document: the
run's scalar ``meta`` values (the reviewer's chosen columns, such as τ-bench's ``reward``),
and per submission the tools its runs called and the meta keys they have (the choices of
the tool filter and of the columns). Each is bounded, whatever the file holds."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from decimal import Decimal  # numbers of exact JSON text (``scoring.matcher.parse_json``)
from typing import Any

META_VALUES_KEPT = 20  # of a run's meta, the first so many scalar values
META_KEY_LIMIT = 64  # longer keys are not offered as columns
META_TEXT_LIMIT = 200  # a text value is cut to this many characters
FULL_REWARD = 1.0  # τ-bench's reward for a run that did what its task asks
SEEN_LIMIT = 200  # tools, and meta keys, remembered per submission
NAME_LIMIT = 200  # longer tool names are not offered as filter choices


def meta_values(meta: Mapping[str, Any]) -> dict[str, Any]:
    """The scalar values of a run's ``meta`` worth a table column (nested objects and
    lists are left to the run page)."""
    kept: dict[str, Any] = {}
    for key, value in meta.items():
        if len(kept) >= META_VALUES_KEPT:
            break
        # A NUL cannot be in PostgreSQL's JSON, where the submission lists the keys seen.
        if not isinstance(key, str) or not key or len(key) > META_KEY_LIMIT or "\x00" in key:
            continue
        if isinstance(value, str):
            kept[key] = value[:META_TEXT_LIMIT]
        elif value is None or isinstance(value, bool | int | float | Decimal):
            kept[key] = value
    return kept


def file_reward(meta: Mapping[str, Any]) -> float | None:
    """The benchmark's own score of the run, when its file gave one: ``meta.reward`` as a
    finite number (τ-bench's ``reward``; docs/review.md#runs-table). None otherwise."""
    value = meta.get("reward")
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def reward_agrees(passed: bool, reward: float | None) -> bool | None:
    """Whether a verdict (``passed`` or not) agrees with the file's reward: a full reward
    (``FULL_REWARD`` or more) with a pass, a lower one with a fail or an error. None when
    the file gave no reward. ``scoring.results.rewards`` asks the same of the database."""
    return None if reward is None else passed == (reward >= FULL_REWARD)


def note_seen(seen: set[str], names: Iterable[str]) -> None:
    """Add ``names`` to ``seen``, up to ``SEEN_LIMIT`` of them. A NUL reads as U+FFFD, as in
    the text columns (``scoring.ingest.bulk``): PostgreSQL's JSON cannot hold one."""
    for name in names:
        if len(seen) >= SEEN_LIMIT:
            return
        if len(name) <= NAME_LIMIT:
            seen.add(name.replace("\x00", "\ufffd"))


def tool_names(tools: str) -> list[str]:
    """The names in a ``Run.tools`` text."""
    return [name for name in tools.split("\n") if name]
