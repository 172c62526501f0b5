"""The suite page in a real browser (docs/review.md#suite-page): on a suite with no
submission yet, its cards stand apart as they do on any other."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from cases import services
from cases.models import Membership, Role, Team

from .browsing import sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("width", [1400, 800])
def test_on_an_empty_suite_the_pass_rate_and_retention_cards_do_not_touch(
    page, live_server, user, password, width
):
    team = Team.objects.create(name="Agents", slug="agents")
    Membership.objects.create(team=team, user=user, role=Role.EDITOR)
    document = {"schema": "casebook.suite/1", "name": "empty", "cases": []}
    suite = services.create_suite(team, document, user)
    page.set_viewport_size({"width": width, "height": 900})
    sign_in(page, live_server, user.username, password)
    page.goto(f"{live_server.url}{suite.get_absolute_url()}")
    chart = page.locator(".trend > .empty")
    expect(chart).to_have_text("The chart appears once a submission is scored.")
    retention = page.locator("#retention")
    above, below = chart.bounding_box(), retention.bounding_box()
    gap = below["y"] - (above["y"] + above["height"])
    assert gap >= 12, f"{gap:.0f} px between the two cards"
