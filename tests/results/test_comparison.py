"""Comparing two submissions of a suite (docs/review.md#comparing-submissions): each case
classed as regressed, fixed, still failing, still passing, new or gone, with one trial and with
several; pass-rate deltas; regressions listed first; submissions scored against different
versions compared on the cases both versions have; the side-by-side page of two runs; who may
see what; and the number of queries not growing with the cases."""

from __future__ import annotations

import io
import json
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from cases import services
from scoring.ingest.pipeline import create_submission
from scoring.models import Run, Status, Submission
from scoring.results.comparison import Change, signed_points
from scoring.review import triage
from tests.support.builders import make_team
from tests.support.pages import HX, text

OK, NOT_OK = True, False


def case(key: str, word: str = "ok") -> dict:
    """A case that passes when the final text contains ``word``."""
    return {"key": key, "expectations": [{"type": "final_text_contains", "text": word}]}


KEYS = ("regresses", "gets-fixed", "still-failing", "still-passing", "new", "gone")


def document(*cases: dict) -> dict:
    return {"schema": "casebook.suite/1", "name": "comparable", "cases": list(cases)}


def run(key: str, passes: bool) -> dict:
    return {"case": key, "batches": [], "final_text": "ok" if passes else "nope"}


@pytest.fixture
def suite(team, admin):
    return services.create_suite(team, document(*(case(key) for key in KEYS)), admin)


@pytest.fixture
def submit(django_capture_on_commit_callbacks, admin):
    """``submit(suite, runs, label)``: a submission of the runs, read and scored."""

    def make(suite, runs, label="") -> Submission:
        lines = "".join(json.dumps(r) + "\n" for r in runs).encode()
        with django_capture_on_commit_callbacks(execute=True):
            made = create_submission(suite, admin, io.BytesIO(lines), label=label)
        made.refresh_from_db()
        assert made.status == Status.DONE
        return made

    return make


@pytest.fixture
def pair(suite, submit):
    """One trial per case: a baseline, and a candidate with one case of each class."""
    baseline = submit(
        suite,
        [
            run("regresses", OK),
            run("gets-fixed", NOT_OK),
            run("still-failing", NOT_OK),
            run("still-passing", OK),
            run("gone", OK),
        ],
        "before",
    )
    candidate = submit(
        suite,
        [
            run("regresses", NOT_OK),
            run("gets-fixed", OK),
            run("still-failing", NOT_OK),
            run("still-passing", OK),
            run("new", NOT_OK),
        ],
        "after",
    )
    return baseline, candidate


def compare_url(suite, baseline, candidate, **params) -> str:
    query = "&".join(f"{k}={v}" for k, v in params.items())
    url = f"/suites/{suite.pk}/compare/?baseline={baseline.pk}&candidate={candidate.pk}"
    return f"{url}&{query}" if query else url


def rows(html: str) -> list[tuple[str, str, str]]:
    """(case, change, delta) of each row of the comparison table, in order."""
    found = re.findall(
        r'<tr class="change-row (\w+)">\s*<td><code class="case-key">(.*?)</code>.*?'
        r'<td class="num delta">(.*?)</td>',
        html,
        re.S,
    )
    return [(key, change, delta) for change, key, delta in found]


def tab_counts(html: str) -> dict[str, int]:
    nav = html[
        html.index('<nav class="change-tabs"') : html.index("</nav>", html.index("change-tabs"))
    ]
    found = re.findall(r'class="change (\w+)"[^>]*>[^<]*<span class="count">(\d+)</span>', nav)
    return {change: int(count) for change, count in found}


def test_each_case_is_classed_by_its_change_with_one_trial(as_user, viewer, suite, pair):
    html = text(as_user(viewer).get(compare_url(suite, *pair)))
    assert {key: change for key, change, _ in rows(html)} == {
        "regresses": "regressed",
        "gets-fixed": "fixed",
        "still-failing": "still_failing",
        "still-passing": "still_passing",
        "new": "new",
        "gone": "gone",
    }
    assert tab_counts(html) == {change.value: int(change != Change.UNCHANGED) for change in Change}


def test_regressions_come_first_then_by_delta_and_key(as_user, viewer, suite, pair):
    html = text(as_user(viewer).get(compare_url(suite, *pair)))
    assert [key for key, _, _ in rows(html)] == [
        "regresses",
        "gets-fixed",
        "still-failing",
        "new",
        "gone",
        "still-passing",
    ]
    by_key = text(as_user(viewer).get(compare_url(suite, *pair, sort="case")))
    assert [key for key, _, _ in rows(by_key)] == sorted(KEYS)
    by_delta = text(as_user(viewer).get(compare_url(suite, *pair, sort="-delta")))
    assert [key for key, _, _ in rows(by_delta)][:1] == ["gets-fixed"]


