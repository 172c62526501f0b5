"""A team's own review labels (docs/review.md#review-statuses-and-labels): managed on the team
page and the API by its editors and admins, put on runs from the review panel and in bulk,
filtered by in the runs table, and carried by the CSV export and the results API."""

from __future__ import annotations

import csv
import io
import re

import pytest

from cases.forms import LabelForm
from cases.models import ReviewLabel
from scoring.models import ReviewEvent, Run
from scoring.review import decisions
from tests.support.pages import HX, text
from tests.support.runs import TRIALS, url


@pytest.fixture
def submission(submit, suite):
    return submit(suite, TRIALS, label="model-a")


@pytest.fixture
def wrong_tool(team):
    return ReviewLabel.objects.create(team=team, name="wrong tool", key="w", colour="red")


@pytest.fixture
def simulator(team):
    return ReviewLabel.objects.create(team=team, name="simulator error", key="s")


def labels_of(run) -> list[str]:
    return [label.name for label in decisions.labels_of(run)]


# --- the team page ----------------------------------------------------------------------------


def test_an_editor_adds_a_label_with_a_key_and_colour(team, editor, as_user):
    client = as_user(editor)
    response = client.post(
        f"/teams/{team.slug}/labels/",
        {"name": " hallucinated argument ", "key": "H", "colour": "purple"},
        headers=HX,
    )
    assert response.status_code == 200
    label = team.review_labels.get()
    assert (label.name, label.key, label.colour) == ("hallucinated argument", "h", "purple")
    assert '<span class="label-chip purple">hallucinated argument</span>' in text(response)
    assert "<kbd>h</kbd>" in text(client.get(f"/teams/{team.slug}/"))


@pytest.mark.parametrize(
    ("data", "error"),
    [
        ({"name": "Wrong Tool"}, "The team has a label &#x27;Wrong Tool&#x27; already."),
        ({"name": "other", "key": "w"}, "The key w already applies “wrong tool”."),
        ({"name": "other", "key": "j"}, "Choose a letter other than a, c, j, k"),
        ({"name": "other", "key": "7"}, "Choose a letter other than a, c, j, k"),
    ],
)
def test_a_label_name_or_key_the_team_or_page_uses_is_refused(
    team, editor, as_user, wrong_tool, data, error
):
    response = as_user(editor).post(f"/teams/{team.slug}/labels/", data, headers=HX)
    assert response.status_code == 422
    assert error in text(response)
    assert team.review_labels.count() == 1


def test_viewers_see_the_labels_but_not_the_controls(team, viewer, as_user, wrong_tool):
    page = text(as_user(viewer).get(f"/teams/{team.slug}/"))
    assert "wrong tool" in page
    assert "Add a label" not in page
    assert "team_label" not in page
    assert as_user(viewer).post(f"/teams/{team.slug}/labels/", {"name": "x"}).status_code == 403


def test_deleting_a_label_takes_it_off_every_run_and_keeps_its_name_in_history(
    team, editor, as_user, submission, wrong_tool
):
    run = submission.runs.first()
    decisions.toggle_label(run, wrong_tool, editor)
    response = as_user(editor).post(f"/teams/{team.slug}/labels/{wrong_tool.pk}/delete/")
    assert response.status_code == 302
    assert labels_of(run) == []
    assert run.review_events.get().text == "wrong tool"


def test_an_editor_renames_a_label_on_the_team_page(
    team, editor, viewer, as_user, submission, wrong_tool, simulator
):
    run = submission.runs.first()
    decisions.toggle_label(run, wrong_tool, editor)
    client = as_user(editor)
    edit = f"/teams/{team.slug}/labels/{wrong_tool.pk}/"
    assert f'action="{edit}"' in text(client.get(f"/teams/{team.slug}/"))
    response = client.post(
        edit, {"name": "wrong function", "key": "f", "colour": "blue"}, headers=HX
    )
    assert response.status_code == 200
    assert '<span class="label-chip blue">wrong function</span>' in text(response)
    wrong_tool.refresh_from_db()
    assert (wrong_tool.name, wrong_tool.key, wrong_tool.colour) == ("wrong function", "f", "blue")
    assert labels_of(run) == ["wrong function"]
    # The team's rules hold as when adding: another label's name or key, a page's key.
    for data, error in (
        ({"name": "Simulator Error", "key": "f"}, "already"),
        ({"name": "wrong function", "key": "s"}, "The key s already applies"),
        ({"name": "wrong function", "key": "j"}, "Choose a letter other than"),
    ):
        refused = client.post(edit, data, headers=HX)
        assert refused.status_code == 422, data
        assert error in text(refused)
    assert ReviewLabel.objects.get(pk=wrong_tool.pk).name == "wrong function"
    # Viewers may not, nor may anyone another team's label through this team's page.
    assert as_user(viewer).post(edit, {"name": "x"}).status_code == 403
    assert "Edit</summary>" not in text(as_user(viewer).get(f"/teams/{team.slug}/"))


