"""The submission pages: upload, progress while scoring, results with pass@k and pass^k, the
runs table and its filters, re-score, retry and delete, the run page; the library's and the
suite page's view of the results; every untrusted text escaped; and the number of queries not
growing with the runs."""

from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest
from django.utils import timezone

from cases import services
from scoring.models import InvalidLine, Result, Run, Status, Submission
from scoring.views import submission as submission_views
from tests.support.pages import HX, escaped, jsonl, text, upload
from tests.support.runs import (
    FULL_RUN,
    GREETING_FAIL,
    GREETING_PASS,
    TRIALS,
    WEATHER_FAIL,
    WEATHER_PASS,
    cells,
    many_runs,
    reads_documents,
    run_keys,
    url,
)


@pytest.fixture
def scored(suite, submit):
    """The eight TRIALS runs, scored against version 1 of the demo suite."""
    return submit(suite, TRIALS, label="model-a")


def unfinish(submission: Submission, **fields) -> Submission:
    """Put the submission back in the middle of scoring, as a worker would leave it."""
    values = {
        "status": Status.SCORING,
        "scored": 3,
        "passed": 1,
        "failed": 2,
        "errored": 0,
        "scoring_finished": None,
        "heartbeat": timezone.now(),
    } | fields
    Submission.objects.filter(pk=submission.pk).update(**values)
    submission.refresh_from_db()
    return submission


def section(html: str, heading: str) -> str:
    """The HTML of the card whose heading starts with ``heading``."""
    start = html.index(f"<h2>{heading}")
    return html[start : html.index("</section>", start)]


# --- upload -----------------------------------------------------------------------------------


def test_upload_page_says_which_version_the_runs_are_scored_against(as_user, editor, suite):
    services.save_case(suite, {"key": "extra", "expected_calls": [{"name": "f"}]}, editor)
    html = text(as_user(editor).get(f"/suites/{suite.pk}/upload/"))
    assert "to be scored against" in html
    assert f'href="/suites/{suite.pk}/versions/2/">version 2</a>' in html
    assert '<label for="id_file">' in html
    assert 'aria-describedby="id_file_helptext"' in html
    assert 'id="id_file_helptext"' in html
    # and each field of the shared template: the help text has the id its field names
    assert 'aria-describedby="id_label_helptext"' in html
    assert '<div class="help" id="id_label_helptext">' in html
    assert 'hx-disabled-elt="find button[type=submit]"' in html


def test_plain_upload_redirects_to_the_submission_page_with_its_results(
    as_user, editor, suite, run_tasks
):
    client = as_user(editor)
    with run_tasks():
        response = client.post(
            f"/suites/{suite.pk}/upload/",
            {"file": upload("trials.jsonl", jsonl(TRIALS)), "label": "model-b"},
        )
    submission = Submission.objects.get()
    assert response.status_code == 302
    assert response["Location"] == url(submission)
    assert (submission.label, submission.filename, submission.uploader) == (
        "model-b",
        "trials.jsonl",
        editor,
    )
    assert (submission.status, submission.total, submission.passed) == (Status.DONE, 8, 3)
    assert submission.version == suite.latest_version


def test_htmx_upload_answers_with_hx_redirect(as_user, editor, suite, run_tasks):
    with run_tasks():
        response = as_user(editor).post(
            f"/suites/{suite.pk}/upload/",
            {"file": upload("t.jsonl", jsonl(TRIALS)), "format": "canonical"},
            headers=HX,
        )
    submission = Submission.objects.get()
    assert response.status_code == 200
    assert response["HX-Redirect"] == url(submission)
    assert submission.format == "canonical"
    assert submission.formats_seen == ["canonical"]


@pytest.mark.parametrize(
    ("data", "error"),
    [
        ({}, "This field is required."),
        ({"label": "no file"}, "This field is required."),
        ({"file": upload("empty.jsonl", b"")}, "The submitted file is empty."),
        ({"file": upload("x.jsonl", b"{}"), "format": "nope"}, "Select a valid choice."),
    ],
    ids=["nothing", "no-file", "empty-file", "unknown-format"],
)
@pytest.mark.parametrize("headers", [{}, HX], ids=["plain", "htmx"])
def test_a_bad_upload_comes_back_with_its_error_and_422(
    as_user, editor, suite, data, error, headers
):
    response = as_user(editor).post(f"/suites/{suite.pk}/upload/", data, headers=headers)
    assert response.status_code == 422
    html = text(response)
    assert error in html
    assert 'class="card stacked narrowish upload-form"' in html  # what hx-select swaps in
    assert not Submission.objects.exists()


def test_an_upload_over_the_limit_is_refused_with_the_limit_and_nothing_kept(
    as_user, editor, suite, settings
):
    settings.CASEBOOK_MAX_UPLOAD_BYTES = 3 << 20
    big = upload("big.jsonl", b"x" * ((3 << 20) + 1))
    response = as_user(editor).post(f"/suites/{suite.pk}/upload/", {"file": big})
    assert response.status_code == 422
    assert "The file is over the 3 MB upload limit." in text(response)
    assert not Submission.objects.exists()


