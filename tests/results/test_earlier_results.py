"""Re-scoring against another version keeps the earlier result (docs/pipeline.md#re-scoring):
the counts and every run's report against the version before stay, on their own page, in the
switcher of the submission page, in the results API (``?version=``) and as a point of the
suite's chart; re-scoring back makes that version current again, and an unfinished scoring is
not kept."""

from __future__ import annotations

import io
import json
import re

import pytest

from cases import services
from scoring.ingest import pipeline
from scoring.ingest.pipeline import create_submission
from scoring.models import EarlierResult, EarlierScore, Result, Status
from scoring.results.trends import suite_trend
from tests.support.pages import text

KEYS = ("task-1", "task-2", "task-10")


def document(word: str) -> dict:
    """Every case passes when the final text holds ``word``."""
    cases = [
        {"key": key, "expectations": [{"type": "final_text_contains", "text": word}]}
        for key in KEYS
    ]
    return {"schema": "casebook.suite/1", "name": "versions", "cases": cases}


@pytest.fixture
def suite(team, admin):
    return services.create_suite(team, document("ok"), admin)


@pytest.fixture
def scored(suite, admin, django_capture_on_commit_callbacks):
    """A submission scored against v1 (2 of 3 pass), and v2 of the suite, under which the
    other one passes (1 of 3)."""
    lines = [
        {"case": "task-1", "batches": [], "final_text": "ok"},
        {"case": "task-2", "batches": [], "final_text": "ok"},
        {"case": "task-10", "batches": [], "final_text": "fine"},
    ]
    body = "".join(json.dumps(line) + "\n" for line in lines).encode()
    with django_capture_on_commit_callbacks(execute=True):
        submission = create_submission(suite, admin, io.BytesIO(body), label="agent")
    services.replace_contents(suite, document("fine"), admin, "another word")
    submission.refresh_from_db()
    return submission


def rescore(submission, suite, number, run_tasks):
    with run_tasks():
        pipeline.rescore(submission, suite.versions.get(number=number))
    submission.refresh_from_db()


def verdicts(rows) -> dict[str, str]:
    return dict(rows)


def test_re_scoring_keeps_the_earlier_counts_and_verdicts(suite, scored, run_tasks):
    assert (scored.version.number, scored.passed, scored.scored) == (1, 2, 3)
    rescore(scored, suite, 2, run_tasks)
    assert (scored.version.number, scored.passed, scored.failed) == (2, 1, 2)
    earlier = EarlierScore.objects.get(submission=scored)
    assert (earlier.version.number, earlier.total, earlier.scored) == (1, 3, 3)
    assert (earlier.passed, earlier.failed, earlier.errored) == (2, 1, 0)
    kept = EarlierResult.objects.filter(submission=scored, version__number=1)
    assert verdicts(kept.values_list("run__case_key", "verdict")) == {
        "task-1": "pass",
        "task-2": "pass",
        "task-10": "fail",
    }
    assert kept.get(run__case_key="task-10").report["verdict"] == "fail"
    now = Result.objects.filter(submission=scored).values_list("run__case_key", "verdict")
    assert verdicts(now) == {"task-1": "fail", "task-2": "fail", "task-10": "pass"}


def test_re_scoring_back_makes_the_earlier_version_current_and_keeps_the_other(
    suite, scored, run_tasks
):
    rescore(scored, suite, 2, run_tasks)
    rescore(scored, suite, 1, run_tasks)
    assert (scored.version.number, scored.passed) == (1, 2)
    assert list(scored.earlier_scores.values_list("version__number", "passed")) == [(2, 1)]
    assert set(EarlierResult.objects.values_list("version__number", flat=True)) == {2}
    # The same version again: the new result replaces the current one, nothing more is kept.
    rescore(scored, suite, 1, run_tasks)
    assert list(scored.earlier_scores.values_list("version__number", flat=True)) == [2]
    assert EarlierResult.objects.count() == 3


def test_an_unfinished_scoring_is_not_kept(suite, scored):
    # Re-scored against v2 without running its tasks: still scoring, its counts partial.
    pipeline.rescore(scored, suite.versions.get(number=2))
    scored.refresh_from_db()
    assert scored.status == Status.SCORING
    assert list(scored.earlier_scores.values_list("version__number", flat=True)) == [1]
    # Back to v1 before v2 is done: v1 is current again, and v2's part-result is not kept.
    pipeline.rescore(scored, suite.versions.get(number=1))
    assert not scored.earlier_scores.exists()
    assert not EarlierResult.objects.exists()


