"""The suite page's trend (docs/review.md#suite-page): the pass rate of its finished
submissions over time as an inline SVG chart with a table fallback, the flakiest cases
(verdicts that change from one submission to the next, trials that disagree within one), and a
bounded number of queries however many submissions the suite has."""

from __future__ import annotations

import io
import json
import re
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from cases import services
from scoring.ingest.pipeline import create_submission
from scoring.models import Status, Submission
from scoring.results import trends
from scoring.results.trends import flaky_cases, suite_trend
from tests.support.pages import HX, text

P, F = True, False  # a trial that passes, one that fails


def document(*keys: str) -> dict:
    cases = [
        {"key": key, "expectations": [{"type": "final_text_contains", "text": "ok"}]}
        for key in keys
    ]
    return {"schema": "casebook.suite/1", "name": "trending", "cases": cases}


@pytest.fixture
def suite(team, admin):
    return services.create_suite(team, document("flipper", "steady", "split", "once"), admin)


@pytest.fixture
def submit(django_capture_on_commit_callbacks, admin):
    """``submit(suite, {case: [trial passes, ...]}, label)``: scored, and dated one day after
    the previous one so that upload order is unambiguous."""
    made = []

    def make(suite, trials: dict[str, list[bool]], label: str = "") -> Submission:
        lines = "".join(
            json.dumps({"case": key, "batches": [], "final_text": "ok" if ok else "no"}) + "\n"
            for key, outcomes in trials.items()
            for ok in outcomes
        ).encode()
        with django_capture_on_commit_callbacks(execute=True):
            submission = create_submission(suite, admin, io.BytesIO(lines), label=label)
        created = timezone.now() - timedelta(days=100 - len(made))
        Submission.objects.filter(pk=submission.pk).update(created=created)
        submission.refresh_from_db()
        made.append(submission)
        return submission

    return make


@pytest.fixture
def history(suite, submit):
    """Four submissions: ``flipper`` passes and fails in turn, ``steady`` always passes,
    ``split``'s two trials always disagree, ``once`` fails three times and then passes."""
    verdicts = [
        {"flipper": [P], "steady": [P], "split": [P, F], "once": [F]},
        {"flipper": [F], "steady": [P], "split": [F, P], "once": [F]},
        {"flipper": [P], "steady": [P], "split": [P, F], "once": [F]},
        {"flipper": [F], "steady": [P], "split": [F, P], "once": [P]},
    ]
    return [submit(suite, v, label=f"model-{i}") for i, v in enumerate(verdicts)]


def test_the_series_is_the_finished_submissions_pass_rates_oldest_first(suite, history, submit):
    running = submit(suite, {"steady": [P]}, label="still scoring")
    Submission.objects.filter(pk=running.pk).update(status=Status.SCORING)
    trend = suite_trend(suite)
    assert [p.submission.pk for p in trend.points] == [s.pk for s in history]
    # Five runs per submission: flipper, steady, split twice, once.
    assert [round(p.rate, 3) for p in trend.points] == [0.6, 0.4, 0.6, 0.6]
    xs = [p.x for p in trend.points]
    assert xs == sorted(xs)
    assert len(set(xs)) == 4
    # Higher is better: 60% is drawn above 40%.
    assert trend.points[0].y < trend.points[1].y
    assert trend.gridlines[0][1] == "0%"
    assert trend.gridlines[-1] == (trends.MARGIN, "100%")


def test_the_suite_page_draws_the_chart_with_a_title_and_link_per_point(
    as_user, viewer, suite, history
):
    html = text(as_user(viewer).get(f"/suites/{suite.pk}/"))
    chart = html[html.index("<svg") : html.index("</svg>")]
    points = re.findall(
        r'<a href="/submissions/(\d+)/" class="point">\s*<title>(.*?)</title>', chart
    )
    assert [int(pk) for pk, _ in points] == [s.pk for s in history]
    first = history[0]
    assert points[0][1] == f"model-0 #{first.pk} against v1, {first.created:%Y-%m-%d}: 60%"
    assert '<polyline class="line" points="' in chart
    assert 'role="group"' in chart  # of links: an image holds none
    assert "<script" not in html.split("</head>")[1]  # no inline script for the chart
    # The same numbers as a table, newest first.
    table = html[
        html.index("<summary>As a table</summary>") : html.index(
            "</details>", html.index("As a table")
        )
    ]
    assert re.findall(r'href="/submissions/(\d+)/"', table) == [str(s.pk) for s in history[::-1]]


def test_the_suite_page_offers_to_compare_the_two_latest(as_user, viewer, suite, history):
    html = text(as_user(viewer).get(f"/suites/{suite.pk}/"))
    form = html[
        html.index('class="inline-form compare-form"') : html.index(
            "</form>", html.index("compare-form")
        )
    ]
    newest, previous = history[-1], history[-2]
    assert re.search(rf'name="candidate".*?<option value="{newest.pk}" selected>', form, re.S)
    assert re.search(rf'name="baseline".*?<option value="{previous.pk}" selected>', form, re.S)