def test_a_viewer_may_not_upload(as_user, viewer, suite):
    response = as_user(viewer).post(
        f"/suites/{suite.pk}/upload/", {"file": upload("t.jsonl", jsonl(TRIALS))}
    )
    assert response.status_code == 403
    assert not Submission.objects.exists()


# --- the submission page ------------------------------------------------------------------


def test_submission_page_shows_the_counts_and_pass_rate(as_user, viewer, scored):
    html = text(as_user(viewer).get(url(scored)))
    progress = html[
        html.index('id="progress"') : html.index("</section>", html.index('id="progress"'))
    ]
    counts = dict(re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", progress))
    assert counts == {
        "Runs": "8",
        "Scored": "8",
        "Passed": "3",
        "Failed": "5",
        "Errors": "0",
        "Pass rate": "37.5%",
        "Invalid lines": "0",
    }
    assert "8 runs scored" in progress
    assert "hx-trigger" not in progress  # finished: nothing to poll
    assert "scored against" in html
    assert "version 1</a>" in html
    assert "model-a" in html
    assert "runs.jsonl" in html


def test_pass_at_k_and_pass_hat_k_match_the_hand_computed_values(as_user, viewer, scored):
    html = section(text(as_user(viewer).get(url(scored))), "Trials")
    overall, per_case = html.split("<details>")
    # n, c per case: greeting 3, 2; weather 3, 1; delete 2, 0.
    # k=1: means of c/n = (2/3 + 1/3 + 0) / 3.
    # k=2: pass@2 = (1 + 2/3 + 0) / 3 = 5/9; pass^2 = (1/3 + 0 + 0) / 3 = 1/9.
    # k=3 (greeting and weather only): pass@3 = (1 + 1) / 2; pass^3 = (0 + 0) / 2.
    assert cells(overall) == [
        ["1", "0.333", "0.333", "3"],
        ["2", "0.556", "0.111", "3"],
        ["3", "1.000", "0.000", "2"],
    ]
    assert "pass@3" in per_case
    assert "pass^3" in per_case
    assert cells(per_case) == [
        ["delete-if-exists", "2", "0", "—", "—"],
        ["greeting", "3", "2", "1.00", "0.00"],
        ["weather-two-cities", "3", "1", "1.00", "0.00"],
    ]
    assert 'href="?case=greeting#runs-section"' in per_case


def test_pass_at_k_rows_are_thinned_when_cases_have_dozens_of_trials(
    as_user, viewer, suite, submit
):
    submission = submit(suite, [GREETING_PASS] * 20 + [GREETING_FAIL] * 20)
    html = section(text(as_user(viewer).get(url(submission))), "Trials").split("<details>")[0]
    assert [row[0] for row in cells(html)] == ["1", "2", "3", "4", "5", "8", "16", "32", "40"]
    # One case, n=40, c=20: pass@2 = 1 - C(20,2)/C(40,2) = 1 - 190/780; pass^2 = 190/780.
    assert cells(html)[1] == ["2", "0.756", "0.244", "1"]


def test_no_pass_at_k_table_when_every_case_has_one_trial(as_user, viewer, suite, submit):
    submission = submit(suite, [GREETING_PASS, WEATHER_FAIL])
    html = text(as_user(viewer).get(url(submission)))
    assert "pass@k" not in html
    assert "50%" in html


def test_most_common_failures_link_to_the_runs_that_fail_them(as_user, viewer, scored):
    html = section(text(as_user(viewer).get(url(scored))), "Most common failures")
    rows = cells(html)
    # delete-if-exists fails four predicates twice each; greeting's regex fails once, ...
    # each named first by what happened, then by the predicate that failed
    assert [
        "file_exists: never called",
        "file_exists(path=&quot;notes.txt&quot;) [ordered]",
        "2",
    ] in rows
    assert ["final text", "final text matches /(?i)\\b(hello|hi)\\b/", "1"] in rows
    assert rows == sorted(rows, key=lambda row: -int(row[2]))
    assert 'href="?predicate=get_weather%28city%3D%22Tokyo%22%29#runs-section"' in html


def test_a_forbidden_call_is_named_by_what_the_agent_did_not_by_the_predicate(
    as_user, viewer, team, admin, submit
):
    """``did not call cancel_reservation`` is what was expected; the agent called it."""
    document = {
        "schema": "casebook.suite/1",
        "name": "forbidden",
        "cases": [
            {"key": "keep", "expectations": [{"type": "did_not_call_tool", "tool": "cancel"}]}
        ],
    }
    suite = services.create_suite(team, document, admin)
    cancelled = {"case": "keep", "batches": [[{"name": "cancel", "arguments": {}}]]}
    submission = submit(suite, [cancelled, cancelled])
    rows = cells(section(text(as_user(viewer).get(url(submission))), "Most common failures"))
    assert rows == [["cancel: called though forbidden", "did not call cancel", "2"]]


JSON_VALUES = "an object, array, string, number, true, false or null"


def test_invalid_lines_are_listed_with_their_numbers_and_reasons(as_user, viewer, suite, submit):
    submission = submit(
        suite,
        [GREETING_PASS, "not json", {"case": "greeting"}, "[1, 2]", GREETING_FAIL],
    )
    html = text(as_user(viewer).get(url(submission)))
    invalid = section(html, "Invalid lines")
    assert cells(invalid) == [
        [
            "2",
            f"not JSON: `not` at column 1 is not a JSON value ({JSON_VALUES})",
        ],
        ["3", cells(invalid)[1][1]],
        ["4", "a run line must be a JSON object, not array"],
    ]
    assert "unrecognised run format" in cells(invalid)[1][1]
    assert (submission.total, submission.invalid) == (2, 3)


def test_only_the_first_invalid_lines_are_listed(as_user, viewer, suite, submit, monkeypatch):
    monkeypatch.setattr(submission_views, "INVALID_LINES_SHOWN", 2)
    submission = submit(suite, ["bad"] * 3 + [GREETING_PASS])
    html = section(text(as_user(viewer).get(url(submission))), "Invalid lines")
    assert [row[0] for row in cells(html)] == ["1", "2"]
    assert "The first 2 are shown; 1 more was found." in html


def test_invalid_lines_past_the_stored_limit_are_counted_on_the_page(
    as_user, viewer, suite, submit, settings
):
    settings.CASEBOOK_MAX_STORED_INVALID_LINES = 2
    submission = submit(suite, ["bad"] * 5 + [GREETING_PASS])
    html = section(text(as_user(viewer).get(url(submission))), "Invalid lines")
    assert [row[0] for row in cells(html)] == ["1", "2"]
    assert "The first 2 are shown; 3 more were found." in html
    assert submission.invalid == 5


def test_runs_of_unknown_cases_are_listed_with_their_lines(as_user, viewer, suite, submit):
    lines = (
        [GREETING_PASS]
        + [{"case": "no-such-case", "batches": []}] * 7
        + [
            {"case": "items", "batches": []}  # a key a template would read as dict.items
        ]
    )
    submission = submit(suite, lines)
    html = text(as_user(viewer).get(url(submission)))
    unknown = section(html, "Runs of unknown cases")
    # the heading counts both, where the summary above counts the runs
    assert unknown.startswith('<h2>Runs of unknown cases <span class="muted">8 runs of 2 cases')
    assert "version 1 does not have" in unknown
    assert (
        '<code class="case-key">items</code> <span class="muted small">1 run, line 9</span>'
        in unknown
    )
    assert (
        '<code class="case-key">no-such-case</code> '
        '<span class="muted small">7 runs, lines 2, 3, 4, 5, 6, …</span>'
    ) in unknown
    assert "<dt>Runs of unknown cases</dt><dd>8</dd>" in html
    assert "<dt>Runs</dt><dd>1</dd>" in html


# --- the runs table -----------------------------------------------------------------------


def test_runs_table_lists_every_scored_run_with_its_failing_predicates(as_user, viewer, scored):
    html = text(as_user(viewer).get(url(scored)))
    table = html[html.index('<div id="runs">') :]
    assert run_keys(table) == [
        ("greeting", "pass"),
        ("greeting", "pass"),
        ("greeting", "fail"),
        ("weather-two-cities", "pass"),
        ("weather-two-cities", "fail"),
        ("weather-two-cities", "fail"),
        ("delete-if-exists", "fail"),
        ("delete-if-exists", "fail"),
    ]
    assert "8 runs" in table
    assert '<code class="call">get_weather(city=&quot;Tokyo&quot;)</code>' in table


def test_filtering_by_verdict_through_htmx_answers_only_the_runs_partial(as_user, viewer, scored):
    response = as_user(viewer).get(
        url(scored), {"verdict": "pass"}, headers=HX | {"HX-Target": "runs"}
    )
    html = text(response)
    assert "<html" not in html
    assert 'id="progress"' not in html
    assert "<form" not in html
    assert run_keys(html) == [
        ("greeting", "pass"),
        ("greeting", "pass"),
        ("weather-two-cities", "pass"),
    ]
    assert "3 runs match" in html
    assert "HX-Request" in response["Vary"]
    assert "HX-Target" in response["Vary"]


def test_filtering_by_case_and_verdict(as_user, viewer, scored):
    client = as_user(viewer)
    both = text(
        client.get(
            url(scored),
            {"verdict": "fail", "case": "weather-two-cities"},
            headers=HX | {"HX-Target": "runs"},
        )
    )
    assert run_keys(both) == [("weather-two-cities", "fail")] * 2
    none = text(client.get(url(scored), {"case": "weather"}, headers=HX | {"HX-Target": "runs"}))
    assert "No runs match." in none


def test_filtering_by_a_failing_predicate(as_user, viewer, scored):
    label = 'get_weather(city="Tokyo")'
    html = text(as_user(viewer).get(url(scored), {"predicate": label}))
    table = html[html.index('<div id="runs">') :]
    assert run_keys(table) == [("weather-two-cities", "fail")] * 2
    assert (
        '<input type="hidden" name="predicate" value="get_weather(city=&quot;Tokyo&quot;)">' in html
    )
    assert 'aria-label="Stop filtering by this predicate"' in html


def test_a_full_page_with_filters_keeps_them_in_the_form(as_user, viewer, scored):
    html = text(as_user(viewer).get(url(scored), {"verdict": "fail", "case": "greeting"}))
    assert '<option value="fail" selected>' in html
    assert 'name="case" value="greeting"' in html
    assert run_keys(html[html.index('<div id="runs">') :]) == [("greeting", "fail")]


def test_runs_table_paginates_and_keeps_the_filter(as_user, viewer, scored, monkeypatch):
    monkeypatch.setattr(submission_views, "RUNS_PER_PAGE", 2)
    client = as_user(viewer)
    first = text(client.get(url(scored), {"verdict": "fail"}, headers=HX | {"HX-Target": "runs"}))
    assert run_keys(first) == [("greeting", "fail"), ("weather-two-cities", "fail")]
    assert "Page 1 of 3" in first
    assert 'hx-get="?verdict=fail&amp;page=2" hx-target="#runs"' in first
    last = text(
        client.get(url(scored), {"verdict": "fail", "page": 3}, headers=HX | {"HX-Target": "runs"})
    )
    assert run_keys(last) == [("delete-if-exists", "fail")]
    assert "Page 3 of 3" in last


def test_a_page_number_past_the_end_shows_the_last_page(as_user, viewer, scored, monkeypatch):
    monkeypatch.setattr(submission_views, "RUNS_PER_PAGE", 5)
    html = text(as_user(viewer).get(url(scored), {"page": 99}, headers=HX | {"HX-Target": "runs"}))
    assert "Page 2 of 2" in html


# --- progress -------------------------------------------------------------------------------


def test_an_unfinished_submission_polls_its_progress(as_user, viewer, scored):
    unfinish(scored)
    client = as_user(viewer)
    page = text(client.get(url(scored)))
    assert f'hx-get="/submissions/{scored.pk}/progress/" hx-trigger="every 1s"' in page
    assert "3 of 8 runs scored." in page
    assert "Runs appear here as they are scored." not in page  # its results are there
    assert "pass@k" not in page  # not until it is finished
    partial = client.get(url(scored, "progress/"), headers=HX)
    html = text(partial)
    assert partial.status_code == 200
    assert html.lstrip().startswith('<section class="card summary" id="progress"')
    assert 'hx-trigger="every 1s"' in html
    assert '<progress max="1" value="0.3750"' in html
    assert "<dt>Passed</dt><dd>1</dd>" in html


def test_the_counts_grow_as_scoring_goes_on(as_user, viewer, scored):
    client = as_user(viewer)
    unfinish(scored, scored=2, passed=1, failed=1)
    assert "2 of 8 runs scored." in text(client.get(url(scored, "progress/"), headers=HX))
    unfinish(scored, scored=6, passed=2, failed=4)
    html = text(client.get(url(scored, "progress/"), headers=HX))
    assert "6 of 8 runs scored." in html
    assert "<dt>Failed</dt><dd>4</dd>" in html


def test_the_poll_refreshes_the_whole_page_once_finished(as_user, viewer, scored):
    client = as_user(viewer)
    response = client.get(url(scored, "progress/"), headers=HX)
    assert response.status_code == 200
    assert response["HX-Refresh"] == "true"
    # the page it reloads says so, once: its messages are announced (casebook.js)
    assert '<li class="message success">Scoring done: 8 runs.</li>' in text(client.get(url(scored)))
    assert "Scoring done" not in text(client.get(url(scored)))


def test_waiting_for_a_worker_is_said_while_nobody_reads_the_file(as_user, viewer, scored):
    unfinish(scored, status=Status.INGESTING, ingest_started=None, total=0, scored=0)
    html = text(as_user(viewer).get(url(scored, "progress/"), headers=HX))
    assert "Queued: waiting for a worker to start reading the file." in html
    assert '<progress aria-label="Scoring progress">' in html  # indeterminate
    unfinish(scored, status=Status.INGESTING, ingest_started=timezone.now(), scored=2)
    html = text(as_user(viewer).get(url(scored, "progress/"), headers=HX))
    assert "Reading the file: 8 runs so far, 2 scored." in html


def test_a_stalled_submission_says_it_will_be_resumed(as_user, viewer, scored, settings):
    unfinish(
        scored, heartbeat=timezone.now() - timedelta(seconds=settings.CASEBOOK_STALL_SECONDS + 60)
    )
    html = text(as_user(viewer).get(url(scored, "progress/"), headers=HX))
    assert "No worker has touched it for 3" in html  # 3 minutes (the default stall is 2)
    assert "resumed automatically" in html


# --- re-score, retry, delete --------------------------------------------------------------


@pytest.fixture
def second_version(suite, admin):
    """Version 2: greeting also accepts "bye"."""
    case = suite.cases.get(key="greeting")
    document = services.case_document(case)
    document["expectations"][1]["regex"] = "(?i)\\b(hello|hi|bye)\\b"
    return services.save_case(suite, document, admin, case=case).version


def test_the_rescore_form_offers_every_version_with_the_current_one_chosen(
    as_user, editor, scored, second_version
):
    html = text(as_user(editor).get(url(scored)))
    form = html[html.index('action="/submissions/') : html.index("Re-score</button>")]
    assert '<option value="2">v2 — Changed case greeting (latest)</option>' in form
    assert '<option value="1" selected>v1 — Imported</option>' in form


def test_rescore_against_another_version_scores_a_new_generation(
    as_user, editor, scored, second_version, run_tasks
):
    generation = scored.generation
    client = as_user(editor)
    with run_tasks():
        response = client.post(url(scored, "rescore/"), {"version": 2})
    assert response["Location"] == url(scored)
    scored.refresh_from_db()
    assert (scored.version, scored.generation) == (second_version, generation + 1)
    assert (scored.status, scored.scored, scored.passed, scored.failed) == (Status.DONE, 8, 4, 4)
    greeting = Result.objects.filter(submission=scored, run__case_key="greeting")
    assert sorted(greeting.values_list("verdict", flat=True)) == ["pass"] * 3
    html = text(client.get(url(scored)))
    assert "Re-scoring against version 2." in html
    assert "version 2</a>" in html
    assert "<dt>Passed</dt><dd>4</dd>" in html


def test_a_rescore_is_timed_from_the_rescore_not_from_the_upload(
    as_user, editor, scored, second_version, run_tasks
):
    # Uploaded a day ago: the re-score takes seconds, and the page says so.
    Submission.objects.filter(pk=scored.pk).update(created=timezone.now() - timedelta(days=1))
    client = as_user(editor)
    with run_tasks():
        client.post(url(scored, "rescore/"), {"version": 2})
    html = text(client.get(url(scored)))
    assert re.search(r"8 runs scored, now; all done in \d+\.\d s from the re-score \(now\)\.", html)
    assert "from the upload" not in html
    assert "the file was read in" not in html  # the re-score read no file


def test_rescore_against_a_version_that_lacks_a_case_lists_its_runs_as_unknown(
    as_user, editor, suite, scored, run_tasks, admin
):
    document = services.suite_document(suite)
    document["cases"] = [c for c in document["cases"] if c["key"] != "delete-if-exists"]
    services.replace_contents(suite, document, admin, "without delete")
    client = as_user(editor)
    with run_tasks():
        client.post(url(scored, "rescore/"), {"version": 2})
    html = text(client.get(url(scored)))
    scored.refresh_from_db()
    assert (scored.total, scored.scored, scored.passed) == (6, 6, 3)
    assert "delete-if-exists" in section(html, "Runs of unknown cases")
    delete_run = scored.runs.filter(case_key="delete-if-exists").first()
    run_page = text(client.get(url(scored, f"runs/{delete_run.pk}/")))
    assert "Not scored: version 2 has no case" in run_page


def test_rescore_against_no_such_version_says_so(as_user, editor, scored):
    html = text(as_user(editor).post(url(scored, "rescore/"), {"version": 7}, follow=True))
    assert "Choose one of the suite&#x27;s versions." in html
    scored.refresh_from_db()
    assert scored.version.number == 1


def test_rescore_while_reading_the_file_is_refused(as_user, editor, scored, second_version):
    unfinish(scored, status=Status.INGESTING)
    html = text(as_user(editor).post(url(scored, "rescore/"), {"version": 2}, follow=True))
    assert "Cannot re-score yet: the submission is still reading its file." in html


def test_viewers_see_no_rescore_retry_or_delete(as_user, viewer, scored):
    html = text(as_user(viewer).get(url(scored)))
    assert "rescore/" not in html
    assert "delete/" not in html
    assert "retry/" not in html


def test_a_failed_submission_shows_its_error_and_retry_scores_it_again(
    as_user, editor, scored, run_tasks
):
    unfinish(scored, status=Status.FAILED, error="OperationalError: the database went away")
    client = as_user(editor)
    html = text(client.get(url(scored)))
    assert "OperationalError: the database went away" in html
    assert f'action="/submissions/{scored.pk}/retry/"' in html
    with run_tasks():
        client.post(url(scored, "retry/"))
    html = text(client.get(url(scored)))
    scored.refresh_from_db()
    assert (scored.status, scored.error, scored.scored, scored.passed) == (Status.DONE, "", 8, 3)
    assert "retry/" not in html


def test_retry_of_a_submission_that_failed_while_reading_reads_the_file_again(
    as_user, editor, scored, run_tasks
):
    unfinish(scored, status=Status.FAILED, error="boom", ingest_finished=None)
    with run_tasks():
        as_user(editor).post(url(scored, "retry/"))
    scored.refresh_from_db()
    assert (scored.status, scored.stored_runs, scored.scored) == (Status.DONE, 8, 8)
    assert scored.runs.count() == 8


def test_a_retry_that_read_the_file_again_is_timed_from_the_retry(
    as_user, editor, scored, run_tasks
):
    unfinish(scored, status=Status.FAILED, error="boom", ingest_finished=None)
    Submission.objects.filter(pk=scored.pk).update(created=timezone.now() - timedelta(days=1))
    client = as_user(editor)
    with run_tasks():
        client.post(url(scored, "retry/"))
    html = text(client.get(url(scored)))
    assert re.search(
        r"the file was read in \d+\.\d s, and all done in \d+\.\d s from the retry \(now\)\.", html
    )


def test_a_live_submission_names_its_traces_not_a_file(as_user, viewer, scored):
    """A day of traces is no uploaded file of 0 bytes, and how long it took from its first
    trace to its last means nothing."""
    since = timezone.now() - timedelta(hours=3)
    Submission.objects.filter(pk=scored.pk).update(
        live_day=since.date(), filename="", size=0, invalid=1, created=since
    )
    html = text(as_user(viewer).get(url(scored)))
    assert f"live traces · 9 traces · since {since:%Y-%m-%d %H:%M} UTC" in html
    assert "uploaded file" not in html
    assert "0 bytes" not in html
    # A second or so passes on a loaded machine between scoring and the page.
    assert re.search(r"8 runs scored, the last (now|a second ago|\d+ seconds ago)\.", html)
    assert "all done in" not in html


def test_retry_of_a_submission_that_did_not_fail_says_so(as_user, editor, scored):
    html = text(as_user(editor).post(url(scored, "retry/"), follow=True))
    assert "Only a failed submission can be retried." in html


def test_delete_removes_the_submission_its_runs_and_results(as_user, editor, suite, scored):
    response = as_user(editor).post(url(scored, "delete/"), follow=True)
    assert response.redirect_chain[-1][0] == f"/suites/{suite.pk}/"
    assert f"Deleted submission #{scored.pk} and its runs." in text(response)
    assert not Submission.objects.exists()
    assert not Run.objects.exists()
    assert not Result.objects.exists()
    assert not InvalidLine.objects.exists()


def test_delete_asks_first(as_user, editor, scored):
    html = text(as_user(editor).get(url(scored)))
    assert 'data-confirm="Delete this submission with all its runs and results?"' in html


# --- the run page ---------------------------------------------------------------------------


@pytest.fixture
def full(suite, submit):
    """A submission whose third run is FULL_RUN, beside two other weather trials."""
    return submit(suite, [WEATHER_PASS, WEATHER_FAIL, FULL_RUN, GREETING_PASS])


def run_page(client, submission, **where):
    run = submission.runs.get(**where)
    return run, text(client.get(url(submission, f"runs/{run.pk}/")))


def test_run_page_shows_the_verdict_and_every_predicate(as_user, viewer, full):
    run, html = run_page(as_user(viewer), full, line=3)
    verdict = html[html.index("<h2>Verdict</h2>") : html.index('id="review"')]
    assert '<span class="verdict fail">fail</span>' in verdict
    assert re.findall(r'<li class="predicate (\w+)">', verdict) == [
        "fail",  # run completed without error
        "pass",  # Paris
        "pass",  # Tokyo
        "fail",  # at most 2 calls
        "pass",  # final text contains Tokyo
    ]
    assert "the run ended with an error: max turns reached" in verdict
    assert "get_weather was called 3 times; expected at most 2 times" in verdict
    # The calls a predicate matched link to their cards in the timeline.
    assert f'<a class="muted small" href="#run-{run.pk}-call-1-0">batch 1, call 0</a>' in verdict
    assert "The run: 0 calls" not in html  # the mini timeline belongs to the try-run box


def test_run_page_shows_the_calls_by_batch_with_arguments_and_results(as_user, viewer, full):
    run, html = run_page(as_user(viewer), full, line=3)
    calls = html[html.index("<h2>Timeline</h2>") :]
    batches = calls.split('<section class="tl-batch"')[1:]
    assert len(batches) == 2
    assert "batch 0 · 2 calls in one reply" in batches[0]
    assert "batch 1</h3>" in batches[1]
    first, second = batches[0].split('<div class="tl-call recorded')[1:]
    assert f'id="run-{run.pk}-call-0-0"' in first
    assert "call_a1" in first
    assert "{\n  &quot;city&quot;: &quot;Paris&quot;\n}" in first
    assert '<span class="jk">&quot;temp_c&quot;</span>: <span class="jv">18</span>' in first
    assert first.startswith('" id=')  # no is-error class
    # The garbled arguments, as the agent wrote them; the tool error, open and as text.
    assert second.startswith(" is-error")
    assert "arguments could not be parsed" in second
    assert "{&quot;city&quot;: &quot;Tok</pre>" in second
    assert '<details class="tl-result" open><summary>result (tool error)</summary>' in second
    assert '<pre class="code">timeout after 30s</pre>' in second
    assert "&quot;city&quot;: &quot;Tokyo&quot;" in batches[1]


def test_run_page_shows_final_text_error_and_meta(as_user, viewer, full):
    _, html = run_page(as_user(viewer), full, line=3)
    assert '<div class="prompt">Paris is 18°C and Tokyo 25°C.</div>' in html
    assert '<h2>Error</h2><div class="problems">max turns reached</div>' in html
    assert "&quot;model&quot;: &quot;gpt-test&quot;" in html
    assert "&quot;temperature&quot;: 0.5" in html


def test_run_page_links_to_the_other_trials_of_its_case(as_user, viewer, full):
    run, html = run_page(as_user(viewer), full, line=3)
    others = {r.trial: r.pk for r in full.runs.filter(case_key=run.case_key)}
    assert '<strong aria-current="page">2</strong>' in html
    assert f'<a href="/submissions/{full.pk}/runs/{others[0]}/" class="verdict pass"' in html
    assert f'<a href="/submissions/{full.pk}/runs/{others[1]}/" class="verdict fail"' in html


def test_run_page_of_a_run_without_calls_or_text(as_user, viewer, suite, submit):
    submission = submit(suite, [{"case": "greeting", "batches": []}])
    _, html = run_page(as_user(viewer), submission, line=1)
    assert "The run made no tool calls." in html
    assert "None: the run ended without a text reply." in html
    assert "trials:" not in html


def test_a_call_without_arguments_reads_as_empty_arguments(as_user, viewer, suite, submit):
    submission = submit(suite, [{"case": "greeting", "batches": [[{"name": "wave"}]]}])
    _, html = run_page(as_user(viewer), submission, line=1)
    assert "could not be parsed" not in html
    assert '<pre class="code">{}</pre>' in html


def test_a_run_of_another_submission_is_not_found(as_user, viewer, suite, submit, scored):
    other = submit(suite, [GREETING_PASS])
    run = other.runs.get()
    assert as_user(viewer).get(url(scored, f"runs/{run.pk}/")).status_code == 404


# --- the library and the suite page -----------------------------------------------------------


def test_library_shows_the_last_finished_result_of_each_suite(
    as_user, viewer, suite, submit, scored
):
    client = as_user(viewer)
    html = text(client.get("/"))
    assert f'<a href="/submissions/{scored.pk}/" title="model-a">37.5% pass</a>' in html
    newer = submit(suite, [GREETING_PASS], label="model-c")
    unfinish(submit(suite, [GREETING_FAIL], label="still-going"))
    html = text(client.get("/"))
    assert f'<a href="/submissions/{newer.pk}/" title="model-c">100% pass</a>' in html
    assert "still-going" not in html


def test_library_says_so_when_a_suite_has_no_result(as_user, viewer, suite, submit):
    html = text(as_user(viewer).get("/"))
    assert re.search(r'<td><span class="muted">—</span>\s*</td>', html)


def test_a_file_of_runs_of_unknown_cases_only_is_failed_and_no_result(
    as_user, viewer, suite, submit, scored
):
    unknowns = [{"case": "no-such-case", "batches": []}, {"case": "other", "batches": []}]
    submission = submit(suite, unknowns, label="unknowns")
    assert submission.status == Status.FAILED
    assert submission.error.startswith(
        "None of the 2 runs is of a case in version 1 of the suite: they name 2 cases"
        " ('no-such-case', 'other'), and its cases are "
    )
    html = text(as_user(viewer).get("/"))
    assert "unknowns" not in html  # the last result is still the one that scored runs
    assert f'<a href="/submissions/{scored.pk}/" title="model-a">37.5% pass</a>' in html
    page = text(as_user(viewer).get(url(submission)))
    assert escaped(submission.error) in page
    assert "Runs of unknown cases" in page  # the runs are kept, and listed


def test_suite_page_lists_its_submissions(as_user, viewer, suite, submit, scored):
    going = unfinish(submit(suite, TRIALS, label="model-d"), scored=2, passed=1, failed=1)
    html = section(text(as_user(viewer).get(f"/suites/{suite.pk}/")), "Submissions")
    rows = cells(html)
    assert rows[0][:5] == ["model-d #" + str(going.pk), "v1", "scoring 25%", "8", "50%"]
    assert rows[1][:5] == ["model-a #" + str(scored.pk), "v1", "done", "8", "37.5%"]
    assert f'href="/submissions/{scored.pk}/"' in html
    assert f'href="/suites/{suite.pk}/versions/1/"' in html


# --- escaping ---------------------------------------------------------------------------------

RAW = ["<script>alert(1)</script>", "<img src=x onerror=alert(1)>"]
PAYLOADS = ["<script>alert(1)</script>", '"><img src=x onerror=alert(1)>']


@pytest.fixture(params=PAYLOADS, ids=["script", "img"])
def payload(request):
    return request.param


def in_json(value: str) -> str:
    """The string as it reads inside JSON text (quotes and backslashes escaped)."""
    return json.dumps(value, ensure_ascii=False)[1:-1]


def assert_safe(html: str, *shown: str) -> None:
    """No payload markup is in the page raw, and each of ``shown`` is there escaped."""
    for raw in RAW:
        assert raw not in html
    for value in shown:
        assert escaped(value) in html, value


@pytest.fixture
def evil(suite, submit, payload):
    """A submission whose every untrusted text carries the payload."""
    run = {
        "case": "weather-two-cities",
        "batches": [
            [
                {
                    "id": f"id{payload}",
                    "name": f"tool{payload}",
                    "arguments": {f"key{payload}": f"value{payload}"},
                    "result": f"result{payload}",
                    "is_error": True,
                },
                {"name": "get_weather", "arguments": None, "arguments_raw": f"raw{payload}"},
            ]
        ],
        "final_text": f"text{payload}",
        "error": f"error{payload}",
        "meta": {f"meta{payload}": f"m{payload}"},
    }
    submission = submit(
        suite,
        [run, {"case": f"key{payload}", "batches": []}, GREETING_PASS],
        label=f"label{payload}",
        filename=f"file{payload}.jsonl",
    )
    InvalidLine.objects.create(submission=submission, line=4, reason=f"reason{payload}")
    Submission.objects.filter(pk=submission.pk).update(invalid=1)
    return submission


def test_submission_page_escapes_every_untrusted_text(as_user, viewer, evil, payload):
    client = as_user(viewer)
    html = text(client.get(url(evil)))
    assert_safe(
        html,
        f"label{payload}",
        f"file{payload}.jsonl",
        f"key{payload}",
        f"reason{payload}",
    )
    partial = text(client.get(url(evil), {"verdict": "fail"}, headers=HX | {"HX-Target": "runs"}))
    assert_safe(partial, "1 run matches")
    progress = text(client.get(url(evil, "progress/")))
    assert_safe(progress)


def test_filters_escape_what_was_typed(as_user, viewer, evil, payload):
    html = text(as_user(viewer).get(url(evil), {"case": payload, "predicate": payload}))
    assert_safe(html, payload)
    assert f'name="case" value="{escaped(payload)}"' in html


def test_run_page_escapes_every_recorded_text(as_user, viewer, evil, payload):
    run = evil.runs.get(line=1)
    html = text(as_user(viewer).get(url(evil, f"runs/{run.pk}/")))
    assert_safe(
        html,
        f"label{payload}",
        f"file{payload}.jsonl",
        f"tool{payload}",
        f"id{payload}",
        in_json(f"key{payload}"),
        in_json(f"value{payload}"),
        f"result{payload}",
        f"raw{payload}",
        f"text{payload}",
        f"error{payload}",
    )
    assert escaped(in_json(f"meta{payload}")) in html
    unknown = evil.runs.get(line=2)
    assert_safe(text(as_user(viewer).get(url(evil, f"runs/{unknown.pk}/"))), f"key{payload}")


def test_library_and_suite_page_escape_the_label(as_user, viewer, evil, suite, payload):
    client = as_user(viewer)
    assert_safe(text(client.get("/")), f"label{payload}")
    assert_safe(text(client.get(f"/suites/{suite.pk}/")), f"label{payload}")


def test_upload_errors_escape_the_label_typed(as_user, editor, suite, payload):
    response = as_user(editor).post(f"/suites/{suite.pk}/upload/", {"label": f"label{payload}"})
    assert response.status_code == 422
    assert_safe(text(response), f"label{payload}")


# --- queries ----------------------------------------------------------------------------------


@pytest.mark.parametrize("count", [20, 200])
def test_submission_page_queries_do_not_grow_with_the_runs(
    as_user, viewer, suite, submit, count, django_assert_max_num_queries
):
    submission = submit(suite, many_runs(count))
    client = as_user(viewer)
    # 18: with the earlier decisions on the failures here (known failures), the results
    # against versions scored before, the team's review labels and those on the runs, and
    # the causes of the most common failures.
    with django_assert_max_num_queries(18) as page:
        response = client.get(url(submission))
    assert response.status_code == 200
    with django_assert_max_num_queries(11) as partial:
        client.get(url(submission), {"verdict": "fail"}, headers=HX | {"HX-Target": "runs"})
    with django_assert_max_num_queries(5) as progress:
        client.get(url(submission, "progress/"), headers=HX)
    for queries in (page, partial, progress):
        assert not reads_documents(queries.captured_queries)


@pytest.mark.parametrize("count", [20, 200])
def test_run_page_queries_do_not_grow_with_the_trials(
    as_user, viewer, suite, submit, count, django_assert_max_num_queries
):
    submission = submit(suite, many_runs(count))
    run = submission.runs.filter(case_key="weather-two-cities").last()
    client = as_user(viewer)
    # 20: with the failure as a known failure (first seen, the submission's runs by
    # signature, the decision made elsewhere), and whether the user reviews the run blind.
    with django_assert_max_num_queries(20):
        response = client.get(url(submission, f"runs/{run.pk}/"))
    assert response.status_code == 200
