"""Traces made into runs and scored in batches (docs/live-traces.md#throughput): the work of a
batch does not grow with its traces, trials and places are numbered across batches as one
by one, and the counts stay the sums of the scored runs."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, connections
from django.test.utils import CaptureQueriesContext
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from scoring.live import assembly
from scoring.models import Result, Run, ScoredChunk, Submission, Trace
from tests.support.otlp_data import assemble_due, export, post

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("assembled_when_told")]


def send(sender, suite, traces: range, case="weather", label="") -> None:
    request = ExportTraceServiceRequest()
    for number in traces:
        request.resource_spans.extend(
            export(suite.pk, trace=number, case=case, label=label).resource_spans
        )
    post(sender, request)


def queries_to_assemble(sender, suite, traces: range) -> int:
    send(sender, suite, traces)
    with CaptureQueriesContext(connection) as queries:
        assert assemble_due() == len(traces)
    return len(queries)


def test_a_batch_costs_the_same_queries_for_3_traces_as_for_60(sender, suite):
    few = queries_to_assemble(sender, suite, range(1, 4))
    many = queries_to_assemble(sender, suite, range(4, 64))
    assert many <= few
    live = Submission.objects.get(suite=suite)
    assert (live.stored_runs, live.scored, live.passed, live.status) == (63, 63, 63, "done")


def test_trials_and_places_continue_across_batches(sender, suite):
    send(sender, suite, range(1, 3), case="weather")
    send(sender, suite, range(3, 5), case="weather-answer")
    assert assemble_due() == 4
    send(sender, suite, range(5, 8), case="weather")
    assert assemble_due() == 3
    runs = Run.objects.order_by("seq").values_list("seq", "case_key", "trial", "case_order")
    assert [(seq, key, trial) for seq, key, trial, _ in runs] == [
        (1, "weather", 0),
        (2, "weather", 1),
        (3, "weather-answer", 0),
        (4, "weather-answer", 1),
        (5, "weather", 2),
        (6, "weather", 3),
        (7, "weather", 4),
    ]
    assert all(order for *_, order in runs)  # sorted naturally on the runs table
    assert sorted(Trace.objects.values_list("run__seq", flat=True)) == list(range(1, 8))


def test_counts_stay_the_sums_of_the_scored_runs_when_a_run_is_made_again(sender, suite):
    send(sender, suite, range(1, 4))
    assemble_due()
    post(sender, export(suite.pk, trace=2))  # sent again: the trace is made into its run again
    assert assemble_due() == 1
    live = Submission.objects.get(suite=suite)
    chunks = ScoredChunk.objects.filter(submission=live, generation=live.generation)
    assert live.scored == sum(chunks.values_list("scored", flat=True)) == Result.objects.count()
    assert (live.stored_runs, live.total, live.scored) == (3, 3, 3)


def test_a_batch_delivered_twice_makes_and_scores_its_runs_once(sender, suite):
    send(sender, suite, range(1, 6))
    pks = list(Trace.objects.values_list("pk", flat=True))
    assert assembly.assemble(pks) == 5
    assert assembly.assemble(pks) == 0
    live = Submission.objects.get(suite=suite)
    assert (live.stored_runs, live.scored, Result.objects.count()) == (5, 5, 5)


def test_runs_made_but_not_scored_are_scored_by_the_next_delivery(sender, suite, monkeypatch):
    send(sender, suite, range(1, 4))
    pks = list(Trace.objects.values_list("pk", flat=True))
    monkeypatch.setattr(assembly, "score_runs", lambda *args: None)  # the worker died here
    assert assembly.assemble(pks) == 3
    assert Result.objects.count() == 0
    monkeypatch.undo()
    assert assembly.assemble(pks) == 0  # made already: only scored
    live = Submission.objects.get(suite=suite)
    assert (live.scored, live.passed, live.status) == (3, 3, "done")


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif("connection.vendor != 'postgresql'", reason="row locks: PostgreSQL's")
def test_workers_given_the_same_traces_share_them_without_waiting_or_doubling(sender, suite):
    send(sender, suite, range(1, 201))
    pks = list(Trace.objects.values_list("pk", flat=True))
    made, errors = [], []

    def worker():
        try:
            made.append(assembly.assemble(pks))
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert sum(made) == 200
    live = Submission.objects.get(suite=suite)
    assert (live.stored_runs, live.scored, Result.objects.count()) == (200, 200, 200)
    assert sorted(Run.objects.values_list("seq", flat=True)) == list(range(1, 201))
    assert sorted(Run.objects.values_list("trial", flat=True)) == list(range(200))
