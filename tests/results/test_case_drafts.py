"""The bulk drafting of cases from a filter's passing runs (scoring/results/case_drafts.py): which
run each case key's draft comes from, what a draft revision keeps, and the bounds."""

from __future__ import annotations

import io
import json

import pytest

from cases import services
from scoring.ingest.pipeline import create_submission
from scoring.results import case_drafts
from scoring.results.filtersets import RunFilterSet

SUITE = {
    "schema": "casebook.suite/1",
    "name": "shop",
    "cases": [
        {
            "key": "look",
            "title": "Look an order up",
            "tags": ["orders"],
            "expected_calls": [{"name": "lookup"}],
            "expectations": [{"type": "no_error"}],
        },
        {"key": "wave", "tags": ["hello"], "expected_calls": []},
    ],
}


def lookup(order: str) -> dict:
    return {"name": "lookup", "arguments": {"order": order}}


RUNS = [
    {"case": "look", "trial": 0, "batches": [[]], "error": "crashed"},  # fails
    {
        "case": "look",
        "trial": 1,
        "batches": [[lookup("A-1")]],
        "transcript": [{"role": "user", "text": "Where is A-1?"}],
    },
    {"case": "look", "trial": 2, "batches": [[lookup("A-2")], [lookup("A-3")]]},
    {"case": "wave", "trial": 0, "batches": [[{"name": "wave", "id": "w1"}]]},
]


@pytest.fixture
def submission(team, admin, django_capture_on_commit_callbacks):
    suite = services.create_suite(team, SUITE, admin)
    with django_capture_on_commit_callbacks(execute=True):
        made = create_submission(
            suite, admin, io.BytesIO("".join(json.dumps(r) + "\n" for r in RUNS).encode())
        )
    made.refresh_from_db()
    return made


def run_of(submission, key: str, trial: int) -> int:
    return submission.runs.get(case_key=key, trial=trial).pk


def test_each_key_is_drafted_from_its_first_passing_run_as_a_revision_of_its_case(submission):
    drafts = case_drafts.draft_cases(submission, RunFilterSet(), into=submission.suite)
    assert (drafts.keys, drafts.runs, drafts.left_out) == (2, 3, 0)
    look, wave = drafts.drafts
    assert look.key == "look"
    assert look.run.trial == 1  # trial 0 failed
    assert [t.trial for t in look.trials] == [1, 2]
    assert look.revises
    assert look.case == {
        **services.case_document(submission.suite.cases.get(key="look")),
        "prompt": "Where is A-1?",
        "expected_calls": [
            {
                "name": "lookup",
                "required_args": {"order": "A-1"},
                "ordered": False,
                "depends_on_result": False,
            }
        ],
    }
    assert look.labels == ['lookup(order="A-1")', "no run error"]
    assert look.current_labels == ["lookup()", "no run error"]
    assert wave.case["expected_calls"][0] == {
        "name": "wave",
        "required_args": {},
        "ordered": False,
        "depends_on_result": False,
    }


def test_the_trial_picked_is_drafted_when_it_is_one_of_the_keys_passing_runs(submission):
    later = run_of(submission, "look", 2)
    drafts = case_drafts.draft_cases(submission, RunFilterSet(), into=None, picks=[later])
    look = drafts.drafts[0]
    assert look.run.run_id == later
    assert [c["required_args"] for c in look.case["expected_calls"]] == [
        {"order": "A-2"},
        {"order": "A-3"},
    ]
    assert look.case["expected_calls"][1]["depends_on_result"] is True
    # a failing run, or another key's, is no pick for the key: its first passing run is
    for other in (run_of(submission, "look", 0), run_of(submission, "wave", 0)):
        drafts = case_drafts.draft_cases(submission, RunFilterSet(), into=None, picks=[other])
        assert drafts.drafts[0].run.trial == 1


def test_for_a_new_suite_every_draft_is_a_new_case(submission):
    drafts = case_drafts.draft_cases(submission, RunFilterSet(), into=None)
    assert not any(d.revises for d in drafts.drafts)
    look = drafts.drafts[0].case
    assert look["title"] == "From trial 1 of look"
    assert "tags" not in look
    document = case_drafts.new_suite_document("regressions", submission, drafts.drafts)
    assert document["name"] == "regressions"
    assert [c["key"] for c in document["cases"]] == ["look", "wave"]
    services.validate_suite(document)


def test_the_filter_narrows_the_runs_and_only_passing_ones_are_drafted(submission):
    drafts = case_drafts.draft_cases(submission, RunFilterSet({"tag": "hello"}), into=None)
    assert [d.key for d in drafts.drafts] == ["wave"]
    failing = case_drafts.draft_cases(submission, RunFilterSet({"verdict": "fail"}), into=None)
    assert failing.runs == 3  # the filter's verdict gives way to "passed"


def test_drafts_and_trials_offered_are_capped(submission, monkeypatch):
    monkeypatch.setattr(case_drafts, "DRAFTS_PER_REQUEST", 1)
    monkeypatch.setattr(case_drafts, "TRIALS_OFFERED", 1)
    drafts = case_drafts.draft_cases(submission, RunFilterSet(), into=None)
    assert [d.key for d in drafts.drafts] == ["look"]
    assert drafts.left_out == 1
    assert [t.trial for t in drafts.drafts[0].trials] == [1]
