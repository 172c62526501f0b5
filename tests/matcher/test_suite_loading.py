"""The suite file (docs/formats.md#suite-files): its shape errors by JSON path, authoring
rules, defaults."""

import pytest

from scoring.matcher import (
    InvalidInput,
    MatchOptions,
    Problem,
    load_suite,
    parse_suite_document,
)

from .builders import (
    call,
    case_doc,
    expected,
    make_case,
    problems_of,
    score_case,
    suite_doc,
)


def case_problems(**case_fields):
    """The (path, message) pairs for a suite holding one case ``c`` with ``case_fields``."""
    return problems_of(load_suite, suite_doc(case_doc(**case_fields)))


def case_paths(**case_fields):
    return [path for path, _ in case_problems(**case_fields)]


def one_expectation_paths(expectation):
    return case_paths(expectations=[expectation])


def assert_a_problem_at(paths, wanted):
    """Some problem is at ``wanted`` or inside it (``wanted.x``, ``wanted[0]``)."""
    assert any(p == wanted or p.startswith((wanted + ".", wanted + "[")) for p in paths), paths


# --- the whole document ----------------------------------------------------------------------


def test_the_example_suite_of_the_design_loads():
    text = """
    {
      "schema": "casebook.suite/1",
      "name": "file-ops",
      "description": "File tools",
      "match": {"tool_names": "exact", "arg_names": "exact", "null_args": "must_be_null"},
      "cases": [
        {
          "key": "delete-if-exists",
          "title": "Delete a file only after checking it exists",
          "prompt": "Delete notes.txt if it is there.",
          "tags": ["files"],
          "expected_calls": [
            {"name": "file_exists", "required_args": {"path": "notes.txt"}, "ordered": true},
            {"name": "delete_file", "required_args": {"path": "notes.txt"}, "ordered": true,
             "depends_on_result": true}
          ],
          "extra_calls": "allow",
          "expectations": [
            {"type": "did_not_call_tool", "tool": "format_disk"},
            {"type": "final_text_contains", "text": "deleted", "case_insensitive": true}
          ]
        }
      ]
    }
    """
    suite = load_suite(parse_suite_document(text, "file-ops.json"))
    case = suite.case("delete-if-exists")
    assert case is not None
    assert [c.name for c in case.expected_calls] == ["file_exists", "delete_file"]
    assert [c.ordered for c in case.expected_calls] == [True, True]
    assert [c.depends_on_result for c in case.expected_calls] == [False, True]
    assert len(case.expectations) == 2


@pytest.mark.parametrize("document", [[], "suite", 3, None])
def test_a_document_that_is_not_an_object_is_rejected(document):
    with pytest.raises(InvalidInput):
        load_suite(document)


def test_cases_that_is_not_a_list_is_reported_at_cases():
    with pytest.raises(InvalidInput) as info:
        load_suite({"schema": "casebook.suite/1", "name": "s", "cases": {"key": "c"}})
    assert [p.path for p in info.value.problems] == ["cases"]


def test_a_case_that_is_not_an_object_is_reported_at_its_index():
    paths = problem_paths_of_doc(suite_doc(case_doc("a"), "not a case"))
    assert paths == ["cases[1]"]


def problem_paths_of_doc(document):
    return [path for path, _ in problems_of(load_suite, document)]


# --- wrong field types, by JSON path ---------------------------------------------------------


def test_required_args_that_is_a_list_is_reported_by_path_with_must_be_an_object():
    problems = problems_of(
        load_suite,
        suite_doc(
            case_doc("a"),
            case_doc("b"),
            case_doc("c"),
            case_doc("d", expected_calls=[expected("f"), {"name": "g", "required_args": [1]}]),
        ),
    )
    assert [path for path, _ in problems] == ["cases[3].expected_calls[1].required_args"]
    assert "must be an object" in problems[0][1]


def test_problem_string_names_the_path_then_the_message():
    with pytest.raises(InvalidInput) as info:
        load_suite(suite_doc(case_doc(expected_calls=[{"name": "f", "required_args": "x"}])))
    (problem,) = info.value.problems
    assert isinstance(problem, Problem)
    assert str(problem).startswith("cases[0].expected_calls[0].required_args: ")
    assert "must be an object" in str(problem)


