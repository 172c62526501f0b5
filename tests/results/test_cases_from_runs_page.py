"""Cases from these runs (docs/review.md#cases-from-runs): the runs table's filter's passing
runs drafted as a case per case key, reviewed on a page (kept or not, from which trial, into
this suite or a new one), and saved in one version only when the author says so."""

from __future__ import annotations

import re
from collections import Counter
from urllib.parse import urlencode

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from cases import services
from cases.models import Suite, SuiteVersion
from scoring.models import Result
from scoring.results import case_drafts
from tests.support import tau_bench
from tests.support.builders import make_team
from tests.support.pages import HX, demo_document, escaped, text
from tests.support.runs import PARIS, TOKYO, WEATHER_FAIL, WEATHER_PASS

EVIL = "<script>alert(1)</script>"


def drafts_url(submission, **filters) -> str:
    url = reverse("submission_case_drafts", args=[submission.pk])
    return f"{url}?{urlencode(filters)}" if filters else url


def drafted_keys(html: str) -> list[str]:
    return re.findall(r'<li class="rowcard draft" data-draft="([^"]*)">', html)


def chosen_runs(html: str) -> list[int]:
    return [int(n) for n in re.findall(r'<option value="(\d+)" selected>', html)]


def save_form(html: str, **fields) -> dict:
    """The page's form as the browser posts it: every draft ticked, its trial as shown."""
    data = {
        "shown": "1",
        "seen_version": re.search(r'name="seen_version" value="(\d+)"', html)[1],
        "target": re.search(r'name="target" value="(\w+)"[^>]* checked', html)[1],
        "include": drafted_keys(html),
        "run": chosen_runs(html),
        "action": "save",
    }
    return data | fields


@pytest.fixture
def demo(team, admin, submit):
    """The demo suite, with weather runs passing (trials 0 and 2) and failing (trial 1)."""
    suite = services.create_suite(team, demo_document(), admin)
    later_pass = {**WEATHER_PASS, "batches": [[TOKYO], [PARIS]], "trial": 2}
    lines = [WEATHER_PASS, {**WEATHER_FAIL, "trial": 1}, later_pass]
    return submit(suite, lines, label="monday")


def test_the_passing_runs_of_a_filter_are_drafted_as_revisions_and_saved_in_one_version(
    as_user, editor, demo
):
    suite = demo.suite
    client = as_user(editor)
    submission_page = text(client.get(demo.get_absolute_url() + "?tag=weather"))
    url = drafts_url(demo, tag="weather")
    assert escaped(url) in submission_page  # the runs table links to it, keeping its filter
    versions = SuiteVersion.objects.count()
    page = text(client.get(url))
    assert SuiteVersion.objects.count() == versions  # drafting saves nothing
    assert "2 runs of 1 case" in page
    assert drafted_keys(page) == ["weather-two-cities"]
    assert "draft revision of the case" in page
    # the first passing trial, its one batch of two calls: unordered, in words
    assert "get_weather(city=&quot;Paris&quot;)</code>" in page
    first, later = Result.objects.filter(submission=demo, verdict="pass").order_by("run__seq")
    assert chosen_runs(page) == [first.run_id]
    # the author picks the other passing trial: two batches, so ordered and dependent
    preview = text(client.post(url, save_form(page, run=[later.run_id], action="preview")))
    assert chosen_runs(preview) == [later.run_id]
    assert "get_weather(city=&quot;Paris&quot;) [ordered, after result of #0]" in preview
    response = client.post(url, save_form(preview))
    assert response.status_code == 302
    assert response.url == suite.get_absolute_url()
    assert SuiteVersion.objects.count() == versions + 1
    saved = services.case_document(suite.cases.get(key="weather-two-cities"))
    assert [c["required_args"]["city"] for c in saved["expected_calls"]] == ["Tokyo", "Paris"]
    assert saved["prompt"] == "What's the weather in Paris and Tokyo?"  # kept
    assert saved["tags"] == ["weather", "parallel"]
    assert suite.latest_version.message == f"1 case from passing runs of submission #{demo.pk}"
    notice = text(client.get(response.url))
    assert "Saved 1 case from passing runs of submission" in notice
    assert "1 revised, 0 added" in notice