def test_overall_pass_rates_and_their_change(as_user, viewer, suite, pair):
    html = text(as_user(viewer).get(compare_url(suite, *pair)))
    summary = html[
        html.index('aria-label="Overall"') : html.index("</section>", html.index("Overall"))
    ]
    # Baseline: 3 of 5 runs pass; candidate: 2 of 5.
    assert "<dt>Baseline pass rate</dt><dd>60%</dd>" in summary
    assert "<dt>Candidate pass rate</dt><dd>40%</dd>" in summary
    assert "<dd>\u221220.0 pts</dd>" in summary
    assert "regressed</strong> when its pass rate fell" in summary  # the rule is explained


def test_a_filter_by_change_shows_only_that_class_and_keeps_the_counts(
    as_user, viewer, suite, pair
):
    page = text(as_user(viewer).get(compare_url(suite, *pair, change="fixed")))
    assert [key for key, _, _ in rows(page)] == ["gets-fixed"]
    assert tab_counts(page)["regressed"] == 1
    unknown = text(as_user(viewer).get(compare_url(suite, *pair, change="bogus")))
    assert len(rows(unknown)) == 6  # a filter that no longer exists is dropped


def test_the_htmx_table_request_answers_the_partial(as_user, viewer, suite, pair):
    headers = HX | {"HX-Target": "comparison"}
    html = text(as_user(viewer).get(compare_url(suite, *pair, change="regressed"), headers=headers))
    assert "<html" not in html
    assert [key for key, _, _ in rows(html)] == ["regresses"]


def test_a_case_passing_as_often_as_before_is_unchanged_not_still_failing(
    as_user, viewer, suite, submit
):
    # 3 of 4 trials pass on both sides, though not the same ones; 0/2 → 0/2 still fails.
    baseline = submit(
        suite,
        [run("regresses", OK)] * 3
        + [run("regresses", NOT_OK)]
        + [run("still-failing", NOT_OK)] * 2,
    )
    candidate = submit(
        suite,
        [run("regresses", NOT_OK)]
        + [run("regresses", OK)] * 3
        + [run("still-failing", NOT_OK)] * 2,
    )
    html = text(as_user(viewer).get(compare_url(suite, baseline, candidate)))
    assert rows(html) == [
        ("still-failing", "still_failing", "±0"),
        ("regresses", "unchanged", "±0"),
    ]
    assert tab_counts(html)["unchanged"] == 1
    assert "3/4" in html
    assert "on one side only</span>" not in html[html.index('<table class="list comparison">') :]


def test_a_trial_on_one_side_only_is_flagged_not_counted_as_a_regression(
    as_user, viewer, suite, submit
):
    # Trials 0-2 pass on both sides; the candidate has a fourth, failing trial, and the
    # baseline a second trial of gets-fixed that the candidate lacks.
    baseline = submit(
        suite,
        [run("regresses", OK)] * 3 + [run("gets-fixed", NOT_OK), run("gets-fixed", OK)],
    )
    candidate = submit(
        suite,
        [run("regresses", OK)] * 3 + [run("regresses", NOT_OK)] + [run("gets-fixed", OK)],
    )
    html = text(as_user(viewer).get(compare_url(suite, baseline, candidate)))
    assert rows(html) == [
        ("gets-fixed", "fixed", "+100.0 pts"),
        ("regresses", "still_passing", "±0"),
    ]
    assert tab_counts(html)["regressed"] == 0
    table = html[html.index('<table class="list comparison">') :]
    flags = re.findall(r'<span class="one-side"[^>]*>(\d+ trials? on one side only)</span>', table)
    assert flags == ["1 trial on one side only", "1 trial on one side only"]
    # The candidate's extra trial still counts in its overall pass rate.
    assert "3/4" in html


def test_sides_with_no_trial_in_common_are_compared_on_all_their_runs(
    as_user, viewer, suite, submit, admin
):
    baseline = submit(suite, [run("regresses", OK)])
    # The candidate's only run of the case is trial 1: nothing to pair it with.
    lines = [{"case": "regresses", "trial": 1, "batches": [], "final_text": "nope"}]
    candidate = submit(suite, lines)
    html = text(as_user(viewer).get(compare_url(suite, baseline, candidate)))
    assert rows(html) == [("regresses", "regressed", "\u2212100.0 pts")]
    assert "on one side only</span>" not in html[html.index('<table class="list comparison">') :]