@pytest.mark.parametrize(
    ("case_fields", "path"),
    [
        ({"key": 7}, "cases[0].key"),
        ({"expected_calls": {"name": "f"}}, "cases[0].expected_calls"),
        ({"expected_calls": ["f"]}, "cases[0].expected_calls[0]"),
        ({"expected_calls": [{"name": 3}]}, "cases[0].expected_calls[0].name"),
        (
            {"expected_calls": [{"name": "f", "ordered": "yes"}]},
            "cases[0].expected_calls[0].ordered",
        ),
        ({"expected_calls": [{"name": "f", "ordered": 1}]}, "cases[0].expected_calls[0].ordered"),
        (
            {"expected_calls": [expected("f"), {"name": "g", "depends_on_result": "true"}]},
            "cases[0].expected_calls[1].depends_on_result",
        ),
        ({"extra_calls": "sometimes"}, "cases[0].extra_calls"),
        ({"extra_calls": True}, "cases[0].extra_calls"),
        ({"expectations": {"type": "no_error"}}, "cases[0].expectations"),
        ({"expectations": ["no_error"]}, "cases[0].expectations[0]"),
        ({"match": {"tool_names": "fuzzy"}}, "cases[0].match.tool_names"),
        ({"match": {"arg_names": "loose"}}, "cases[0].match.arg_names"),
        ({"match": {"null_args": "whatever"}}, "cases[0].match.null_args"),
        ({"match": "strict-ish"}, "cases[0].match"),
        ({"match": 3}, "cases[0].match"),
    ],
)
def test_case_field_of_the_wrong_type_or_value_is_reported_at_its_path(case_fields, path):
    assert_a_problem_at(case_paths(**case_fields), path)


@pytest.mark.parametrize(
    ("expectation", "field"),
    [
        ({"type": "called_tool", "tool": 5}, "tool"),
        ({"type": "did_not_call_tool", "tool": ["a"]}, "tool"),
        ({"type": "called_tool_with", "tool": "f", "args": [1]}, "args"),
        ({"type": "called_tool_with", "tool": "f", "args": "x=1"}, "args"),
        ({"type": "tool_call_count", "min": "1"}, "min"),
        ({"type": "tool_call_count", "max": [2]}, "max"),
        ({"type": "tool_call_count", "min": True}, "min"),
        ({"type": "called_tools_in_order", "tools": "a,b"}, "tools"),
        ({"type": "called_tools_in_order", "tools": ["a", 2]}, "tools"),
        ({"type": "final_text_contains", "text": 3}, "text"),
        (
            {"type": "final_text_contains", "text": "x", "case_insensitive": "yes"},
            "case_insensitive",
        ),
        ({"type": "final_text_equals", "text": None}, "text"),
        ({"type": "final_text_matches", "regex": 1}, "regex"),
        ({"type": "final_number_equals", "value": "3"}, "value"),
        ({"type": "final_number_equals", "value": True}, "value"),
        ({"type": "final_number_equals", "value": 3, "tolerance": "0.1"}, "tolerance"),
        ({"type": 3}, "type"),
    ],
)
def test_expectation_field_of_the_wrong_type_is_reported_at_its_path(expectation, field):
    assert_a_problem_at(one_expectation_paths(expectation), f"cases[0].expectations[0].{field}")


@pytest.mark.parametrize(
    ("expectation", "field"),
    [
        ({"type": "called_tool"}, "tool"),
        ({"type": "did_not_call_tool"}, "tool"),
        ({"type": "called_tool_with", "args": {}}, "tool"),
        ({"type": "called_tools_in_order"}, "tools"),
        ({"type": "final_text_contains"}, "text"),
        ({"type": "final_text_equals"}, "text"),
        ({"type": "final_text_matches"}, "regex"),
        ({"type": "final_number_equals"}, "value"),
    ],
)
def test_missing_required_expectation_field_is_reported_at_its_path(expectation, field):
    assert_a_problem_at(one_expectation_paths(expectation), f"cases[0].expectations[0].{field}")


def test_expectation_without_type_is_reported():
    assert_a_problem_at(one_expectation_paths({"tool": "f"}), "cases[0].expectations[0]")


def test_expected_call_without_name_is_reported():
    assert_a_problem_at(
        case_paths(expected_calls=[{"required_args": {}}]), "cases[0].expected_calls[0]"
    )


def test_case_without_key_is_reported():
    assert_a_problem_at(problem_paths_of_doc(suite_doc({"title": "t"})), "cases[0]")


def test_suite_wide_match_of_a_bad_value_is_reported_at_match():
    assert_a_problem_at(problem_paths_of_doc(suite_doc(case_doc(), match="loose")), "match")
    assert_a_problem_at(
        problem_paths_of_doc(suite_doc(case_doc(), match={"tool_names": "nope"})),
        "match.tool_names",
    )


