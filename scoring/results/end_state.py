"""The end-state diff of a run, for its page (docs/review.md#run-page): where the calls it
made, replayed in the case's environment, leave a state other than the reference calls'.

Made on demand, after the page (a replay takes a sandbox process), by the same replayer
scoring uses, so it shows what the verdict saw."""

from __future__ import annotations

from django.conf import settings

from scoring.environments import EnvironmentLimits, replayer_for
from scoring.matcher import InvalidInput, TurnComparison, end_state_comparisons, load_run
from scoring.models import Run


def has_end_state(run: Run) -> bool:
    """Whether the run's case judges it by end state, so its page offers the diff."""
    case = run.submission.version.matcher_suite().case(run.case_key)
    return case is not None and any(e.type == "end_state_matches" for e in case.expectations)


# Differences a page lists; the rest are counted.
DIFFERENCES_SHOWN = 50


def run_end_state(run: Run) -> list[dict]:
    """Each ``end_state_matches`` of the run's case: its ``label``; ``same`` when the run's
    calls leave the reference's state; else the ``problem`` in words, the ``differences``
    (path, run, reference; at most ``DIFFERENCES_SHOWN``, ``more`` counting the rest) and
    the calls the environment ``refused``; or the ``error`` that kept the replay from being
    made."""
    case = run.submission.version.matcher_suite().case(run.case_key)
    if case is None:
        return []
    try:
        recorded = load_run(run.document)
    except InvalidInput:
        return []
    replayer = replayer_for(EnvironmentLimits.from_settings(settings))
    return [
        _shown(label, comparison)
        for label, comparison in end_state_comparisons(case, recorded, replayer)
    ]


def _shown(label: str, comparison: TurnComparison | str | None) -> dict:
    if comparison is None:
        return {"label": label, "same": True}
    if isinstance(comparison, str):
        return {"label": label, "error": comparison}
    differences = comparison.differences
    return {
        "label": label,
        "problem": comparison.problem,
        "differences": differences[:DIFFERENCES_SHOWN],
        "more": max(0, len(differences) - DIFFERENCES_SHOWN),
        "refused": comparison.refused,
    }
