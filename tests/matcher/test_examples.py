"""Examples of patterns, for a case's reference run (docs/audit.md#the-reference-run): the
plainest value each matcher accepts, or why there is none; and a tool's schema checked
against some of a call's arguments."""

import pytest

from scoring.matcher import NoExample, load_suite
from scoring.matcher.regex import compile_pattern


@pytest.mark.parametrize(
    "pattern",
    [
        r"\d{4}-\d{2}-\d{2}",
        r"(?i)hello|world",
        r"[A-Z]{2}\d+",
        r"a\b.",
        r"foo\b",
        r".*",
        "",
        r"[^a-z]x",
        r"(ab)*c?",
        r"\w+@\w+\.com",
        r"(?s).+",
        r"x{3,5}",
        r"[^\x00-\x7f]",
        r"(?m)^a$\n^b$",
    ],
)
def test_a_regex_example_is_matched_whole_by_re2(pattern):
    compiled = compile_pattern(pattern)
    assert compiled.fullmatch(compiled.example())


@pytest.mark.parametrize("pattern", [r"a^b", r"[^\s\S]", r"a\bb", r"(?:a|b)\B", r"x$y"])
def test_a_regex_that_matches_nothing_is_proven_so(pattern):
    with pytest.raises(NoExample) as found:
        compile_pattern(pattern).example()
    assert found.value.proven
    assert "matches no text" in str(found.value)


@pytest.mark.parametrize("pattern", [r"\pL+", r"[[:alpha:]]+", r"(?U)a+"])
def test_syntax_python_reads_otherwise_is_no_proof_of_anything(pattern):
    compiled = compile_pattern(pattern)
    with pytest.raises(NoExample) as found:
        compiled.example()
    assert not found.value.proven


def arguments(required, **case):
    call = {"name": "f", "required_args": required}
    suite = load_suite({"cases": [{"key": "c", "expected_calls": [call], **case}]})
    return suite.cases[0].expected_calls[0].arguments


def example(required):
    return arguments(required).example()


def test_each_matcher_gives_its_plainest_value():
    found, missing = example(
        {
            "plain": {"nested": [1, "x"]},
            "text": {"$text": {"value": "New York", "ignore": ["case"]}},
            "choice": {"$one_of": [{"$regex": "a^b"}, "C"]},
            "approx": {"$approx": {"value": 2.5, "tolerance": 0.1}},
            "typed": {"$type": "array"},
            "optional": {"$optional": 1},
            "absent": {"$absent": True},
            "subset": {"$subset": {"a": [1, {"$text": {"value": "X"}}]}},
            "literal": {"$literal": {"$odd": 1}},
            "held": {"date": {"$regex": r"\d{4}"}, "maybe": {"$optional": 2}},
        }
    )
    assert missing == []
    assert found == {
        "plain": {"nested": [1, "x"]},
        "text": "New York",
        "choice": "C",
        "approx": 2.5,
        "typed": [],
        "subset": {"a": [1, "X"]},
        "literal": {"$odd": 1},
        "held": {"date": "0000"},
    }


def test_an_example_satisfies_its_own_pattern():
    pattern = arguments({"a": {"$one_of": [1, 2]}, "b": {"$regex": "[a-c]{3}"}, "c": None})
    found, _ = pattern.example()
    assert pattern.matches(found)


def test_an_argument_with_no_example_is_named_and_left_out():
    found, missing = example({"city": {"$regex": "Par^is"}, "unit": "C"})
    assert found == {"unit": "C"}
    assert [str(m) for m in missing] == ["city: /Par^is/ matches no text"]
    assert missing[0].proven


def test_no_alternative_of_one_of_with_a_value_is_proven_only_when_each_is():
    _, missing = example({"x": {"$one_of": [{"$regex": "a^b"}, {"$regex": r"\pL"}]}})
    assert not missing[0].proven
    _, missing = example({"x": {"$one_of": [{"$regex": "a^b"}, {"$regex": "c^d"}]}})
    assert missing[0].proven


def test_an_array_item_that_must_be_absent_has_no_value():
    _, missing = example({"x": [{"$absent": True}]})
    assert "[0]: an array item cannot be absent" in str(missing[0])


def test_a_partial_schema_check_misses_no_required_argument_but_refuses_wrong_values():
    suite = load_suite(
        {
            "tools": [
                {
                    "name": "f",
                    "parameters": {
                        "type": "object",
                        "properties": {"a": {"type": "string"}, "b": {"enum": [1, 2]}},
                        "required": ["a", "b"],
                        "additionalProperties": False,
                    },
                }
            ],
            "cases": [{"key": "c"}],
        }
    )
    catalog = suite.cases[0].catalog
    schema = catalog.schema(catalog.tools[0])
    assert schema.failure({"b": 1}, partial=True) is None
    assert schema.failure({"b": 1}) is not None  # a lacks
    assert "is not one of" in schema.failure({"b": 3}, partial=True).message
    assert "unexpected" in schema.failure({"z": 3}, partial=True).message
