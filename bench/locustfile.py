"""Reviewers at work, for locust (bench/load.py starts the stack, seeds it and runs this).

    LOAD_PLAN=plan.json locust -f bench/locustfile.py --headless -u 50 -t 90s --host URL

``LOAD_PLAN`` names the JSON file bench/load.py writes: the reviewers' accounts, the suites
with their case ids, the submissions with their run ids and failing predicate labels, API
tokens, and a small run file to upload. Each simulated reviewer signs in through
/accounts/login/ and then, with a pause between clicks, browses the library and suite
pages, the results of a submission (filtered, the table swapped by htmx, the failure
groups), reviews runs (a status, a comment: htmx posts carrying the CSRF token from the
cookie, as base.html's hx-headers does), and edits cases in the case editor (the form as
the page has it, the title changed, saved as a new suite version). A few uploaders send
small run files through the API. Requests are named by page, for the figures per page.
"""

from __future__ import annotations

import itertools
import json
import os
import random
from html.parser import HTMLParser
from pathlib import Path

from locust import HttpUser, between, events, task

PLAN = json.loads(Path(os.environ["LOAD_PLAN"]).read_text())
HTMX = {"HX-Request": "true"}
STATUSES = ["regression", "expectation_wrong", "flaky", "wont_fix"]
VERDICT_FILTERS = ["fail", "error", "pass"]
TOOLS = ["search_flights", "get_reservation", "send_email", "issue_refund", "get_weather"]
_numbers = itertools.count()  # each reviewer's number: the cases only it edits
# Sign-ins happen while the users arrive, before the statistics are reset for the steady
# state: their times (ms) and statuses are kept here, and written out at the end.
SIGN_INS: list[tuple[float, int]] = []


@events.test_stop.add_listener
def _write_sign_ins(**_) -> None:
    Path(os.environ["LOAD_PLAN"]).with_name("sign_ins.json").write_text(json.dumps(SIGN_INS))


class Reviewer(HttpUser):
    weight = 48
    wait_time = between(1, 4)  # a reviewer reads a page before the next click

    def on_start(self) -> None:
        self.number = next(_numbers)
        account = PLAN["reviewers"][self.number % len(PLAN["reviewers"])]
        self.client.get("/accounts/login/", name="sign-in page")
        answer = self.client.post(
            "/accounts/login/",
            data={
                "username": account["username"],
                "password": account["password"],
                "csrfmiddlewaretoken": self.client.cookies["csrftoken"],
            },
            name="sign in",
            allow_redirects=False,
        )
        SIGN_INS.append((answer.elapsed.total_seconds() * 1000, answer.status_code))
        if answer.status_code != 302:
            raise RuntimeError(f"{account['username']} could not sign in: {answer.status_code}")
        self.editable = [
            (suite["id"], case_id)
            for suite in PLAN["suites"]
            for position, case_id in enumerate(suite["cases"])
            if position % PLAN["users"] == self.number % PLAN["users"]
        ]

    def _post(self, url: str, data: dict, name: str, **kwargs):
        headers = {"X-CSRFToken": self.client.cookies["csrftoken"], **kwargs.pop("headers", {})}
        return self.client.post(url, data=data, headers=headers, name=name, **kwargs)

    @staticmethod
    def _submission() -> dict:
        return random.choice(PLAN["submissions"])

    @task(2)
    def library(self) -> None:
        self.client.get("/", name="library")

    @task(2)
    def suite(self) -> None:
        suite = random.choice(PLAN["suites"])
        self.client.get(f"/suites/{suite['id']}/", name="suite")

    @task(3)
    def results(self) -> None:
        self.client.get(f"/submissions/{self._submission()['id']}/", name="results")

    @task(3)
    def results_filtered(self) -> None:
        submission = self._submission()
        query = {"verdict": random.choice(VERDICT_FILTERS), "tool": random.choice(TOOLS)}
        if random.random() < 0.5:
            query["sort"] = "-case"
        self.client.get(f"/submissions/{submission['id']}/", params=query, name="results, filtered")

    @task(3)
    def results_table(self) -> None:
        """The table alone, as htmx swaps it when a filter changes or a page is turned."""
        submission = self._submission()
        query = {"verdict": "fail", "page": random.randint(1, 5)}
        self.client.get(
            f"/submissions/{submission['id']}/",
            params=query,
            headers=HTMX | {"HX-Target": "runs"},
            name="results table (htmx)",
        )

    @task(2)
    def failure_groups(self) -> None:
        self.client.get(f"/submissions/{self._submission()['id']}/failures/", name="failure groups")

    @task(2)
    def failure_group(self) -> None:
        submission = self._submission()
        self.client.get(
            f"/submissions/{submission['id']}/",
            params={"predicate": random.choice(submission["labels"])},
            name="failure group",
        )

    @task(6)
    def run_page(self) -> None:
        submission = self._submission()
        run_id = random.choice(submission["runs"])
        self.client.get(f"/submissions/{submission['id']}/runs/{run_id}/", name="run")

    @task(3)
    def review_status(self) -> None:
        submission = self._submission()
        run_id = random.choice(submission["runs"])
        self._post(
            f"/submissions/{submission['id']}/runs/{run_id}/review/",
            {"status": random.choice(STATUSES)},
            "review: status (htmx)",
            headers=HTMX,
        )

    @task(1)
    def review_comment(self) -> None:
        submission = self._submission()
        run_id = random.choice(submission["runs"])
        self._post(
            f"/submissions/{submission['id']}/runs/{run_id}/review/",
            {"comment": f"Looked at this one: <b>{random.randint(1, 10**6)}</b> & co."},
            "review: comment (htmx)",
            headers=HTMX,
        )

    @task(1)
    def edit_case(self) -> None:
        suite_id, case_id = random.choice(self.editable)
        url = f"/suites/{suite_id}/cases/{case_id}/"
        page = self.client.get(url, name="case editor")
        if page.status_code != 200:
            return
        fields = editor_fields(page.text)
        fields["title"] = f"Edited by reviewer {self.number} ({random.randint(1, 10**6)})"
        fields["action"] = "save"
        with self._post(
            url, fields, "case editor: save", headers=HTMX, catch_response=True
        ) as answer:
            if answer.status_code != 204 or "HX-Redirect" not in answer.headers:
                answer.failure(f"not saved: {answer.status_code} {answer.text[:300]}")


