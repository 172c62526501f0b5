"""Required arguments in words (scoring.matcher.describe_arguments): the phrases the run page,
the case editor and the promote form show in place of the matchers' JSON."""

from scoring.matcher import MatchOptions, describe_arguments, load_suite


def test_each_matcher_reads_as_words():
    required = {
        "city": {"$text": {"value": "paris", "ignore": ["case"]}},
        "amount": {"$approx": {"value": 12.5, "tolerance": 0.1}},
        "date": {"$regex": r"2024-\d\d-\d\d"},
        "unit": {"$one_of": ["C", "F"]},
        "note": {"$type": "string"},
        "debug": {"$absent": True},
        "limit": {"$optional": 10},
        "filters": {"$subset": {"open": True}},
        "where": {"geo": [1, {"$type": "number"}]},
        "raw": {"$literal": {"$ref": "x"}},
        "plain": "Paris",
    }
    assert describe_arguments(required) == (
        'city ≈ "paris" (ignoring case)',
        "amount = 12.5 ± 0.1",
        r"date matches /2024-\d\d-\d\d/",
        'unit is one of ["C", "F"]',
        "note is any string",
        "debug not sent",
        "limit = 10, or not sent",
        'filters contains {"open": true}',
        'where = {"geo": [1, any number]}',
        'raw = {"$ref": "x"}',
        'plain = "Paris"',
    )


def test_the_words_name_the_value_as_the_report_label_does():
    required = {"city": {"$text": {"value": "paris", "ignore": ["case"]}}, "n": {"$one_of": [1, 2]}}
    document = {
        "schema": "casebook.suite/1",
        "name": "s",
        "cases": [{"key": "c", "expected_calls": [{"name": "f", "required_args": required}]}],
    }
    label = load_suite(document).case("c").expected_calls[0].label
    assert label == 'f(city="paris" (ignoring case), n=one of [1, 2])'
    words = describe_arguments(required)
    assert [phrase.split(" ", 2)[2] for phrase in words] == [
        '"paris" (ignoring case)',
        "one of [1, 2]",
    ]


def test_a_malformed_matcher_reads_as_the_json_it_is():
    assert describe_arguments({"x": {"$nope": 1}, "y": {"$regex": "("}}) == (
        'x = {"$nope": 1}',
        "y matches /(/",
    )


def test_the_cases_options_decide_what_null_means():
    assert describe_arguments({"x": None}) == ("x = null",)
    lenient = MatchOptions(null_args="absent_or_null")
    assert describe_arguments({"x": None}, lenient) == ("x is null or not sent",)
