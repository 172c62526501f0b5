"""Every string a user wrote is shown as text, as tests/e2e/test_escaping.py checks for what a
run holds: a team, a suite, its cases (key, title, prompt, tags, expected calls and their
arguments, expectations), its versions (message and tag), a submission (label and file name), a
review comment, a queue and a username, each holding markup and script. In Chromium, the
library, team, suite, version, diff, case editor, submission, run and queue pages run none of
it, open no dialog, and show it literally."""

from __future__ import annotations

import io
import json

import pytest

from cases import services
from cases.models import Membership, Role, Team, User
from scoring.ingest.pipeline import create_submission
from scoring.review import decisions
from scoring.review.queues import build_queue

from .browsing import PAYLOAD, sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SHORT = "<img src=x onerror=window.__pwned=1>"  # for a version tag: at most 50 characters
TEAM = f"team<script>window.__pwned=1</script>{SHORT}"  # at most 100
KEY = f"k{PAYLOAD}"
TOOL = f"tool{PAYLOAD}"


def evil_document() -> dict:
    return {
        "schema": "casebook.suite/1",
        "name": f"suite{PAYLOAD}",
        "description": f"about{PAYLOAD}",
        "tags": [f"stag{PAYLOAD}"],
        "cases": [
            {
                "key": KEY,
                "title": f"title{PAYLOAD}",
                "prompt": f"prompt{PAYLOAD}",
                "tags": [f"ctag{PAYLOAD}"],
                "expected_calls": [
                    {
                        "name": TOOL,
                        "required_args": {f"arg{PAYLOAD}": f"value{PAYLOAD}"},
                    }
                ],
                "expectations": [
                    {"type": "final_text_contains", "text": f"want{PAYLOAD}"},
                    {"type": "did_not_call_tool", "tool": f"never{PAYLOAD}"},
                ],
            }
        ],
    }


class EvilWorld:
    """All of it made by ``user``, whose name holds the payload too."""

    def __init__(self, password):
        self.user = User.objects.create_user(f"u{PAYLOAD}", password=password)
        self.team = Team.objects.create(name=TEAM, slug="evil")
        Membership.objects.create(team=self.team, user=self.user, role=Role.ADMIN)
        self.suite = services.create_suite(
            self.team, evil_document(), self.user, message=f"first{PAYLOAD}"
        )
        self.case = self.suite.cases.get()
        document = services.case_document(self.case) | {"title": f"second{PAYLOAD}"}
        document["expectations"][0]["text"] = f"again{PAYLOAD}"
        services.save_case(self.suite, document, self.user, case=self.case)
        self.case.refresh_from_db()
        version = self.suite.versions.get(number=1)
        version.tag = SHORT
        version.save(update_fields=["tag"])
        run = {
            "case": KEY,
            "batches": [[{"name": TOOL, "arguments": {f"arg{PAYLOAD}": "other"}}]],
            "final_text": "nothing wanted",
        }
        self.submission = create_submission(
            self.suite,
            self.user,
            io.BytesIO(json.dumps(run).encode() + b"\n"),
            label=f"label{PAYLOAD}",
            filename=f"file{PAYLOAD}.jsonl",
        )
        self.submission.refresh_from_db()
        self.run = self.submission.runs.get()
        decisions.comment(self.run, f"comment{PAYLOAD}", self.user)
        self.queue = build_queue(self.submission, f"queue{PAYLOAD}", self.user)


@pytest.fixture
def world(db, password):
    return EvilWorld(password)


def assert_shown_and_inert(page, dialogs: list, *texts: str) -> None:
    """Nothing of the payload ran or became an element, and each text reads literally."""
    assert page.evaluate("window.__pwned") is None
    assert dialogs == []
    made = "img[src=x], [onerror], [onload], script:not([src]), svg[onload]"
    assert page.locator(made).count() == 0
    shown = page.locator("body").inner_text()
    for text in texts:
        assert text in shown, (page.url, text)


def test_user_fields_show_as_text_and_never_run(page, live_server, world, password):
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    sign_in(page, live_server, world.user.username, password)

    def visit(path: str, *texts: str) -> None:
        page.goto(f"{live_server.url}{path}")
        page.wait_for_load_state("networkidle")  # parts loaded after the page, by htmx
        assert_shown_and_inert(page, dialogs, *texts)

    suite, case, submission = world.suite, world.case, world.submission
    visit("/", f"suite{PAYLOAD}", f"stag{PAYLOAD}", world.user.username)
    visit("/teams/", TEAM)
    visit(world.team.get_absolute_url(), TEAM, f"suite{PAYLOAD}", world.user.username)
    visit(
        suite.get_absolute_url(),
        f"suite{PAYLOAD}",
        f"about{PAYLOAD}",
        f"stag{PAYLOAD}",
        KEY,
        f"second{PAYLOAD}",
        f"ctag{PAYLOAD}",
        f"label{PAYLOAD}",
    )
    visit(f"/suites/{suite.pk}/versions/1/", f"first{PAYLOAD}", SHORT, KEY, TOOL)
    # the diff names the changed predicates by their labels, shortened
    visit(
        f"/suites/{suite.pk}/versions/2/diff/", KEY, f"again{PAYLOAD[:40]}", f"want{PAYLOAD[:40]}"
    )
    visit(case.get_absolute_url(), f"suite{PAYLOAD}")
    # The editor's fields hold the texts as values, not as markup.
    assert page.locator("input[name='key']").input_value() == KEY
    assert page.locator("input[name='call-0-name']").input_value() == TOOL
    assert page.get_by_label("Prompt").input_value() == f"prompt{PAYLOAD}"
    assert json.loads(page.locator("textarea[name='call-0-required_args']").input_value()) == {
        f"arg{PAYLOAD}": f"value{PAYLOAD}"
    }
    assert page.locator("[name='exp-0-text']").input_value() == f"again{PAYLOAD}"
    assert page.locator("[name='exp-1-tool']").input_value() == f"never{PAYLOAD}"
    visit(submission.get_absolute_url(), f"label{PAYLOAD}", f"file{PAYLOAD}.jsonl", KEY)
    visit(world.run.get_absolute_url(), KEY, TOOL, f"comment{PAYLOAD}", world.user.username)
    visit(f"/submissions/{submission.pk}/queues/", f"queue{PAYLOAD}")
    visit(world.queue.get_absolute_url(), f"queue{PAYLOAD}", world.user.username)
    visit(f"/suites/{suite.pk}/settings/", f"suite{PAYLOAD}")
    assert page.locator("input[name=name]").input_value() == f"suite{PAYLOAD}"