class Uploader(HttpUser):
    """A CI job sending a small run file through the API now and then."""

    weight = 2
    wait_time = between(5, 15)

    @task
    def upload(self) -> None:
        token = random.choice(PLAN["tokens"])
        with self.client.post(
            f"/api/suites/{PLAN['upload_suite']}/submissions/?label=ci",
            data=Path(PLAN["upload_file"]).read_bytes(),
            headers={"Authorization": f"Token {token}", "Content-Type": "application/x-ndjson"},
            name="upload (API)",
            catch_response=True,
        ) as answer:
            if answer.status_code != 202:
                answer.failure(f"refused: {answer.status_code} {answer.text[:300]}")


def editor_fields(html: str) -> dict[str, str]:
    """The values the case editor's form (``#editor``) would post, as a browser sends them:
    inputs (checkboxes only when checked), text areas and the selected options; no buttons."""
    parser = _FormFields("editor")
    parser.feed(html)
    return parser.fields


class _FormFields(HTMLParser):
    def __init__(self, form_id: str):
        super().__init__(convert_charrefs=True)
        self.form_id, self.inside = form_id, False
        self.fields: dict[str, str] = {}
        self.textarea: str | None = None
        self.select: str | None = None
        self.first_option: str | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form":
            self.inside = attrs.get("id") == self.form_id
        if not self.inside:
            return
        name = attrs.get("name")
        if tag == "input" and name and attrs.get("type") not in ("submit", "button"):
            if attrs.get("type") not in ("checkbox", "radio") or "checked" in attrs:
                self.fields[name] = attrs.get("value") or ("on" if "checked" in attrs else "")
        elif tag == "textarea" and name:
            self.textarea, self.fields[name] = name, ""
        elif tag == "select" and name:
            self.select, self.first_option = name, None
        elif tag == "option" and self.select:
            value = attrs.get("value", "")
            if self.first_option is None:
                self.first_option = value
            if "selected" in attrs:
                self.fields[self.select] = value

    def handle_data(self, data):
        if self.textarea:
            self.fields[self.textarea] += data

    def handle_endtag(self, tag):
        if tag == "form":
            self.inside = False
        elif tag == "textarea" and self.textarea:
            # A browser drops the newline that follows <textarea> (Django writes one).
            value = self.fields[self.textarea]
            self.fields[self.textarea] = value[1:] if value.startswith("\n") else value
            self.textarea = None
        elif tag == "select" and self.select:
            self.fields.setdefault(self.select, self.first_option or "")
            self.select = None
