"""Expectations (docs/matcher.md#expectations): the base class and the view of a run they
read, with the types about calls, final text and the run's error (``expectations``); the
checks against the tool catalog (``tool_checks``), end state (``end_state``) and budgets
(``budgets``); every type by its ``type`` (``expectation_types``).

It builds on the arguments and the modules at the matcher's top; the suites and the
verdicts build on it (the layers of ``scoring/matcher/__init__.py``).
"""
