"""Representative data, loaded into a running release through its own API and pages, and
the smoke test a running release must pass: what the upgrade tests put in an old release
before upgrading it, and check it and the new one still do.

The data (docs/upgrading.md#what-ci-checks): a team with an admin, two editors and a viewer;
review labels; the demo suite (three versions, one tagged) and a τ-bench suite (two
versions); τ-bench and demo uploads, one re-scored against its older version; a live
submission made of OpenTelemetry traces; twenty reviewed runs with statuses, comments and
labels (which make known failures); a review queue worked by a reviewer and a double-blind
queue with fourteen decisions and a resolved disagreement; named API tokens and DRF ones."""

from __future__ import annotations

import base64
import json
import re
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.upgrade.casebook import Casebook, Refused
from tests.upgrade.servers import manage

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "upgrade tests' password"
ROLES = {"alice": "admin", "eddie": "editor", "rita": "editor", "vera": "viewer"}
DEMO_SUITE = json.loads((ROOT / "cases/demo/assistant.suite.json").read_text())
DEMO_RUNS = (ROOT / "cases/demo/assistant.runs.jsonl").read_bytes()
TAU_BENCH = json.loads(
    (ROOT / "tests/fixtures/tau_bench/tau-bench-airline-gpt-4o.json").read_text()
)
TAU_BENCH_TASKS = 10  # of the 50: 40 runs, enough to review and queue, quick to score
# One run of the weather agent as the OpenTelemetry SDK exported it (tests/fixtures/otel).
TRACE = json.loads((ROOT / "tests/fixtures/otel/otlp.jsonl").read_text())
WEATHER_CASE = {
    "key": "weather",
    "prompt": "Weather in Paris and Tokyo?",
    "expected_calls": [
        {"name": "get_weather", "required_args": {"city": "Paris"}},
        {"name": "get_weather", "required_args": {"city": "Tokyo"}},
    ],
}
STATUSES = ["regression", "expectation_wrong", "flaky", "wont_fix", "fixed"]
POLL_SECONDS = 60


@dataclass
class Seeded:
    """What was made, by id: enough to find it again after the upgrade."""

    users: dict[str, int]
    tokens: dict[str, str]  # username: the DRF token's key
    team: str = ""
    labels: list[int] = field(default_factory=list)
    demo_suite: int = 0
    tau_suite: int = 0
    demo: int = 0  # the re-scored demo upload
    demo_again: int = 0
    tau: int = 0
    live: int = 0
    reviewed: list[int] = field(default_factory=list)  # runs of ``tau``
    queue: int = 0
    blind_queue: int = 0


def make_users(tree: Path, database_url: str) -> tuple[dict[str, int], dict[str, str]]:
    """The users, made in a shell as an operator makes the first ones, each with the token
    ``manage.py drf_create_token`` would make (DRF's own, which every release accepts)."""
    code = (
        "from cases.models import User\n"
        "from rest_framework.authtoken.models import Token\n"
        f"for name in {sorted(ROLES)!r}:\n"
        f"    user = User.objects.create_user(name, name + '@example.com', {PASSWORD!r})\n"
        "    print(name, user.pk, Token.objects.create(user=user).key)\n"
    )
    made = re.findall(
        r"^(\w+) (\d+) (\w+)$", manage(tree, database_url, "shell", "-c", code), re.MULTILINE
    )
    return {name: int(pk) for name, pk, _ in made}, {name: key for name, _, key in made}


