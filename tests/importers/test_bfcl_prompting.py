"""BFCL beyond function-calling results (docs/benchmarks.md#prompting-models-results):
prompting models' strings of Python calls decoded as BFCL's default decoder does (and never
run), numbers in result files, irrelevance categories, multi_turn files imported, and agreement
with BFCL's checker on prompting results (its verdicts recorded in the fixture by
bench/bfcl_agreement.py)."""

import json
import re
import time

import pytest
from django.test import TestCase
from rest_framework.test import APIClient

from cases import services
from scoring.benchmarks.bfcl_suites import suite_from_bfcl
from scoring.importers import bfcl_results as bfcl_results
from scoring.importers.python_calls import MAX_CHARS, Undecodable, decode_calls
from scoring.matcher import load_run, load_suite, parse_json, score
from scoring.models import Result, Status, Submission
from tests.support.bfcl_data import CATEGORIES, FIXTURE, imported_suite, lines
from tests.support.commands import manage

# --- decoding ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "calls"),
    [
        (
            "[calculate_triangle_area(base=10, height=5)]",
            [{"calculate_triangle_area": {"base": 10, "height": 5}}],
        ),
        ("math.factorial(number=5)", [{"math.factorial": {"number": 5}}]),
        ("[f(a=1), g.h.i(b='x')]", [{"f": {"a": 1}}, {"g.h.i": {"b": "x"}}]),
        ("```\n[f(a=1)]\n```", [{"f": {"a": 1}}]),
        ("\n  [f(a=1)]  \n", [{"f": {"a": 1}}]),
        (
            "[f(a=-1, b=-2.5, c=1e3, d=True, e=None)]",
            [{"f": {"a": -1, "b": -2.5, "c": 1000.0, "d": True, "e": None}}],
        ),
        (
            "[f(a=[1, (2, 3)], b={'k': [{'n': 'v'}]})]",
            [{"f": {"a": [1, [2, 3]], "b": {"k": [{"n": "v"}]}}}],
        ),
        (
            """[f(a="it's", b='say "hi"', c='日本')]""",
            [{"f": {"a": "it's", "b": 'say "hi"', "c": "日本"}}],
        ),
        ("[f(unit=celsius)]", [{"f": {"unit": "celsius"}}]),
        (
            "[f(when=datetime(2020, 1, 1), inner=g(x=1))]",
            [{"f": {"when": "datetime(2020, 1, 1)", "inner": {"g": {"x": 1}}}}],
        ),
        ("[f(a=x[0], b=...)]", [{"f": {"a": "x[0]", "b": "..."}}]),
        (
            "[f(rate=0.05/12, n=2**10, s='a'+'b')]",
            [{"f": {"rate": 0.05 / 12, "n": 1024, "s": "ab"}}],
        ),
        (
            "[f(big=123456789012345678901234567890)]",
            [{"f": {"big": 123456789012345678901234567890}}],
        ),
        ("[]", []),
    ],
)
def test_python_call_syntax_decodes_as_bfcl_decodes_it(text, calls):
    assert decode_calls(text) == (calls, [])


def test_positional_arguments_are_dropped_as_bfcl_drops_them_and_noted():
    assert decode_calls("[f(1, 2, a=3)]") == (
        [{"f": {"a": 3}}],
        ["f: 2 positional argument(s) dropped (BFCL reads keyword arguments only)"],
    )


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("I cannot help with that.", "not Python syntax"),
        ("```python\n[f(a=1)]\n```", "not Python syntax"),  # BFCL strips backticks only
        ("[f(a=1)] and some text", "not Python syntax"),
        ("[1, 2]", "1 is not a call"),
        ("[f(a=1)][0]", "not a list of calls"),
        ("[f(a=lambda x: x)]", "Lambda is not a value BFCL reads"),
        ("[f(a=x + 1)]", "x is not a number"),
        ("[f(a=not b)]", "only - and + signs are read"),
        ("[f(**kwargs)]", "cannot be read as arguments"),
        ("[f(a={1: 'x'})]", "dictionary key 1 is not a string"),
        ("[f(a=b'x')]", "has no JSON value"),
        ("[f(a=1/0)]", "division by zero"),
    ],
)
def test_what_bfcl_cannot_decode_is_refused_saying_why(text, why):
    with pytest.raises(Undecodable, match=re.escape(why)):
        decode_calls(text)


