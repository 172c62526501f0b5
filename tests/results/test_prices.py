"""A team's own model prices (docs/formats.md#cost, docs/api.md#model-prices): listed to
its members, added, changed and deleted by its admins on the team's prices page and through
the API, each bad field named; runs read after a change are costed at it."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from cases import services
from scoring.models import ModelPrice, Run
from tests.support.pages import escaped, text

SUITE = {
    "schema": "casebook.suite/1",
    "name": "priced",
    "cases": [{"key": "a", "expectations": [{"type": "final_text_contains", "text": "ok"}]}],
}


def run_of(model: str, prompt: int, made: int) -> dict:
    completion = {
        "object": "chat.completion",
        "model": model,
        "choices": [{"message": {"role": "assistant", "content": "ok"}}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": made},
    }
    return {"case": "a", "messages": [{"role": "user", "content": "q"}, completion]}


def prices_url(team) -> str:
    return f"/teams/{team.slug}/prices/"


def test_an_admin_adds_a_price_and_runs_read_after_are_costed_at_it(as_user, admin, team, submit):
    suite = services.create_suite(team, SUITE, admin)
    before = submit(suite, [run_of("my-llama", 1_000_000, 1_000_000)])
    assert Run.objects.get(submission=before).cost_usd is None  # no price known
    sent = {"model": " my-llama ", "input_per_mtok": "0.5", "output_per_mtok": "1.5"}
    response = as_user(admin).post(prices_url(team), sent)
    assert response.status_code == 302
    price = ModelPrice.objects.get(team=team)
    assert (price.model, price.input_per_mtok, price.cached_input_per_mtok) == (
        "my-llama",
        0.5,
        None,
    )
    after = submit(suite, [run_of("my-llama", 1_000_000, 1_000_000)])
    assert Run.objects.get(submission=after).cost_usd == pytest.approx(0.5 + 1.5)
    assert Run.objects.get(submission=before).cost_usd is None  # kept as it was read


@pytest.mark.parametrize(
    ("sent", "field", "said"),
    [
        ({"input_per_mtok": "-1"}, "input_per_mtok", "greater than or equal to 0"),
        ({"output_per_mtok": "lots"}, "output_per_mtok", "Enter a number."),
        ({"cached_input_per_mtok": "inf"}, "cached_input_per_mtok", "Enter a number."),
        ({"model": "   "}, "model", "This field is required."),
        ({"model": "taken"}, "model", "The team already has a price for taken."),
    ],
)
def test_a_bad_price_is_refused_naming_its_field(as_user, admin, team, sent, field, said):
    ModelPrice.objects.create(team=team, model="taken", input_per_mtok=1, output_per_mtok=1)
    good = {"model": "new-model", "input_per_mtok": "1", "output_per_mtok": "2"}
    response = as_user(admin).post(prices_url(team), {**good, **sent})
    assert response.status_code == 200  # the page again, the field named
    html = text(response)
    assert escaped(said) in html
    assert f'name="{field}"' in html.split(escaped(said))[0].rsplit("<label", 1)[-1]
    assert ModelPrice.objects.filter(team=team).count() == 1


def test_members_read_the_prices_escaped_and_only_admins_are_offered_changes(
    as_user, viewer, admin, team
):
    ModelPrice.objects.create(team=team, model="<b>llama</b>", input_per_mtok=1, output_per_mtok=2)
    html = text(as_user(viewer).get(prices_url(team)))
    assert escaped("<b>llama</b>") in html
    assert "<b>llama</b>" not in html
    assert "Add a price" not in html
    assert "Only the team's admins change its prices." in html
    assert "Add a price" in text(as_user(admin).get(prices_url(team)))


def test_an_admin_changes_and_deletes_a_price(as_user, admin, team):
    price = ModelPrice.objects.create(team=team, model="m", input_per_mtok=1, output_per_mtok=2)
    client = as_user(admin)
    changed = {"model": "m", "input_per_mtok": "3", "cached_input_per_mtok": "0.3",
               "output_per_mtok": "4"}  # fmt: skip
    assert client.post(f"{prices_url(team)}{price.pk}/", changed).status_code == 302
    price.refresh_from_db()
    assert (price.input_per_mtok, price.cached_input_per_mtok, price.output_per_mtok) == (3, 0.3, 4)
    refused = client.post(f"{prices_url(team)}{price.pk}/", {**changed, "output_per_mtok": "-2"})
    assert refused.status_code == 200
    assert 'aria-invalid="true" aria-describedby="price-' in text(refused)
    assert client.post(f"{prices_url(team)}{price.pk}/delete/").status_code == 302
    assert not ModelPrice.objects.filter(team=team).exists()


def test_the_api_lists_adds_changes_and_deletes_a_teams_prices(admin, viewer, team):
    api = APIClient()
    api.force_login(admin)
    url = f"/api/teams/{team.slug}/prices/"
    made = api.post(url, {"model": "m", "input_per_mtok": 1, "output_per_mtok": 2}, format="json")
    assert made.status_code == 201
    assert made.json() == {"id": made.json()["id"], "model": "m", "input_per_mtok": 1.0,
                           "cached_input_per_mtok": None, "output_per_mtok": 2.0}  # fmt: skip
    bad = api.post(url, {"model": "m", "input_per_mtok": -1, "output_per_mtok": 2}, format="json")
    assert bad.status_code == 400
    assert set(bad.json()) == {"model", "input_per_mtok"}  # taken, and below 0
    one = f"{url}{made.json()['id']}/"
    assert (
        api.patch(one, {"cached_input_per_mtok": 0.1}, format="json").json()[
            "cached_input_per_mtok"
        ]
        == 0.1
    )
    reader = APIClient()
    reader.force_login(viewer)
    assert [p["model"] for p in reader.get(url).json()] == ["m"]
    assert reader.delete(one).status_code == 403
    assert api.delete(one).status_code == 204
    assert reader.get(url).json() == []