def test_deleting_the_submission_deletes_what_was_kept(suite, scored, run_tasks):
    rescore(scored, suite, 2, run_tasks)
    pipeline.delete_submission(scored)
    assert not EarlierScore.objects.exists()
    assert not EarlierResult.objects.exists()


def test_the_submission_page_switches_between_the_versions_scored(
    as_user, viewer, suite, scored, run_tasks
):
    client = as_user(viewer)
    assert "Results against" not in text(client.get(scored.get_absolute_url()))
    rescore(scored, suite, 2, run_tasks)
    html = text(client.get(scored.get_absolute_url()))
    switcher = html[
        html.index('class="versions-scored"') : html.index("</nav>", html.index("versions-scored"))
    ]
    earlier_url = f"/submissions/{scored.pk}/versions/1/"
    assert f'<a href="{earlier_url}">v1 <span class="small">66.7%</span></a>' in switcher
    assert 'aria-current="page">v2 <span class="small">33.3%</span>' in switcher

    earlier = text(client.get(earlier_url))
    assert "<h1>Against version 1</h1>" in earlier
    assert re.search(r"<dt>Passed</dt><dd>2</dd>", earlier)
    assert re.search(r"<dt>Failed</dt><dd>1</dd>", earlier)
    # Its runs, with their verdicts then, in file order.
    rows = re.findall(
        r'<span class="verdict (\w+)">.*?<code class="case-key">([^<]+)</code>', earlier, re.S
    )
    assert rows == [("pass", "task-1"), ("pass", "task-2"), ("fail", "task-10")]
    failing = text(client.get(earlier_url, {"verdict": "fail"}))
    assert re.findall(r'<code class="case-key">([^<]+)</code>', failing) == ["task-10"]
    assert "final text contains &quot;ok&quot;" in failing
    # The current version is the submission page itself; one never scored is not found.
    current = client.get(f"/submissions/{scored.pk}/versions/2/")
    assert current.status_code == 302
    assert current.headers["Location"] == scored.get_absolute_url()
    assert client.get(f"/submissions/{scored.pk}/versions/7/").status_code == 404


def test_an_earlier_result_is_seen_only_by_who_sees_the_suite(
    as_user, outsider, suite, scored, run_tasks
):
    rescore(scored, suite, 2, run_tasks)
    assert as_user(outsider).get(f"/submissions/{scored.pk}/versions/1/").status_code == 404


def test_the_suite_chart_keeps_a_point_per_version_scored(
    as_user, viewer, suite, scored, run_tasks
):
    rescore(scored, suite, 2, run_tasks)
    points = suite_trend(suite).points
    assert [(p.version_number, p.current, round(p.rate, 3)) for p in points] == [
        (1, False, 0.667),
        (2, True, 0.333),
    ]
    html = text(as_user(viewer).get(suite.get_absolute_url()))
    chart = html[html.index("<svg") : html.index("</svg>")]
    assert re.findall(r'<a href="([^"]+)" class="point[^"]*">', chart) == [
        f"/submissions/{scored.pk}/versions/1/",
        f"/submissions/{scored.pk}/",
    ]
    # One submission, however many points: nothing to compare it with.
    assert "compare-form" not in html


def test_the_results_api_reads_any_version_scored(client, viewer, suite, scored, run_tasks):
    rescore(scored, suite, 2, run_tasks)
    client.force_login(viewer)
    base = f"/api/submissions/{scored.pk}/"
    detail = client.get(base).json()
    assert detail["version"] == 2
    assert [
        (e["version"], e["counts"], e["scored"], round(e["pass_rate"], 3))
        for e in detail["earlier_results"]
    ] == [(1, {"pass": 2, "fail": 1, "error": 0}, 3, 0.667)]
    assert detail["earlier_results"][0]["results_url"].endswith(f"{base}results/?version=1")

    def cases(query):
        answer = client.get(f"{base}results/", query)
        assert answer.status_code == 200, answer.content
        return {r["case"]: r["verdict"] for r in answer.json()["results"]}

    assert (
        cases({})
        == cases({"version": 2})
        == {
            "task-1": "fail",
            "task-2": "fail",
            "task-10": "pass",
        }
    )
    assert cases({"version": 1}) == {"task-1": "pass", "task-2": "pass", "task-10": "fail"}
    assert cases({"version": 1, "verdict": "fail"}) == {"task-10": "fail"}
    missing = client.get(f"{base}results/", {"version": 5})
    assert missing.status_code == 404
    assert "not scored against version 5" in missing.json()["detail"]
    assert client.get(f"{base}results/", {"version": 0}).status_code == 400