def test_trials_that_swapped_are_shown_where_the_case_totals_did_not_move(
    as_user, viewer, suite, submit
):
    """3/4 → 3/4, but trial 0 went from pass to fail and trial 3 from fail to pass; and
    sides whose trials are numbered apart say so rather than compare trials."""
    baseline = submit(suite, [run("regresses", OK)] * 3 + [run("regresses", NOT_OK)])
    candidate = submit(suite, [run("regresses", NOT_OK)] + [run("regresses", OK)] * 3)
    html = text(as_user(viewer).get(compare_url(suite, baseline, candidate)))
    assert rows(html) == [("regresses", "unchanged", "±0")]
    flips = re.findall(r'<span class="trial-flips small">(.*?)</span>', html)
    assert flips == ["1 trial pass → fail, 1 fail → pass"]
    assert "trial numbers do not match" not in html
    apart = [{"case": "regresses", "trial": 5, "batches": [], "final_text": "ok"}]
    html = text(as_user(viewer).get(compare_url(suite, baseline, submit(suite, apart))))
    assert "trial numbers do not match: rates only" in html
    assert "trial-flips" not in html


def test_several_trials_compare_pass_rates(as_user, viewer, suite, submit):
    baseline = submit(
        suite,
        [run("regresses", OK)] * 2
        + [run("regresses", NOT_OK)]  # 2/3
        + [run("gets-fixed", OK)]
        + [run("gets-fixed", NOT_OK)] * 2  # 1/3
        + [run("still-failing", OK), run("still-failing", NOT_OK)]  # 1/2
        + [run("still-passing", OK)] * 3,  # 3/3
    )
    candidate = submit(
        suite,
        [run("regresses", OK)]
        + [run("regresses", NOT_OK)] * 2  # 1/3
        + [run("gets-fixed", OK)] * 2
        + [run("gets-fixed", NOT_OK)]  # 2/3
        + [run("still-failing", OK), run("still-failing", NOT_OK)] * 2  # 2/4: the same rate
        + [run("still-passing", OK)] * 2,  # 2/2
    )
    html = text(as_user(viewer).get(compare_url(suite, baseline, candidate)))
    assert rows(html) == [
        ("regresses", "regressed", "\u221233.3 pts"),
        ("gets-fixed", "fixed", "+33.3 pts"),
        # Trials 0 and 1 pass as often as before; 2 and 3 are the candidate's only.
        ("still-failing", "unchanged", "±0"),
        ("still-passing", "still_passing", "±0"),
    ]
    assert "2/3" in html
    assert "2/4" in html


def test_a_regression_opens_a_passing_baseline_run_beside_a_failing_candidate_run(
    as_user, viewer, suite, submit
):
    baseline = submit(suite, [run("regresses", NOT_OK), run("regresses", OK)])
    candidate = submit(suite, [run("regresses", OK), run("regresses", NOT_OK)])
    html = text(as_user(viewer).get(compare_url(suite, baseline, candidate)))
    passing = Run.objects.get(submission=baseline, trial=1)
    failing = Run.objects.get(submission=candidate, trial=1)
    assert f'href="/compare/runs/{passing.pk}/{failing.pk}/"' in html


def test_the_side_by_side_page_shows_both_runs_and_their_trials(as_user, viewer, suite, submit):
    lookup = [[{"name": "lookup", "arguments": {"q": "<b>bold</b>"}}]]
    baseline = submit(suite, [run("regresses", OK) | {"batches": lookup}], "before")
    candidate = submit(suite, [run("regresses", NOT_OK), run("regresses", OK)], "after")
    left = baseline.runs.get()
    right, other_trial = candidate.runs.order_by("trial")
    html = text(as_user(viewer).get(f"/compare/runs/{left.pk}/{right.pk}/"))
    assert html.count('class="card compare-side"') == 2
    assert 'class="verdict pass"' in html
    assert 'class="verdict fail"' in html
    assert ">before</a>" in html
    assert ">after</a>" in html
    # The candidate's other trial is one click away, the baseline run staying in place.
    assert f'href="/compare/runs/{left.pk}/{other_trial.pk}/"' in html
    # Each side has its timeline, with ids of its own; the recorded text is escaped.
    assert html.count('class="tl"') == 2
    assert f'id="run-{left.pk}-call-0-0"' in html
    assert "&lt;b&gt;bold&lt;/b&gt;" in html
    assert "<b>bold</b>" not in html


