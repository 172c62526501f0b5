"""What a suite's submissions say of its cases (docs/audit.md#history), as information,
not problems: cases no submission has passed, and cases every one of the last submissions
passed in every trial ("saturated": they no longer tell agents apart)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

# The newest submissions a saturated case must have passed.
SATURATION_WINDOW = 10


@dataclass(frozen=True)
class CaseHistory:
    """One case over the submissions read: how many scored a run of it, how many of its
    runs passed in all of them, and in how many of the ``window`` newest every run of it
    passed."""

    scored_in: int
    passed: int
    clean_in_window: int


@dataclass(frozen=True)
class HistoryNotes:
    never_passed: list[str]  # case keys, in the suite's order
    saturated: list[str]
    submissions: int  # how many submissions were read
    window: int = SATURATION_WINDOW


def history_notes(
    keys: Sequence[str],
    histories: Mapping[str, CaseHistory],
    submissions: int,
    window: int = SATURATION_WINDOW,
) -> HistoryNotes:
    """A case some submission scored and none passed once is ``never_passed``; one whose
    every run passed in each of the ``window`` newest submissions is ``saturated`` (there
    must be that many)."""
    never, saturated = [], []
    for key in keys:
        history = histories.get(key)
        if history is None:
            continue
        if history.scored_in and not history.passed:
            never.append(key)
        if submissions >= window and history.clean_in_window >= window:
            saturated.append(key)
    return HistoryNotes(never, saturated, submissions, window)
