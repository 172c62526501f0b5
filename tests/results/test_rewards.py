"""The file's own reward beside Casebook's verdict (docs/review.md#runs-table): stored per
run from ``meta.reward``, counted into the submission's agreement line, a filter of the runs
table and its API, a field of the results API and a column of the CSV."""

from __future__ import annotations

import csv
import io

import pytest

from scoring.results import rewards
from scoring.runfiles.runmeta import file_reward, reward_agrees
from tests.support.pages import text
from tests.support.runs import TRIALS, run_keys, url

# TRIALS' verdicts: pass, pass, fail (greeting); pass, fail, fail (weather); fail, fail.
REWARDS = [1, 0, 0.0, 1.0, 1, 0, None, 0]


@pytest.fixture
def rewarded(suite, submit):
    lines = [
        {**line, "meta": {"reward": reward}} if reward is not None else line
        for line, reward in zip(TRIALS, REWARDS, strict=True)
    ]
    return submit(suite, lines, label="rewarded")


def test_the_reward_is_a_finite_number_of_meta_and_a_full_one_goes_with_a_pass():
    assert [file_reward({"reward": v}) for v in (1, 0.5, True, "1", None, float("nan"))] == [
        1.0,
        0.5,
        None,
        None,
        None,
        None,
    ]
    assert file_reward({}) is None
    assert [reward_agrees(True, 1.0), reward_agrees(True, 0.5), reward_agrees(False, 0.0)] == [
        True,
        False,
        True,
    ]
    assert reward_agrees(False, None) is None


def test_each_run_keeps_its_reward_and_the_submission_counts_the_agreement(rewarded):
    runs = rewarded.runs.order_by("seq")
    assert [run.reward for run in runs] == [None if r is None else float(r) for r in REWARDS]
    assert rewards.agreement(rewarded) == rewards.Agreement(rewarded=7, agree=5)


def test_the_page_says_how_many_agree_and_links_to_the_disagreements(as_user, viewer, rewarded):
    client = as_user(viewer)
    page = text(client.get(url(rewarded)))
    assert "5 of 7 agree with the file's reward" in page
    assert "show the 2 that disagree" in page
    assert "reward=disagrees" in page
    disagreeing = text(client.get(url(rewarded), {"reward": "disagrees"}))
    assert run_keys(disagreeing) == [("greeting", "pass"), ("weather-two-cities", "fail")]
    assert len(run_keys(text(client.get(url(rewarded), {"reward": "agrees"})))) == 5
    assert 'class="reward disagrees"' in disagreeing


def test_a_submission_without_rewards_has_no_agreement_line(as_user, viewer, suite, submit):
    plain = submit(suite, TRIALS)
    assert rewards.agreement(plain) is None
    assert "agree with the file" not in text(as_user(viewer).get(url(plain)))


def test_the_results_api_gives_each_runs_reward_and_filters_the_disagreements(
    as_user, viewer, rewarded
):
    client = as_user(viewer)
    api = f"/api/submissions/{rewarded.pk}/results/"
    results = client.get(api).json()["results"]
    assert [r["reward"] for r in results] == [None if r is None else float(r) for r in REWARDS]
    disagree = client.get(api, {"reward": "disagrees"}).json()
    assert [(r["case"], r["verdict"], r["reward"]) for r in disagree["results"]] == [
        ("greeting", "pass", 0.0),
        ("weather-two-cities", "fail", 1.0),
    ]
    assert client.get(api, {"reward": "maybe"}).status_code == 400


def test_the_csv_has_the_reward_as_a_column(as_user, viewer, rewarded):
    response = as_user(viewer).get(url(rewarded, "runs.csv"))
    body = b"".join(response.streaming_content).decode()
    rows = list(csv.DictReader(io.StringIO(body)))
    assert [row["reward"] for row in rows] == ["1", "0", "0", "1", "1", "0", "", "0"]
