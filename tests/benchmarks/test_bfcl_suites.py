"""BFCL interoperability (docs/benchmarks.md#bfcl): import_bfcl, import_bfcl_results, and
agreement with BFCL's own checker on an excerpt of its data (its verdicts recorded in the
fixture)."""

import json

import pytest

from scoring.benchmarks.bfcl_suites import suite_from_bfcl
from scoring.importers import bfcl_results as bfcl_results
from scoring.matcher import InvalidInput, load_run, load_suite, score
from tests.support.bfcl_data import CATEGORIES, FIXTURE, imported_suite, lines
from tests.support.commands import manage


@pytest.fixture(scope="module")
def suites():
    documents = {category: imported_suite(category) for category in CATEGORIES}
    questions = enumerate(lines(FIXTURE / "irrelevance.questions.jsonl"), 1)
    documents["irrelevance"] = suite_from_bfcl(questions, None, name="irrelevance")
    return {category: load_suite(document) for category, document in documents.items()}


# --- the suite ---------------------------------------------------------------------------------


def test_import_bfcl_writes_a_suite_with_a_case_per_id(tmp_path):
    out = tmp_path / "parallel.json"
    result = manage(
        "import_bfcl",
        FIXTURE / "parallel.questions.jsonl",
        FIXTURE / "parallel.answers.jsonl",
        "--out",
        out,
    )
    assert result.returncode == 0, result.stderr
    suite = load_suite(json.loads(out.read_text()))
    ids = [record["id"] for record in lines(FIXTURE / "parallel.questions.jsonl")]
    assert [case.key for case in suite.cases] == ids
    first = suite.cases[0]
    assert first.forbids_extra_calls
    assert all(call.exact_args for call in first.expected_calls)
    assert len(first.expected_calls) == len(
        lines(FIXTURE / "parallel.answers.jsonl")[0]["ground_truth"]
    )


def test_import_bfcl_prints_the_suite_without_out():
    result = manage(
        "import_bfcl",
        FIXTURE / "simple_python.questions.jsonl",
        FIXTURE / "simple_python.answers.jsonl",
    )
    assert result.returncode == 0
    assert json.loads(result.stdout)["name"] == "simple_python.questions"


def question(function="f", properties=None, required=()):
    parameters = {"type": "dict", "properties": properties or {}, "required": list(required)}
    return {
        "id": "t_0",
        "question": [[{"role": "user", "content": "Do it."}]],
        "function": [{"name": function, "parameters": parameters}],
    }


def converted(parameters, properties, required=()):
    document = suite_from_bfcl(
        [(1, question(properties=properties, required=required))],
        [(1, {"id": "t_0", "ground_truth": [{"f": parameters}]})],
        name="t",
    )
    return document["cases"][0]["expected_calls"][0]["required_args"]


TEXT = ["case", "space", "punctuation"]


def test_acceptable_values_become_one_of_with_strings_compared_as_bfcl_normalises_them():
    args = converted(
        {"city": ["New York", "NYC"], "days": [3]},
        {"city": {"type": "string"}, "days": {"type": "integer"}},
    )
    assert args["city"] == {
        "$one_of": [
            {"$text": {"value": "New York", "ignore": TEXT}},
            {"$text": {"value": "NYC", "ignore": TEXT}},
        ]
    }
    assert args["days"] == {"$one_of": [3]}


def test_an_empty_string_makes_a_parameter_optional_unless_the_function_requires_it():
    properties = {"unit": {"type": "string"}, "limit": {"type": "integer"}}
    args = converted({"unit": ["C", ""], "limit": [10, ""]}, properties)
    assert args["unit"] == {
        "$optional": {
            "$one_of": [
                {"$text": {"value": "C", "ignore": TEXT}},
                {"$text": {"value": "", "ignore": TEXT}},
            ]
        }
    }
    assert args["limit"] == {"$optional": {"$one_of": [10]}}
    required = converted({"limit": [10, ""]}, properties, required=["limit"])
    assert required["limit"] == {"$one_of": [10]}


def test_dictionaries_of_acceptable_values_become_nested_matchers():
    args = converted(
        {"where": [{"school": ["Bluebird HS"], "grade": [9, ""]}]},
        {"where": {"type": "dict"}},
    )
    assert args["where"] == {
        "$one_of": [
            {
                "school": {"$one_of": [{"$text": {"value": "Bluebird HS", "ignore": TEXT}}]},
                "grade": {"$optional": {"$one_of": [9]}},
            }
        ]
    }


def test_a_parameter_the_function_does_not_document_must_be_left_out():
    assert converted({"mystery": ["", 0.1]}, {}) == {"mystery": {"$absent": True}}


def test_the_suite_credits_what_bfcl_accepts_and_names_what_it_refuses(suites):
    case = suites["simple_python"].case("simple_python_0")
    passing = load_run(
        bfcl_results.convert(
            {
                "id": "simple_python_0",
                "result": [{"calculate_triangle_area": {"base": 10, "height": 5}}],
            }
        )
    )
    assert score(case, passing).verdict == "pass"
    failing = load_run(
        bfcl_results.convert(
            {
                "id": "simple_python_0",
                "result": [{"calculate_triangle_area": {"base": 10, "height": 6, "color": "red"}}],
            }
        )
    )
    report = score(case, failing)
    assert report.verdict == "fail"
    (predicate,) = [p for p in report.predicates if not p.passed and p.kind == "expected_call"]
    assert "height: expected one of [5], got 6" in predicate.detail
    assert "color: not expected" in predicate.detail