def test_code_in_a_result_is_never_run(tmp_path):
    marker = tmp_path / "ran"
    hostile = [
        f"[f(a=open({str(marker)!r}, 'w').write('x') + 1)]",  # BFCL's decoder evals this
        f"[f(a=__import__('os').system('touch {marker}'))]",
        f"__import__('os').system('touch {marker}')",
        f"[f(a=(lambda: open({str(marker)!r}, 'w'))())]",
    ]
    decoded = []
    for text in hostile:
        try:
            decoded.append(decode_calls(text)[0])
        except Undecodable:
            decoded.append(None)
    assert not marker.exists()
    # A call without keywords is read as its text; a dotted name as the name it ends with.
    assert decoded[0] is None  # arithmetic on a call is not computed
    assert decoded[1] == [{"f": {"a": f"__import__('os').system('touch {marker}')"}}]
    assert decoded[2] == [{"system": {}}]
    assert decoded[3] == [{"f": {"a": f"(lambda: open({str(marker)!r}, 'w'))()"}}]


@pytest.mark.parametrize(
    "text",
    [
        "(" * 100_000,
        "[" * 5_000 + "]" * 5_000,
        "[f(a=" + "-" * 90_000 + "1)]",
        "1+" * 45_000 + "1",
        "a." * 45_000 + "f()",
        "[f(a=" + "[" * 101 + "]" * 101 + ")]",
        "[f(a=9**9**9)]",
        "[f(a=10.0**400)]",
        "[f(a=1)]" + " " * MAX_CHARS,
        "[f(a=0x" + "f" * 5000 + ")]",
        "[f(a=-0b" + "1" * 5000 + ")]",
        "[f(a=[0o" + "7" * 5000 + "])]",
        "[f(a=0x" + "f" * 5000 + " + 1)]",
    ],
    ids=[
        "parens",
        "brackets",
        "signs",
        "sum",
        "attributes",
        "deep list",
        "power",
        "float power",
        "long",
        "hexadecimal",
        "binary",
        "octal",
        "hexadecimal sum",
    ],
)
def test_huge_or_deeply_nested_strings_are_refused_quickly(text):
    started = time.perf_counter()
    with pytest.raises(Undecodable):
        decode_calls(text)
    assert time.perf_counter() - started < 1


def test_a_result_string_becomes_calls_or_a_text_answer_with_a_note():
    decoded = bfcl_results.convert({"id": "t_0", "result": "[f(a=1)]"})
    assert decoded.pop("usage")["model_calls"] == 1  # no counts recorded: the rest null
    assert decoded == {
        "case": "t_0",
        "batches": [[{"name": "f", "arguments": {"a": 1}}]],
        "final_text": None,
    }
    text = bfcl_results.convert({"id": "t_0", "result": "Sorry, no."})
    assert (text["batches"], text["final_text"]) == ([], "Sorry, no.")
    (note,) = text["notes"]
    assert note.startswith("result: not read as calls (not Python syntax")
    assert note.endswith("scored as a text answer")


# --- numbers, output file -----------------------------------------------------------------------


def test_numbers_of_any_length_never_stop_an_import(tmp_path):
    results = tmp_path / "results.jsonl"
    results.write_text(
        '{"id": "simple_python_0", "result": "[calculate_triangle_area(base=10, height=5)]", '
        '"input_token_count": 412, "output_token_count": 14, "latency": 0.7301349639892578}\n'
        '{"id": "simple_python_1", "latency": 12345678901234567890.5, '
        '"result": [{"math.factorial": {"number": 5.000000000000000001}}]}\n'
    )
    out = tmp_path / "runs.jsonl"
    result = manage("import_bfcl_results", results, "--out", out)
    assert result.returncode == 0, result.stderr
    written = out.read_text().splitlines()
    assert '"latency":0.7301349639892578' in written[0]
    assert '"number":5.000000000000000001' in written[1]
    assert '"latency":12345678901234567890.5' in written[1]
    assert not list(tmp_path.glob(".*partial"))


