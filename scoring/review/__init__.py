"""The review workflow (docs/review.md): reviewers' decisions on runs, the double-blind rule
they obey and the known-failure decisions they make (``decisions``); review queues
(``queues``) and double-blind ones (``blind``) with their agreement (``agreement``); moving
through failures from the run page (``triage``); and a reviewer's own work
(``assigned_work``).

May import: ``scoring.results``, ``scoring.models``, ``scoring.matcher``, ``cases``.
"""
