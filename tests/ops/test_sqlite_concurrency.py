"""The embedded default under concurrent writes: ``make dev``'s server (runserver, one thread a
request, Celery tasks in-process) on a SQLite file, hit by many threads at the same moment.

Every write must answer as it does on PostgreSQL: success, or 409 for a stale edit of a
case, never a 500 ("database is locked"). The server is a real ``manage.py runserver`` on a
SQLite file of its own (the test database of pytest-django is in memory, one connection
shared by every thread, which is not what ``make dev`` runs), so these tests run whatever
DATABASE_URL names. About 20 s.
"""

from __future__ import annotations

import gzip
import http.cookiejar
import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from contextlib import closing
from functools import partial
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.support.workers import free_port, stop

pytestmark = pytest.mark.pipeline  # a gunicorn of its own, on a SQLite file

ROOT = Path(__file__).resolve().parents[2]
DEMO_RUNS = ROOT / "cases" / "demo" / "assistant.runs.jsonl"
THREADS = 8
ROUNDS = 3
HELD_SECONDS = 3  # how long the last test holds the write lock from outside
# Taken from the environment by the settings module; the server gets its own.
INHERITED_OUT = ("DATABASE_URL", "REDIS_URL", "CACHE_URL", "DJANGO_ALLOW_ASYNC_UNSAFE")
SET_UP = """
import django
django.setup()
from django.core.management import call_command
from rest_framework.authtoken.models import Token
from cases.models import User
call_command("migrate", interactive=False, verbosity=0)
call_command("demo")
print(Token.objects.get_or_create(user=User.objects.get(username="demo"))[0].key)
"""


# --- the server ----------------------------------------------------------------------------