def otlp_export(suite: int, label: str, traces: list[int]) -> bytes:
    """OTLP/JSON (ids in hex) of the fixture's spans once per trace number, routed to the
    suite and label, each root span naming the case ``weather``."""
    resource_spans = []
    for number in traces:
        for resource in json.loads(json.dumps(TRACE["resourceSpans"])):
            resource["resource"]["attributes"] += [
                {"key": "casebook.suite", "value": {"stringValue": str(suite)}},
                {"key": "casebook.label", "value": {"stringValue": label}},
            ]
            for scope in resource["scopeSpans"]:
                for span in scope["spans"]:
                    span["traceId"] = number.to_bytes(16, "big").hex()
                    for key in ("spanId", "parentSpanId"):
                        if span.get(key):
                            span[key] = base64.b64decode(span[key]).hex()
                    if not span.get("parentSpanId"):
                        span["attributes"].append(
                            {"key": "casebook.case", "value": {"stringValue": "weather"}}
                        )
            resource_spans.append(resource)
    return json.dumps({"resourceSpans": resource_spans}).encode()


def send_traces(client: Casebook, suite: int, label: str, traces: list[int]) -> int:
    """Export the traces, and wait until the web process made them into runs of the day's
    live submission of ``label``; its id."""
    answer = client.api(
        "POST",
        "/otlp/v1/traces",
        content=otlp_export(suite, label, traces),
        headers={"Content-Type": "application/json"},
    )
    rejected = answer.get("partialSuccess", {}).get("rejectedSpans")
    if rejected:
        raise Refused(f"the export's spans were rejected: {answer}")
    deadline = time.monotonic() + POLL_SECONDS
    while time.monotonic() < deadline:
        listed = client.api("GET", f"/api/suites/{suite}/submissions/")["results"]
        for submission in listed:
            made = submission["status"] == "done" and submission["total"] >= len(traces)
            if submission["label"] == label and made:
                return submission["id"]
        time.sleep(0.3)
    raise Refused(f"no live submission {label!r} with {len(traces)} run(s) in {POLL_SECONDS}s")


def tau_bench_suite() -> dict:
    records = [r for r in TAU_BENCH if r["task_id"] < TAU_BENCH_TASKS]
    cases = [
        {
            "key": f"task-{task_id}",
            "prompt": task["instruction"],
            "expected_calls": [
                {"name": a["name"], "required_args": a["kwargs"]} for a in task["actions"]
            ],
        }
        for task_id, task in sorted({r["task_id"]: r["info"]["task"] for r in records}.items())
    ]
    return {"schema": "casebook.suite/1", "name": "tau-bench airline", "cases": cases}


def tau_bench_runs() -> bytes:
    return b"".join(
        json.dumps(
            {"case": f"task-{r['task_id']}", "trial": r["trial"], "messages": r["traj"]}
        ).encode()
        + b"\n"
        for r in TAU_BENCH
        if r["task_id"] < TAU_BENCH_TASKS
    )


def seed(base: str, users: dict[str, int], tokens: dict[str, str]) -> Seeded:
    made = Seeded(users=users, tokens=tokens)
    alice, eddie = Casebook(base, token=tokens["alice"]), Casebook(base, token=tokens["eddie"])
    try:
        _library(made, alice)
        _submissions(made, alice, eddie)
        _reviews(made, base)
        _tokens(base)
    finally:
        alice.close()
        eddie.close()
    return made


def _library(made: Seeded, alice: Casebook) -> None:
    made.team = alice.api("POST", "/api/teams/", json={"name": "Agents"})["slug"]
    for name, role in ROLES.items():
        if name != "alice":
            alice.api(
                "POST", f"/api/teams/{made.team}/members/", json={"username": name, "role": role}
            )
    for name, key in (("wrong tool", "w"), ("hallucinated argument", "h")):
        label = alice.api(
            "POST", f"/api/teams/{made.team}/labels/", json={"name": name, "key": key}
        )
        made.labels.append(label["id"])
    imported = alice.api("POST", "/api/suites/import/", params={"team": made.team}, json=DEMO_SUITE)
    made.demo_suite = imported["id"]
    alice.api("POST", f"/api/suites/{made.demo_suite}/cases/", json=WEATHER_CASE)  # version 2
    alice.api("POST", f"/api/suites/{made.demo_suite}/versions/2/tag/", json={"tag": "release"})
    changed = {**DEMO_SUITE["cases"][-1], "prompt": "Say hello, kindly."}
    alice.api("PUT", f"/api/suites/{made.demo_suite}/cases/{changed['key']}/", json=changed)  # 3
    made.tau_suite = alice.api(
        "POST", "/api/suites/import/", params={"team": made.team}, json=tau_bench_suite()
    )["id"]
    first = tau_bench_suite()["cases"][0]
    alice.api(
        "PUT",
        f"/api/suites/{made.tau_suite}/cases/{first['key']}/",
        json={**first, "title": "first task"},
    )


