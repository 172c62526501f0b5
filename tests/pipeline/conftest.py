"""Builders for the pipeline tests (DESIGN.md §5): a team and its suites, run files, and
uploads taken through ingestion and scoring in this process (Celery's eager mode).

Two suites: the demo suite, and one made from τ-bench's airline tasks (tests/tau_bench.py).
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterable
from pathlib import Path

import pytest
from django.db.models import Count
from django.test import TestCase

from cases import services
from cases.models import Membership, Role, Team
from scoring.matcher import load_suite
from scoring.models import PredicateResult, Result, Run, ScoredChunk, Status, Submission
from scoring.submissions import create_submission
from tests import tau_bench

ROOT = Path(__file__).resolve().parents[2]
DEMO = json.loads((ROOT / "cases/demo/assistant.suite.json").read_text())
DEMO_RUNS = (ROOT / "cases/demo/assistant.runs.jsonl").read_bytes()


def jsonl(values: Iterable) -> bytes:
    """JSON lines; a ``bytes`` value is written as it is (a broken line, say)."""
    return b"".join(
        (value if isinstance(value, bytes) else json.dumps(value).encode()) + b"\n"
        for value in values
    )


@pytest.fixture
def team(user):
    team = Team.objects.create(name="Agents", slug="agents")
    Membership.objects.create(team=team, user=user, role=Role.ADMIN)
    return team


@pytest.fixture
def demo_suite(team, user):
    return services.create_suite(team, DEMO, user)


@pytest.fixture
def tau_suite(team, user):
    return services.create_suite(team, tau_bench.suite_document(), user)


def upload(suite, data: bytes, user=None, **kwargs) -> Submission:
    """Upload ``data`` and run what it enqueues (ingestion, then scoring) to the end."""
    with TestCase.captureOnCommitCallbacks(execute=True):
        submission = create_submission(suite, user, io.BytesIO(data), **kwargs)
    submission.refresh_from_db()
    return submission


def assert_consistent(submission: Submission) -> None:
    """The submission is done and its counts are what its rows say: every run of a case in
    its version has exactly one result, the others none, and each run counts once."""
    submission.refresh_from_db()
    assert submission.status == Status.DONE, (submission.status, submission.error)
    keys = set(load_suite(submission.version.document, strict=False).by_key)
    runs = Run.objects.filter(submission=submission)
    known = runs.filter(case_key__in=keys)
    assert submission.stored_runs == runs.count()
    assert sorted(runs.values_list("seq", flat=True)) == list(range(1, runs.count() + 1))
    assert submission.total == known.count()
    results = Result.objects.filter(submission=submission)
    assert set(results.values_list("run_id", flat=True)) == set(known.values_list("pk", flat=True))
    assert not results.exclude(run__submission=submission).exists()
    by_verdict = dict(results.values_list("verdict").annotate(n=Count("pk")))
    assert submission.scored == results.count() == submission.total
    assert (submission.passed, submission.failed, submission.errored) == (
        by_verdict.get("pass", 0),
        by_verdict.get("fail", 0),
        by_verdict.get("error", 0),
    )
    predicates = PredicateResult.objects.filter(submission=submission)
    assert predicates.count() == sum(len(r.report["predicates"]) for r in results)
    assert not predicates.exclude(result__submission=submission).exists()
    chunks = ScoredChunk.objects.filter(submission=submission)
    assert sorted(chunks.values_list("generation", "index")) == [
        (submission.generation, index) for index in range(submission.chunk_count)
    ]