def test_unticked_drafts_are_not_saved_and_none_ticked_saves_nothing(as_user, editor, demo):
    client = as_user(editor)
    url = drafts_url(demo)
    page = text(client.get(url))
    versions = SuiteVersion.objects.count()
    response = client.post(url, save_form(page, include=[]))
    assert response.status_code == 422
    assert "Tick at least one draft to save." in text(response)
    assert 'type="checkbox" name="include" value="weather-two-cities">' in text(response)
    assert SuiteVersion.objects.count() == versions


def test_drafts_saved_as_a_new_suite_in_a_team_where_the_author_edits(as_user, editor, team, demo):
    services.replace_tools(demo.suite, [{"name": "get_weather"}], demo.uploader, "tools")
    client = as_user(editor)
    url = drafts_url(demo)
    shown = text(client.get(url))
    page = text(client.post(url, save_form(shown, target="new", action="preview"), headers=HX))
    assert "new case" in page
    assert "draft revision of the case" not in page
    assert 'name="name" value="assistant-basics: monday"' in page  # a name to start from
    assert "Name the new suite." not in page  # a preview is checked only when saving
    missing = client.post(url, save_form(page, target="new", name=" ", team=""))
    assert missing.status_code == 422
    assert "Name the new suite." in text(missing)
    assert "Choose the new suite&#x27;s team." in text(missing)
    response = client.post(url, save_form(page, target="new", name="Regressions", team=team.pk))
    made = Suite.objects.get(name="Regressions")
    assert response.url == made.get_absolute_url()
    assert made.versions.count() == 1
    assert made.latest_version.message == f"Made from passing runs of submission #{demo.pk}"
    assert [c.key for c in made.cases.all()] == ["weather-two-cities"]
    assert services.suite_tools(made) == [{"name": "get_weather"}]
    document = services.case_document(made.cases.get())
    assert document["title"] == "From trial 0 of weather-two-cities"
    assert "prompt" not in document  # canonical runs without a transcript: no prompt


def test_a_suite_changed_since_the_review_is_not_overwritten(as_user, editor, admin, demo):
    client = as_user(editor)
    url = drafts_url(demo)
    page = text(client.get(url))
    case = demo.suite.cases.get(key="weather-two-cities")
    document = services.case_document(case) | {"title": "changed meanwhile"}
    services.save_case(demo.suite, document, admin, case=case)
    versions = SuiteVersion.objects.count()
    response = client.post(url, save_form(page))
    assert response.status_code == 422
    assert "Someone changed the suite meanwhile (now version 2)" in text(response)
    assert SuiteVersion.objects.count() == versions
    again = client.post(url, save_form(text(response)))  # reviewed again: now it saves
    assert again.status_code == 302
    assert demo.suite.cases.get(key="weather-two-cities").title == "changed meanwhile"


def test_no_passing_run_says_there_is_nothing_to_draft(as_user, editor, demo):
    page = text(as_user(editor).get(drafts_url(demo, case="delete-if-exists")))
    assert "No passing run matches these filters" in page
    assert '<form id="drafts"' not in page


def test_who_may_draft_and_save(as_user, viewer, outsider, other_team, demo, make_user):
    url = drafts_url(demo)
    assert as_user(outsider).get(url).status_code == 404  # cannot see the suite
    assert as_user(viewer).get(url).status_code == 403  # an editor nowhere
    runs_page = text(as_user(viewer).get(demo.get_absolute_url()))
    assert "data-cases-from-runs" not in runs_page
    # a viewer here who edits another team may make a new suite there, and only that
    elsewhere = make_team("Theirs", admin=viewer)
    page = text(as_user(viewer).get(url))
    assert 'value="suite"' not in page
    assert "new case" in page
    refused = as_user(viewer).post(url, save_form(page, target="suite"))
    assert refused.status_code == 422
    assert demo.suite.versions.count() == 1
    made = as_user(viewer).post(url, save_form(page, target="new", name="Mine", team=elsewhere.pk))
    assert made.status_code == 302
    assert Suite.objects.get(name="Mine").team == elsewhere
    assert other_team.suites.count() == 0


def test_case_keys_and_prompts_are_escaped(as_user, editor, team, admin, submit):
    document = demo_document()
    document["cases"][1]["key"] = f"weather{EVIL}"
    suite = services.create_suite(team, document, admin)
    run = {**WEATHER_PASS, "case": f"weather{EVIL}", "transcript": [{"role": "user", "text": EVIL}]}
    submission = submit(suite, [run])
    page = text(as_user(editor).get(drafts_url(submission)))
    assert EVIL not in page
    assert escaped(f"weather{EVIL}") in page


