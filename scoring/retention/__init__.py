"""Retention (docs/operations.md#retention): removing the runs a suite keeps for a number of
days once they are older, in bounded batches, keeping each submission's counts and summaries
and a note of the reviewed runs removed (``pruning``), daily by its task (``tasks``)."""
