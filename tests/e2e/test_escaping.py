"""Every string that came from a run is shown as text: a run whose tool names, arguments, tool
results, final text, meta, error and case key hold markup and script, in a suite whose case
key, expected call and argument matchers hold them too. In Chromium, the submission page and
the run page run none of it, open no dialog, and show it literally."""

from __future__ import annotations

import io
import json

import pytest

from cases import services
from cases.models import Membership, Role, Team
from scoring.ingest.pipeline import create_submission

from .browsing import PAYLOAD, sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

KEY = f"case{PAYLOAD}"[:200]  # a case key is at most 200 characters
TOOL = f"tool{PAYLOAD}"


def evil_suite_document() -> dict:
    return {
        "schema": "casebook.suite/1",
        "name": "escaping",
        "cases": [
            {
                "key": KEY,
                "expected_calls": [
                    {
                        "name": TOOL,
                        "required_args": {
                            f"arg{PAYLOAD}": {"$one_of": [f"one{PAYLOAD}", "two"]},
                            "nested": {"inner": f"want{PAYLOAD}"},
                        },
                    }
                ],
                "expectations": [{"type": "final_text_contains", "text": f"want{PAYLOAD}"}],
            }
        ],
    }


def evil_runs() -> list[dict]:
    call = {
        "id": f"id{PAYLOAD}",
        "name": TOOL,
        "arguments": {f"arg{PAYLOAD}": f"got{PAYLOAD}", "nested": {"inner": f"got{PAYLOAD}"}},
        "result": f"result{PAYLOAD}",
        "is_error": True,
    }
    garbled = {"name": TOOL, "arguments": None, "arguments_raw": f"raw{PAYLOAD}"}
    return [
        {
            "case": KEY,
            "batches": [[call, garbled], [{"name": f"other{PAYLOAD}", "result": {"k": PAYLOAD}}]],
            "final_text": f"text{PAYLOAD}",
            "error": f"error{PAYLOAD}",
            "meta": {"model": f"model{PAYLOAD}", f"meta{PAYLOAD}": PAYLOAD},
        },
        {"case": f"unknown{PAYLOAD}", "batches": [], "final_text": f"text{PAYLOAD}"},
    ]


@pytest.fixture
def submission(user):
    team = Team.objects.create(name="Agents", slug="agents")
    Membership.objects.create(team=team, user=user, role=Role.EDITOR)
    suite = services.create_suite(team, evil_suite_document(), user)
    lines = "".join(json.dumps(run) + "\n" for run in evil_runs()).encode()
    made = create_submission(
        suite, user, io.BytesIO(lines), label=f"label{PAYLOAD}", filename=f"f{PAYLOAD}.jsonl"
    )
    made.refresh_from_db()
    return made


def assert_nothing_ran(page, dialogs: list) -> None:
    assert page.evaluate("window.__pwned") is None
    assert dialogs == []
    # No element the payload would have made, anywhere in the page.
    assert page.locator("main img, main svg, main script:not([src])").count() == 0


def test_run_texts_show_as_text_and_never_run(page, live_server, user, password, submission):
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    sign_in(page, live_server, user.username, password)

    page.goto(f"{live_server.url}{submission.get_absolute_url()}")
    page.locator("#runs tbody tr").first.wait_for()
    assert_nothing_ran(page, dialogs)
    assert KEY in page.locator("#runs").inner_text()
    assert f"label{PAYLOAD}" in page.locator("h1").inner_text()

    run = submission.runs.get(line=1)
    page.goto(f"{live_server.url}{run.get_absolute_url()}")
    page.locator(".tl").wait_for()
    # Open every tool result, the garbled arguments and the promotion form too.
    for details in page.locator("details").all():
        details.evaluate("element => element.open = true")
    page.locator(f"#run-{run.pk}-call-1-0").get_by_role("link").click()
    page.locator(".promote form").wait_for()
    assert_nothing_ran(page, dialogs)

    shown = page.locator("main").inner_text()
    for text in (
        KEY,
        TOOL,
        f"id{PAYLOAD}",
        f"result{PAYLOAD}",
        f"raw{PAYLOAD}",
        f"text{PAYLOAD}",
        f"error{PAYLOAD}",
        f"model{PAYLOAD}",
        f"other{PAYLOAD}",
    ):
        assert text in shown, text
    # In JSON the quote is escaped: the arguments and meta read as JSON text.
    assert json.dumps(f"got{PAYLOAD}") in shown
    assert json.dumps(f"meta{PAYLOAD}") in shown
    diff = page.locator("table.argdiff").inner_text()
    assert f"arg{PAYLOAD}" in diff
    assert "nested.inner" in diff
    assert json.dumps(f"want{PAYLOAD}") in diff
    assert page.locator(".promote textarea").input_value() == "{}"

    unknown = submission.runs.get(line=2)
    page.goto(f"{live_server.url}{unknown.get_absolute_url()}")
    page.locator("h1").wait_for()
    assert f"unknown{PAYLOAD}" in page.locator("h1").inner_text()
    assert_nothing_ran(page, dialogs)