def _submissions(made: Seeded, alice: Casebook, eddie: Casebook) -> None:
    made.demo = eddie.upload(made.demo_suite, DEMO_RUNS, "demo agent")["id"]
    made.demo_again = eddie.upload(made.demo_suite, DEMO_RUNS, "demo agent, again")["id"]
    made.tau = eddie.upload(made.tau_suite, tau_bench_runs(), "gpt-4o")["id"]
    eddie.api("POST", f"/api/submissions/{made.demo}/rescore/", json={"version": 2})
    eddie.wait_done(made.demo)
    made.live = send_traces(eddie, made.demo_suite, "live agent", [1, 2])


def _reviews(made: Seeded, base: str) -> None:
    eddie, rita, alice = (Casebook(base) for _ in range(3))
    try:
        eddie.sign_in("eddie", PASSWORD)
        rita.sign_in("rita", PASSWORD)
        alice.sign_in("alice", PASSWORD)
        failing = [
            r["run_id"]
            for r in Casebook(base, token=made.tokens["eddie"]).results(made.tau)
            if r["verdict"] == "fail"
        ]
        made.reviewed = failing[:20]
        for n, run in enumerate(made.reviewed):
            review = f"/submissions/{made.tau}/runs/{run}/review/"
            eddie.post(review, {"status": STATUSES[n % len(STATUSES)]})
            if n % 2 == 0:
                eddie.post(
                    review, {"comment": f"Run {n}: «the agent» <b>skipped</b> a call\nsecond line"}
                )
            if n % 3 == 0:
                eddie.post(review, {"label": str(made.labels[n % 2])})
        made.queue = _queue(alice, made.demo_again, "Demo failures", [made.users["eddie"]])
        for _ in range(2):
            run = _next_run(eddie, made.queue)
            eddie.post(f"/submissions/{made.demo_again}/runs/{run}/review/", {"status": "flaky"})
        reviewers = [made.users["eddie"], made.users["rita"]]
        made.blind_queue = _queue(
            alice, made.tau, "Blind τ-bench failures", reviewers, double_blind=True
        )
        disputed = []
        for n in range(7):
            for who, reviewer in (("eddie", eddie), ("rita", rita)):
                run = _next_run(reviewer, made.blind_queue)
                item = _item_on(reviewer, made.tau, run, made.blind_queue)
                status = "flaky" if who == "eddie" or n % 3 else "regression"
                data = {"status": status, "labels": [str(made.labels[0])] if n % 2 else []}
                reviewer.post(f"/queues/{made.blind_queue}/items/{item}/decide/", data)
                if status != "flaky":
                    disputed.append(item)
        item = disputed[0]
        alice.post(
            f"/queues/{made.blind_queue}/items/{item}/resolve/",
            {f"item{item}-status": "regression"},
        )
    finally:
        for client in (eddie, rita, alice):
            client.close()


def _queue(
    alice: Casebook, submission: int, name: str, reviewers: list[int], double_blind=False
) -> int:
    data = {"name": name, "reviewers": [str(r) for r in reviewers]}
    if double_blind:
        data["double_blind"] = "on"
    made = alice.post(f"/submissions/{submission}/queues/new/?verdict=fail", data, expected=(302,))
    return int(re.search(r"/queues/(\d+)/", made.headers["location"]).group(1))


