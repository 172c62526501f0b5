"""Case keys in natural order everywhere they are sorted: ``task-2`` before ``task-10`` in the
runs table (on every page of it, both ways, and the run page's previous and next), the CSV, the
per-case trials, the runs of unknown cases (page and API) and the comparison sorted by case;
the stored order key filled for runs stored before."""

from __future__ import annotations

import csv
import importlib
import io
import random
import re

import pytest

from cases import services
from cases.natural import natural_key, natural_sorted
from scoring.models import Run
from scoring.results.tables import case_trials
from tests.support.pages import text
from tests.support.runs import run_keys, url

KEYS = [f"task-{n}" for n in range(1, 61)]  # more than a page of the runs table (50)


def test_natural_key_orders_numbers_by_value():
    keys = ["task-10", "task-2", "task-1", "Task-3", "task-02", "b10c", "b9c", "b", "a-100-2"]
    assert natural_sorted(keys) == [
        "Task-3",
        "a-100-2",
        "b",
        "b9c",
        "b10c",
        "task-1",
        "task-02",  # the same number as task-2: the exact text breaks the tie
        "task-2",
        "task-10",
    ]
    assert natural_key("task-2") < natural_key("task-10") < natural_key("task-10a")
    assert natural_key("v1.10") > natural_key("v1.9")
    assert natural_key("007") == natural_key("7")
    # A very long number is cut, not an error, and still sorts after shorter ones.
    assert natural_key("x" + "9" * 500) > natural_key("x" + "9" * 98)
    assert natural_sorted([{"k": "a10"}, {"k": "a9"}], key=lambda d: d["k"]) == [
        {"k": "a9"},
        {"k": "a10"},
    ]


def document(keys) -> dict:
    cases = [
        {"key": key, "expectations": [{"type": "final_text_contains", "text": "ok"}]}
        for key in keys
    ]
    return {"schema": "casebook.suite/1", "name": "numbered", "cases": cases}


@pytest.fixture
def suite(team, admin):
    return services.create_suite(team, document(KEYS), admin)


@pytest.fixture
def scored(suite, submit):
    shuffled = KEYS[:]
    random.Random(13).shuffle(shuffled)
    lines = [{"case": key, "batches": [], "final_text": "nope"} for key in shuffled]
    lines += [{"case": key, "batches": []} for key in ("zz-10", "zz-9", "zz-100")]
    return submit(suite, lines)


def test_the_runs_table_sorts_case_keys_naturally_across_its_pages(as_user, viewer, scored):
    client = as_user(viewer)
    shown = []
    for page in (1, 2):
        html = text(client.get(url(scored), {"sort": "case", "page": page}))
        shown += [key for key, _ in run_keys(html)]
    assert shown == KEYS
    backwards = []
    for page in (1, 2):
        html = text(client.get(url(scored), {"sort": "-case", "page": page}))
        backwards += [key for key, _ in run_keys(html)]
    assert backwards == KEYS[::-1]


def test_the_run_page_moves_to_the_next_failure_in_natural_order(as_user, viewer, scored):
    run = scored.runs.get(case_key="task-9")
    html = text(as_user(viewer).get(url(scored, f"runs/{run.pk}/"), {"sort": "case"}))
    following = scored.runs.get(case_key="task-10")
    previous = scored.runs.get(case_key="task-8")
    assert f"/runs/{following.pk}/?sort=case" in html
    assert f"/runs/{previous.pk}/?sort=case" in html


def test_the_csv_sorted_by_case_is_in_natural_order(as_user, viewer, scored):
    response = as_user(viewer).get(url(scored, "runs.csv"), {"sort": "case"})
    body = b"".join(response.streaming_content).decode()
    assert [row["case"] for row in csv.DictReader(io.StringIO(body))] == KEYS


def test_trials_per_case_and_unknown_cases_are_in_natural_order(as_user, viewer, client, scored):
    assert [c.case for c in case_trials(scored).cases] == KEYS
    html = text(as_user(viewer).get(url(scored)))
    unknown = html[html.index("Runs of unknown cases") :]
    assert re.findall(r'<code class="case-key">(zz-\d+)</code>', unknown) == [
        "zz-9",
        "zz-10",
        "zz-100",
    ]
    api = client.get(f"/api/submissions/{scored.pk}/").json()
    assert api["unknown_cases"] == ["zz-9", "zz-10", "zz-100"]


def test_the_comparison_sorted_by_case_is_in_natural_order(as_user, viewer, suite, scored, submit):
    other = submit(suite, [{"case": key, "batches": [], "final_text": "ok"} for key in KEYS])
    query = {"baseline": scored.pk, "candidate": other.pk, "sort": "case"}
    html = text(as_user(viewer).get(f"/suites/{suite.pk}/compare/", query))
    keys = re.findall(
        r'<tr class="change-row \w+">\s*<td><code class="case-key">([^<]+)</code>', html
    )
    assert keys == KEYS[:50]  # the first page


def test_runs_stored_before_get_their_order_key(scored):
    Run.objects.filter(submission=scored).update(case_order="")
    migration = importlib.import_module("scoring.migrations.0013_earlier_results_and_natural_order")

    class Apps:
        @staticmethod
        def get_model(app, name):
            return Run

    migration.fill_case_order(Apps, None)
    stored = dict(Run.objects.filter(submission=scored).values_list("case_key", "case_order"))
    assert stored["task-2"] == natural_key("task-2") == "task-012"
    assert all(order == natural_key(key) for key, order in stored.items())
