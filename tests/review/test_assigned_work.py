"""The "My work" page (docs/review.md#my-work): the review queues with runs dealt out to me and
the runs assigned to me, across every suite I may see (and none I may not), linked from the
navigation; a queue's "Next run" reserves my next run."""

from __future__ import annotations

import re

import pytest

from cases import services
from scoring.results.filtersets import RunFilterSet
from scoring.review import decisions, queues
from tests.support.builders import make_team
from tests.support.pages import demo_document, text
from tests.support.runs import DELETE_FAIL, GREETING_FAIL, GREETING_PASS, WEATHER_FAIL


@pytest.fixture
def work(team, admin, editor, submit, outsider):
    """Two suites of ``team`` with work for ``editor``, and a suite of another team where
    ``editor`` once had some (they have left it since)."""
    first = services.create_suite(team, demo_document(), admin)
    second_document = demo_document()
    second_document["name"] = "second suite"
    second = services.create_suite(team, second_document, admin)
    a = submit(first, [GREETING_FAIL, WEATHER_FAIL, DELETE_FAIL, GREETING_PASS], label="agent-a")
    b = submit(second, [GREETING_FAIL, DELETE_FAIL], label="agent-b")
    queue = queues.build_queue(
        a,
        "Failing runs",
        admin,
        filters=RunFilterSet({"verdict": "fail"}),
        reviewers=[editor, admin],
    )
    decisions.assign(b.runs.filter(case_key="delete-if-exists"), editor, admin)
    decisions.assign(b.runs.filter(case_key="greeting"), admin, admin)
    hidden_team = make_team("Elsewhere", admin=outsider)
    hidden = services.create_suite(hidden_team, demo_document(), outsider)
    c = submit(hidden, [DELETE_FAIL], label="secret-agent", user=outsider)
    decisions.assign(c.runs.all(), editor, outsider)
    return {"queue": queue, "a": a, "b": b, "c": c}


def test_my_work_lists_my_queues_and_runs_across_suites(as_user, editor, work):
    html = text(as_user(editor).get("/my-work/"))
    assert '<a href="/my-work/">My work</a>' in html  # in the navigation
    queue = work["queue"]
    # Three failing runs dealt out in turn to admin and editor: one is the editor's.
    assert f'<a href="/queues/{queue.pk}/">Failing runs</a>' in html
    assert '<td class="num">1 <span class="muted small">of 1</span></td>' in html
    assert f'action="/queues/{queue.pk}/next/"' in html
    runs = html[html.index('id="my-runs"') :]
    assert re.findall(r'<code class="case-key">([^<]+)</code>', runs) == ["delete-if-exists"]
    assert "second suite" in runs
    assert "agent-b" in runs
    assert "secret-agent" not in html  # a suite the editor may no longer see


def test_my_work_shows_progress_and_decided_runs_on_request(as_user, editor, admin, work):
    queue = work["queue"]
    mine = queue.items.filter(assignee=editor).order_by("position").first()
    decisions.set_status(type(mine.run).objects.filter(pk=mine.run_id), "flaky", editor)
    decisions.set_status(work["b"].runs.filter(case_key="delete-if-exists"), "regression", editor)
    client = as_user(editor)
    html = text(client.get("/my-work/"))
    assert '<td class="num">0 <span class="muted small">of 1</span></td>' in html
    assert f'action="/queues/{queue.pk}/next/"' not in html  # nothing left of mine
    assert "No untriaged run is assigned to you." in html
    everything = text(client.get("/my-work/", {"runs": "all"}))
    runs = everything[everything.index('id="my-runs"') :]
    assert '<span class="review regression">regression</span>' in runs


def test_next_run_from_my_work_opens_my_next_run(as_user, editor, work):
    queue = work["queue"]
    response = as_user(editor).post(f"/queues/{queue.pk}/next/")
    assert response.status_code == 302
    item = queue.items.get(reserved_by=editor)
    assert item.assignee == editor
    assert response.headers["Location"].endswith(f"/runs/{item.run_id}/?queue={queue.pk}")


def test_nothing_assigned_says_so(as_user, viewer, work):
    html = text(as_user(viewer).get("/my-work/"))
    assert "No review queue has runs dealt out to you." in html
    assert "No untriaged run is assigned to you." in html


def test_my_work_needs_signing_in(client):
    response = client.get("/my-work/")
    assert response.status_code == 302
    assert "/accounts/login/" in response.headers["Location"]
