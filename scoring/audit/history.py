"""What a suite's submissions say of its cases (docs/audit.md#history), as information,
not problems: cases no submission has ever passed, and cases every one of the last
submissions passed in every trial ("saturated": they no longer tell agents apart)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

# The submissions a saturated case must have passed, newest first.
SATURATION_WINDOW = 10


@dataclass(frozen=True)
class CaseResult:
    """One submission's scored runs of one case."""

    runs: int
    passed: int


@dataclass(frozen=True)
class HistoryNotes:
    never_passed: list[str]  # case keys, in the suite's order
    saturated: list[str]
    submissions: int  # how many submissions were read
    window: int = SATURATION_WINDOW


def history_notes(
    keys: Sequence[str],
    results: Mapping[str, Sequence[CaseResult | None]],
    submissions: int,
    window: int = SATURATION_WINDOW,
) -> HistoryNotes:
    """``results`` holds, for each case key, its result in each submission read, newest
    first (None where the submission has no scored run of it). A case no submission passed
    once is ``never_passed`` (if some scored it); one whose every run passed in each of the
    ``window`` newest submissions is ``saturated`` (there must be that many)."""
    never, saturated = [], []
    for key in keys:
        found = results.get(key, ())
        scored = [result for result in found if result is not None and result.runs]
        if scored and not any(result.passed for result in scored):
            never.append(key)
        newest = list(found[:window])
        if (
            submissions >= window
            and len(newest) == window
            and all(r is not None and r.runs and r.passed == r.runs for r in newest)
        ):
            saturated.append(key)
    return HistoryNotes(never, saturated, submissions, window)
