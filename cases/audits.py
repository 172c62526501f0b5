"""Audits of suites (docs/audit.md) where Casebook keeps them: each version's, made when it
is saved and kept with it (and, for a version saved before audits were kept, made the first
time it is asked for, then kept); and the audits of what the case editor and the imports
are about to save. Environments replay in the sandbox scoring uses, under its limits."""

from __future__ import annotations

from collections.abc import Mapping

from django.conf import settings

from scoring.audit import Audit, audit_case, audit_suite
from scoring.environments import EnvironmentLimits, replayer_for
from scoring.matcher import InvalidInput, load_suite

from .models import SuiteVersion


def _replayer():
    return replayer_for(EnvironmentLimits.from_settings(settings))


def audit_document(document: Mapping) -> Audit:
    """The audit of a suite file, loaded as a stored version is (a pattern RE2 has come to
    refuse leaves its check unchecked rather than the suite refused)."""
    return audit_suite(load_suite(document, strict=False), _replayer())


def stored_audit(version: SuiteVersion) -> Audit:
    """The version's audit, made and kept now if it was saved before audits were kept."""
    if version.audit is not None:
        return Audit.from_dict(version.audit)
    audit = audit_suite(version.matcher_suite(), _replayer())
    version.audit = audit.to_dict()
    SuiteVersion.objects.filter(pk=version.pk, audit__isnull=True).update(audit=version.audit)
    return audit


def case_audit(version: SuiteVersion | None, case: Mapping, saved_key: str | None) -> Audit | None:
    """The audit of one case as the editor holds it, in the suite of ``version`` (its
    catalog, match options and environment), a ``duplicate`` of the version's other cases
    (all but ``saved_key``, the case's key as saved); None while the case breaks a rule of
    the suite file (the editor shows those)."""
    document = {**(version.document if version else {}), "cases": [case]}
    try:
        edited = load_suite(document).cases[0]
    except InvalidInput:
        return None
    others = [c for c in version.matcher_suite().cases if c.key != saved_key] if version else []
    return audit_case(edited, _replayer(), others=others)