def test_the_api_gives_the_same_drafts_and_saves_nothing(editor, viewer, demo):
    api = APIClient()
    api.force_login(editor)
    url = f"/api/submissions/{demo.pk}/case-drafts/"
    first, later = Result.objects.filter(submission=demo, verdict="pass").order_by("run__seq")
    versions = SuiteVersion.objects.count()
    answer = api.get(url, {"tag": "weather"})
    assert answer.status_code == 200
    data = answer.json()
    assert (data["runs"], data["keys"], data["left_out"]) == (2, 1, 0)
    (drafted,) = data["drafts"]
    assert drafted["key"] == "weather-two-cities"
    assert drafted["revises"] is True
    assert (drafted["run"], drafted["trials"]) == (first.run_id, [first.run_id, later.run_id])
    assert drafted["labels"][0] == 'get_weather(city="Paris")'
    picked = api.get(url, {"tag": "weather", "run": later.run_id, "into": "new"}).json()
    (other,) = picked["drafts"]
    assert other["revises"] is False
    assert [c["required_args"] for c in other["case"]["expected_calls"]] == [
        {"city": "Tokyo"},
        {"city": "Paris"},
    ]
    assert SuiteVersion.objects.count() == versions
    # the author saves what they keep through the cases endpoint
    saved = api.put(
        f"/api/suites/{demo.suite_id}/cases/weather-two-cities/", drafted["case"], format="json"
    )
    assert saved.status_code == 200
    assert (
        services.case_document(demo.suite.cases.get(key="weather-two-cities")) == (drafted["case"])
    )
    api.force_login(viewer)
    assert api.get(url).status_code == 403


# --- τ-bench --------------------------------------------------------------------------------


@pytest.fixture
def tau(team, admin, submit):
    suite = services.create_suite(team, tau_bench.suite_document(), admin)
    lines = [tau_bench.run_line(record) for record in tau_bench.RECORDS]
    return submit(suite, lines, label="gpt-4o")


def test_a_new_suite_from_the_tau_bench_passes_passes_them_and_judges_the_other_trials(
    as_user, editor, team, tau, submit
):
    """The point of it, through the page: the passing runs' calls, as a new suite, pass the
    runs they were made from; another trial of the task that lacks one of those calls fails
    it; some tasks' trials are told apart."""
    client = as_user(editor)
    page = text(client.get(drafts_url(tau)))
    assert f"{tau_bench.PASSED} runs of" in page
    keys = drafted_keys(page)
    assert keys
    assert len(keys) == len(set(keys))
    sources = set(chosen_runs(page))
    response = client.post(
        drafts_url(tau), save_form(page, target="new", name="τ-bench regressions", team=team.pk)
    )
    assert response.status_code == 302
    made = Suite.objects.get(name="τ-bench regressions")
    assert sorted(c.key for c in made.cases.all()) == sorted(keys)
    lines = [tau_bench.run_line(record) for record in tau_bench.RECORDS]
    again = submit(made, lines, label="again")
    by_line = {r.run.line: r for r in Result.objects.filter(submission=again).select_related("run")}
    source_lines = set(tau.runs.filter(pk__in=sources).values_list("line", flat=True))
    assert {by_line[line].verdict for line in source_lines} == {"pass"}

    def calls(run):
        return Counter(call["name"] for batch in run.document["batches"] for call in batch)

    mixed = 0
    for key in keys:
        trials = [r for r in by_line.values() if r.run.case_key == key]
        source = next(r for r in trials if r.run.line in source_lines)
        for result in trials:
            if calls(source.run) - calls(result.run):
                assert result.verdict != "pass"
        mixed += len({r.verdict for r in trials}) > 1
    assert mixed > 0


def test_the_tau_bench_drafts_are_capped_with_a_message(as_user, editor, monkeypatch, tau):
    monkeypatch.setattr(case_drafts, "DRAFTS_PER_REQUEST", 5)
    page = text(as_user(editor).get(drafts_url(tau)))
    keys = Result.objects.filter(submission=tau, verdict="pass").values("run__case_key")
    total = keys.distinct().count()
    assert len(drafted_keys(page)) == 5
    assert f"the first 5 by key are below, {total - 5} more are left out" in page