def _next_run(reviewer: Casebook, queue: int) -> int:
    given = reviewer.post(f"/queues/{queue}/next/", {}, expected=(302,))
    found = re.search(r"/runs/(\d+)/", given.headers["location"])
    if found is None:
        raise Refused(f"queue {queue} gave no run: {given.headers['location']}")
    return int(found.group(1))


def _item_on(reviewer: Casebook, submission: int, run: int, queue: int) -> int:
    """The queue item the run's page offers the reviewer to decide."""
    page = reviewer.page(f"/submissions/{submission}/runs/{run}/?queue={queue}").text
    return int(re.search(rf"/queues/{queue}/items/(\d+)/decide/", page).group(1))


def _tokens(base: str) -> None:
    for username, names in (("alice", ["ci", "laptop"]), ("eddie", ["nightly"])):
        person = Casebook(base)
        try:
            person.sign_in(username, PASSWORD)
            for name in names:
                person.post("/settings/", {"name": name})
        finally:
            person.close()


# --- what a running release must do ----------------------------------------------------------


def smoke(base: str, made: Seeded) -> list[str]:
    """The running release's smoke test: an upload scored, a live trace made into a run, a
    submission's and a run's pages, a review status changed, the known failures, a token
    made. Every step is tried; what failed, each as "step: what was answered"."""
    failures = []
    api = Casebook(base, token=made.tokens["eddie"])
    person = Casebook(base)

    def step(name, action):
        try:
            action()
        except Refused as exc:
            failures.append(f"{name}: {exc}")

    def token():
        name = f"smoke {secrets.token_hex(4)}"  # a user's token names are unique
        if name not in person.post("/settings/", {"name": name}).text:
            raise Refused("the settings page does not list the token made")

    run = f"/submissions/{made.tau}/runs/{made.reviewed[1]}/"
    try:
        step("upload", lambda: api.upload(made.demo_suite, DEMO_RUNS, "smoke"))
        step("OTLP export", lambda: send_traces(api, made.demo_suite, "smoke live", [99]))
        step("sign in", lambda: person.sign_in("eddie", PASSWORD))
        step("submission page", lambda: person.page(f"/submissions/{made.tau}/"))
        step("run page", lambda: person.page(run))
        step("review change", lambda: person.post(f"{run}review/", {"status": "flaky"}))
        step("known failures", lambda: person.page(f"/suites/{made.tau_suite}/problems/"))
        step("token", token)
    finally:
        api.close()
        person.close()
    return failures


def pages(made: Seeded) -> list[str]:
    """One address of each kind of page, on the seeded data."""
    tau, demo, run = made.tau, made.demo, made.reviewed[0]
    return [
        "/",
        "/my-work/",
        "/settings/",
        "/teams/",
        f"/teams/{made.team}/",
        f"/suites/{made.demo_suite}/",
        f"/suites/{made.demo_suite}/settings/",
        f"/suites/{made.demo_suite}/versions/2/",
        f"/suites/{made.demo_suite}/compare/?baseline={made.demo}&candidate={made.demo_again}",
        f"/suites/{made.demo_suite}/flaky/",
        f"/suites/{made.tau_suite}/problems/",
        f"/suites/{made.demo_suite}/unassigned/",
        f"/submissions/{demo}/",
        f"/submissions/{demo}/?version=2",
        f"/submissions/{made.live}/",
        f"/submissions/{tau}/failures/",
        f"/submissions/{tau}/runs/{run}/",
        f"/submissions/{tau}/queues/",
        f"/queues/{made.queue}/",
        f"/queues/{made.blind_queue}/",
        f"/submissions/{tau}/runs.csv",
        f"/submissions/{tau}/junit.xml",
    ]


def page_failures(base: str, made: Seeded, username: str = "alice") -> list[str]:
    """Every kind of page, as the team's admin: those that did not answer 200."""
    person = Casebook(base)
    failures = []
    try:
        person.sign_in(username, PASSWORD)
        for path in pages(made):
            try:
                person.page(path)
            except Refused as exc:
                failures.append(str(exc))
    finally:
        person.close()
    return failures
