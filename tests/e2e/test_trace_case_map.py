"""Live traces' case attribute and its map of values to case keys, edited on the suite's
settings page in the browser: a mistake named, then saved and shown again."""

import json

import pytest
from playwright.sync_api import expect

from cases import services
from tests.support.producers import SUITE

from .browsing import sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_an_editor_maps_conversation_ids_to_cases(page, live_server, team, admin, editor, password):
    suite = services.create_suite(team, SUITE, admin)
    sign_in(page, live_server, editor.username, password)
    page.goto(f"{live_server.url}/suites/{suite.pk}/settings/")
    page.get_by_label("Case attribute of live traces").fill("gen_ai.conversation.id")
    mapping = page.get_by_label("Values of the case attribute → case keys")
    mapping.fill('{"conv-17": "weather", "conv-18": "no-such-case"}')
    page.get_by_role("button", name="Save as a new version").click()
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("nothing was saved")
    expect(alert).to_contain_text("trace_case_map.conv-18: no case 'no-such-case' in the suite")

    page.get_by_label("Values of the case attribute → case keys").fill(
        '{"conv-17": "weather", "conv-18": "weather-answer"}'
    )
    page.get_by_role("button", name="Save as a new version").click()
    page.wait_for_url(f"{live_server.url}/suites/{suite.pk}/")
    suite.refresh_from_db()
    assert suite.trace_case_attribute == "gen_ai.conversation.id"
    assert suite.trace_case_map == {"conv-17": "weather", "conv-18": "weather-answer"}

    page.goto(f"{live_server.url}/suites/{suite.pk}/settings/")
    shown = page.get_by_label("Values of the case attribute → case keys").input_value()
    assert json.loads(shown) == suite.trace_case_map
