"""Cases from runs in a real browser: an editor narrows τ-bench's runs table, drafts a case
from a passing trial they pick and saves it as a new suite, which then passes that trial and
fails the trials that did not do the task; and, in the case editor, a run pasted in the "try a
run" box drafts the expected calls, which then pass that run."""

from __future__ import annotations

import io
import json

import pytest
from playwright.sync_api import expect

from cases import services
from cases.models import Membership, Role, Suite, Team
from scoring.ingest.pipeline import create_submission
from scoring.models import Result
from tests.support import tau_bench

from .browsing import round_trip, sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def team(user):
    made = Team.objects.create(name="Agents", slug="agents")
    Membership.objects.create(team=made, user=user, role=Role.EDITOR)
    return made


def submit(suite, user, lines: list[dict], label: str):
    data = "".join(json.dumps(line) + "\n" for line in lines).encode()
    made = create_submission(suite, user, io.BytesIO(data), label=label)  # scored here
    made.refresh_from_db()
    return made


def verdicts(submission) -> dict[int, str]:
    """Each run's verdict, by its trial."""
    results = Result.objects.filter(submission=submission).values_list("run__trial", "verdict")
    return dict(results)


def test_a_suite_made_from_a_picked_passing_trial_passes_it_and_fails_the_failed_trials(
    page, live_server, user, password, team
):
    suite = services.create_suite(team, tau_bench.suite_document(), user)
    lines = [tau_bench.run_line(record) for record in tau_bench.RECORDS]
    submission = submit(suite, user, lines, "gpt-4o")
    # a task some of whose trials pass (two at least, to pick the second) and some fail
    by_key: dict[str, dict[int, str]] = {}
    for key, trial, verdict in Result.objects.filter(submission=submission).values_list(
        "run__case_key", "run__trial", "verdict"
    ):
        by_key.setdefault(key, {})[trial] = verdict
    key, trials = next(
        (key, trials)
        for key, trials in sorted(by_key.items())
        if list(trials.values()).count("pass") >= 2 and "fail" in trials.values()
    )
    passed = sorted(trial for trial, verdict in trials.items() if verdict == "pass")

    sign_in(page, live_server, user.username, password)
    page.goto(f"{live_server.url}{submission.get_absolute_url()}")
    page.get_by_label("Case", exact=True).fill(key)
    expect(page.locator("#runs tbody tr")).to_have_count(len(trials))
    page.get_by_role("link", name="Cases from the passing runs").click()

    expect(page.get_by_role("heading", name="Cases from these runs")).to_be_visible()
    expect(page.locator("[data-draft-runs]")).to_have_text(f"{len(passed)} runs of 1 case")
    draft = page.locator(f"[data-draft='{key}']")
    expect(draft.get_by_text("draft revision of the case")).to_be_visible()
    trial = draft.get_by_label("from trial")
    expect(trial).to_have_value(str(_run_id(submission, key, passed[0])))
    trial.select_option(label=str(passed[1]))  # the page drafts from the trial picked
    expect(page.locator(f"[data-draft='{key}'] a", has_text="the run")).to_have_attribute(
        "href", f"/submissions/{submission.pk}/runs/{_run_id(submission, key, passed[1])}/"
    )
    page.get_by_label("as a new suite").check()
    expect(page.get_by_label("New suite's name")).to_be_visible()
    expect(page.locator(f"[data-draft='{key}']").get_by_text("new case")).to_be_visible()
    page.get_by_label("New suite's name").fill("τ-bench regressions")
    page.get_by_label("Team").select_option(label="Agents")
    page.get_by_role("button", name="Save the ticked drafts").click()

    expect(page.get_by_text("Made the suite τ-bench regressions of 1 case")).to_be_visible()
    made = Suite.objects.get(name="τ-bench regressions")
    assert page.url == f"{live_server.url}{made.get_absolute_url()}"
    assert [case.key for case in made.cases.all()] == [key]
    # The point of it: the case passes the trial it was made from, and fails each
    # trial that failed the task's ground truth (their calls are not the trial's).
    task = [line for line in lines if line["case"] == key]
    judged = verdicts(submit(made, user, task, "again"))
    assert judged[passed[1]] == "pass"
    for number, verdict in trials.items():
        if verdict == "fail":
            assert judged[number] == "fail"


