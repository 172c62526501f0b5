"""``casebook submit`` (docs/ci.md) against a live server: the run file uploaded, followed
to its end, compared with the baseline on the server, and the gate's exit status; the
summary and JUnit files; and the statuses of what cannot go through. The command runs as
a CI job runs it: a subprocess, with its token in the environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import xml.etree.ElementTree as ET
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from cases import services, tokens
from scoring.models import Run, Submission
from tests.support.commands import ROOT

KEYS = ("regresses", "gets-fixed", "still-passing")


def document() -> dict:
    cases = [
        {"key": key, "expectations": [{"type": "final_text_contains", "text": "ok"}]}
        for key in KEYS
    ]
    return {"schema": "casebook.suite/1", "name": "gated", "cases": cases}


def runs(path, passing: dict[str, bool], usage: dict | None = None):
    path.write_text(
        "".join(
            json.dumps(
                {"case": key, "batches": [], "final_text": "ok" if ok else "nope"}
                | ({"usage": usage} if usage else {})
            )
            + "\n"
            for key, ok in passing.items()
        )
    )
    return path


# A run's own usage, as a canonical run may carry it (docs/formats.md#usage).
USAGE = {"input_tokens": 1200, "output_tokens": 300, "model_calls": 2, "duration_ms": 1500.0,
         "cost_usd": 0.01, "models": ["house-model"]}  # fmt: skip


BEFORE = {"regresses": True, "gets-fixed": False, "still-passing": True}
REGRESSED = {"regresses": False, "gets-fixed": True, "still-passing": True}
CLEAN = {"regresses": True, "gets-fixed": True, "still-passing": True}


@pytest.fixture
def suite(team, admin):
    return services.create_suite(team, document(), admin)


@pytest.fixture
def token(editor):
    return tokens.create(editor, "ci")[1]


def casebook(*args, token=None):
    environment = {k: v for k, v in os.environ.items() if k != "CASEBOOK_TOKEN"}
    if token is not None:
        environment["CASEBOOK_TOKEN"] = token
    return subprocess.run(
        [sys.executable, "-m", "scoring.cli", "submit", *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=environment,
        check=False,
        timeout=120,
    )


def test_a_planted_regression_fails_the_gate_and_a_clean_run_passes_it(
    live_server, suite, token, tmp_path
):
    where = ("--server", live_server.url, "--suite", f"{suite.team.slug}/{suite.slug}")
    gate = ("--wait", "--fail-on", "regressions")
    first = casebook(
        runs(tmp_path / "a.jsonl", BEFORE), *where, "--label", "main", *gate, token=token
    )
    assert first.returncode == 0, first.stderr
    assert "Baseline: no finished submission before it" in first.stdout
    assert "Usage:" not in first.stdout  # its runs recorded none: no line of dashes or zeros
    baseline = Submission.objects.get(label="main")

    summary = tmp_path / "summary.md"
    planted = casebook(
        runs(tmp_path / "b.jsonl", REGRESSED),
        *where,
        "--label",
        "pr-1",
        *gate,
        "--baseline",
        "main",
        "--summary",
        summary,
        token=token,
    )
    assert planted.returncode == 1, planted.stderr
    candidate = Submission.objects.get(label="pr-1")
    failing = Run.objects.get(submission=candidate, case_key="regresses")
    assert f"Baseline: submission {baseline.pk} (main)" in planted.stdout
    assert "1 regressed, 1 fixed" in planted.stdout
    assert (
        f"regressed: regresses  {live_server.url}/submissions/{candidate.pk}/runs/{failing.pk}/"
        in planted.stdout
    )
    assert "Gate: failed (1 case(s) regressed; --fail-on regressions)" in planted.stdout
    assert f"{live_server.url}/submissions/{candidate.pk}/" in planted.stdout
    # Off a terminal, progress is plain lines on standard error.
    assert "done: 3 of 3 runs scored" in planted.stderr.splitlines()

    written = summary.read_text()
    assert written.startswith("## ❌ Casebook: ")
    assert "**1 regressed**, 1 fixed" in written
    assert (
        f"| regresses | [1/1 passed]({live_server.url}/submissions/{baseline.pk}/runs/" in written
    )
    assert (
        f"[0/1 passed]({live_server.url}/submissions/{candidate.pk}/runs/{failing.pk}/)" in written
    )
    assert "### Fixes" in written
    assert "| final\\_text | — | 1 | 1 |" in written  # the failure group, by cause

    clean = casebook(
        runs(tmp_path / "c.jsonl", CLEAN),
        *where,
        *gate,
        "--baseline",
        "main",
        "--summary",
        summary,
        token=token,
    )
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "Gate: passed (no regression; --fail-on regressions)" in clean.stdout
    # Appended, as to GitHub's step summary: the planted run's, then the clean one's.
    headings = [line for line in summary.read_text().splitlines() if line.startswith("## ")]
    assert [heading[:4] for heading in headings] == ["## ❌", "## ✅"]


def test_failures_fail_the_default_gate_and_junit_lists_every_run(
    live_server, suite, token, tmp_path
):
    junit = tmp_path / "runs.xml"
    result = casebook(
        runs(tmp_path / "a.jsonl", REGRESSED, usage=USAGE),
        "--server",
        live_server.url,
        "--suite",
        suite.pk,
        "--junit",
        junit,
        token=token,
    )
    assert result.returncode == 1, result.stderr
    assert "Scored 3 runs: 2 pass, 1 fail, 0 error, pass rate 66.7%" in result.stdout
    assert (
        "Usage: cost $0.0300 ($0.0150 per passing run); tokens 3,600 in, 900 out; "
        "6 model calls; 95th percentile time 1.5 s"
    ) in result.stdout
    tree = ET.parse(junit).getroot()
    assert tree.get("tests") == "3"
    assert tree.get("failures") == "1"
    failed = [
        case.get("name") for case in tree.iter("testcase") if case.find("failure") is not None
    ]
    assert failed == ["regresses trial 0"]


def test_without_waiting_it_exits_0_once_the_server_has_the_file(
    live_server, suite, token, tmp_path
):
    result = casebook(
        runs(tmp_path / "a.jsonl", REGRESSED),
        "--server",
        live_server.url,
        "--suite",
        suite.pk,
        token=token,
    )
    assert result.returncode == 0, result.stderr
    (made,) = Submission.objects.all()
    assert f"Submitted a.jsonl to {suite.team.slug}/{suite.slug}: " in result.stdout
    assert made.filename == "a.jsonl"
    assert made.total == 3


def test_a_refusal_exits_3_with_the_servers_reason(live_server, suite, tmp_path, viewer):
    file = runs(tmp_path / "a.jsonl", CLEAN)
    where = ("--server", live_server.url, "--suite", suite.pk)
    unknown = casebook(file, *where, token="0" * 40)
    assert unknown.returncode == 3
    assert unknown.stderr.strip().endswith("401 Invalid token.")
    viewers = casebook(file, *where, token=tokens.create(viewer, "ci")[1])
    assert viewers.returncode == 3
    assert "403" in viewers.stderr
    missing = casebook(
        file, "--server", live_server.url, "--suite", "agents/nothing", token="x" * 40
    )
    assert missing.returncode == 3


def test_an_unreachable_server_exits_3_and_bad_input_2(tmp_path):
    file = runs(tmp_path / "a.jsonl", CLEAN)
    nobody = casebook(file, "--server", "http://127.0.0.1:8459", "--suite", "1", token="k")
    assert nobody.returncode == 3
    assert "cannot reach http://127.0.0.1:8459" in nobody.stderr
    no_token = casebook(file, "--server", "http://127.0.0.1:8459", "--suite", "1")
    assert no_token.returncode == 2
    assert "set CASEBOOK_TOKEN to an API token" in no_token.stderr


class NotCasebook(BaseHTTPRequestHandler):
    """A server that answers every request as a web page would: a redirect, or HTML; under
    /busy, a proxy's 503 the first ``BUSY_ANSWERS`` times, and under /down, always."""

    busy_answers: list[str] = []

    def do_GET(self):
        if self.path.startswith("/down") or (
            self.path.startswith("/busy") and len(self.busy_answers) < BUSY_ANSWERS
        ):
            self.busy_answers.append(self.path)
            self.send_response(503)
            self.send_header("Retry-After", "0")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if self.path.startswith("/moved"):
            self.send_response(301)
            self.send_header("Location", "https://casebook.example.com/api/suites/1/")
            self.end_headers()
            return
        body = b"<html>Welcome to nginx!</html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


