"""The suite services (cases/services/) that pages call: a new suite made whole in one
transaction, and a recorded call made an expected call of its case."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from cases import services
from cases.models import Suite
from scoring.matcher import InvalidInput

WEATHER = {
    "schema": "casebook.suite/1",
    "name": "weather",
    "cases": [
        {
            "key": "two-cities",
            "expected_calls": [
                {"name": "get_weather", "required_args": {"city": "Paris"}, "ordered": True},
                {"name": "get_weather", "required_args": {"city": "Tokyo"}},
            ],
        }
    ],
}


@pytest.fixture
def case(team, editor):
    return services.create_suite(team, WEATHER, editor).cases.get()


def test_a_new_suite_is_written_with_its_visibility_in_one_transaction(team, editor):
    with CaptureQueriesContext(connection) as captured:
        suite = services.new_suite(
            team, editor, name="billing", tags=["money"], match="lenient", visibility="everyone"
        )
    suite_table = Suite._meta.db_table
    writes = [q["sql"] for q in captured if suite_table in q["sql"].split("WHERE")[0]]
    assert not [sql for sql in writes if sql.lstrip().upper().startswith("UPDATE")]
    saved = Suite.objects.get(pk=suite.pk)
    assert (saved.visibility, saved.tags, saved.match) == ("everyone", ["money"], "lenient")
    assert saved.latest_version.document == {
        "schema": "casebook.suite/1",
        "name": "billing",
        "tags": ["money"],
        "match": "lenient",
        "cases": [],
    }


def test_an_invalid_new_suite_creates_nothing(team, editor):
    with pytest.raises(InvalidInput):
        services.new_suite(team, editor, name="", visibility="everyone")
    assert not Suite.objects.exists()


def test_a_call_put_in_place_of_another_keeps_its_flags_and_says_where_it_came_from(case, editor):
    saved = services.put_expected_call(
        case, editor, name="get_weather", required_args={"city": "Lyon"}, replace=0,
        revision=case.revision, source="run 7",
    )  # fmt: skip
    calls = saved.version.document["cases"][0]["expected_calls"]
    assert calls[0] == {
        "name": "get_weather",
        "required_args": {"city": "Lyon"},
        "ordered": True,
        "depends_on_result": False,
    }
    assert calls[1]["required_args"] == {"city": "Tokyo"}
    assert (
        saved.version.message == "Replaced expected call get_weather of case two-cities from run 7"
    )
    assert saved.case.revision == case.revision + 1


def test_an_added_call_comes_last(case, editor):
    saved = services.put_expected_call(
        case, editor, name="translate", required_args={"text": "Tokio"}
    )
    calls = saved.version.document["cases"][0]["expected_calls"]
    assert [call["name"] for call in calls] == ["get_weather", "get_weather", "translate"]
    assert saved.version.message == "Added expected call translate of case two-cities"


def test_a_call_put_on_a_stale_case_changes_nothing(case, editor):
    versions = case.suite.versions.count()
    with pytest.raises(services.StaleEdit):
        services.put_expected_call(
            case, editor, name="x", required_args={}, revision=case.revision + 1
        )
    with pytest.raises(InvalidInput) as raised:
        services.put_expected_call(case, editor, name="x", required_args={}, replace=2)
    assert raised.value.problems[0].path == "replace"
    assert case.suite.versions.count() == versions


def test_the_likely_corrected_call_is_the_first_of_the_same_name():
    calls = WEATHER["cases"][0]["expected_calls"]
    assert services.likely_corrected(calls, "get_weather") == 0
    assert services.likely_corrected(calls, "translate") is None


def test_one_case_is_checked_under_its_suites_name_and_match(team, editor):
    suite = services.new_suite(team, editor, name="lenient one", match="lenient")
    assert services.one_case_suite(suite, {"key": "k"}) == {
        "schema": "casebook.suite/1",
        "name": "lenient one",
        "match": "lenient",
        "cases": [{"key": "k"}],
    }


def test_a_call_put_in_place_of_the_same_call_makes_no_version(case, editor):
    versions = case.suite.versions.count()
    with pytest.raises(services.NothingToChange):
        services.put_expected_call(
            case, editor, name="get_weather", required_args={"city": "Paris"}, replace=0
        )
    assert case.suite.versions.count() == versions
    assert case.suite.cases.get().revision == case.revision


def test_several_cases_saved_at_once_make_one_version_replacing_and_adding(case, editor):
    suite = case.suite
    revised = services.case_document(case) | {
        "expected_calls": [{"name": "get_weather", "required_args": {"city": "Oslo"}}]
    }
    added = {"key": "new-one", "expected_calls": [{"name": "get_forecast"}]}
    version = services.save_cases(
        suite, [revised, added], editor, seen_version=1, message="2 cases from runs"
    )
    assert version.number == 2
    assert version.message == "2 cases from runs"
    assert suite.versions.count() == 2
    case.refresh_from_db()
    assert case.revision == 2
    assert [c.required_args for c in case.expected_calls.all()] == [{"city": "Oslo"}]
    assert [c.key for c in suite.cases.order_by("position")] == ["two-cities", "new-one"]
    assert [c["key"] for c in version.document["cases"]] == ["two-cities", "new-one"]


def test_cases_saved_against_an_older_version_change_nothing(case, editor):
    services.save_case(case.suite, services.case_document(case) | {"title": "t"}, editor, case=case)
    added = {"key": "new-one", "expected_calls": []}
    with pytest.raises(services.SuiteChanged) as raised:
        services.save_cases(case.suite, [added], editor, seen_version=1, message="m")
    assert raised.value.number == 2
    assert case.suite.versions.count() == 2
    assert not case.suite.cases.filter(key="new-one").exists()


def test_invalid_cases_saved_at_once_are_named_by_place_and_nothing_is_saved(case, editor):
    good = {"key": "fine", "expected_calls": []}
    bad = {"key": "bad", "expected_calls": [{"name": ""}]}
    with pytest.raises(InvalidInput) as raised:
        services.save_cases(case.suite, [good, bad, good], editor, seen_version=None, message="m")
    paths = {problem.path for problem in raised.value.problems}
    assert "cases[1].expected_calls[0].name" in paths
    assert "cases[2].key" in paths  # the same key twice
    assert case.suite.versions.count() == 1
    assert not case.suite.cases.filter(key="fine").exists()
