"""The editor knows the tools, in a real browser: a field per parameter of the catalog's tool,
with a matcher picker fit to its type, writing the JSON arguments in step."""

import json

import pytest
from playwright.sync_api import expect

from cases import services
from cases.models import Membership, Role, Team

from .browsing import sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

THERMOSTAT = {
    "name": "set_thermostat",
    "description": "Set the heating",
    "parameters": {
        "type": "object",
        "properties": {
            "temperature": {"type": "number", "description": "degrees Celsius"},
            "mode": {"type": "string", "enum": ["heat", "cool", "auto"]},
            "room": {"type": "string"},
        },
        "required": ["temperature", "mode"],
    },
}


def add_thermostat_call(page, live_server, user, password, suite):
    """Signed in, the suite's case open in the editor with an expected call of
    ``set_thermostat`` added: that call's card."""
    sign_in(page, live_server, user.username, password)
    case = suite.cases.get()
    page.goto(f"{live_server.url}/suites/{suite.pk}/cases/{case.pk}/")
    page.get_by_role("button", name="+ Expected call").click()
    page.get_by_label("Tool of expected call 0").fill("set_thermostat")
    return page.locator("#call-0")


def save(page):
    page.get_by_role("button", name="Save as a new version").click()


@pytest.fixture
def suite(user):
    team = Team.objects.create(name="Agents", slug="agents")
    Membership.objects.create(team=team, user=user, role=Role.EDITOR)
    document = {
        "schema": "casebook.suite/1",
        "name": "home",
        "tools": [THERMOSTAT],
        "cases": [{"key": "warm", "expected_calls": []}],
    }
    return services.create_suite(team, document, user)


def test_an_approximate_number_and_a_one_of_from_an_enum_without_typing_json(
    page, live_server, user, password, suite
):
    card = add_thermostat_call(page, live_server, user, password, suite)
    expect(card.get_by_text("degrees Celsius")).to_be_visible()
    expect(card.locator(".argfield[data-param='mode'] abbr.required")).to_have_count(1)
    expect(card.locator(".argfield[data-param='room'] abbr.required")).to_have_count(0)

    card.get_by_label("temperature matcher").select_option("approx")
    card.get_by_label("temperature value").fill("21.5")
    card.get_by_label("temperature tolerance").fill("0.5")
    card.get_by_label("mode matcher").select_option("one_of")
    card.get_by_label("heat").check()
    card.get_by_label("auto").check()
    args = page.locator("textarea[name='call-0-required_args']")
    expect(args).to_have_value(
        '{ "temperature": { "$approx": { "value": 21.5, "tolerance": 0.5 } }, '
        '"mode": { "$one_of": [ "heat", "auto" ] } }'
    )
    # the JSON typed by hand moves the fields: they stay in step both ways
    args.fill('{"temperature": 19, "mode": {"$one_of": ["cool"]}}')
    expect(card.get_by_label("temperature matcher")).to_have_value("exact")
    expect(card.get_by_label("temperature value")).to_have_value("19")
    expect(card.get_by_label("cool")).to_be_checked()
    expect(card.get_by_label("heat")).not_to_be_checked()
    card.get_by_label("temperature matcher").select_option("approx")
    card.get_by_label("temperature value").fill("21.5")
    card.get_by_label("temperature tolerance").fill("0.5")
    card.get_by_label("heat").check()

    save(page)
    expect(page.get_by_text("Saved case warm")).to_be_visible()
    saved = services.case_document(suite.cases.get())["expected_calls"][0]
    assert saved["name"] == "set_thermostat"
    assert json.loads(json.dumps(saved["required_args"], default=float)) == {
        "temperature": {"$approx": {"value": 21.5, "tolerance": 0.5}},
        "mode": {"$one_of": ["heat", "cool"]},
    }


def test_a_misspelt_argument_is_warned_about_as_it_is_typed(
    page, live_server, user, password, suite
):
    add_thermostat_call(page, live_server, user, password, suite)
    page.locator("textarea[name='call-0-required_args']").fill('{"temprature": 20}')
    live = page.locator("#call-0-required_args-live .field-warning")
    expect(live.first).to_have_text(
        "temprature: unknown argument `temprature` of `set_thermostat`; did you mean `temperature`?"
    )
    # a warning, not an error: the case still saves
    save(page)
    expect(page.get_by_text("Saved case warm")).to_be_visible()


def test_a_value_field_shows_its_underscores_at_1x(page, live_server, user, password, suite):
    """An underscore reaches below the font's descent; a one-line field whose text box was
    only the font's height, rounded down at 1x pixel density, cut it off."""
    card = add_thermostat_call(page, live_server, user, password, suite)
    card.get_by_label("room matcher").select_option("exact")
    value = card.get_by_label("room value")
    value.fill("living_room_2")
    below, underscore = value.evaluate(
        """field => {
            const style = getComputedStyle(field);
            const context = document.createElement("canvas").getContext("2d");
            context.font = `${style.fontSize} ${style.fontFamily}`;
            const metrics = context.measureText(field.value);
            const padding = parseFloat(style.paddingTop) + parseFloat(style.paddingBottom);
            const descent = metrics.fontBoundingBoxDescent;
            const font = metrics.fontBoundingBoxAscent + descent;
            // The text is centred in the box: the room below its baseline.
            const below = (field.clientHeight - padding - font) / 2 + descent;
            return [below, metrics.actualBoundingBoxDescent];
        }"""
    )
    assert below >= underscore


def test_the_picker_says_what_a_matcher_does_and_offers_what_a_type_can_hold(
    page, live_server, user, password
):
    """``$text`` ignoring case alone reads so; ``$optional`` around ``$one_of`` is not
    "not constrained"; an ``integer | null`` parameter is a number, never "contains"."""
    team = Team.objects.create(name="Agents", slug="agents")
    Membership.objects.create(team=team, user=user, role=Role.EDITOR)
    tool = {
        "name": "book",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "mode": {"type": "string", "enum": ["heat", "cool"]},
                "nights": {"type": ["integer", "null"]},
                "seats": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
                "note": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            },
        },
    }
    args = {
        "city": {"$text": {"value": "paris", "ignore": ["case"]}},
        "mode": {"$optional": {"$one_of": ["heat"]}},
    }
    document = {
        "schema": "casebook.suite/1",
        "name": "trips",
        "tools": [tool],
        "cases": [{"key": "trip", "expected_calls": [{"name": "book", "required_args": args}]}],
    }
    suite = services.create_suite(team, document, user)
    sign_in(page, live_server, user.username, password)
    page.goto(f"{live_server.url}/suites/{suite.pk}/cases/{suite.cases.get().pk}/")
    card = page.locator("#call-0")
    city = card.get_by_label("city matcher")
    expect(city.locator("option:checked")).to_have_text("text (ignoring case)")
    mode = card.get_by_label("mode matcher")
    expect(mode).to_be_disabled()
    expect(mode.locator("option:checked")).to_have_text("$optional (set in the JSON)")
    for name in ("nights", "seats"):
        options = card.get_by_label(f"{name} matcher").locator("option")
        expect(options).to_have_text(["not constrained", "exactly", "approximately ±"])
    expect(card.get_by_label("note matcher").locator("option")).to_have_text(
        ["not constrained", "exactly"]
    )
    # editing the text keeps what it ignores
    card.get_by_label("city value").fill("lyon")
    expect(page.locator("textarea[name='call-0-required_args']")).to_have_value(
        '{ "city": { "$text": { "value": "lyon", "ignore": [ "case" ] } }, '
        '"mode": { "$optional": { "$one_of": [ "heat" ] } } }'
    )
