"""A failed upload of τ-bench's results makes its suite's cases and is scored again
(scoring.benchmarks.tau_bench_suites, the submission's τ-bench pages); the suite library's
import of a results file; manage.py import_tau_bench."""

from __future__ import annotations

import re

import pytest
from django.core.management import call_command
from django.urls import reverse

from cases import services
from cases.models import Suite
from scoring.models import Status, Submission
from tests.support.pages import text, upload
from tests.support.tau_bench import READ_ONLY_TOOLS, RESULTS_FILE

RESULTS = RESULTS_FILE.read_bytes()
OFFER = "This file carries its 50 tasks"


@pytest.fixture
def failed(team, admin, run_tasks):
    """τ-bench's results file uploaded as it is to a new, empty suite: it fails."""
    import io

    from scoring.ingest.pipeline import create_submission

    suite = services.new_suite(team, admin, name="airline")
    with run_tasks():
        made = create_submission(suite, admin, io.BytesIO(RESULTS), filename="tau.json")
    made.refresh_from_db()
    assert made.status == Status.FAILED
    return made


def preview_url(submission: Submission) -> str:
    return reverse("submission_tau_bench", args=[submission.pk])


def test_the_failed_upload_offers_its_tasks_and_saving_scores_it_again(
    failed, as_user, editor, run_tasks
):
    client = as_user(editor)
    page = text(client.get(failed.get_absolute_url()))
    assert OFFER in page
    assert preview_url(failed) in page
    preview = text(client.get(preview_url(failed)))
    assert re.findall(r'value="([^"]+)"[^>]*checked', preview) == READ_ONLY_TOOLS
    chosen = {"action": "save", "seen_version": 1, "read_only": READ_ONLY_TOOLS}
    with run_tasks():
        response = client.post(preview_url(failed), chosen)
    assert response.status_code == 302
    failed.refresh_from_db()
    assert (failed.status, failed.version.number) == (Status.DONE, 2)
    # 81 agree with a reward of 1; 46/3 passes where τ-bench stopped it unjudged
    assert (failed.total, failed.passed, failed.failed) == (200, 82, 118)
    assert failed.suite.cases.count() == 50
    assert OFFER not in text(client.get(failed.get_absolute_url()))


def test_a_suite_changed_since_the_preview_is_not_written(failed, as_user, editor):
    services.update_settings(failed.suite, editor, name="airline 2")
    response = as_user(editor).post(
        preview_url(failed), {"action": "save", "seen_version": 1, "read_only": READ_ONLY_TOOLS}
    )
    assert response.status_code == 422
    assert "changed meanwhile (now version 2)" in text(response)
    assert not failed.suite.cases.exists()


def test_the_catalogs_read_only_hint_decides_over_the_name(failed, as_user, editor):
    tools = [{"name": "get_user_details", "annotations": {"readOnlyHint": False}}]
    services.replace_tools(failed.suite, tools, editor, "tools")
    preview = text(as_user(editor).get(preview_url(failed)))
    assert "get_user_details" not in re.findall(r'value="([^"]+)"[^>]*checked', preview)
    assert "the tool catalog&#x27;s readOnlyHint: writes" in preview


def test_viewers_are_offered_nothing_and_may_not_make_the_cases(failed, as_user, viewer):
    client = as_user(viewer)
    assert OFFER not in text(client.get(failed.get_absolute_url()))
    assert client.get(preview_url(failed)).status_code == 403
    assert (
        client.post(preview_url(failed), {"action": "save", "seen_version": 1}).status_code == 403
    )
    assert not failed.suite.cases.exists()


def test_the_import_page_previews_the_tasks_then_makes_the_suite(as_user, editor, team, other_team):
    client = as_user(editor)
    url = reverse("suite_import_tau_bench")
    form = {"team": team.pk, "name": "", "results": upload("airline-runs.json", RESULTS)}
    preview = client.post(url, form)
    assert preview.status_code == 200
    signed = re.search(r'name="tasks" value="([^"]+)"', text(preview)).group(1)
    confirm = {
        "tasks": signed,
        "team": team.pk,
        "name": "airline-runs",
        "read_only": READ_ONLY_TOOLS,
    }
    assert client.post(url, confirm | {"action": "preview"}).status_code == 200
    elsewhere = client.post(url, confirm | {"team": other_team.pk, "action": "save"})
    assert elsewhere.status_code == 422
    assert not Suite.objects.exists()
    response = client.post(url, confirm | {"action": "save"})
    suite = Suite.objects.get()
    assert response.url == suite.get_absolute_url()
    assert (suite.name, suite.cases.count()) == ("airline-runs", 50)
    altered = client.post(url, confirm | {"tasks": signed[:-2] + "xx", "action": "save"})
    assert altered.status_code == 302
    assert Suite.objects.count() == 1


def test_the_command_makes_a_suite_then_a_version_of_it(team, capsys):
    args = [str(RESULTS_FILE), "--team", team.slug, "--suite", "airline"]
    call_command("import_tau_bench", *args)
    suite = Suite.objects.get(name="airline")
    assert suite.cases.count() == 50
    said = capsys.readouterr().out
    assert "version 1, 50 cases from 200 results" in said
    assert "read-only: calculate (guessed from the name)" in said
    assert "audit: 50 cases: 19 problems (19 passes_idle)" in said
    call_command("import_tau_bench", *args, "--read-only", "get_user_details")
    assert suite.versions.count() == 2
    assert "read-only: get_user_details (as given)" in capsys.readouterr().out


def test_the_command_lists_the_problems_and_exits_2(team, tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('[{"task_id": 1, "info": {}}]')
    with pytest.raises(SystemExit) as exited:
        call_command("import_tau_bench", str(bad), "--team", team.slug)
    assert exited.value.code == 2
    assert capsys.readouterr().err == (
        f"{bad}: [0].info.task: required: the task τ-bench ran (instruction, actions, outputs)\n"
    )
    assert not Suite.objects.exists()