def test_a_multi_turn_result_keeps_its_turns_and_steps(tmp_path):
    results = tmp_path / "results.jsonl"
    turns = [[[{"cd": '{"folder": "docs"}'}], "[ls(a=True)]", "not calls"], [], [[{"pwd": "{}"}]]]
    results.write_text(json.dumps({"id": "multi_turn_base_0", "result": turns}) + "\n")
    out = tmp_path / "runs.jsonl"
    result = manage("import_bfcl_results", results, "--out", out)
    assert result.returncode == 0, result.stderr
    run = json.loads(out.read_text())
    assert [[c["name"] for c in batch] for batch in run["batches"]] == [["cd"], ["ls"], ["pwd"]]
    assert [(t["role"], t["batch"]) for t in run["transcript"]] == [
        ("user", None), ("assistant", 0), ("assistant", 1), ("user", None), ("user", None),
        ("assistant", 2),
    ]  # fmt: skip
    assert run["notes"][0].startswith("result[0][2]: not read as calls")


# --- irrelevance, multi_turn --------------------------------------------------------------------


def irrelevance_suite():
    return suite_from_bfcl(
        enumerate(lines(FIXTURE / "irrelevance.questions.jsonl"), 1), None, name="irrelevance"
    )


def test_an_irrelevance_category_imports_as_cases_that_expect_no_call(tmp_path):
    out = tmp_path / "irrelevance.json"
    result = manage("import_bfcl", FIXTURE / "irrelevance.questions.jsonl", "--out", out)
    assert result.returncode == 0, result.stderr
    document = json.loads(out.read_text())
    assert document["cases"] == irrelevance_suite()["cases"]
    case = document["cases"][0]
    assert (case["expected_calls"], case["extra_calls"]) == ([], "forbid")
    assert case["expectations"] == [{"type": "no_tool_calls"}]
    assert case["tags"] == ["bfcl", "irrelevance"]
    suite = load_suite(document)
    judged = {
        text: score(suite.cases[0], load_run(bfcl_results.convert(line))).verdict
        for text in ("I cannot answer that.", "[]", "[f(a=1)]")
        for line in [{"id": case["key"], "result": text}]
    }
    assert judged == {"I cannot answer that.": "pass", "[]": "pass", "[f(a=1)]": "fail"}


def test_a_relevance_category_expects_some_call():
    question = {
        "id": "live_relevance_0-0-0",
        "question": [[{"role": "user", "content": "Find flights."}]],
        "function": [{"name": "search", "parameters": {"type": "dict", "properties": {}}}],
    }
    (case,) = suite_from_bfcl([(1, question)], None, name="live_relevance")["cases"]
    assert case["expectations"] == [{"type": "tool_call_count", "min": 1}]
    assert "extra_calls" not in case


def test_a_category_with_possible_answers_needs_them(tmp_path):
    result = manage("import_bfcl", FIXTURE / "simple_python.questions.jsonl")
    assert result.returncode == 2
    questions = FIXTURE / "simple_python.questions.jsonl"
    assert result.stderr.decode().strip() == (
        f"{questions}:1: no possible-answer file: only the irrelevance and relevance categories "
        "come without one; give this category's possible-answer file"
    )


