"""What a process keeps between requests stays right when rows are rolled back: SQLite gives
a rolled-back row's id out again, to a row with other content (PostgreSQL's sequences never
do, so there these pass either way)."""

from __future__ import annotations

import io
import json
from contextlib import contextmanager

import pytest
from django.db import transaction
from django.test import TestCase

from cases import services
from scoring.ingest.pipeline import create_submission
from scoring.results.tables import case_trials


@contextmanager
def rolled_back():
    """A transaction that is rolled back at its end, as a failed request's is."""
    with transaction.atomic():
        yield
        transaction.set_rollback(True)


def one_case_suite(key: str) -> dict:
    return {
        "schema": "casebook.suite/1",
        "name": "Cached",
        "cases": [{"key": key, "expected_calls": [{"name": "wave"}], "expectations": []}],
    }


def upload(suite, user, runs: list[dict]):
    with TestCase.captureOnCommitCallbacks(execute=True):  # ingest and score it now
        lines = b"".join(json.dumps(run).encode() + b"\n" for run in runs)
        submission = create_submission(suite, user, io.BytesIO(lines))
    submission.refresh_from_db()
    return submission


@pytest.mark.django_db
def test_a_version_whose_id_comes_back_with_other_content_is_read_afresh(team, admin):
    with rolled_back():
        gone = services.create_suite(team, one_case_suite("first"), admin).latest_version
        assert [case.key for case in gone.matcher_suite().cases] == ["first"]
    version = services.create_suite(team, one_case_suite("second"), admin).latest_version
    assert [case.key for case in version.matcher_suite().cases] == ["second"]


@pytest.mark.django_db
def test_the_figures_of_a_submission_whose_id_comes_back_are_worked_out_afresh(team, admin):
    wave = {"case": "k", "batches": [[{"name": "wave"}]]}
    with rolled_back():
        suite = services.create_suite(team, one_case_suite("k"), admin)
        gone = upload(suite, admin, [wave, wave])
        assert [(c.case, c.runs, c.passed) for c in case_trials(gone).cases] == [("k", 2, 2)]
    suite = services.create_suite(team, one_case_suite("k"), admin)
    submission = upload(suite, admin, [{"case": "k", "batches": []}])
    assert [(c.case, c.runs, c.passed) for c in case_trials(submission).cases] == [("k", 1, 0)]