def test_bad_bfcl_files_exit_2_naming_file_line_and_field(tmp_path):
    questions = tmp_path / "q.jsonl"
    answers = tmp_path / "a.jsonl"
    questions.write_text(json.dumps(question()) + "\n{oops\n")
    answers.write_text(json.dumps({"id": "t_0", "ground_truth": "nope"}) + "\n")
    result = manage("import_bfcl", questions, answers)
    assert result.returncode == 2
    assert f"{questions}:2: invalid JSON" in result.stderr.decode()
    questions.write_text(
        json.dumps(question()) + "\n" + json.dumps({**question(), "id": "t_1"}) + "\n"
    )
    result = manage("import_bfcl", questions, answers)
    errors = result.stderr.decode()
    assert result.returncode == 2
    assert f"{answers}:1: ground_truth: must be a list of calls" in errors
    assert f"{questions}:2: id: no possible answer for id 't_1'" in errors


@pytest.mark.parametrize("name", [["f"], None, ""], ids=["list", "missing", "empty"])
def test_a_function_doc_without_a_name_is_a_problem_of_its_question(name):
    """A name that is not a string (a list, found by bench/fuzz.py) raised TypeError."""
    bad = {**question(), "function": [{**question()["function"][0], "name": name}]}
    answer = {"id": "t_0", "ground_truth": []}
    with pytest.raises(InvalidInput) as raised:
        suite_from_bfcl([(1, bad)], [(1, answer)], name="bad")
    assert [str(p) for p in raised.value.problems] == [
        "line 1, questions.function: must be a list of function docs, each named"
    ]


# --- model results -----------------------------------------------------------------------------


def test_import_bfcl_results_writes_one_run_per_id_with_its_calls_in_one_batch(tmp_path):
    results = tmp_path / "results.jsonl"
    results.write_text(
        "\n".join(
            json.dumps(line)
            for line in (
                {"id": "a_0", "result": [{"f": {"x": 1}}, {"g": '{"y": "two"}'}], "latency": 0.4},
                {"id": "a_1", "result": [{"f": "{not json"}]},
                {"id": "a_2", "result": "I can't call a tool for that."},
                {"id": "a_3", "result": [{"f": {}, "g": {}}]},
                {"id": "a_4", "result": 7},
            )
        )
        + "\n"
    )
    out = tmp_path / "runs.jsonl"
    result = manage("import_bfcl_results", results, "--out", out)
    assert result.returncode == 2
    errors = result.stderr.decode()
    assert f"{results}:4: result[0]: must be an object naming one function" in errors
    assert f"{results}:5: result: must be a list of calls or a string, not number" in errors
    runs = [load_run(line) for line in lines(out)]
    assert [run.case for run in runs] == ["a_0", "a_1", "a_2"]
    assert [[c.name for c in b] for b in runs[0].batches] == [["f", "g"]]
    assert runs[0].calls[1].arguments == {"y": "two"}
    assert lines(out)[0]["meta"] == {"latency": 0.4}
    assert runs[1].calls[0].arguments is None
    assert runs[1].calls[0].arguments_raw == "{not json"
    assert runs[2].batches == ()
    assert runs[2].final_text == "I can't call a tool for that."


def test_bfcl_result_lines_are_also_read_by_manage_py_score(tmp_path):
    suite = tmp_path / "suite.json"
    suite.write_text(json.dumps(imported_suite("simple_python")))
    line = json.dumps({"id": "simple_python_1", "result": [{"math.factorial": '{"number": 5}'}]})
    result = manage("score", suite, "-", "--json", stdin=(line + "\n").encode())
    assert json.loads(result.stdout)[0]["verdict"] == "pass"


def test_a_results_line_without_an_id_is_refused():
    with pytest.raises(InvalidInput, match="id"):
        bfcl_results.convert({"result": []})


# --- agreement with BFCL's checker -------------------------------------------------------------


def test_verdicts_agree_with_bfcls_checker_except_the_listed_differences(suites):
    by_id = {case.key: case for suite in suites.values() for case in suite.cases}
    agreed, differences = 0, []
    for line in lines(FIXTURE / "results.jsonl"):
        run = load_run(bfcl_results.convert(line))
        ours = score(by_id[line["id"]], run).verdict == "pass"
        if line["difference"] is None:
            assert ours == line["bfcl_valid"], (line["id"], line["kind"], line["result"])
            agreed += 1
        else:
            # Each listed difference is one BFCL refuses and Casebook, rightly, accepts.
            assert (line["bfcl_valid"], ours) == (False, True), line
            differences.append((line["difference"], line["id"]))
    assert agreed > 500
    assert {kind for kind, _ in differences} == {"first-fit", "number type"}
    assert ("first-fit", "parallel_178") in differences
