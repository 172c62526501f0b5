"""The audit on the pages (docs/audit.md#where-it-shows): the suite page's "Suite health"
panel, from the audit kept with the version, each problem linked to the case editor, and
what the submissions say; the case editor's audit of the case as it is edited."""

import json
import re

import pytest
from django.urls import reverse

from cases import services
from cases.models import Suite, SuiteVersion
from scoring.models import CaseSummary, Status, Submission
from tests.support import audit_suites
from tests.support.builders import make_team
from tests.support.pages import BFCL, editor_data, text, upload
from tests.support.tau_bench import RESULTS_FILE

pytestmark = pytest.mark.django_db


@pytest.fixture
def planted(editor, viewer):
    team = make_team("Audited", editor=editor, viewer=viewer)
    return services.create_suite(team, audit_suites.PLANTED_IN_BFCL, editor)


def health(client, suite):
    return client.get(f"/suites/{suite.pk}/health/")


def test_the_panel_counts_each_kind_and_links_each_problem_to_its_case(client, viewer, planted):
    client.force_login(viewer)
    response = health(client, planted)
    assert response.status_code == 200
    page = text(response)
    for kind in ("contradiction", "unknown_tool", "schema", "replay_refused", "duplicate"):
        assert f'<li class="audit-count {kind}" title=' in page
    assert "<strong>4</strong> <code>contradiction</code>" in page
    case = planted.cases.get(key="schema-refuses")
    assert f'href="/suites/{planted.pk}/cases/{case.pk}/"' in page
    assert "unit: &#x27;K&#x27; is not one of" in page  # escaped, as every message


def test_the_suite_page_loads_the_panel(client, viewer, planted):
    client.force_login(viewer)
    page = text(client.get(f"/suites/{planted.pk}/"))
    assert f'hx-get="/suites/{planted.pk}/health/"' in page


def test_a_clean_suite_says_so(client, viewer, editor):
    team = make_team("Clean", viewer=viewer)
    suite = services.create_suite(team, audit_suites.CLEAN | {"tools": audit_suites.TOOLS}, editor)
    SuiteVersion.objects.filter(suite=suite).update(audit={"cases": 5, "problems": []})
    client.force_login(viewer)
    assert "No problems in 5 cases" in text(health(client, suite))


def test_the_panel_reads_the_stored_audit_and_audits_an_older_version_once(client, viewer, planted):
    version = planted.versions.get()
    SuiteVersion.objects.filter(pk=version.pk).update(
        audit={"cases": 1, "problems": [{"case": "x", "kind": "duplicate", "message": "kept"}]}
    )
    client.force_login(viewer)
    assert "kept" in text(health(client, planted))  # read, not made again
    SuiteVersion.objects.filter(pk=version.pk).update(audit=None)
    assert "<strong>4</strong> <code>contradiction</code>" in text(health(client, planted))
    version.refresh_from_db()
    assert version.audit["cases"] == len(audit_suites.PLANTED_IN_BFCL["cases"])


def test_outsiders_do_not_see_the_panel(client, outsider, planted):
    client.force_login(outsider)
    assert health(client, planted).status_code == 404


def finished(suite, passed_by_case: dict[str, tuple[int, int]]) -> Submission:
    submission = Submission.objects.create(
        suite=suite, version=suite.latest_version, status=Status.DONE, scored=1, chunk_runs=100
    )
    CaseSummary.objects.bulk_create(
        CaseSummary(
            submission=submission,
            generation=submission.generation,
            case_key=key,
            runs=runs,
            passed=passed,
            verdicts="0:" + "p" * passed + "f" * (runs - passed),
        )
        for key, (runs, passed) in passed_by_case.items()
    )
    return submission


def test_the_panel_names_cases_never_passed_and_saturated(client, viewer, planted):
    for _ in range(10):
        finished(planted, {"first": (4, 4), "unknown-tool": (4, 0), "schema-refuses": (4, 3)})
    client.force_login(viewer)
    page = text(health(client, planted))
    first = planted.cases.get(key="first")
    assert "<strong>1 case</strong> no submission has passed" in page
    assert "passed every run of each of the last 10 submissions" in page
    assert f'<a href="/suites/{planted.pk}/cases/{first.pk}/"><code class="case-key">first' in page


def test_saturation_waits_for_ten_submissions(client, viewer, planted):
    finished(planted, {"first": (4, 4)})
    client.force_login(viewer)
    assert "Saturation needs 10 finished submissions; there is 1." in text(health(client, planted))


def audit_in_editor(client, suite, case: dict, case_id=""):
    return client.post(
        f"/suites/{suite.pk}/cases/audit/", editor_data(case) | {"case": str(case_id)}
    )


