"""The read side of what was scored (docs/review.md): the runs table's filters, one
FilterSet for page and API (``filtersets``) and its rows, trials and tags (``tables``);
failures by cause (``failures``) and by signature across submissions (``known_failures``);
two submissions compared (``comparison``); a suite's trend (``trends``); pass@k
(``passk``); the timeline of a run beside its case (``timeline``); CSV and JUnit exports
(``exports``); and cases drafted from passing runs (``case_drafts``).

May import: ``scoring.models``, ``scoring.runfiles``, ``scoring.matcher``, ``cases``. Not
``scoring.ingest``: the two are independent.
"""
