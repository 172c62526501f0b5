"""An audit as the pages show it (docs/audit.md): the suite page's "Suite health" panel
(served by ``scoring``, which adds what the submissions say) and the imports' previews,
through ``templates/cases/_audit.html``."""

from __future__ import annotations

from collections.abc import Mapping

from scoring.audit import KIND_WORDS, KINDS, WARNINGS, Audit

# Problems listed of each kind; the rest are counted.
SHOWN_PER_KIND = 100


def audit_context(audit: Audit, case_ids: Mapping[str, int] | None = None) -> dict:
    """The audit's counts by kind and its problems grouped by kind, each with the id of its
    case where ``case_ids`` has it (the panel links it to the case editor)."""
    case_ids = case_ids or {}
    groups = []
    for kind in KINDS:
        problems = [p for p in audit.problems if p.kind == kind]
        if not problems:
            continue
        cases = len({p.case for p in problems})
        groups.append(
            {
                "kind": kind,
                "words": KIND_WORDS[kind][cases != 1],
                "cases": cases,
                "warning": kind in WARNINGS,
                "problems": [(p, case_ids.get(p.case)) for p in problems[:SHOWN_PER_KIND]],
                "more": max(len(problems) - SHOWN_PER_KIND, 0),
            }
        )
    counts = audit.counts()
    return {
        "audit": audit,
        "groups": groups,
        "counts": [(kind, KIND_WORDS[kind][1], counts[kind]) for kind in KINDS],
        "problem_cases": len(audit.by_case),
        "unchecked": list(audit.unchecked[:SHOWN_PER_KIND]),
    }