class Server:
    def __init__(self, url: str, database: Path, token: str):
        self.url = url
        self.database = database
        self.token = token

    def query(self, sql: str, *params):
        """Read the server's database directly (never while the threads write)."""
        with sqlite3.connect(self.database) as db:
            return db.execute(sql, params).fetchall()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    directory = tmp_path_factory.mktemp("sqlite-server")
    database = directory / "db.sqlite3"
    env = {k: v for k, v in os.environ.items() if k not in INHERITED_OUT}
    env |= {"DATABASE_URL": f"sqlite:///{database}", "DEBUG": "true", "LOG_LEVEL": "WARNING"}

    # As `make dev` does: migrate, then the demo user, suite and scored submission; and a
    # token for the API. One process, to keep the start short.
    done = subprocess.run(
        [sys.executable, "-c", SET_UP], env=env, cwd=ROOT, capture_output=True, text=True,
        timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    token = done.stdout.split()[-1]
    port = free_port()
    log = (directory / "server.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
        env=env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            with urllib.request.urlopen(f"{url}/healthz", timeout=2):
                break
        except OSError:
            if time.monotonic() > deadline or process.poll() is not None:
                stop(process)
                raise AssertionError((directory / "server.log").read_text()) from None
            time.sleep(0.2)
    yield Server(url, database, token)
    stop(process)
    log.close()


# --- clients -------------------------------------------------------------------------------


class Answer:
    def __init__(self, status: int, body: bytes):
        self.status = status
        self.body = body

    def json(self):
        return json.loads(self.body)


class Client:
    """A browser's session (cookies, CSRF) or an API token, without following redirects."""

    def __init__(self, server: Server, *, token: str = ""):
        self.server = server
        self.token = token
        self.cookies = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(self.cookies), _NoRedirect
        )

    def request(self, method: str, path: str, data=None, headers=None) -> Answer:
        headers = dict(headers or {})
        if self.token:
            headers["Authorization"] = f"Token {self.token}"
        if isinstance(data, dict | list) and self.token:
            data, headers["Content-Type"] = json.dumps(data).encode(), "application/json"
        elif isinstance(data, dict | list):
            data = urllib.parse.urlencode(data).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
            headers["X-CSRFToken"] = self.csrf()
            headers["Referer"] = self.server.url + "/"
        url = self.server.url + path
        call = urllib.request.Request(url, data=data, headers=headers, method=method)
        try:
            with self.opener.open(call, timeout=60) as response:
                return Answer(response.status, response.read())
        except urllib.error.HTTPError as error:
            return Answer(error.code, error.read())

    def csrf(self) -> str:
        return next(c.value for c in self.cookies if c.name == "csrftoken")

    def sign_in(self, username: str = "demo", password: str = "casebook-demo") -> Client:
        self.request("GET", "/accounts/login/")
        answer = self.request(
            "POST", "/accounts/login/", {"username": username, "password": password}
        )
        assert answer.status == 302, answer.body[:500]
        return self


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None  # a 302 is an answer to check, not to follow


class FormFields(HTMLParser):
    """The fields a browser would post from the form whose ``action`` is given."""

    def __init__(self, action: str):
        super().__init__()
        self.action = action
        self.inside = False
        self.fields: list[tuple[str, str]] = []
        self.textarea: str | None = None
        self.select: str | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form":
            self.inside = attrs.get("action") == self.action
        if not self.inside or (not attrs.get("name") and tag != "option"):
            return
        if tag == "input" and attrs.get("type") not in ("submit", "button", "checkbox"):
            self.fields.append((attrs["name"], attrs.get("value") or ""))
        elif tag == "input" and attrs.get("type") == "checkbox" and "checked" in attrs:
            self.fields.append((attrs["name"], attrs.get("value") or "on"))
        elif tag == "textarea":
            self.textarea = attrs["name"]
            self.fields.append((self.textarea, ""))
        elif tag == "select":
            self.select = attrs["name"]
        elif tag == "option" and self.select and "selected" in attrs:
            self.fields.append((self.select, attrs.get("value") or ""))

    def handle_data(self, data):
        if self.textarea:
            name, text = self.fields[-1]
            self.fields[-1] = (name, text + data)

    def handle_endtag(self, tag):
        if tag == "form":
            self.inside = False
        elif tag == "textarea":
            self.textarea = None
        elif tag == "select":
            self.select = None


def at_once(*calls) -> list[Answer]:
    """Run every call in a thread of its own, released together; their answers in order."""
    start = threading.Barrier(len(calls))
    answers: list[Answer | BaseException] = [None] * len(calls)

    def work(index, call):
        start.wait()
        try:
            answers[index] = call()
        except BaseException as exc:  # reported below: a thread's exception is otherwise lost
            answers[index] = exc

    threads = [threading.Thread(target=work, args=item) for item in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for answer in answers:
        if isinstance(answer, BaseException):
            raise answer
    return answers


def statuses(answers: list[Answer]) -> Counter:
    return Counter(answer.status for answer in answers)


def demo_ids(server: Server) -> tuple[int, int, str]:
    """The demo suite, its first case's id and key."""
    ((suite, case, key),) = server.query(
        "SELECT suite_id, id, key FROM cases_case ORDER BY suite_id, position, id LIMIT 1"
    )
    return suite, case, key


# --- the tests -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser(server):
    """The demo user signed in (one session: the threads are its tabs)."""
    return Client(server).sign_in()


@pytest.fixture(scope="module")
def api(server):
    return Client(server, token=server.token)


def test_saving_one_case_at_once_in_the_editor_saves_one_and_refuses_the_rest(server, browser):
    suite, case, _ = demo_ids(server)
    path = f"/suites/{suite}/cases/{case}/"
    rounds = []
    for round_ in range(ROUNDS):
        page = browser.request("GET", path)
        assert page.status == 200
        form = FormFields(path)
        form.feed(page.body.decode())
        fields = dict(form.fields)
        assert fields.get("revision"), "the editor posts the revision it started from"
        htmx = {"HX-Request": "true"}
        answers = at_once(
            *(
                partial(browser.request, "POST", path, fields | {"title": f"{round_}.{n}"}, htmx)
                for n in range(THREADS)
            )
        )
        rounds.append(statuses(answers))
        refused = [a.body for a in answers if a.status == 409]
        assert all(b"Someone saved this case since you opened it" in body for body in refused)
    assert rounds == [{200: 1, 409: THREADS - 1}] * ROUNDS, rounds


def test_saving_one_case_at_once_through_the_api_saves_one_and_refuses_the_rest(server, api):
    suite, _, key = demo_ids(server)
    path = f"/api/suites/{suite}/cases/{urllib.parse.quote(key, safe='')}/"
    rounds = []
    for round_ in range(ROUNDS):
        case = api.request("GET", path).json()
        answers = at_once(
            *(
                partial(api.request, "PUT", path, case | {"title": f"{round_}.{n}"})
                for n in range(THREADS)
            )
        )
        rounds.append(statuses(answers))
        revisions = {a.json()["revision"] for a in answers if a.status in (200, 409)}
        assert revisions <= {case["revision"] + 1}  # the winner's, in the 409s too
    assert rounds == [{200: 1, 409: THREADS - 1}] * ROUNDS, rounds


def test_adding_one_key_at_once_adds_one_case_and_refuses_the_rest_by_field(server, api):
    suite, _, key = demo_ids(server)
    path = f"/api/suites/{suite}/cases/"
    case = api.request("GET", f"{path}{urllib.parse.quote(key, safe='')}/").json()
    new = {name: value for name, value in case.items() if name not in ("id", "revision")}
    answers = at_once(
        *(
            partial(api.request, "POST", path, new | {"key": "added-at-once"})
            for _ in range(THREADS)
        )
    )
    assert statuses(answers) == {201: 1, 400: THREADS - 1}, [a.body[:300] for a in answers]
    refused = [a.json()["problems"] for a in answers if a.status == 400]
    assert all([problem["path"] for problem in problems] == ["key"] for problems in refused)


def test_creating_teams_of_one_name_at_once_gives_each_its_own_slug(server, api):
    answers = at_once(
        *(
            partial(api.request, "POST", "/api/teams/", {"name": "Same name"})
            for _ in range(THREADS)
        )
    )
    assert statuses(answers) == {201: THREADS}, [a.body[:300] for a in answers]
    assert len({answer.json()["slug"] for answer in answers}) == THREADS


def test_reviews_a_bulk_review_and_re_scores_at_once_all_succeed(server, browser, api):
    ((submission, version),) = server.query(
        "SELECT s.id, v.number FROM scoring_submission s JOIN cases_suiteversion v"
        " ON v.id = s.version_id ORDER BY s.id LIMIT 1"
    )
    runs = server.query("SELECT id FROM scoring_run WHERE submission_id = ?", submission)
    post, bulk = partial(browser.request, "POST"), f"/submissions/{submission}/review/"
    rescore = partial(api.request, "POST", f"/api/submissions/{submission}/rescore/")
    rounds = []
    for status in ["regression", "wont_fix", "flaky"]:
        reviews = [
            partial(post, f"/submissions/{submission}/runs/{run}/review/",
                    {"status": status, "comment": f"now {status}"})
            for (run,) in runs[:3]
        ]  # fmt: skip
        answers = at_once(
            *reviews,
            partial(post, bulk, {"status": status}),
            partial(post, bulk, {"verdict": "fail", "status": "untriaged"}),
            partial(post, f"/submissions/{submission}/rescore/", {"version": version}),
            partial(rescore, {"version": version}),
            partial(rescore, {"version": version}),
        )
        rounds.append(statuses(answers))
    assert rounds == [{302: 6, 202: 2}] * 3, rounds
    done = api.request("GET", f"/api/submissions/{submission}/").json()
    assert (done["status"], done["scored"]) == ("done", len(runs)), done


def test_uploads_at_once_are_all_taken_and_scored(server, api):
    suite, _, _ = demo_ids(server)
    lines = DEMO_RUNS.read_bytes().splitlines() * 20
    body = gzip.compress(b"\n".join(lines) + b"\n")
    binary = {"Content-Type": "application/octet-stream"}
    path = f"/api/suites/{suite}/submissions/?label=thread-"
    answers = at_once(
        *(partial(api.request, "POST", f"{path}{n}", body, binary) for n in range(THREADS))
    )
    assert statuses(answers) == {202: THREADS}, [a.body[:300] for a in answers]
    # Read and scored in the request that uploaded it (no broker: tasks run in-process).
    uploaded = [api.request("GET", f"/api/submissions/{a.json()['id']}/").json() for a in answers]
    outcomes = [(submission["status"], submission["scored"]) for submission in uploaded]
    assert outcomes == [("done", len(lines))] * THREADS, outcomes


def test_a_long_write_makes_writers_wait_and_readers_go_on(server, browser):
    """Another process holds the write lock for a while: a review posted meanwhile waits for
    it (then succeeds), while pages and the readiness probe answer at once."""
    ((submission, run),) = server.query("SELECT submission_id, id FROM scoring_run LIMIT 1")
    with closing(sqlite3.connect(server.database, isolation_level=None)) as db:
        db.execute("BEGIN IMMEDIATE")
        answers: list[Answer] = []
        review = threading.Thread(
            target=lambda: answers.append(
                browser.request(
                    "POST", f"/submissions/{submission}/runs/{run}/review/", {"comment": "waited"}
                )
            )
        )
        review.start()
        started = time.monotonic()
        assert browser.request("GET", "/readyz").status == 200
        assert browser.request("GET", f"/submissions/{submission}/").status == 200
        assert time.monotonic() - started < HELD_SECONDS
        time.sleep(HELD_SECONDS - (time.monotonic() - started))
        assert answers == []  # still waiting for the lock
        db.execute("COMMIT")
    review.join(timeout=30)
    assert [answer.status for answer in answers] == [302]
