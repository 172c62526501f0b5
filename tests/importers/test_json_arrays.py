"""A run file that is one JSON array of runs (``scoring.runfiles.reader.json_array``): read element
by element, in any run format per element, within the limits a line has."""

import io
import json
from decimal import Decimal

import pytest

from scoring.runfiles.reader import ITEM, json_array, read_run_lines

from .examples import LINES


def runs_of(data: bytes, **options):
    return list(read_run_lines(io.BytesIO(data), **options))


@pytest.mark.parametrize("indent", [None, 2], ids=["compact", "pretty"])
def test_an_array_of_runs_in_every_format_gives_a_run_per_element(indent):
    elements = [{**LINES[name](), "trial": n} for n, name in enumerate(sorted(LINES))]
    items = runs_of(json.dumps(elements, indent=indent).encode())
    assert [i.problems for i in items] == [()] * len(elements)
    assert [i.format for i in items] == sorted(LINES)
    assert [(i.line, i.unit) for i in items] == [(n, ITEM) for n in range(1, len(elements) + 1)]
    assert all(i.run.case == "weather" for i in items)
    assert [i.run.trial for i in items] == list(range(len(elements)))


def test_bad_elements_are_problems_of_their_own_path_and_the_others_still_read():
    data = json.dumps(
        [{"case": "a", "batches": []}, 3, {"case": "b"}, {"case": "c", "batches": []}]
    )
    items = runs_of(data.encode())
    assert [i.run.case if i.run else None for i in items] == ["a", None, None, "c"]
    assert [str(p) for p in items[1].problems] == [
        "[1]: a run line must be a JSON object, not number"
    ]
    assert str(items[2].problems[0]).startswith("[2]: unrecognised run format")


def test_an_array_that_breaks_off_keeps_the_elements_before_and_says_where():
    data = json.dumps([{"case": "a", "batches": []}, {"case": "b", "batches": []}]).encode()
    items = runs_of(data[:-20])
    assert [i.run.case if i.run else None for i in items] == ["a", None]
    assert str(items[1].problems[0]) == "[1]: invalid JSON: parse error: premature EOF"
    trailing = runs_of(data + b"\n{}")
    assert trailing[-1].problems[0].message.startswith("invalid JSON after element 2:")


def test_numbers_are_read_as_parse_json_reads_them():
    data = b"[1, 1.5, 123456789012345678901234567890, 0.10000000000000000555, 1e400, -0.0]"
    values = [value for _, value in json_array(io.BytesIO(data))]
    assert values == [
        1,
        1.5,
        123456789012345678901234567890,
        Decimal("0.10000000000000000555"),
        Decimal("1e400"),
        -0.0,
    ]
    assert [type(v) for v in values] == [int, float, int, Decimal, Decimal, float]


def test_an_element_over_the_size_limit_is_refused_without_being_built():
    big = {"case": "big", "batches": [], "final_text": "x" * 300_000}
    data = json.dumps([{"case": "a", "batches": []}, big, {"case": "b", "batches": []}]).encode()
    items = runs_of(data, max_line_bytes=100_000)
    assert [i.run.case if i.run else None for i in items] == ["a", None, "b"]
    assert str(items[1].problems[0]) == "[1]: the element is over 100,000 bytes, the limit"


def test_an_element_nested_too_deep_is_refused_and_a_deep_file_costs_no_more_than_its_size():
    deep = {"case": "deep", "batches": [], "meta": json.loads("[" * 70 + "]" * 70)}
    data = json.dumps([deep, {"case": "b", "batches": []}]).encode()
    items = runs_of(data, max_depth=64)
    assert str(items[0].problems[0]) == "[0]: the JSON is nested more than 64 levels deep"
    assert items[1].run.case == "b"
    bomb = b"[" + b"[" * 1_000_000 + b"]" * 1_000_000 + b"]"
    (item,) = runs_of(bomb, max_depth=64)
    assert item.problems[0].message == "the JSON is nested more than 64 levels deep"


def test_the_array_is_streamed_one_element_at_a_time():
    def endless():
        yield b"[\n"
        n = 0
        while True:
            yield json.dumps({"case": f"c{n}", "batches": []}).encode() + b",\n"
            n += 1

    items = read_run_lines(endless())
    assert [next(items).run.case for _ in range(3)] == ["c0", "c1", "c2"]


def test_case_field_names_the_case_in_each_element():
    elements = [{"task_id": 5, "batches": []}, {"task_id": "x", "batches": []}, {"batches": []}]
    items = runs_of(json.dumps(elements).encode(), case_field="task_id")
    assert [i.run.case if i.run else None for i in items] == ["5", "x", None]
    assert str(items[2].problems[0]) == "[2].task_id: required by case_field=task_id: the case key"
