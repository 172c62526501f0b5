"""Auditing suites: every case tried against its own answer, an agent that does nothing,
its tool catalog and its environment (docs/audit.md).

A library (no Django, no database): ``manage.py audit``, the suite page's "Suite health"
panel, the case editor, the imports' previews and the API all call it.

    audit = audit_suite(load_suite(document), replayer)
    audit.to_dict()  # {"cases": N, "problems": [{"case", "kind", "message"}, ...]}

The matcher scores the runs an audit derives; environments replay through the replayer the
caller gives (``scoring.environments``' sandbox, with its limits), as in scoring.
"""

from .history import SATURATION_WINDOW, CaseHistory, HistoryNotes, history_notes
from .problems import KIND_WORDS, KINDS, WARNINGS, Audit, Problem, Unchecked
from .suites import audit_case, audit_document, audit_suite

__all__ = [
    "KINDS",
    "KIND_WORDS",
    "SATURATION_WINDOW",
    "WARNINGS",
    "Audit",
    "CaseHistory",
    "HistoryNotes",
    "Problem",
    "Unchecked",
    "audit_case",
    "audit_document",
    "audit_suite",
    "history_notes",
]