def test_a_multi_turn_category_imports_as_cases_judged_by_end_state(tmp_path):
    questions = tmp_path / "BFCL_v4_multi_turn_base.json"
    record = {
        "question": [
            [{"role": "user", "content": "Go to docs."}],
            [{"role": "user", "content": "Sort it."}],
        ],
        "initial_config": {"GorillaFileSystem": {"root": {}}},
        "path": ["GorillaFileSystem.cd"],
        "involved_classes": ["GorillaFileSystem"],
    }
    questions.write_text(json.dumps({"id": "multi_turn_base_0", **record}) + "\n")
    answers = tmp_path / "answers.json"
    turns = [["cd(folder='docs')"], ["sort('a.txt')"]]
    answers.write_text(json.dumps({"id": "multi_turn_base_0", "ground_truth": turns}) + "\n")
    out = tmp_path / "suite.json"
    result = manage("import_bfcl", questions, answers, "--out", out)
    assert result.returncode == 0, result.stderr
    (case,) = json.loads(out.read_text())["cases"]
    assert case["environment"] == {
        "name": "bfcl",
        "initial_state": {
            "involved_classes": ["GorillaFileSystem"],
            "initial_config": {"GorillaFileSystem": {"root": {}}},
            "long_context": False,
        },
    }
    assert case["expectations"] == [
        {
            "type": "end_state_matches",
            "reference_turns": [
                [{"name": "cd", "arguments": {"folder": "docs"}}],
                [{"name": "sort", "arguments": {"file_name": "a.txt"}}],  # named by the docs
            ],
            "results_include_reference": True,
        }
    ]
    assert case["prompt"] == "Go to docs.\n\nSort it."


# --- agreement with BFCL's checker, and scoring prompting results ------------------------------


@pytest.fixture(scope="module")
def suites():
    documents = {category: imported_suite(category) for category in CATEGORIES}
    documents["irrelevance"] = irrelevance_suite()
    return {category: load_suite(document) for category, document in documents.items()}


def test_prompting_results_agree_with_bfcls_checker_except_the_listed_differences(suites):
    by_id = {case.key: case for suite in suites.values() for case in suite.cases}
    agreed, differences = 0, []
    for line in lines(FIXTURE / "results_prompting.jsonl"):
        assert isinstance(line["result"], str)
        ours = score(by_id[line["id"]], load_run(bfcl_results.convert(line))).verdict == "pass"
        if line["difference"] is None:
            assert ours == line["bfcl_valid"], (line["id"], line["kind"], line["result"])
            agreed += 1
        else:
            assert (line["bfcl_valid"], ours) == (False, True), line
            differences.append(line["difference"])
    assert agreed > 800
    assert set(differences) == {"first-fit", "number type"}
    kinds = {line["kind"] for line in lines(FIXTURE / "results_prompting.jsonl")}
    assert {"prompting: correct, a bare call", "prompting: wrong, a text answer"} <= kinds


def prompting_lines(category: str) -> list[dict]:
    return [
        {"id": line["id"], "result": line["result"], "latency": 1.2345678901234567}
        for line in lines(FIXTURE / "results_prompting.jsonl")
        if line["id"].rsplit("_", 1)[0] == category and line["difference"] is None
    ]


def test_manage_py_score_scores_prompting_results_as_bfcl_does(tmp_path):
    suite = tmp_path / "suite.json"
    suite.write_text(json.dumps(imported_suite("simple_python")))
    runs = prompting_lines("simple_python")
    body = "".join(json.dumps(run) + "\n" for run in runs).encode()
    result = manage("score", suite, "-", "--json", stdin=body)
    assert result.returncode == 1, result.stderr  # some results are wrong on purpose
    reports = json.loads(result.stdout)
    expected = bfcl_verdicts()
    assert len(reports) == len(runs) > 100
    for run, report in zip(runs, reports, strict=True):
        assert report["case"] == run["id"]
        assert (report["verdict"] == "pass") == expected[(run["id"], run["result"])], run


