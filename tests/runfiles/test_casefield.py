"""``case_field`` paths (``scoring.runfiles.casefield``): parsed strictly, looked up in
each record."""

import pytest

from scoring.matcher import InvalidInput
from scoring.runfiles.casefield import parse_case_field, root_field, with_case_from


@pytest.mark.parametrize(
    ("path", "steps"),
    [
        ("task_id", ("task_id",)),
        ("metadata.case", ("metadata", "case")),
        ("inputs[0].id", ("inputs", 0, "id")),
        ("a[1][2]", ("a", 1, 2)),
    ],
)
def test_a_dotted_path_with_indexes_is_its_steps(path, steps):
    assert parse_case_field(path) == steps


@pytest.mark.parametrize("path", ["", ".a", "a.", "a..b", "a[x]", "a[", "a]", "x" * 201])
def test_a_malformed_path_is_refused_saying_so(path):
    with pytest.raises(ValueError, match=r"case field|dotted path"):
        parse_case_field(path)


def test_the_case_is_the_string_of_the_value_at_the_path():
    record = {"metadata": {"ids": [{"case": 17}]}, "messages": []}
    assert with_case_from(record, "metadata.ids[0].case") == {**record, "case": "17"}
    assert with_case_from({"case": "old", "task_id": "new"}, "task_id")["case"] == "new"
    assert root_field("metadata.ids[0].case") == "metadata"
    assert root_field(None) is None


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"metadata": {}}, "metadata.case: required by case_field=metadata.case: the case key"),
        ({"metadata": []}, "metadata.case: required by case_field=metadata.case: the case key"),
        (
            {"metadata": {"case": None}},
            "metadata.case: case_field=metadata.case names the case key: a string or a number,"
            " not null",
        ),
        (
            {"metadata": {"case": True}},
            "metadata.case: case_field=metadata.case names the case key: a string or a number,"
            " not boolean",
        ),
    ],
)
def test_a_missing_or_unusable_case_names_the_path(record, message):
    with pytest.raises(InvalidInput) as caught:
        with_case_from(record, "metadata.case")
    assert str(caught.value.problems[0]) == message