# --- authoring rules beyond the shape --------------------------------------------------------


@pytest.mark.parametrize(
    "regex",
    [
        "(",
        "[a-",
        "a{2,1}",
        "*a",
        r"(a)\1",  # backreference
        r"(?P<x>a)(?P=x)",  # named backreference
        "(?=a)",  # lookahead
        "a(?!b)",  # negative lookahead
        "(?<=a)b",  # lookbehind
        "(?<!a)b",  # negative lookbehind
        "a*+",  # possessive quantifier (Python 3.11 accepts it, RE2 does not)
        "(?>a)",  # atomic group (Python 3.11 accepts it, RE2 does not)
        r"a\Z",  # \Z is not RE2 syntax
    ],
)
def test_regex_re2_cannot_compile_is_rejected_at_its_path(regex):
    paths = one_expectation_paths({"type": "final_text_matches", "regex": regex})
    assert paths == ["cases[0].expectations[0].regex"]


def test_refusing_a_bad_regex_writes_nothing_to_stderr(capfd):
    # docs/matcher.md#python-traps: google-re2 logs bad patterns unless log_errors is False.
    for regex in ["(", r"(a)\1", "(?=a)"]:
        with pytest.raises(InvalidInput):
            load_suite(
                suite_doc(case_doc(expectations=[{"type": "final_text_matches", "regex": regex}]))
            )
    captured = capfd.readouterr()
    assert captured.err == ""
    assert captured.out == ""


@pytest.mark.parametrize(
    "regex", [r"\d+", r"(?P<n>\d+)", r"\pL+", r"[[:alpha:]]+", r"(?i)done\z", r"(?m)^a$", ""]
)
def test_regex_re2_compiles_is_accepted(regex):
    case = make_case(expectations=[{"type": "final_text_matches", "regex": regex}])
    assert len(case.expectations) == 1


def test_depends_on_result_on_the_first_expected_call_is_rejected():
    paths = case_paths(expected_calls=[expected("f", depends_on_result=True)])
    assert_a_problem_at(paths, "cases[0].expected_calls[0]")


def test_depends_on_result_false_on_the_first_expected_call_is_fine():
    case = make_case(expected_calls=[expected("f", depends_on_result=False), expected("g")])
    assert case.expected_calls[0].depends_on_result is False


def test_min_greater_than_max_is_rejected():
    paths = one_expectation_paths({"type": "tool_call_count", "tool": "f", "min": 3, "max": 2})
    assert_a_problem_at(paths, "cases[0].expectations[0]")


def test_min_equal_to_max_is_fine():
    case = make_case(expectations=[{"type": "tool_call_count", "min": 2, "max": 2}])
    assert len(case.expectations) == 1


def test_negative_tolerance_is_rejected():
    paths = one_expectation_paths({"type": "final_number_equals", "value": 1, "tolerance": -0.1})
    assert_a_problem_at(paths, "cases[0].expectations[0].tolerance")


def test_zero_tolerance_is_fine():
    case = make_case(expectations=[{"type": "final_number_equals", "value": 1, "tolerance": 0}])
    assert len(case.expectations) == 1


def test_duplicate_case_keys_are_rejected_at_the_second_one():
    paths = problem_paths_of_doc(suite_doc(case_doc("a"), case_doc("b"), case_doc("a")))
    assert_a_problem_at(paths, "cases[2]")
    assert not any(p.startswith("cases[0]") for p in paths)


def test_keys_differing_only_in_case_are_not_duplicates():
    suite = load_suite(suite_doc(case_doc("a"), case_doc("A")))
    assert suite.case("a") is not None
    assert suite.case("A") is not None


@pytest.mark.parametrize(
    ("case_fields", "path"),
    [
        ({"expected_calls": [{"name": ""}]}, "cases[0].expected_calls[0].name"),
        ({"expectations": [{"type": "called_tool", "tool": ""}]}, "cases[0].expectations[0].tool"),
        (
            {"expectations": [{"type": "did_not_call_tool", "tool": ""}]},
            "cases[0].expectations[0].tool",
        ),
        (
            {"expectations": [{"type": "called_tool_with", "tool": "", "args": {}}]},
            "cases[0].expectations[0].tool",
        ),
        (
            {"expectations": [{"type": "tool_call_count", "tool": "", "max": 1}]},
            "cases[0].expectations[0].tool",
        ),
        (
            {"expectations": [{"type": "called_tools_in_order", "tools": ["a", ""]}]},
            "cases[0].expectations[0].tools",
        ),
    ],
)
def test_empty_tool_name_is_rejected(case_fields, path):
    assert_a_problem_at(case_paths(**case_fields), path)