@pytest.mark.django_db
def test_prompting_results_uploaded_through_the_api_are_scored_as_bfcl_does(team, admin):
    suite = services.create_suite(team, imported_suite("parallel"), admin)
    runs = prompting_lines("parallel")
    client = APIClient()
    client.force_authenticate(admin)
    with TestCase.captureOnCommitCallbacks(execute=True):
        response = client.post(
            f"/api/suites/{suite.pk}/submissions/?label=prompting",
            data="".join(json.dumps(run) + "\n" for run in runs).encode(),
            content_type="application/x-ndjson",
        )
    assert response.status_code == 202, response.content
    submission = Submission.objects.get(pk=response.json()["id"])
    assert submission.status == Status.DONE
    assert (submission.total, submission.invalid) == (len(runs), 0)
    verdicts = {
        (result.run.case_key, result.run.line): result.verdict
        for result in Result.objects.filter(submission=submission).select_related("run")
    }
    expected = bfcl_verdicts()
    for line, run in enumerate(runs, 1):
        passed = verdicts[(run["id"], line)] == "pass"
        assert passed == expected[(run["id"], run["result"])], run


def bfcl_verdicts() -> dict[tuple[str, str], bool]:
    """BFCL's verdict on each prompting result of the fixture, by (id, result)."""
    return {
        (line["id"], line["result"]): line["bfcl_valid"]
        for line in lines(FIXTURE / "results_prompting.jsonl")
    }


# --- files written by BFCL's own model handler (tests/fixtures/bfcl/make_handler_results.py) ---

HANDLERS = FIXTURE / "handlers"
FC_MODEL, PROMPTING_MODEL = "gpt-4o-2024-11-20-FC", "gpt-4o-2024-11-20"


def handler_suite(category: str, model: str) -> dict:
    """The suite the model's results are scored against: function names as its API wrote
    them (OpenAI's function calling refuses dots, so BFCL offers them with underscores)."""
    if category == "irrelevance":
        return irrelevance_suite()
    return suite_from_bfcl(
        enumerate(lines(FIXTURE / f"{category}.questions.jsonl"), 1),
        enumerate(lines(FIXTURE / f"{category}.answers.jsonl"), 1),
        name=category,
        underscore_dots=model == FC_MODEL,
    )


@pytest.mark.parametrize("model", [FC_MODEL, PROMPTING_MODEL])
def test_result_files_of_bfcls_own_handler_are_scored_as_bfcl_scores_them(model):
    told = {(v["model"], v["id"]): v for v in lines(HANDLERS / "verdicts.jsonl")}
    scored = 0
    for category in (*CATEGORIES, "irrelevance"):
        suite = load_suite(handler_suite(category, model))
        path = HANDLERS / model / "non_live" / f"BFCL_v4_{category}_result.json"
        for raw in path.read_bytes().splitlines():
            line = parse_json(raw)  # latency has 17 significant digits: read exactly
            run = load_run(bfcl_results.convert(line))
            verdict = score(suite.case(line["id"]), run).verdict
            expected = told[(model, line["id"])]
            assert (verdict == "pass") == expected["bfcl_valid"], (model, line, expected)
            # What the fake server was told to answer: right calls, or text where no call is.
            right = expected["told"] == "correct" or (
                category == "irrelevance" and expected["told"] == "text"
            )
            assert (verdict == "pass") == right, expected
            scored += 1
    assert scored == 61


def test_a_handler_result_file_goes_through_import_bfcl_results_and_score(tmp_path):
    results = HANDLERS / PROMPTING_MODEL / "non_live" / "BFCL_v4_parallel_result.json"
    runs = tmp_path / "runs.jsonl"
    converted = manage("import_bfcl_results", results, "--out", runs)
    assert converted.returncode == 0, converted.stderr
    suite = tmp_path / "suite.json"
    suite.write_text(json.dumps(handler_suite("parallel", PROMPTING_MODEL)))
    result = manage("score", suite, runs, "--json")
    reports = json.loads(result.stdout)
    told = {v["id"]: v for v in lines(HANDLERS / "verdicts.jsonl") if v["model"] == PROMPTING_MODEL}
    assert [r["verdict"] == "pass" for r in reports] == [
        told[line["id"]]["bfcl_valid"] for line in lines(results)
    ]
    assert {line["meta"]["latency"] for line in lines(runs)} == {
        line["latency"] for line in lines(results)
    }
