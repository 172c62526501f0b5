"""The scoring app's models, one module per area (the names below are its public API).

- ``submissions``: submissions, their uploaded chunks, invalid lines, runs, results and
  predicate rows, and what re-scoring keeps of earlier versions;
- ``summaries``: what a submission's finished scoring is summarized into;
- ``reviews``: reviews, review queues, double-blind decisions, known failures;
- ``spans``: live traces and their spans;
- ``prices``: a team's own prices for models.
"""

from .prices import ModelPrice, team_prices
from .reviews import (
    BlindDecision,
    KnownFailure,
    LabelLink,
    PrunedRuns,
    QueueItem,
    Review,
    ReviewEvent,
    ReviewQueue,
    ReviewStatus,
    with_review_status,
)
from .spans import Trace, TraceSpan
from .submissions import (
    LABEL_LIMIT,
    EarlierResult,
    EarlierScore,
    InvalidLine,
    PredicateResult,
    ReadRange,
    Result,
    Run,
    ScoredChunk,
    Status,
    Submission,
    UploadChunk,
    Verdict,
)
from .summaries import CaseSummary, FailureSummary, KnownFailureSummary

__all__ = [
    "LABEL_LIMIT",
    "BlindDecision",
    "CaseSummary",
    "EarlierResult",
    "EarlierScore",
    "FailureSummary",
    "InvalidLine",
    "KnownFailure",
    "KnownFailureSummary",
    "LabelLink",
    "ModelPrice",
    "PredicateResult",
    "PrunedRuns",
    "QueueItem",
    "ReadRange",
    "Result",
    "Review",
    "ReviewEvent",
    "ReviewQueue",
    "ReviewStatus",
    "Run",
    "ScoredChunk",
    "Status",
    "Submission",
    "Trace",
    "TraceSpan",
    "UploadChunk",
    "Verdict",
    "team_prices",
    "with_review_status",
]