@pytest.mark.parametrize("kind", ["called_tool_sometimes", "final_text_startswith", "", "NO_ERROR"])
def test_unknown_expectation_type_is_rejected_at_type(kind):
    paths = one_expectation_paths({"type": kind})
    assert_a_problem_at(paths, "cases[0].expectations[0]")


def test_every_problem_is_reported_at_once_not_just_the_first():
    document = suite_doc(
        case_doc(
            "a",
            expected_calls=[
                expected("f", depends_on_result=True),
                {"name": "g", "required_args": [1]},
                {"name": ""},
            ],
            expectations=[
                {"type": "final_text_matches", "regex": "(?=x)"},
                {"type": "tool_call_count", "min": 5, "max": 1},
                {"type": "final_number_equals", "value": 1, "tolerance": -1},
                {"type": "mystery"},
            ],
            extra_calls="never",
        ),
        case_doc("b", expected_calls=[{"name": "h", "ordered": "yes"}]),
        case_doc("b"),
    )
    paths = problem_paths_of_doc(document)
    for wanted in [
        "cases[0].expected_calls[0]",
        "cases[0].expected_calls[1].required_args",
        "cases[0].expected_calls[2].name",
        "cases[0].expectations[0]",
        "cases[0].expectations[1]",
        "cases[0].expectations[2].tolerance",
        "cases[0].expectations[3]",
        "cases[0].extra_calls",
        "cases[1].expected_calls[0].ordered",
    ]:
        assert_a_problem_at(paths, wanted)
    assert len(paths) >= 9


@pytest.mark.parametrize("bad_one", [0, 1])
def test_duplicate_case_key_is_reported_even_when_one_of_the_pair_has_other_problems(bad_one):
    # docs/formats.md#what-is-refused: "refused as a whole, every problem listed by its JSON
    # path"
    cases = [case_doc("a"), case_doc("a")]
    cases[bad_one]["extra_calls"] = "never"
    paths = problem_paths_of_doc(suite_doc(*cases))
    assert_a_problem_at(paths, f"cases[{bad_one}].extra_calls")
    assert_a_problem_at(paths, "cases[1].key")


# --- defaults --------------------------------------------------------------------------------


def test_expected_call_defaults_ordered_false_depends_false_required_args_empty():
    case = make_case(expected_calls=[{"name": "f"}])
    (call_,) = case.expected_calls
    assert call_.ordered is False
    assert call_.depends_on_result is False
    assert dict(call_.required_args) == {}


def test_extra_calls_defaults_to_allow():
    case = make_case(expected_calls=[{"name": "f"}])
    assert case.extra_calls == "allow"
    report = score_case({"expected_calls": [{"name": "f"}]}, [[call("f"), call("g")]])
    assert report.verdict == "pass"
    assert not [p for p in report.predicates if p.kind == "extra_calls"]


def test_match_defaults_to_exact_exact_must_be_null():
    assert make_case().match == MatchOptions("exact", "exact", "must_be_null")


def test_default_tool_names_are_exact():
    report = score_case({"expected_calls": [{"name": "f"}]}, [[call("F")]])
    assert report.verdict == "fail"


def test_default_arg_names_are_exact():
    report = score_case(
        {"expected_calls": [expected("f", {"city": "Oslo"})]}, [[call("f", {"City": "Oslo"})]]
    )
    assert report.verdict == "fail"


def test_empty_case_has_no_expected_calls_and_no_expectations():
    case = make_case()
    assert case.expected_calls == ()
    assert case.expectations == ()


# --- match presets and overrides -------------------------------------------------------------


LENIENT = MatchOptions("ignore_case", "ignore_case", "absent_or_null")


def test_lenient_preset_on_the_suite_means_ignore_case_ignore_case_absent_or_null():
    assert make_case(suite_fields={"match": "lenient"}).match == LENIENT


def test_lenient_preset_on_a_case_overrides_the_suite_default():
    assert make_case(match="lenient").match == LENIENT


def test_case_match_object_overrides_the_suite_preset():
    case = make_case(
        suite_fields={"match": "lenient"},
        match={"tool_names": "exact", "arg_names": "exact", "null_args": "must_be_null"},
    )
    assert case.match == MatchOptions("exact", "exact", "must_be_null")