def test_new_case_from_a_tau_bench_run_passes_it_and_fails_the_failed_trials(
    page, live_server, user, password, team
):
    """The single flow's done-when in the browser: "New case from this run" on a passing
    trial's page, saved as it is drafted."""
    suite = services.create_suite(team, tau_bench.suite_document(), user)
    lines = [tau_bench.run_line(record) for record in tau_bench.RECORDS]
    submission = submit(suite, user, lines, "gpt-4o")
    failed_keys = set(
        Result.objects.filter(submission=submission, verdict="fail").values_list(
            "run__case_key", flat=True
        )
    )
    source = (
        Result.objects.filter(submission=submission, verdict="pass", run__case_key__in=failed_keys)
        .select_related("run")
        .order_by("run__seq")
        .first()
        .run
    )
    sign_in(page, live_server, user.username, password)
    page.goto(f"{live_server.url}/submissions/{submission.pk}/runs/{source.pk}/")
    page.get_by_role("link", name="New case from this run").click()
    key = f"{source.case_key}-run-{source.pk}"
    expect(page.get_by_label("Key")).to_have_value(key)
    page.get_by_role("button", name="Add case").click()
    expect(page.get_by_text(f"Saved case {key} as version 2.")).to_be_visible()
    task = [{**line, "case": key} for line in lines if line["case"] == source.case_key]
    judged = verdicts(submit(suite, user, task, "again"))
    assert judged[source.trial] == "pass"
    before = dict(
        Result.objects.filter(submission=submission, run__case_key=source.case_key).values_list(
            "run__trial", "verdict"
        )
    )
    assert "fail" in before.values()
    for number, verdict in before.items():
        if verdict == "fail":
            assert judged[number] == "fail"


def _run_id(submission, key: str, trial: int) -> int:
    return submission.runs.get(case_key=key, trial=trial).pk


CATALOG = [
    {
        "name": "search_direct_flight",
        "parameters": {
            "type": "object",
            "properties": {"origin": {"type": "string"}, "destination": {"type": "string"}},
        },
    }
]


def test_a_pasted_run_drafts_the_expected_calls_which_then_pass_it(
    page, live_server, user, password, team
):
    document = {"schema": "casebook.suite/1", "name": "airline", "tools": CATALOG, "cases": []}
    suite = services.create_suite(team, document, user)
    record = next(r for r in tau_bench.RECORDS if r["reward"] == 1)
    sign_in(page, live_server, user.username, password)
    page.goto(f"{live_server.url}/suites/{suite.pk}/cases/new/")
    page.get_by_label("Key").fill("from-a-trajectory")
    pasted = page.get_by_label("Run to try")

    pasted.fill('{"messages": [')  # not a run: said in the box, the editor untouched
    page.get_by_role("button", name="Draft expected calls from it").click()
    expect(page.locator("#try-result")).to_contain_text("invalid JSON")
    expect(page.locator("#try-result")).to_contain_text("The pasted text is not a run")
    expect(page.get_by_text("No expected calls")).to_be_visible()

    pasted.fill(json.dumps(record["traj"]))
    round_trip(page, page.get_by_role("button", name="Draft expected calls from it").click)
    calls = sum(len(m.get("tool_calls") or []) for m in record["traj"])
    expect(page.locator("[data-drafted]")).to_contain_text(
        f"{calls} expected calls drafted from the pasted run (openai_chat)"
    )
    expect(page.locator("#editor .rowcard[id^='call-']")).to_have_count(calls)
    expect(page.locator("#try-result")).to_be_empty()  # the earlier complaint is gone
    first_user = next(m["content"] for m in record["traj"] if m["role"] == "user")
    expect(page.get_by_label("Prompt")).to_have_value(first_user)
    expect(page.locator("input[name='call-1-depends_on_result']")).to_be_checked()
    expect(page.get_by_label("Key")).to_have_value("from-a-trajectory")

    page.get_by_role("button", name="Score it").click()  # the drafts pass the run they came from
    expect(page.locator("#try-result .verdict")).to_have_text("pass")

    page.get_by_role("button", name="Add case").click()
    expect(page.get_by_text("Saved case from-a-trajectory as version 2.")).to_be_visible()
    saved = services.case_document(suite.cases.get(key="from-a-trajectory"))
    assert len(saved["expected_calls"]) == calls
    assert saved["prompt"] == first_user
