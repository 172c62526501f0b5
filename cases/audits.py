"""Audits of suites (docs/audit.md) where Casebook keeps them: each version's, made when it
is saved and kept with it (and, for a version saved before audits were kept, made the first
time it is asked for, then kept); and the audits of what the case editor and the imports
are about to save. Environments replay in the sandbox scoring uses, under its limits."""

from __future__ import annotations

from collections.abc import Mapping

from django.conf import settings

from scoring.audit import Audit, audit_case, audit_document
from scoring.environments import EnvironmentLimits, replayer_for
from scoring.matcher import InvalidInput, load_suite

from .models import SuiteVersion


def _replayer():
    return replayer_for(EnvironmentLimits.from_settings(settings))


def _bounds() -> dict:
    """What one audit may spend replaying, as the settings say."""
    return {"replay_seconds": settings.CASEBOOK_AUDIT_REPLAY_SECONDS}


def suite_audit(document: Mapping, earlier: SuiteVersion | None = None) -> Audit:
    """The audit of a suite file: of a new version, whose cases that ``earlier`` (the
    version before it) holds as they are keep the problems its audit found, if it has one."""
    before = None
    if earlier is not None and earlier.audit is not None:
        before = (earlier.document, Audit.from_dict(earlier.audit))
    return audit_document(document, _replayer(), earlier=before, **_bounds())


def stored_audit(version: SuiteVersion) -> Audit:
    """The version's audit, made and kept now if it was saved before audits were kept."""
    if version.audit is not None:
        return Audit.from_dict(version.audit)
    audit = audit_document(version.document, _replayer(), **_bounds())
    version.audit = audit.to_dict()
    SuiteVersion.objects.filter(pk=version.pk, audit__isnull=True).update(audit=version.audit)
    return audit


def case_audit(version: SuiteVersion | None, case: Mapping, saved_key: str | None) -> Audit | None:
    """The audit of one case as the editor holds it, in the suite of ``version`` (its
    catalog, match options and environment), a ``duplicate`` of the version's other cases
    (all but ``saved_key``, the case's key as saved); None while the case breaks a rule of
    the suite file (the editor shows those)."""
    document = version.document if version else {}
    try:
        edited = load_suite({**document, "cases": [case]}).cases[0]
    except InvalidInput:
        return None
    others = [c for c in document.get("cases") or () if c.get("key") != saved_key]
    environment = document.get("environment")
    return audit_case(edited, _replayer(), others=others, environment=environment, **_bounds())