def test_the_editor_audits_the_case_as_it_is_typed(client, editor, planted):
    client.force_login(editor)
    typed = {"key": "new", "prompt": "p", "expected_calls": [
        {"name": "get_weather", "required_args": {"city": "Oslo"}},
        {"name": "get_weather", "required_args": {"city": "Rome"}}],
        "expectations": [{"type": "tool_call_count", "tool": "get_weather", "max": 1}]}  # fmt: skip
    page = text(audit_in_editor(client, planted, typed))
    assert '<div class="audit-problem contradiction"><code>contradiction</code>' in page
    assert "get_weather was called 2 times; expected at most once" in page


def test_the_edited_case_is_no_duplicate_of_itself_but_of_another(client, editor, planted):
    client.force_login(editor)
    unknown = planted.cases.get(key="unknown-tool")
    document = services.case_document(unknown)
    page = text(audit_in_editor(client, planted, document, unknown.pk))
    assert page.count('class="audit-problem') == 1
    assert '<div class="audit-problem unknown_tool">' in page
    page = text(audit_in_editor(client, planted, document | {"key": "third"}))
    assert "as case `unknown-tool`" in page


def test_the_editor_waits_for_a_case_that_can_be_saved(client, editor, planted):
    client.force_login(editor)
    broken = {"key": "b", "expected_calls": [{"name": "f", "required_args": {"x": {"$nope": 1}}}]}
    assert "fix the fields marked below" in text(audit_in_editor(client, planted, broken))


def test_viewers_cannot_use_the_editors_audit(client, viewer, planted):
    client.force_login(viewer)
    assert audit_in_editor(client, planted, {"key": "x"}).status_code in (403, 404)


# --- the imports' previews ------------------------------------------------------------------


def count_of(page: str, kind: str) -> int:
    found = re.search(rf'<li class="audit-count {kind}[^"]*"[^>]*><strong>(\d+)</strong>', page)
    return int(found.group(1))


def test_the_tau_bench_preview_shows_its_audit(client, editor):
    team = make_team("Airline", editor=editor)
    client.force_login(editor)
    form = {
        "team": team.pk,
        "name": "",
        "results": upload("airline.json", RESULTS_FILE.read_bytes()),
    }
    page = text(client.post(reverse("suite_import_tau_bench"), form))
    assert "Audit of these cases" in page
    assert count_of(page, "passes_idle") == 19
    assert count_of(page, "contradiction") == 0


def test_a_suite_files_preview_shows_its_audit_before_anything_is_made(client, editor):
    team = make_team("Files", editor=editor)
    client.force_login(editor)
    before = Suite.objects.count()
    data = {"team": team.pk, "file": upload("p.json", json.dumps(audit_suites.PLANTED))}
    page = text(client.post("/suites/import/", data))
    assert "Audit of the new suite" in page
    assert count_of(page, "contradiction") == 4
    assert count_of(page, "duplicate") == 1
    assert Suite.objects.count() == before


def test_a_file_imported_into_a_suite_is_previewed_with_the_audit_of_the_result(
    client, editor, planted
):
    client.force_login(editor)
    document = {**audit_suites.PLANTED_IN_BFCL, "cases": audit_suites.CLEAN_CASES[:1]}
    page = text(
        client.post(
            f"/suites/{planted.pk}/import/", {"file": upload("c.json", json.dumps(document))}
        )
    )
    assert "Audit of what the suite would then hold" in page
    assert "No problems in 1 case" in page


def test_a_bfcl_categorys_preview_shows_its_audit(client, editor):
    team = make_team("Bfcl", editor=editor)
    client.force_login(editor)
    files = {
        "questions": upload(
            "multiple.questions.jsonl", (BFCL / "multiple.questions.jsonl").read_bytes()
        ),
        "possible_answers": upload(
            "multiple.answers.jsonl", (BFCL / "multiple.answers.jsonl").read_bytes()
        ),
    }
    response = client.post("/suites/import-bfcl/", {"team": team.pk, "name": "", **files})
    page = text(response)
    assert response.status_code == 200
    assert "Audit of the new suite" in page
    assert not Suite.objects.filter(team=team).exists()


def test_a_tool_catalogs_preview_audits_the_suites_cases_against_it(client, editor, planted):
    client.force_login(editor)
    listing = {"tools": [{"name": "get_weather", "inputSchema": {"type": "object"}}]}
    page = text(client.post(f"/suites/{planted.pk}/tools/", {"text": json.dumps(listing)}))
    assert "Audit of the suite's cases against this catalog" in page
    assert count_of(page, "unknown_tool") >= 3  # delete_file, get_wether, lockDoors, …
    assert planted.versions.count() == 1
