"""What the OTLP receiver asks of live traces (docs/live-traces.md): keep an export's items
(``traces.accept``), then have the traces it added to assembled once due
(``tasks.assemble_when_due``), as ``scoring.ingest.pipeline`` is for uploads: the view
calls this one function, and nothing below it sends a task.
"""

from __future__ import annotations

from scoring.live import tasks, traces
from scoring.live.otlp_codec import TRACES, Signal
from scoring.live.traces import Outcome

__all__ = ["Outcome", "receive"]


def receive(user, export, token=None, signal: Signal = TRACES) -> Outcome:
    """Keep the items of an export ``user`` sent with ``token``, and send the assembly of
    the traces it added to for when their grace period ends; what became of its items."""
    outcome = traces.accept(user, export, token, signal)
    tasks.assemble_when_due(outcome.pending)
    return outcome
