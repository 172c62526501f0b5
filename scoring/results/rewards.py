"""The benchmark's own score of a run beside Casebook's verdict (docs/review.md#runs-table).

A file may carry each run's score by the benchmark that made it: τ-bench writes ``reward``
(1 when the run did what the task asks, 0 otherwise), kept as ``Run.reward``. The two agree
when a full reward (``FULL_REWARD`` or more) goes with ``pass``, and a lower one with
``fail`` or ``error`` (``runmeta.reward_agrees``, for one run). This module asks the same
of the database: as a query (the runs table's filter) and counted over a submission (its
agreement line).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Q

from scoring.models import Result, Submission, Verdict
from scoring.results.tables import kept
from scoring.runfiles.runmeta import FULL_REWARD

AGREES, DISAGREES = "agrees", "disagrees"
CHOICES = [
    (AGREES, "agrees with the file's reward"),
    (DISAGREES, "disagrees with the file's reward"),
]


def agreeing() -> Q:
    """The results whose verdict agrees with their run's reward (a filter of ``Result``);
    a run without a reward is in neither this nor ``disagreeing``."""
    passed, full = Q(verdict=Verdict.PASS), Q(run__reward__gte=FULL_REWARD)
    return Q(run__reward__isnull=False) & ((passed & full) | (~passed & ~full))


def disagreeing() -> Q:
    """The results whose verdict disagrees with their run's reward."""
    passed, full = Q(verdict=Verdict.PASS), Q(run__reward__gte=FULL_REWARD)
    return Q(run__reward__isnull=False) & ((passed & ~full) | (~passed & full))


@dataclass(frozen=True)
class Agreement:
    """How many scored runs carry a reward, and how many of those agree with it."""

    rewarded: int
    agree: int

    @property
    def disagree(self) -> int:
        return self.rewarded - self.agree


def agreement(submission: Submission) -> Agreement | None:
    """The submission's agreement with its file's rewards; None when no run has one. The
    meta keys its runs have are kept on the submission: without ``reward`` among them, no
    run has one, and nothing is counted."""
    if "reward" not in submission.meta_keys:
        return None
    return kept(submission, "reward-agreement", lambda: _agreement(submission))


def _agreement(submission: Submission) -> Agreement | None:
    counts = Result.objects.filter(submission=submission, run__reward__isnull=False).aggregate(
        rewarded=Count("pk"), agree=Count("pk", filter=agreeing())
    )
    if not counts["rewarded"]:
        return None
    return Agreement(counts["rewarded"], counts["agree"])