# --- the run page ---------------------------------------------------------------------------


def test_the_review_panel_toggles_a_label_and_records_it(
    editor, as_user, submission, wrong_tool, simulator
):
    run = submission.runs.first()
    client = as_user(editor)
    review_url = url(submission, f"runs/{run.pk}/review/")
    page = text(client.get(url(submission, f"runs/{run.pk}/")))
    assert 'data-label-key="w" aria-pressed="false"><kbd>w</kbd> wrong tool</button>' in page
    response = client.post(review_url, {"label": wrong_tool.pk}, headers=HX)
    assert response.status_code == 200
    assert 'data-label-key="w" aria-pressed="true"' in text(response)
    assert labels_of(run) == ["wrong tool"]
    client.post(review_url, {"label": wrong_tool.pk}, headers=HX)
    assert labels_of(run) == []
    kinds = list(run.review_events.values_list("kind", "text"))
    assert kinds == [("labelled", "wrong tool"), ("unlabelled", "wrong tool")]
    assert "took the label" in text(client.get(url(submission, f"runs/{run.pk}/")))


def test_the_keys_dialog_lists_the_teams_label_keys(
    editor, viewer, as_user, submission, wrong_tool, simulator
):
    run = submission.runs.first()
    dialog = text(as_user(editor).get(url(submission, f"runs/{run.pk}/"))).split(
        'id="triage-keys"'
    )[1]
    assert re.search(
        r"<kbd>w</kbd></dt><dd>put on or take off the label <span[^>]*>wrong tool", dialog
    )
    assert re.search(
        r"<kbd>s</kbd></dt><dd>put on or take off the label <span[^>]*>simulator error", dialog
    )
    # Viewers cannot label: no label keys for them.
    dialog = text(as_user(viewer).get(url(submission, f"runs/{run.pk}/"))).split(
        'id="triage-keys"'
    )[1]
    assert "the label" not in dialog


def test_another_teams_label_is_refused(editor, as_user, submission, other_team):
    theirs = ReviewLabel.objects.create(team=other_team, name="theirs")
    run = submission.runs.first()
    response = as_user(editor).post(
        url(submission, f"runs/{run.pk}/review/"), {"label": theirs.pk}, headers=HX
    )
    assert response.status_code == 422
    assert labels_of(run) == []


# --- the runs table, bulk review, CSV and API ------------------------------------------------


def test_the_runs_table_shows_and_filters_by_label(viewer, editor, as_user, submission, wrong_tool):
    labelled = list(submission.runs.filter(case_key="delete-if-exists"))
    decisions.add_label(Run.objects.filter(pk__in=[r.pk for r in labelled]), wrong_tool, editor)
    client = as_user(viewer)
    page = text(client.get(url(submission), {"label": "wrong tool"}))
    shown = {int(pk) for pk in re.findall(r"/runs/(\d+)/", page)}
    assert shown == {run.pk for run in labelled}
    assert '<span class="label-chip red">wrong tool</span>' in page
    assert '<option value="wrong tool" selected>' in page
    everything = text(client.get(url(submission)))
    assert everything.count('<span class="label-chip red">wrong tool</span>') == len(labelled)