def test_case_without_match_inherits_the_suite_options():
    case = make_case(suite_fields={"match": {"tool_names": "ignore_case"}})
    assert case.match == MatchOptions("ignore_case", "exact", "must_be_null")


def test_partial_case_match_overrides_only_the_options_it_names():
    # Reading: a case's partial "match" overrides the named options; the rest are inherited.
    case = make_case(suite_fields={"match": "lenient"}, match={"tool_names": "exact"})
    assert case.match == MatchOptions("exact", "ignore_case", "absent_or_null")


def test_one_case_override_does_not_leak_into_other_cases():
    suite = load_suite(
        suite_doc(
            case_doc("a", match="lenient"), case_doc("b"), match={"null_args": "absent_or_null"}
        )
    )
    assert suite.case("a").match == LENIENT
    assert suite.case("b").match == MatchOptions("exact", "exact", "absent_or_null")


def test_lenient_suite_scores_names_ignoring_case():
    case = make_case(
        suite_fields={"match": "lenient"},
        expected_calls=[expected("Get_Weather", {"City": "Oslo", "unit": None})],
    )
    from scoring.matcher import score

    from .builders import make_run

    report = score(case, make_run([[call("get_weather", {"city": "Oslo"})]]))
    assert report.verdict == "pass", report.to_dict()


# --- JSON and YAML documents -----------------------------------------------------------------


YAML_SUITE = """\
schema: casebook.suite/1
name: file-ops
match: lenient
cases:
  - key: delete-if-exists
    expected_calls:
      - name: file_exists
        required_args: {path: notes.txt}
        ordered: true
    expectations:
      - type: did_not_call_tool
        tool: format_disk
"""

JSON_SUITE = """\
{"schema": "casebook.suite/1", "name": "file-ops", "match": "lenient",
 "cases": [{"key": "delete-if-exists",
            "expected_calls": [{"name": "file_exists", "required_args": {"path": "notes.txt"},
                                "ordered": true}],
            "expectations": [{"type": "did_not_call_tool", "tool": "format_disk"}]}]}
"""


@pytest.mark.parametrize(
    ("text", "filename"),
    [
        (YAML_SUITE, "suite.yaml"),
        (YAML_SUITE, "suite.yml"),
        (YAML_SUITE, ""),
        (JSON_SUITE, "suite.json"),
        (JSON_SUITE, ""),
        (JSON_SUITE.encode(), "suite.json"),
        (YAML_SUITE.encode(), "suite.yaml"),
    ],
)
def test_yaml_and_json_suites_are_both_accepted_and_mean_the_same(text, filename):
    suite = load_suite(parse_suite_document(text, filename))
    case = suite.case("delete-if-exists")
    assert case.match == LENIENT
    (call_,) = case.expected_calls
    assert (call_.name, dict(call_.required_args), call_.ordered) == (
        "file_exists",
        {"path": "notes.txt"},
        True,
    )
    assert len(case.expectations) == 1


@pytest.mark.parametrize(
    ("text", "filename"),
    [
        ('{"cases": [', "suite.json"),
        ('{"cases": []', ""),
        ("cases: [\n  - key: a\n  - : :\n", "suite.yaml"),
        ("cases:\n  - key: [a\n", "suite.yaml"),
    ],
)
def test_syntax_errors_raise_invalid_input(text, filename):
    with pytest.raises(InvalidInput) as info:
        parse_suite_document(text, filename)
    assert info.value.problems


def test_yaml_scalars_that_are_not_json_stay_strings():
    # Reading: YAML suites mean JSON values (YAML 1.2 core schema), so a date, "no" and "on"
    # are strings, not a date object or booleans.
    text = (
        "cases:\n  - key: c\n    expected_calls:\n      - name: f\n"
        "        required_args: {day: 2024-01-15, answer: no, on: yes}\n"
    )
    case = load_suite(parse_suite_document(text, "s.yaml")).case("c")
    assert dict(case.expected_calls[0].required_args) == {
        "day": "2024-01-15",
        "answer": "no",
        "on": "yes",
    }