def test_flaky_cases_by_share_of_flips_then_by_trials_disagreeing(suite, history):
    flaky = flaky_cases([s.pk for s in history])
    assert [(f.case, f.flips, f.pairs, f.split, f.submissions) for f in flaky] == [
        ("flipper", 3, 3, 0, 4),
        ("once", 1, 3, 0, 4),
        ("split", 0, 3, 4, 4),  # its trials always disagree: its verdict never changes
    ]
    assert flaky[0].flip_share == 1
    assert flaky[2].split_share == 1


def test_a_case_missing_from_a_submission_is_compared_across_the_gap(suite, submit):
    runs = [
        {"flipper": [P], "steady": [P]},
        {"steady": [P]},  # flipper not run
        {"flipper": [F], "steady": [P]},
    ]
    flaky = flaky_cases([submit(suite, r).pk for r in runs])
    assert [(f.case, f.flips, f.pairs) for f in flaky] == [("flipper", 1, 1)]


def test_the_flaky_list_is_cut_at_its_limit(suite, history):
    assert [f.case for f in flaky_cases([s.pk for s in history], limit=2)] == ["flipper", "once"]


def test_only_the_last_submissions_are_read(monkeypatch, suite, history):
    monkeypatch.setattr(trends, "TREND_SUBMISSIONS", 3)
    monkeypatch.setattr(trends, "FLAKY_SUBMISSIONS", 2)
    trend = suite_trend(suite, find_flaky=True)
    assert [p.submission.pk for p in trend.points] == [s.pk for s in history[-3:]]
    # Over the last two only: flipper flipped once, once once; split disagreed twice.
    assert trend.flaky_over == 2
    assert [(f.case, f.flips, f.pairs, f.split) for f in trend.flaky] == [
        ("flipper", 1, 1, 0),
        ("once", 1, 1, 0),
        ("split", 0, 1, 2),
    ]


def flaky_table(html: str) -> list[str]:
    table = html[html.index('class="list compact flaky"') :]
    return re.findall(r'<code class="case-key">(.*?)</code>', table[: table.index("</table>")])


def test_the_suite_page_loads_the_flaky_cases_after_itself_then_has_them_cached(
    as_user, viewer, suite, history
):
    """Finding them reads every result of the last submissions: the page does not wait for
    it the first time, and shows them at once from then on."""
    client = as_user(viewer)
    html = text(client.get(f"/suites/{suite.pk}/"))
    assert f'hx-get="/suites/{suite.pk}/flaky/" hx-trigger="load"' in html
    assert "list compact flaky" not in html
    fragment = text(client.get(f"/suites/{suite.pk}/flaky/", headers=HX))
    assert "<html" not in fragment
    assert fragment.lstrip().startswith('<div id="flaky-cases">')
    assert flaky_table(fragment) == ["flipper", "once", "split"]
    assert "3 of 3" in fragment
    again = text(client.get(f"/suites/{suite.pk}/"))
    assert flaky_table(again) == ["flipper", "once", "split"]
    assert f'hx-get="/suites/{suite.pk}/flaky/"' not in again


def test_a_new_submission_makes_the_flaky_cases_be_found_again(
    as_user, viewer, suite, history, submit
):
    client = as_user(viewer)
    client.get(f"/suites/{suite.pk}/flaky/")
    submit(suite, {"flipper": [P], "steady": [F], "split": [P, P], "once": [P]})
    html = text(client.get(f"/suites/{suite.pk}/"))
    assert 'hx-trigger="load"' in html
    fragment = text(client.get(f"/suites/{suite.pk}/flaky/"))
    # flipper changed 4 times in 4; the others once in 4 each, and split's trials also
    # disagreed 4 times out of 5, so it leads them; then by key.
    assert flaky_table(fragment) == ["flipper", "split", "once", "steady"]


def test_the_flaky_cases_are_permissioned_like_the_suite(as_user, outsider, suite, history):
    assert as_user(outsider).get(f"/suites/{suite.pk}/flaky/").status_code == 404


def test_a_suite_without_finished_submissions_shows_no_chart(as_user, viewer, suite):
    html = text(as_user(viewer).get(f"/suites/{suite.pk}/"))
    assert "The chart appears once a submission is scored." in html
    assert "<svg" not in html


def test_the_suite_page_queries_do_not_grow_with_the_submissions(as_user, viewer, suite, submit):
    client = as_user(viewer)

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get(f"/suites/{suite.pk}/").status_code == 200
        return len(captured)

    for _ in range(2):
        submit(suite, {"flipper": [P, F], "steady": [P]})
    few = queries()
    for _ in range(4):
        submit(suite, {"flipper": [F], "steady": [P], "once": [P, P]})
    assert queries() == few