BUSY_ANSWERS = 2


@pytest.fixture
def not_casebook():
    NotCasebook.busy_answers = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), NotCasebook)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_redirect_or_a_web_page_is_a_refusal_said_plainly(not_casebook, tmp_path):
    file = runs(tmp_path / "a.jsonl", CLEAN)
    moved = casebook(file, "--server", f"{not_casebook}/moved", "--suite", "1", token="k")
    assert moved.returncode == 3
    assert (
        "301 to https://casebook.example.com/api/suites/1/: give that as --server" in moved.stderr
    )
    page = casebook(file, "--server", not_casebook, "--suite", "1", token="k")
    assert page.returncode == 3
    assert f"the answer is not JSON: is {not_casebook} Casebook?" in page.stderr


def test_a_busy_server_is_asked_again_and_then_refusal_is_said_with_the_tries(
    not_casebook, tmp_path
):
    file = runs(tmp_path / "a.jsonl", CLEAN)
    # Two 503s, then the page: the third answer is the one said.
    busy = casebook(file, "--server", f"{not_casebook}/busy", "--suite", "1", token="k")
    assert busy.returncode == 3
    assert "the answer is not JSON" in busy.stderr
    assert len(NotCasebook.busy_answers) == BUSY_ANSWERS
    down = casebook(file, "--server", f"{not_casebook}/down", "--suite", "1", token="k")
    assert down.returncode == 3
    assert "GET /down/api/suites/1/ (6 tries): 503" in down.stderr