@pytest.mark.parametrize(
    ("text", "filename"),
    [
        ('{"cases": [{"key": "c", "expectations": [{"type": "final_number_equals", '
         '"value": NaN}]}]}', "s.json"),
        ('{"cases": [{"key": "c", "expectations": [{"type": "final_number_equals", '
         '"value": Infinity}]}]}', "s.json"),
        ("cases:\n  - key: c\n    expectations:\n"
         "      - {type: final_number_equals, value: .nan}\n", "s.yaml"),
        ("cases:\n  - key: c\n    expectations:\n"
         "      - {type: final_number_equals, value: .inf}\n", "s.yaml"),
    ],
)  # fmt: skip
def test_nan_and_infinity_are_not_json_numbers_and_are_refused(text, filename):
    with pytest.raises(InvalidInput):
        load_suite(parse_suite_document(text, filename))


def test_duplicate_json_object_keys_are_reported_by_load_suite():
    text = '{"name": "s", "cases": [{"key": "a", "title": "x", "title": "y"}]}'
    document = parse_suite_document(text, "suite.json")
    paths = problem_paths_of_doc(document)
    assert_a_problem_at(paths, "cases[0]")


def test_duplicate_json_keys_at_the_top_level_are_reported():
    text = '{"name": "s", "name": "t", "cases": []}'
    with pytest.raises(InvalidInput) as info:
        load_suite(parse_suite_document(text, "suite.json"))
    assert info.value.problems


def test_duplicate_json_keys_nested_in_required_args_are_reported():
    text = (
        '{"cases": [{"key": "a", "expected_calls": '
        '[{"name": "f", "required_args": {"path": "a", "path": "b"}}]}]}'
    )
    paths = problem_paths_of_doc(parse_suite_document(text, "suite.json"))
    assert_a_problem_at(paths, "cases[0].expected_calls[0].required_args")


def test_duplicate_yaml_mapping_keys_are_reported():
    text = "cases:\n  - key: a\n    key: b\n"
    with pytest.raises(InvalidInput):
        load_suite(parse_suite_document(text, "suite.yaml"))


# --- never anything but InvalidInput --------------------------------------------------------

SURROGATE_SUITES = {
    "required_args value": '"expected_calls": [{"name": "f", "required_args": {"x": "\\ud800"}}]',
    "final_text_contains text": (
        '"expectations": [{"type": "final_text_contains", "text": "\\ud800"}]'
    ),
    "called_tool_with args": (
        '"expectations": [{"type": "called_tool_with", "tool": "f", "args": {"x": "\\ud800"}}]'
    ),
}


SURROGATE_PATHS = {
    "required_args value": "cases[0].expected_calls[0].required_args.x",
    "final_text_contains text": "cases[0].expectations[0].text",
    "called_tool_with args": "cases[0].expectations[0].args.x",
}


@pytest.mark.parametrize("where", list(SURROGATE_SUITES))
def test_a_lone_surrogate_in_a_suite_is_refused_by_path(where):
    text = '{"cases": [{"key": "c", ' + SURROGATE_SUITES[where] + "}]}"
    document = parse_suite_document(text, "s.json")
    with pytest.raises(InvalidInput) as refused:
        load_suite(document)
    assert [p.path for p in refused.value.problems] == [SURROGATE_PATHS[where]]
    assert "lone surrogate" in refused.value.problems[0].message


def test_a_key_named_twice_deep_in_a_suite_is_refused_by_path():
    text = (
        '{"cases": [{"key": "c", "expected_calls": '
        '[{"name": "f", "required_args": {"x": 1, "x": 2}}]}]}'
    )
    with pytest.raises(InvalidInput) as refused:
        load_suite(parse_suite_document(text, "s.json"))
    assert [(p.path, p.message) for p in refused.value.problems] == [
        ("cases[0].expected_calls[0].required_args", "duplicate key 'x'")
    ]


# --- unknown fields --------------------------------------------------------------------------


def test_unknown_fields_are_ignored_at_every_level():
    document = suite_doc(
        case_doc(
            "a",
            owner="team-x",
            expected_calls=[expected("f", {"x": 1}, note="why", weight=3)],
            expectations=[{"type": "called_tool", "tool": "f", "severity": "high"}],
            match={"tool_names": "exact", "future_option": "on"},
        ),
        version=7,
        x_extension={"anything": [1, 2]},
    )
    suite = load_suite(document)
    report = score_case(
        {
            "expected_calls": [expected("f", {"x": 1}, note="why")],
            "expectations": [{"type": "called_tool", "tool": "f", "severity": "high"}],
            "owner": "team-x",
        },
        [[call("f", {"x": 1})]],
    )
    assert suite.case("a") is not None
    assert report.verdict == "pass"
