"""Agent frameworks' traces sent live, as the pages show them (docs/live-traces.md#frameworks).

Traces that are no run (docs/live-traces.md#assembly): no span of them is a model call, an
agent's turn or a tool call, and none names its case. AutoGen sends one when an agent is
made, before its run, with the case its process's resource names: counted on the day's live
submission, shown on the suite page's panel, never a run nor an invalid line. What a reader
assumed (Semantic Kernel's plugin prefix dropped) and what was not recorded (the batches,
with no model call) are said on the run page."""

from __future__ import annotations

import pytest

from cases import services, tokens
from scoring.live import assembly
from scoring.models import Run, Submission, Trace
from tests.support.otlp_fixtures import PRODUCER_SUITE, requests
from tests.support.pages import text

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("assembled_when_told")]


@pytest.fixture
def suite(team, admin):
    return services.create_suite(team, PRODUCER_SUITE, admin)


def send(client, key: str, variant: str) -> None:
    for signal, body, content_type, gzipped in requests(variant):
        headers = {"HTTP_AUTHORIZATION": f"Token {key}"}
        if gzipped:
            headers["HTTP_CONTENT_ENCODING"] = "gzip"
        response = client.post(f"/otlp/v1/{signal}", body, content_type=content_type, **headers)
        assert response.status_code == 200


def test_traces_with_no_call_and_no_case_of_their_own_are_counted_not_made_runs(
    client, as_user, editor, suite
):
    send(client, tokens.create(editor, "agent", suite=suite)[1], "autogen-otel")
    assert assembly.assemble_due() == 2
    assert [run.case_key for run in Run.objects.order_by("seq")] == ["weather", "add"]
    live = Submission.objects.get()
    assert (live.ignored_traces, live.invalid, live.stored_runs) == (2, 0, 2)
    assert Trace.objects.filter(run=None, pending=False).count() == 2
    page = text(as_user(editor).get(f"/suites/{suite.pk}/"))
    assert "2 traces with no calls ignored" in page
    assert "2 with no calls ignored" in text(as_user(editor).get(f"/submissions/{live.pk}/"))


def test_a_trace_ignored_once_is_counted_once_when_made_again(client, editor, suite):
    send(client, tokens.create(editor, "agent", suite=suite)[1], "autogen-otel")
    assembly.assemble_due()
    Trace.objects.filter(run=None).update(pending=True)  # a span of them came again
    assert assembly.assemble_due() == 0
    assert Submission.objects.get().ignored_traces == 2


def test_the_panel_says_nothing_of_ignored_traces_while_there_are_none(as_user, editor, suite):
    assert "with no calls ignored" not in text(as_user(editor).get(f"/suites/{suite.pk}/"))


def run_page(as_user, user, run) -> str:
    return text(as_user(user).get(f"/submissions/{run.submission_id}/runs/{run.pk}/"))


def test_the_run_page_says_which_plugin_names_were_read_as_the_suites(
    client, as_user, editor, suite
):
    send(client, tokens.create(editor, "agent", suite=suite)[1], "semantic-kernel")
    assembly.assemble_due()
    page = run_page(as_user, editor, Run.objects.get(case_key="weather"))
    assert "Tools-get_weather is read as get_weather" in page
    assert "get_weather(city=&quot;Paris&quot;)" in page


def test_the_run_page_says_the_batches_were_not_recorded(client, as_user, editor, suite):
    send(client, tokens.create(editor, "agent", suite=suite)[1], "crewai-openinference")
    assembly.assemble_due()
    page = run_page(as_user, editor, Run.objects.get(case_key="add"))
    assert "batch 0 · 2 calls, batches not recorded" in page
    assert "not judged: no model call was recorded" in page
    assert "openinference-instrumentation-openai" in page