def test_the_side_by_side_page_links_a_bounded_number_of_trials_as_the_run_page_does(
    as_user, viewer, suite, submit, monkeypatch
):
    monkeypatch.setattr(triage, "TRIALS_AROUND", 3)  # the run page's bound, made small
    many = submit(suite, [run("regresses", i % 2 == 0) for i in range(12)])
    trials = list(many.runs.order_by("trial"))
    left, right = trials[6], trials[0]
    html = text(as_user(viewer).get(f"/compare/runs/{left.pk}/{right.pk}/"))
    navs = re.findall(
        r'<nav class="trials" aria-label="Trials of the (\w+)">(.*?)</nav>', html, re.S
    )
    linked = {role: re.findall(r"/compare/runs/(\d+)/(\d+)/", nav) for role, nav in navs}
    # Three trials each side of the run's own, and "…" where more were left out.
    assert [int(a) for a, _ in linked["baseline"]] == [t.pk for t in trials[3:10] if t != left]
    assert [int(b) for _, b in linked["candidate"]] == [t.pk for t in trials[1:4]]
    baseline_nav, candidate_nav = dict(navs)["baseline"], dict(navs)["candidate"]
    assert baseline_nav.strip().startswith("trials: …")
    assert baseline_nav.rstrip().endswith("…")
    assert "trials: …" not in candidate_nav
    assert candidate_nav.rstrip().endswith("…")


def test_different_versions_are_compared_on_the_cases_they_share(
    as_user, viewer, admin, suite, submit
):
    baseline = submit(suite, [run(key, OK) for key in KEYS])
    # Version 2 drops "gone", adds "brand-new", and asks "gets-fixed" for another word.
    services.replace_contents(
        suite,
        document(
            *(case(key) for key in KEYS if key not in ("gone", "gets-fixed")),
            case("gets-fixed", word="nope"),
            case("brand-new"),
        ),
        admin,
        "v2",
    )
    candidate = submit(
        suite, [run(key, OK) for key in KEYS if key != "gone"] + [run("brand-new", OK)]
    )
    assert (baseline.version.number, candidate.version.number) == (1, 2)
    html = text(as_user(viewer).get(compare_url(suite, baseline, candidate)))
    assert "Scored against different suite versions" in html
    assert 'role="alert"' in html
    compared = {key for key, _, _ in rows(html)}
    assert compared == set(KEYS) - {"gone"}
    assert "brand-new" not in compared
    assert "Left out, only in v1" in html
    assert "Left out, only in v2" in html
    # "gets-fixed" is compared (same key) but marked: its definition changed.
    assert re.search(r'gets-fixed</code> <span class="badge"[^>]*>redefined', html)
    identical = text(as_user(viewer).get(compare_url(suite, baseline, candidate, identical=1)))
    assert {key for key, _, _ in rows(identical)} == set(KEYS) - {"gone", "gets-fixed"}


def test_the_same_version_gives_no_warning(as_user, viewer, suite, pair):
    html = text(as_user(viewer).get(compare_url(suite, *pair)))
    assert "different suite versions" not in html


def test_the_picker_offers_finished_submissions_and_suggests_the_previous_baseline(
    as_user, viewer, suite, pair
):
    baseline, candidate = pair
    html = text(as_user(viewer).get(f"/suites/{suite.pk}/compare/?candidate={candidate.pk}"))
    assert re.search(rf'<option value="{baseline.pk}" selected>before #{baseline.pk}', html)
    assert re.search(rf'<option value="{candidate.pk}" selected>after #{candidate.pk}', html)
    assert "change-tabs" not in html  # nothing compared yet


def test_the_first_submission_is_offered_as_the_baseline_of_the_next(as_user, viewer, suite, pair):
    """Opened from the suite's first submission, the picker is not left without a baseline:
    that submission is the baseline, the one uploaded after it the candidate."""
    first, second = pair
    html = text(as_user(viewer).get(f"/suites/{suite.pk}/compare/?candidate={first.pk}"))
    baseline, candidate = html.split('name="candidate"')
    assert re.search(rf'<option value="{first.pk}" selected>before #{first.pk}', baseline)
    assert re.search(rf'<option value="{second.pk}" selected>after #{second.pk}', candidate)