def test_bulk_review_puts_a_label_on_and_takes_it_off_the_runs_of_a_filter(
    editor, as_user, submission, wrong_tool
):
    client = as_user(editor)
    failing = submission.runs.filter(result__verdict="fail")
    response = client.post(
        url(submission, "review/"), {"verdict": "fail", "set_label": f"+{wrong_tool.pk}"}
    )
    assert response.status_code == 302
    assert {labels_of(run) == ["wrong tool"] for run in failing} == {True}
    assert not ReviewLabel.objects.filter(reviews__run__result__verdict="pass").exists()
    assert ReviewEvent.objects.filter(kind="labelled").count() == failing.count()
    client.post(url(submission, "review/"), {"verdict": "fail", "set_label": f"-{wrong_tool.pk}"})
    assert {labels_of(run) == [] for run in failing} == {True}


def test_the_csv_and_the_results_api_carry_the_labels(
    viewer, editor, as_user, submission, wrong_tool, simulator
):
    run = submission.runs.filter(result__verdict="fail").first()
    decisions.set_status(Run.objects.filter(pk=run.pk), "flaky", editor)
    decisions.set_labels(Run.objects.filter(pk=run.pk), [wrong_tool, simulator], editor)
    client = as_user(viewer)
    rows = list(
        csv.DictReader(
            io.StringIO(
                b"".join(client.get(url(submission, "runs.csv")).streaming_content).decode()
            )
        )
    )
    by_line = {row["line"]: row for row in rows}
    assert by_line[str(run.line)]["labels"] == "simulator error\nwrong tool"
    assert {row["labels"] for row in rows if row["line"] != str(run.line)} == {""}
    results = client.get(f"/api/submissions/{submission.pk}/results/").json()["results"]
    reviewed = [r for r in results if r["html_url"].endswith(f"/runs/{run.pk}/")]
    assert reviewed[0]["review"] == {"status": "flaky", "labels": ["simulator error", "wrong tool"]}
    others = [r["review"] for r in results if r is not reviewed[0]]
    assert others == [{"status": "untriaged", "labels": []}] * (len(results) - 1)


def test_the_labels_api_lists_adds_changes_and_deletes(team, editor, viewer, as_user, wrong_tool):
    base = f"/api/teams/{team.slug}/labels/"
    listed = as_user(viewer).get(base).json()
    assert listed == [{"id": wrong_tool.pk, "name": "wrong tool", "key": "w", "colour": "red"}]
    client = as_user(editor)
    made = client.post(
        base, {"name": "simulator error", "key": "s"}, content_type="application/json"
    )
    assert made.status_code == 201
    assert made.json()["colour"] == "grey"
    refused = client.post(base, {"name": "x", "key": "w"}, content_type="application/json")
    assert refused.status_code == 400
    assert "already applies" in refused.json()["key"][0]
    changed = client.patch(f"{base}{wrong_tool.pk}/", {"key": "t"}, content_type="application/json")
    assert changed.status_code == 200
    assert changed.json()["key"] == "t"
    assert client.delete(f"{base}{wrong_tool.pk}/").status_code == 204
    assert [label.name for label in team.review_labels.all()] == ["simulator error"]


def test_a_labels_name_is_shown_as_text(team, editor, as_user, submission):
    payload = '<img src=x onerror="alert(1)">'
    label = ReviewLabel.objects.create(team=team, name=payload)
    run = submission.runs.first()
    decisions.toggle_label(run, label, editor)
    client = as_user(editor)
    for page in (f"/teams/{team.slug}/", url(submission, f"runs/{run.pk}/"), url(submission)):
        html = text(client.get(page))
        assert payload not in html
        assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in html


def test_a_name_taken_by_a_racing_request_is_refused_not_a_500(
    team, editor, as_user, wrong_tool, monkeypatch
):
    """Two requests may both find a name free before either saves (16 at once gave 500s):
    the form's check is skipped here, as the losing request's is, to leave the database's."""
    monkeypatch.setattr(LabelForm, "clean_name", lambda form: form.cleaned_data["name"])
    client = as_user(editor)
    page = client.post(f"/teams/{team.slug}/labels/", {"name": "wrong tool"}, headers=HX)
    api = client.post(
        f"/api/teams/{team.slug}/labels/", {"name": "wrong tool"}, content_type="application/json"
    )
    assert page.status_code == 422
    assert "The team has a label &#x27;wrong tool&#x27;" in text(page)
    assert api.status_code == 400
    assert api.json()["name"][0].startswith("The team has a label 'wrong tool'")
    assert team.review_labels.count() == 1
