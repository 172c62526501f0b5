"""GET /api/suites/{id}/versions/{n}/audit/ (docs/api.md#versions): the version's audit, made
when it was saved, as ``manage.py audit --json`` prints it; made then kept for a version saved
before audits were kept."""

from cases import services
from cases.models import SuiteVersion
from tests.support import audit_suites


def audit_url(suite, number):
    return f"/api/suites/{suite.pk}/versions/{number}/audit/"


def test_a_versions_audit_is_the_commands_json(api, viewer, team, admin):
    suite = services.create_suite(team, audit_suites.PLANTED_IN_BFCL, admin)
    response = api(viewer).get(audit_url(suite, 1))
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"cases", "problems"}
    assert body["cases"] == len(audit_suites.PLANTED_IN_BFCL["cases"])
    kinds: dict[str, list[str]] = {}
    for problem in body["problems"]:
        kinds.setdefault(problem["case"], []).append(problem["kind"])
    assert kinds == audit_suites.PLANTED_IN_BFCL_KINDS
    assert body == SuiteVersion.objects.get(suite=suite, number=1).audit


def test_each_version_keeps_the_audit_it_was_saved_with(api, viewer, editor, suite):
    case = suite.cases.get(key="weather.paris-v2")
    data = {**services.case_document(case), "expectations": [], "expected_calls": []}
    services.save_case(suite, data, editor, case=case)
    first = api(viewer).get(audit_url(suite, 1)).json()
    second = api(viewer).get(audit_url(suite, 2)).json()
    assert first == {"cases": 2, "problems": []}
    assert [(p["case"], p["kind"]) for p in second["problems"]] == [
        ("weather.paris-v2", "passes_idle")
    ]


def test_a_version_saved_before_audits_were_kept_is_audited_once_then_kept(api, viewer, suite):
    SuiteVersion.objects.filter(suite=suite).update(audit=None)
    response = api(viewer).get(audit_url(suite, 1))
    assert response.json() == {"cases": 2, "problems": []}
    assert SuiteVersion.objects.get(suite=suite, number=1).audit == {"cases": 2, "problems": []}


def test_outsiders_get_404_and_missing_versions_404(api, outsider, viewer, suite):
    assert api(outsider).get(audit_url(suite, 1)).status_code == 404
    assert api(viewer).get(audit_url(suite, 9)).status_code == 404