def test_a_submission_alone_in_its_suite_is_offered_as_the_candidate(
    as_user, viewer, suite, submit
):
    only = submit(suite, [run("regresses", OK)], "only")
    html = text(as_user(viewer).get(f"/suites/{suite.pk}/compare/?candidate={only.pk}"))
    baseline, candidate = html.split('name="candidate"')
    assert '<option value="" selected>' in baseline.split('name="baseline"')[1]
    assert re.search(rf'<option value="{only.pk}" selected>only #{only.pk}', candidate)


def test_a_submission_still_scoring_cannot_be_compared_yet(as_user, viewer, suite, pair):
    baseline, candidate = pair
    Submission.objects.filter(pk=candidate.pk).update(status=Status.SCORING)
    response = as_user(viewer).get(compare_url(suite, baseline, candidate))
    assert response.status_code == 422
    assert "still being scored" in text(response)


def test_a_submission_is_not_compared_with_itself(as_user, viewer, suite, pair):
    baseline, _ = pair
    response = as_user(viewer).get(compare_url(suite, baseline, baseline))
    assert response.status_code == 422


def test_the_submission_page_links_to_the_comparison(as_user, viewer, suite, pair):
    _, candidate = pair
    html = text(as_user(viewer).get(f"/submissions/{candidate.pk}/"))
    assert f'href="/suites/{suite.pk}/compare/?candidate={candidate.pk}"' in html


# --- permissions ------------------------------------------------------------------------------


def test_an_outsider_gets_404_for_the_comparison_and_the_runs(as_user, outsider, suite, pair):
    baseline, candidate = pair
    client = as_user(outsider)
    assert client.get(compare_url(suite, *pair)).status_code == 404
    left, right = baseline.runs.first(), candidate.runs.first()
    assert client.get(f"/compare/runs/{left.pk}/{right.pk}/").status_code == 404


def test_a_submission_of_another_suite_is_404_even_when_its_suite_is_visible(
    as_user, outsider, editor, team, suite, pair, submit
):
    """The outsider's own suite, and one they can see: neither may be compared with ours,
    and a submission of a suite they cannot see is not told apart from none."""
    baseline, candidate = pair
    elsewhere = make_team("Mine", admin=outsider, editor=editor)
    theirs = services.create_suite(elsewhere, document(case("regresses")), outsider)
    other = submit(theirs, [run("regresses", OK)])
    client = as_user(editor)  # sees both suites
    assert client.get(compare_url(suite, baseline, other)).status_code == 404
    assert client.get(compare_url(suite, other, candidate)).status_code == 404
    assert client.get(compare_url(theirs, other, candidate)).status_code == 404
    left, right = baseline.runs.first(), other.runs.first()
    assert client.get(f"/compare/runs/{left.pk}/{right.pk}/").status_code == 404
    # An outsider of ``team`` cannot reach our runs through their own suite either.
    outsider_client = as_user(outsider)
    assert outsider_client.get(compare_url(theirs, other, baseline)).status_code == 404
    assert outsider_client.get(f"/compare/runs/{right.pk}/{left.pk}/").status_code == 404


def test_runs_of_two_different_cases_are_not_put_side_by_side(as_user, viewer, suite, pair):
    baseline, candidate = pair
    left = baseline.runs.get(case_key="regresses")
    right = candidate.runs.get(case_key="gets-fixed")
    assert as_user(viewer).get(f"/compare/runs/{left.pk}/{right.pk}/").status_code == 404


# --- speed ------------------------------------------------------------------------------------


def test_the_query_count_does_not_grow_with_the_cases(as_user, viewer, admin, team, submit):
    def queries_for(cases: int) -> int:
        keys = [f"case-{i:03}" for i in range(cases)]
        made = services.create_suite(
            team, document(*(case(k) for k in keys)) | {"name": f"s{cases}"}, admin
        )
        baseline = submit(made, [run(k, i % 2 == 0) for i, k in enumerate(keys)] * 2)
        candidate = submit(made, [run(k, i % 3 == 0) for i, k in enumerate(keys)] * 2)
        client = as_user(viewer)
        with CaptureQueriesContext(connection) as captured:
            response = client.get(compare_url(made, baseline, candidate))
        assert response.status_code == 200
        return len(captured)

    assert queries_for(4) == queries_for(120)


def test_signed_points():
    assert signed_points(None) == "—"
    assert signed_points(0) == "±0"
    assert signed_points(1 / 3) == "+33.3 pts"
    assert signed_points(-0.0001) == "\u2212<0.1 pts"
