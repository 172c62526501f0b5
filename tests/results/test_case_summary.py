"""Comparisons read from the runs summarized case by case once a submission is scored
(``CaseSummary``): the classes, counts and shown runs are what the runs themselves say
(trials on both sides compared, trials on one side flagged), a submission without its
current summary is summarized when compared, a re-score replaces it, and the page reads
no run."""

from __future__ import annotations

import random
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from cases import services
from scoring.ingest.pipeline import rescore
from scoring.models import CaseSummary, Run, Status, Verdict
from scoring.results.comparison import Comparison, scope_of, summaries
from tests.support.pages import text

KEYS = [f"task-{i}" for i in range(14)]


def suite_document(word: str = "ok") -> dict:
    cases = [
        {"key": k, "expectations": [{"type": "final_text_contains", "text": word}]} for k in KEYS
    ]
    return {"schema": "casebook.suite/1", "name": "trials", "cases": cases}


def random_runs(seed: int) -> list[dict]:
    """Up to five trials of most cases (their numbers with gaps), each passing or not at
    random, some trials (and some cases) missing: trials on one side only, cases new or
    gone."""
    chosen = random.Random(seed)
    return [
        {"case": key, "trial": trial, "batches": [], "final_text": chosen.choice(["ok", "no"])}
        for key in chosen.sample(KEYS, 11)
        for trial in chosen.sample([0, 1, 2, 3, 7, 8, 1000], chosen.randint(1, 5))
    ]


@pytest.fixture
def pair(team, admin, submit):
    suite = services.create_suite(team, suite_document(), admin)
    return submit(suite, random_runs(1), label="before"), submit(
        suite, random_runs(2), label="after"
    )


def change_of(base: dict, cand: dict) -> str:
    """The class of a case from its compared trials' verdicts (trial → passed)."""
    base_rate, cand_rate = sum(base.values()) / len(base), sum(cand.values()) / len(cand)
    if cand_rate != base_rate:
        return "regressed" if cand_rate < base_rate else "fixed"
    if all(cand.values()):
        return "still_passing"
    return "unchanged" if any(cand.values()) else "still_failing"


def from_the_runs(baseline, candidate) -> dict[str, tuple]:
    """Case → (change, delta, one side, base runs, base passed, cand runs, cand passed),
    counted from the runs themselves."""
    trials = {}
    for submission_id, key, trial, verdict in Run.objects.filter(
        submission__in=(baseline, candidate), result__isnull=False
    ).values_list("submission_id", "case_key", "trial", "result__verdict"):
        trials.setdefault(key, {}).setdefault(submission_id, {})[trial] = verdict == Verdict.PASS
    found = {}
    for key, sides in trials.items():
        base, cand = sides.get(baseline.pk, {}), sides.get(candidate.pk, {})
        both = base.keys() & cand.keys()
        b = {t: v for t, v in base.items() if t in both} if both else base
        c = {t: v for t, v in cand.items() if t in both} if both else cand
        delta = sum(c.values()) / len(c) - sum(b.values()) / len(b) if b and c else None
        change = change_of(b, c) if b and c else "new" if c else "gone"
        one_side = len(base) + len(cand) - 2 * len(both) if both else 0
        found[key] = (
            change,
            delta,
            one_side,
            len(base),
            sum(base.values()),
            len(cand),
            sum(cand.values()),
        )
    return found


def from_the_summaries(baseline, candidate) -> dict[str, tuple]:
    comparison = Comparison(baseline, candidate, scope_of(baseline, candidate))
    return {
        row.case: (
            row.change.value,
            row.delta,
            row.one_side,
            *((row.baseline.runs, row.baseline.passed) if row.baseline else (0, 0)),
            *((row.candidate.runs, row.candidate.passed) if row.candidate else (0, 0)),
        )
        for row in comparison.all_rows
    }


def page(client, baseline, candidate, **params) -> str:
    query = "".join(f"&{k}={v}" for k, v in params.items())
    url = f"/suites/{baseline.suite_id}/compare/?baseline={baseline.pk}&candidate={candidate.pk}"
    html = text(client.get(url + query))
    return re.sub(r'(csrfmiddlewaretoken" value=|X-CSRFToken": )"[^"]*"', "", html)


def test_the_summaries_say_what_the_runs_say(pair):
    expected = from_the_runs(*pair)
    assert {change for change, *_ in expected.values()} >= {"regressed", "fixed", "new", "gone"}
    assert any(one_side for _, _, one_side, *_ in expected.values())
    assert from_the_summaries(*pair) == expected


def test_the_page_reads_the_summaries_and_makes_a_missing_one(pair, as_user, viewer):
    client = as_user(viewer)
    views = [{}, {"sort": "delta"}, {"sort": "-delta"}, {"sort": "case"}, {"change": "fixed"}]
    with CaptureQueriesContext(connection) as queries:
        stored = [page(client, *pair, **params) for params in views]
    assert not [q["sql"] for q in queries if re.search(r"scoring_(run|result)\b", q["sql"])]
    assert "task-" in stored[0]
    CaseSummary.objects.filter(submission__in=pair).delete()
    assert [page(client, *pair, **params) for params in views] == stored
    assert CaseSummary.objects.filter(submission=pair[0]).count() == 11


def test_each_shown_run_is_of_its_case_and_side(pair):
    baseline, candidate = pair
    for row in Comparison(baseline, candidate, scope_of(baseline, candidate)).all_rows:
        for submission, side in ((baseline, row.baseline), (candidate, row.candidate)):
            if side is not None:
                run = Run.objects.get(pk=side.shown_run)
                assert (run.submission_id, run.case_key, run.trial) == (
                    submission.pk,
                    row.case,
                    side.shown_trial,
                )


def test_a_rescore_replaces_the_summary(pair, admin, run_tasks, django_capture_on_commit_callbacks):
    baseline, candidate = pair
    before = from_the_summaries(*pair)
    version = services.replace_contents(baseline.suite, suite_document(word="no"), admin)
    with django_capture_on_commit_callbacks(execute=False):
        rescore(candidate, version)
    candidate.refresh_from_db()
    assert not summaries(candidate, scope_of(baseline, candidate))  # not done: not made
    with run_tasks():
        rescore(candidate, version)
    candidate.refresh_from_db()
    assert candidate.status == Status.DONE
    assert set(
        CaseSummary.objects.filter(submission=candidate).values_list("generation", flat=True)
    ) == {candidate.generation}
    after = from_the_summaries(baseline, candidate)
    assert after != before
    assert after == from_the_runs(baseline, candidate)
